//! A pqcprof plugin over integritychain's `fips203` and `fips204`: every
//! parameter set and operation of `include/pqcprof_plugin.h`, through their
//! seeded entry points (`keygen_from_seed` for both, `encaps_from_seed`,
//! `try_sign_with_seed` with the rnd given), one item at a time,
//! thread-safe (the crates keep no state). Both are portable Rust: one code
//! path on every CPU.
//!
//! Build: `scripts/build-plugins` (or `cargo build --release` in plugins/),
//! then `pqcprof bench --backend plugin:plugins/target/release/libpqcprof_plugin_fips.so`.

use fips203::traits::{Decaps, Encaps, KeyGen as KemKeyGen, SerDes as KemSerDes};
use fips204::traits::{KeyGen as DsaKeyGen, SerDes as DsaSerDes, Signer, Verifier};
use pqcprof_plugin_abi::{cstr, descriptor, Descriptor, Failure, Implementation};

struct Fips;

static DESCRIPTOR: Descriptor = descriptor::<Fips>(
    c"fips",
    cstr(concat!(
        "fips203 ",
        env!("FIPS203_VERSION"),
        " + fips204 ",
        env!("FIPS204_VERSION"),
        ", portable\0"
    )),
    true,
);

/// The entry point pqcprof looks up.
#[no_mangle]
pub extern "C" fn pqcprof_plugin_v1() -> *const Descriptor {
    &DESCRIPTOR
}

fn array<const N: usize>(b: &[u8], what: Failure) -> Result<[u8; N], Failure> {
    b.try_into().map_err(|_| what)
}

/// ML-KEM for one parameter set's module.
macro_rules! kem {
    ($m:ident) => {
        mod $m {
            use super::*;
            use fips203::$m::{CipherText, DecapsKey, EncapsKey, KG};

            pub fn keygen(dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
                let d = array(&dz[..32], "d is not 32 bytes")?;
                let z = array(&dz[32..], "z is not 32 bytes")?;
                let (e, k) = KG::keygen_from_seed(d, z);
                ek.copy_from_slice(&e.into_bytes());
                dk.copy_from_slice(&k.into_bytes());
                Ok(())
            }

            pub fn encaps(ek: &[u8], m: &[u8], c: &mut [u8], k: &mut [u8]) -> Result<(), Failure> {
                // try_from_bytes makes FIPS 203 section 7.2's modulus check.
                let ek = EncapsKey::try_from_bytes(array(ek, "ek length")?)?;
                let (ss, ct) = ek.encaps_from_seed(&array(m, "m is not 32 bytes")?);
                c.copy_from_slice(&ct.into_bytes());
                k.copy_from_slice(&ss.into_bytes());
                Ok(())
            }

            pub fn decaps(dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure> {
                // try_from_bytes makes FIPS 203 section 7.3's hash check.
                let dk = DecapsKey::try_from_bytes(array(dk, "dk length")?)?;
                let ct = CipherText::try_from_bytes(array(c, "c length")?)?;
                k.copy_from_slice(&dk.try_decaps(&ct)?.into_bytes());
                Ok(())
            }
        }
    };
}

kem!(ml_kem_512);
kem!(ml_kem_768);
kem!(ml_kem_1024);

/// ML-DSA for one parameter set's module.
macro_rules! dsa {
    ($m:ident) => {
        mod $m {
            use super::*;
            use fips204::$m::{PrivateKey, PublicKey, KG};

            pub fn keygen(xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
                let (p, s) = KG::keygen_from_seed(&array(xi, "xi is not 32 bytes")?);
                pk.copy_from_slice(&p.into_bytes());
                sk.copy_from_slice(&s.into_bytes());
                Ok(())
            }

            pub fn sign(
                sk: &[u8],
                msg: &[u8],
                ctx: &[u8],
                rnd: &[u8],
                sig: &mut [u8],
            ) -> Result<(), Failure> {
                let sk = PrivateKey::try_from_bytes(array(sk, "sk length")?)?;
                let s = sk.try_sign_with_seed(&array(rnd, "rnd is not 32 bytes")?, msg, ctx)?;
                sig.copy_from_slice(&s);
                Ok(())
            }

            pub fn verify(pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, Failure> {
                // A public key that does not decode verifies nothing.
                let Ok(pk) = PublicKey::try_from_bytes(array(pk, "pk length")?) else {
                    return Ok(false);
                };
                Ok(pk.verify(msg, &array(sig, "signature length")?, ctx))
            }
        }
    };
}

dsa!(ml_dsa_44);
dsa!(ml_dsa_65);
dsa!(ml_dsa_87);

const UNKNOWN: Failure = "unknown parameter set";

impl Implementation for Fips {
    fn mlkem_keygen(set: u32, dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
        match set {
            512 => ml_kem_512::keygen(dz, ek, dk),
            768 => ml_kem_768::keygen(dz, ek, dk),
            1024 => ml_kem_1024::keygen(dz, ek, dk),
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
            512 => ml_kem_512::encaps(ek, m, c, k),
            768 => ml_kem_768::encaps(ek, m, c, k),
            1024 => ml_kem_1024::encaps(ek, m, c, k),
            _ => Err(UNKNOWN),
        }
    }

    fn mlkem_decaps(set: u32, dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure> {
        match set {
            512 => ml_kem_512::decaps(dk, c, k),
            768 => ml_kem_768::decaps(dk, c, k),
            1024 => ml_kem_1024::decaps(dk, c, k),
            _ => Err(UNKNOWN),
        }
    }

    fn mldsa_keygen(set: u32, xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
        match set {
            44 => ml_dsa_44::keygen(xi, pk, sk),
            65 => ml_dsa_65::keygen(xi, pk, sk),
            87 => ml_dsa_87::keygen(xi, pk, sk),
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
            44 => ml_dsa_44::sign(sk, msg, ctx, rnd, sig),
            65 => ml_dsa_65::sign(sk, msg, ctx, rnd, sig),
            87 => ml_dsa_87::sign(sk, msg, ctx, rnd, sig),
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
            44 => ml_dsa_44::verify(pk, msg, ctx, sig),
            65 => ml_dsa_65::verify(pk, msg, ctx, sig),
            87 => ml_dsa_87::verify(pk, msg, ctx, sig),
            _ => Err(UNKNOWN),
        }
    }
}
