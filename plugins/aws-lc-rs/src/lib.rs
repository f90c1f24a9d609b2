//! A pqcprof plugin over AWS's `aws-lc-rs` (AWS-LC's C code through
//! `aws-lc-sys`): every parameter set and operation of
//! `include/pqcprof_plugin.h`, one item at a time, thread-safe (AWS-LC keeps
//! no state between these calls).
//!
//! What aws-lc-rs offers, and so what the plugin does:
//! - ML-KEM (`aws_lc_rs::kem`): `DecapsulationKey::generate` and
//!   `EncapsulationKey::encapsulate` draw their randomness inside AWS-LC; no
//!   entry point takes d, z or m. So ML-KEM keygen and encaps draw their
//!   own randomness (ABI 1.1, `own_randomness`) and ignore what pqcprof
//!   hands them; `DecapsulationKey::new(dk)` then `decapsulate(c)` is exact.
//! - ML-DSA (`aws_lc_rs::signature`, stable since 1.18): `PqdsaKeyPair::
//!   from_seed(xi)` is FIPS 204's KeyGen_internal, judged byte for byte;
//!   `PqdsaKeyPair::sign` draws rnd inside AWS-LC (hedged), so signing is
//!   declared in `own_randomness` too; `UnparsedPublicKey::verify` is exact.
//!   Both sign and verify pure ML-DSA with the empty context only: the API
//!   takes no context, so a call with a non-empty one fails, saying so.
//!
//! AWS-LC's ML-KEM is mlkem-native and its ML-DSA mldsa-native, each with an
//! x86-64 AVX2 backend that AWS-LC compiles in on x86-64 Linux and picks at
//! run time (ML-KEM: AVX2 and BMI2; ML-DSA: AVX2), portable C otherwise.
//! The version string names what runs, found the same way at load time.
//!
//! Build: `scripts/build-plugins` (or `cargo build --release` in plugins/),
//! then `pqcprof bench --backend plugin:plugins/target/release/libpqcprof_plugin_aws_lc_rs.so`.

use aws_lc_rs::encoding::AsRawBytes;
use aws_lc_rs::kem::{
    Ciphertext, DecapsulationKey, EncapsulationKey, ML_KEM_1024, ML_KEM_512, ML_KEM_768,
};
use aws_lc_rs::signature::{
    KeyPair, PqdsaKeyPair, PqdsaSigningAlgorithm, PqdsaVerificationAlgorithm, UnparsedPublicKey,
    ML_DSA_44, ML_DSA_44_SIGNING, ML_DSA_65, ML_DSA_65_SIGNING, ML_DSA_87, ML_DSA_87_SIGNING,
};
use pqcprof_plugin_abi::{
    cstr, descriptor_own_randomness, Descriptor, Descriptor11, Failure, Implementation,
    OWN_MLDSA_SIGN, OWN_MLKEM_ENCAPS, OWN_MLKEM_KEYGEN,
};

struct AwsLc;

macro_rules! desc {
    ($kem:literal, $dsa:literal) => {
        descriptor_own_randomness::<AwsLc>(
            c"aws-lc-rs",
            cstr(concat!(
                "aws-lc-rs ",
                env!("AWS_LC_RS_VERSION"),
                " + aws-lc-sys ",
                env!("AWS_LC_SYS_VERSION"),
                " (AWS-LC: mlkem-native, mldsa-native), ML-KEM ",
                $kem,
                ", ML-DSA ",
                $dsa,
                "\0"
            )),
            true,
            OWN_MLKEM_KEYGEN | OWN_MLKEM_ENCAPS | OWN_MLDSA_SIGN,
        )
    };
}

static BOTH_AVX2: Descriptor11 = desc!("x86_64 AVX2", "x86_64 AVX2");
static DSA_AVX2: Descriptor11 = desc!("portable C", "x86_64 AVX2");
static PORTABLE: Descriptor11 = desc!("portable C", "portable C");

/// AWS-LC's own test of its x86-64 backends (mlkem-native: AVX2 and BMI2;
/// mldsa-native: AVX2), where the build compiled them in (build.rs: cfg
/// `awslc_x86_64_native`): (ML-KEM, ML-DSA).
fn native() -> (bool, bool) {
    #[cfg(all(awslc_x86_64_native, target_arch = "x86_64"))]
    {
        let avx2 = std::is_x86_feature_detected!("avx2");
        (avx2 && std::is_x86_feature_detected!("bmi2"), avx2)
    }
    #[cfg(not(all(awslc_x86_64_native, target_arch = "x86_64")))]
    {
        (false, false)
    }
}

/// The entry point pqcprof looks up.
#[no_mangle]
pub extern "C" fn pqcprof_plugin_v1() -> *const Descriptor {
    match native() {
        (true, true) => BOTH_AVX2.as_entry(),
        (false, true) => DSA_AVX2.as_entry(),
        _ => PORTABLE.as_entry(),
    }
}

type KemAlg = aws_lc_rs::kem::Algorithm<aws_lc_rs::kem::AlgorithmId>;

fn kem(set: u32) -> Result<&'static KemAlg, Failure> {
    match set {
        512 => Ok(&ML_KEM_512),
        768 => Ok(&ML_KEM_768),
        1024 => Ok(&ML_KEM_1024),
        _ => Err(UNKNOWN),
    }
}

fn dsa(
    set: u32,
) -> Result<
    (
        &'static PqdsaSigningAlgorithm,
        &'static PqdsaVerificationAlgorithm,
    ),
    Failure,
> {
    match set {
        44 => Ok((&ML_DSA_44_SIGNING, &ML_DSA_44)),
        65 => Ok((&ML_DSA_65_SIGNING, &ML_DSA_65)),
        87 => Ok((&ML_DSA_87_SIGNING, &ML_DSA_87)),
        _ => Err(UNKNOWN),
    }
}

const UNKNOWN: Failure = "unknown parameter set";
const NO_CONTEXT: Failure =
    "aws-lc-rs's ML-DSA API signs and verifies with the empty context only; this call has a context";

fn copy(out: &mut [u8], bytes: &[u8], what: Failure) -> Result<(), Failure> {
    if out.len() != bytes.len() {
        return Err(what);
    }
    out.copy_from_slice(bytes);
    Ok(())
}

impl Implementation for AwsLc {
    fn mlkem_keygen(set: u32, _dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure> {
        let key = DecapsulationKey::generate(kem(set)?).map_err(|_| "key generation failed")?;
        let d = key.key_bytes().map_err(|_| "dk unavailable")?;
        let e = key
            .encapsulation_key()
            .and_then(|k| k.key_bytes())
            .map_err(|_| "ek unavailable")?;
        copy(ek, e.as_ref(), "ek of another length")?;
        copy(dk, d.as_ref(), "dk of another length")
    }
    fn mlkem_encaps(
        set: u32,
        ek: &[u8],
        _m: &[u8],
        c: &mut [u8],
        k: &mut [u8],
    ) -> Result<(), Failure> {
        let key = EncapsulationKey::new(kem(set)?, ek).map_err(|_| "ek refused")?;
        let (ct, ss) = key.encapsulate().map_err(|_| "encapsulation failed")?;
        copy(c, ct.as_ref(), "c of another length")?;
        copy(k, ss.as_ref(), "K of another length")
    }
    fn mlkem_decaps(set: u32, dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure> {
        let key = DecapsulationKey::new(kem(set)?, dk).map_err(|_| "dk refused")?;
        let ss = key
            .decapsulate(Ciphertext::from(c))
            .map_err(|_| "decapsulation failed")?;
        copy(k, ss.as_ref(), "K of another length")
    }
    fn mldsa_keygen(set: u32, xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure> {
        let (alg, _) = dsa(set)?;
        let pair = PqdsaKeyPair::from_seed(alg, xi).map_err(|_| "key generation from xi failed")?;
        let raw = pair
            .private_key()
            .as_raw_bytes()
            .map_err(|_| "sk unavailable")?;
        copy(pk, pair.public_key().as_ref(), "pk of another length")?;
        copy(sk, raw.as_ref(), "sk of another length")
    }
    fn mldsa_sign(
        set: u32,
        sk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        _rnd: &[u8],
        sig: &mut [u8],
    ) -> Result<(), Failure> {
        if !ctx.is_empty() {
            return Err(NO_CONTEXT);
        }
        let (alg, _) = dsa(set)?;
        let pair = PqdsaKeyPair::from_raw_private_key(alg, sk).map_err(|_| "sk refused")?;
        let n = pair.sign(msg, sig).map_err(|_| "signing failed")?;
        if n != sig.len() {
            return Err("the signature is not of the standard's length");
        }
        Ok(())
    }
    fn mldsa_verify(
        set: u32,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<bool, Failure> {
        if !ctx.is_empty() {
            return Err(NO_CONTEXT);
        }
        let (_, alg) = dsa(set)?;
        Ok(UnparsedPublicKey::new(alg, pk).verify(msg, sig).is_ok())
    }
}
