//! A pqcprof plugin over Cryspen's `libcrux-ml-kem` and `libcrux-ml-dsa`:
//! every parameter set and operation of `include/pqcprof_plugin.h`, through
//! libcrux's derandomised entry points (key generation from the seed given,
//! encapsulation with the m given, signing with the rnd and context given),
//! one item at a time, thread-safe (libcrux keeps no state).
//!
//! libcrux's top-level functions choose their code at run time: the AVX2
//! code where it was compiled in (libcrux's build scripts do so on every
//! x86-64 build unless LIBCRUX_DISABLE_SIMD256=1 is set when building) and
//! the CPU has AVX2, its portable code otherwise. The version string the
//! plugin reports names the path that runs, found the same way at load time
//! (build.rs applies libcrux's rule and sets cfg `libcrux_simd256`).
//!
//! Build: `scripts/build-plugins` (or `cargo build --release` in plugins/),
//! then `pqcprof bench --backend plugin:plugins/target/release/libpqcprof_plugin_libcrux.so`.

use pqcprof_plugin_abi::{cstr, descriptor, Descriptor, Failure, Implementation};

/// The library's versions, from plugins/Cargo.lock (build.rs).
macro_rules! versions {
    () => {
        concat!(
            "libcrux-ml-kem ",
            env!("LIBCRUX_ML_KEM_VERSION"),
            " + libcrux-ml-dsa ",
            env!("LIBCRUX_ML_DSA_VERSION"),
        )
    };
}

/// What this build's libcrux runs on this CPU: AVX2 when compiled in and the
/// CPU has it (libcrux's own test), portable otherwise.
fn avx2_runs() -> bool {
    #[cfg(all(libcrux_simd256, any(target_arch = "x86", target_arch = "x86_64")))]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(all(libcrux_simd256, any(target_arch = "x86", target_arch = "x86_64"))))]
    {
        false
    }
}

struct Libcrux;

static AVX2: Descriptor = descriptor::<Libcrux>(
    c"libcrux",
    cstr(concat!(versions!(), ", AVX2 (simd256)\0")),
    true,
);
static PORTABLE: Descriptor =
    descriptor::<Libcrux>(c"libcrux", cstr(concat!(versions!(), ", portable\0")), true);

/// The entry point pqcprof looks up.
#[no_mangle]
pub extern "C" fn pqcprof_plugin_v1() -> *const Descriptor {
    if avx2_runs() {
        &AVX2
    } else {
        &PORTABLE
    }
}

fn array<const N: usize>(b: &[u8], what: Failure) -> Result<[u8; N], Failure> {
    b.try_into().map_err(|_| what)
}

/// ML-KEM for one parameter set's module.
macro_rules! kem {
    ($name:ident, $m:ident, $pk:ident, $sk:ident, $ct:ident) => {
        mod $name {
            use super::*;
            use libcrux_ml_kem::$m;
            use libcrux_ml_kem::$m::{$ct, $pk, $sk};

            pub fn keygen(dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
                let kp = $m::generate_key_pair(array(dz, "d || z is not 64 bytes")?);
                ek.copy_from_slice(kp.pk());
                dk.copy_from_slice(kp.sk());
                Ok(())
            }

            pub fn encaps(ek: &[u8], m: &[u8], c: &mut [u8], k: &mut [u8]) -> Result<(), Failure> {
                let ek = $pk::try_from(ek).map_err(|_| "ek length")?;
                // FIPS 203 section 7.2: the modulus check.
                if !$m::validate_public_key(&ek) {
                    return Err("ek fails the modulus check (refused)");
                }
                let (ct, ss) = $m::encapsulate(&ek, array(m, "m is not 32 bytes")?);
                c.copy_from_slice(ct.as_ref());
                k.copy_from_slice(ss.as_ref());
                Ok(())
            }

            pub fn decaps(dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure> {
                let dk = $sk::try_from(dk).map_err(|_| "dk length")?;
                let ct = $ct::try_from(c).map_err(|_| "c length")?;
                // FIPS 203 section 7.3: the hash check.
                if !$m::validate_private_key(&dk, &ct) {
                    return Err("dk fails the hash check (refused)");
                }
                k.copy_from_slice(&$m::decapsulate(&dk, &ct));
                Ok(())
            }
        }
    };
}

kem!(
    kem512,
    mlkem512,
    MlKem512PublicKey,
    MlKem512PrivateKey,
    MlKem512Ciphertext
);
kem!(
    kem768,
    mlkem768,
    MlKem768PublicKey,
    MlKem768PrivateKey,
    MlKem768Ciphertext
);
kem!(
    kem1024,
    mlkem1024,
    MlKem1024PublicKey,
    MlKem1024PrivateKey,
    MlKem1024Ciphertext
);

/// ML-DSA for one parameter set's module.
macro_rules! dsa {
    ($m:ident, $name:ident, $pk:ident, $sk:ident, $sig:ident) => {
        mod $name {
            use super::*;
            use libcrux_ml_dsa::$m;
            use libcrux_ml_dsa::$m::{$pk, $sig, $sk};

            pub fn keygen(xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
                let kp = $m::generate_key_pair(array(xi, "xi is not 32 bytes")?);
                pk.copy_from_slice(kp.verification_key.as_slice());
                sk.copy_from_slice(kp.signing_key.as_slice());
                Ok(())
            }

            pub fn sign(
                sk: &[u8],
                msg: &[u8],
                ctx: &[u8],
                rnd: &[u8],
                sig: &mut [u8],
            ) -> Result<(), Failure> {
                let sk = $sk::new(array(sk, "sk length")?);
                let s = $m::sign(&sk, msg, ctx, array(rnd, "rnd is not 32 bytes")?).map_err(
                    |e| match e {
                        libcrux_ml_dsa::SigningError::ContextTooLongError => {
                            "context longer than 255 bytes"
                        }
                        libcrux_ml_dsa::SigningError::RejectionSamplingError => {
                            "libcrux gave up its rejection sampling loop"
                        }
                    },
                )?;
                sig.copy_from_slice(s.as_slice());
                Ok(())
            }

            pub fn verify(pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, Failure> {
                let pk = $pk::new(array(pk, "pk length")?);
                let sig = $sig::new(array(sig, "signature length")?);
                Ok($m::verify(&pk, msg, ctx, &sig).is_ok())
            }
        }
    };
}

dsa!(
    ml_dsa_44,
    dsa44,
    MLDSA44VerificationKey,
    MLDSA44SigningKey,
    MLDSA44Signature
);
dsa!(
    ml_dsa_65,
    dsa65,
    MLDSA65VerificationKey,
    MLDSA65SigningKey,
    MLDSA65Signature
);
dsa!(
    ml_dsa_87,
    dsa87,
    MLDSA87VerificationKey,
    MLDSA87SigningKey,
    MLDSA87Signature
);

const UNKNOWN: Failure = "unknown parameter set";

impl Implementation for Libcrux {
    fn mlkem_keygen(set: u32, dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
        match set {
            512 => kem512::keygen(dz, ek, dk),
            768 => kem768::keygen(dz, ek, dk),
            1024 => kem1024::keygen(dz, ek, dk),
            _ => Err(UNKNOWN),
        }
    }

    fn mlkem_encaps(
        set: u32,
        ek: &[u8],
        m: &[u8],
        c: &mut [u8],
        k: &mut [u8],
    ) -> Result<(), Failure> {
        match set {
            512 => kem512::encaps(ek, m, c, k),
            768 => kem768::encaps(ek, m, c, k),
            1024 => kem1024::encaps(ek, m, c, k),
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

    fn mldsa_keygen(set: u32, xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
        match set {
            44 => dsa44::keygen(xi, pk, sk),
            65 => dsa65::keygen(xi, pk, sk),
            87 => dsa87::keygen(xi, pk, sk),
            _ => Err(UNKNOWN),
        }
    }

    fn mldsa_sign(
        set: u32,
        sk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        rnd: &[u8],
        sig: &mut [u8],
    ) -> Result<(), Failure> {
        match set {
            44 => dsa44::sign(sk, msg, ctx, rnd, sig),
            65 => dsa65::sign(sk, msg, ctx, rnd, sig),
            87 => dsa87::sign(sk, msg, ctx, rnd, sig),
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
