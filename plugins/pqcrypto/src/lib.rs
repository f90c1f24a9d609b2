//! A pqcprof plugin over rustpq's `pqcrypto-mlkem` and `pqcrypto-mldsa`,
//! Rust bindings to PQClean's C code: every parameter set and operation of
//! `include/pqcprof_plugin.h`, one item at a time, thread-safe (PQClean
//! keeps no state; its randomness comes from the operating system through
//! pqcrypto-internals).
//!
//! The crates have no derandomised entry point: key generation draws its
//! seeds, encapsulation its m and signing its rnd (PQClean's ML-DSA signs
//! hedged) from the operating system. So the plugin speaks ABI 1.1 and
//! declares all four in `own_randomness`: it ignores the seeds, m and rnd
//! pqcprof hands it, and pqcprof judges those outputs by round trip.
//! Decapsulation and verification take no randomness and are judged byte
//! for byte as usual.
//!
//! Each call of the crates picks PQClean's AVX2 code where it was compiled
//! in (the crates' default `avx2` feature, on x86-64) and the CPU has AVX2,
//! its clean (portable C) code otherwise. The version string names the
//! code that runs, found the same way at load time (build.rs applies the
//! crates' rule and sets cfgs `pqclean_kem_avx2` and `pqclean_dsa_avx2`).
//!
//! Build: `scripts/build-plugins` (or `cargo build --release` in plugins/),
//! then `pqcprof bench --backend plugin:plugins/target/release/libpqcprof_plugin_pqcrypto.so`.

use pqcprof_plugin_abi::{
    cstr, descriptor_own_randomness, Descriptor, Descriptor11, Failure, Implementation,
    OWN_MLDSA_KEYGEN, OWN_MLDSA_SIGN, OWN_MLKEM_ENCAPS, OWN_MLKEM_KEYGEN,
};

/// The crates' versions, from plugins/Cargo.lock (build.rs).
macro_rules! versions {
    () => {
        concat!(
            "pqcrypto-mlkem ",
            env!("PQCRYPTO_MLKEM_VERSION"),
            " + pqcrypto-mldsa ",
            env!("PQCRYPTO_MLDSA_VERSION"),
            " (PQClean C code; randomness from the OS via pqcrypto-internals ",
            env!("PQCRYPTO_INTERNALS_VERSION"),
            ")",
        )
    };
}

/// Whether the CPU has AVX2 (the crates' own run-time test).
#[allow(dead_code)]
fn cpu_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether ML-KEM calls run PQClean's AVX2 code in this build on this CPU.
fn kem_avx2_runs() -> bool {
    cfg!(pqclean_kem_avx2) && cpu_avx2()
}

/// Whether ML-DSA calls run PQClean's AVX2 code in this build on this CPU.
fn dsa_avx2_runs() -> bool {
    cfg!(pqclean_dsa_avx2) && cpu_avx2()
}

struct Pqcrypto;

/// Every operation with randomness draws its own.
const OWN: u32 = OWN_MLKEM_KEYGEN | OWN_MLKEM_ENCAPS | OWN_MLDSA_KEYGEN | OWN_MLDSA_SIGN;

macro_rules! desc {
    ($kem:literal, $dsa:literal) => {
        descriptor_own_randomness::<Pqcrypto>(
            c"pqcrypto",
            cstr(concat!(
                versions!(),
                ", ML-KEM ",
                $kem,
                ", ML-DSA ",
                $dsa,
                "\0"
            )),
            true,
            OWN,
        )
    };
}

static AVX2: Descriptor11 = desc!("avx2", "avx2");
static KEM_CLEAN: Descriptor11 = desc!("clean", "avx2");
static CLEAN: Descriptor11 = desc!("clean", "clean");

/// The entry point pqcprof looks up.
#[no_mangle]
pub extern "C" fn pqcprof_plugin_v1() -> *const Descriptor {
    match (kem_avx2_runs(), dsa_avx2_runs()) {
        (true, true) => AVX2.as_entry(),
        (false, true) => KEM_CLEAN.as_entry(),
        // ML-DSA's AVX2 code is compiled wherever ML-KEM's is.
        _ => CLEAN.as_entry(),
    }
}

/// ML-KEM for one parameter set's module.
macro_rules! kem {
    ($name:ident, $m:ident) => {
        mod $name {
            use super::Failure;
            use pqcrypto_mlkem::$m;
            use pqcrypto_traits::kem::{
                Ciphertext as _, PublicKey as _, SecretKey as _, SharedSecret as _,
            };

            pub fn keygen(ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
                let (pk, sk) = $m::keypair();
                ek.copy_from_slice(pk.as_bytes());
                dk.copy_from_slice(sk.as_bytes());
                Ok(())
            }

            pub fn encaps(ek: &[u8], c: &mut [u8], k: &mut [u8]) -> Result<(), Failure> {
                let pk = $m::PublicKey::from_bytes(ek).map_err(|_| "ek of another length")?;
                let (ss, ct) = $m::encapsulate(&pk);
                c.copy_from_slice(ct.as_bytes());
                k.copy_from_slice(ss.as_bytes());
                Ok(())
            }

            pub fn decaps(dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure> {
                let sk = $m::SecretKey::from_bytes(dk).map_err(|_| "dk of another length")?;
                let ct = $m::Ciphertext::from_bytes(c).map_err(|_| "c of another length")?;
                k.copy_from_slice($m::decapsulate(&ct, &sk).as_bytes());
                Ok(())
            }
        }
    };
}

kem!(kem512, mlkem512);
kem!(kem768, mlkem768);
kem!(kem1024, mlkem1024);

/// ML-DSA for one parameter set's module.
macro_rules! dsa {
    ($name:ident, $m:ident) => {
        mod $name {
            use super::Failure;
            use pqcrypto_mldsa::$m;
            use pqcrypto_traits::sign::{DetachedSignature as _, PublicKey as _, SecretKey as _};

            pub fn keygen(pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
                let (p, s) = $m::keypair();
                pk.copy_from_slice(p.as_bytes());
                sk.copy_from_slice(s.as_bytes());
                Ok(())
            }

            pub fn sign(sk: &[u8], msg: &[u8], ctx: &[u8], sig: &mut [u8]) -> Result<(), Failure> {
                let s = $m::SecretKey::from_bytes(sk).map_err(|_| "sk of another length")?;
                let g = $m::detached_sign_ctx(msg, ctx, &s);
                if g.as_bytes().len() != sig.len() {
                    return Err("the signature is not of the standard's length");
                }
                sig.copy_from_slice(g.as_bytes());
                Ok(())
            }

            pub fn verify(pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, Failure> {
                let p = $m::PublicKey::from_bytes(pk).map_err(|_| "pk of another length")?;
                let Ok(g) = $m::DetachedSignature::from_bytes(sig) else {
                    return Ok(false);
                };
                Ok($m::verify_detached_signature_ctx(&g, msg, ctx, &p).is_ok())
            }
        }
    };
}

dsa!(dsa44, mldsa44);
dsa!(dsa65, mldsa65);
dsa!(dsa87, mldsa87);

const UNKNOWN: Failure = "unknown parameter set";

impl Implementation for Pqcrypto {
    fn mlkem_keygen(set: u32, _dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
        match set {
            512 => kem512::keygen(ek, dk),
            768 => kem768::keygen(ek, dk),
            1024 => kem1024::keygen(ek, dk),
            _ => Err(UNKNOWN),
        }
    }
    fn mlkem_encaps(
        set: u32,
        ek: &[u8],
        _m: &[u8],
        c: &mut [u8],
        k: &mut [u8],
    ) -> Result<(), Failure> {
        match set {
            512 => kem512::encaps(ek, c, k),
            768 => kem768::encaps(ek, c, k),
            1024 => kem1024::encaps(ek, c, k),
            _ => Err(UNKNOWN),
        }
    }
    fn mlkem_decaps(set: u32, dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure> {
        match set {
            512 => kem512::decaps(dk, c, k),
            768 => kem768::decaps(dk, c, k),
            1024 => kem1024::decaps(dk, c, k),
            _ => Err(UNKNOWN),
        }
    }
    fn mldsa_keygen(set: u32, _xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
        match set {
            44 => dsa44::keygen(pk, sk),
            65 => dsa65::keygen(pk, sk),
            87 => dsa87::keygen(pk, sk),
            _ => Err(UNKNOWN),
        }
    }
    fn mldsa_sign(
        set: u32,
        sk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        _rnd: &[u8],
        sig: &mut [u8],
    ) -> Result<(), Failure> {
        match set {
            44 => dsa44::sign(sk, msg, ctx, sig),
            65 => dsa65::sign(sk, msg, ctx, sig),
            87 => dsa87::sign(sk, msg, ctx, sig),
            _ => Err(UNKNOWN),
        }
    }
    fn mldsa_verify(
        set: u32,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<bool, Failure> {
        match set {
            44 => dsa44::verify(pk, msg, ctx, sig),
            65 => dsa65::verify(pk, msg, ctx, sig),
            87 => dsa87::verify(pk, msg, ctx, sig),
            _ => Err(UNKNOWN),
        }
    }
}
