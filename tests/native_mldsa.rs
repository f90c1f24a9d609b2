//! Byte-exact proof of our FIPS 204 ML-DSA (cuda/native/mldsa.cuh, compiled for
//! the host by build.rs) against three independent implementations:
//! OpenSSL 3.6 (vendored), RustCrypto `ml-dsa` and liboqs (`oqs`).
//!
//! For ML-DSA-44/65/87, over `CASES` random inputs each from a seeded
//! ChaCha20 RNG:
//!   * KeyGen_internal(xi): public and secret key equal OpenSSL's and
//!     RustCrypto's, byte for byte;
//!   * deterministic signatures (rnd = 0) equal OpenSSL's (`deterministic`
//!     parameter) and RustCrypto's `sign_deterministic`, for messages of 0, 1,
//!     33 and 1024 bytes, with an empty and with a non-empty context;
//!   * hedged signatures with a given rnd equal OpenSSL's (`test-entropy`
//!     parameter) and RustCrypto's Sign_internal;
//!   * our signatures verify under liboqs, OpenSSL and RustCrypto; liboqs's and
//!     OpenSSL's randomized signatures verify under ours;
//!   * a flipped bit in the message, context, signature (anywhere, and in the
//!     hint bytes) or public key is rejected by ours exactly when it is by
//!     liboqs, OpenSSL and RustCrypto.
//!
//! A failure names the seed and the case.
//!
//! `deterministic_signatures_of_many_iterations` picks, for each parameter
//! set, the messages whose deterministic signature takes the most
//! iterations of the rejection loop among a few hundred (the host build
//! counts them), and checks those against OpenSSL and liboqs, and the Keccak
//! work per iteration: A^ is sampled once per signature, y once per
//! iteration.

use ml_dsa::{
    EncodedVerifyingKey, ExpandedSigningKey, MlDsa44, MlDsa65, MlDsa87, MlDsaParams, Seed,
    Signature, VerifyingKey, B32,
};
use openssl::md_ctx::MdCtx;
use openssl::pkey::{KeyType, PKey, Private, Public};
use pqcprof::backend::native_gpu::host::{
    mldsa_keygen, mldsa_sign, mldsa_sign_counted, mldsa_verify,
};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

const SEED: u64 = 0x4d4c_2d44_5341_0204;
const CASES: usize = 100;
const MSG_LENS: [usize; 4] = [0, 1, 33, 1024];

/// Setting ML-DSA signature parameters that the `openssl` crate has no safe
/// wrapper for ("deterministic", "test-entropy"; see OpenSSL's
/// providers/implementations/signature/ml_dsa_sig.c).
mod ossl {
    use openssl::pkey_ctx::PkeyCtxRef;
    use std::os::raw::{c_char, c_int, c_uint, c_void};

    #[repr(C)]
    struct Param {
        key: *const c_char,
        data_type: c_uint,
        data: *mut c_void,
        data_size: usize,
        return_size: usize,
    }

    const OSSL_PARAM_INTEGER: c_uint = 1;
    const OSSL_PARAM_OCTET_STRING: c_uint = 5;
    const OSSL_PARAM_UNMODIFIED: usize = usize::MAX;

    extern "C" {
        // Linked from the vendored libcrypto that openssl-sys builds.
        fn EVP_PKEY_CTX_set_params(ctx: *mut c_void, params: *const Param) -> c_int;
    }

    /// rnd = 0: OpenSSL's deterministic variant; otherwise rnd as the
    /// signing randomness.
    pub fn set_rnd<T>(pctx: &mut PkeyCtxRef<T>, rnd: &[u8; 32]) {
        let mut det: c_int = 1;
        let mut ent = *rnd;
        let param = if rnd.iter().all(|&b| b == 0) {
            Param {
                key: c"deterministic".as_ptr(),
                data_type: OSSL_PARAM_INTEGER,
                data: &mut det as *mut c_int as *mut c_void,
                data_size: std::mem::size_of::<c_int>(),
                return_size: OSSL_PARAM_UNMODIFIED,
            }
        } else {
            Param {
                key: c"test-entropy".as_ptr(),
                data_type: OSSL_PARAM_OCTET_STRING,
                data: ent.as_mut_ptr() as *mut c_void,
                data_size: ent.len(),
                return_size: OSSL_PARAM_UNMODIFIED,
            }
        };
        let end = Param {
            key: std::ptr::null(),
            data_type: 0,
            data: std::ptr::null_mut(),
            data_size: 0,
            return_size: 0,
        };
        let params = [param, end];
        // A `&PkeyCtxRef` is the EVP_PKEY_CTX pointer itself (foreign-types).
        let raw = pctx as *mut PkeyCtxRef<T> as *mut c_void;
        // SAFETY: raw is a live EVP_PKEY_CTX; params is an OSSL_PARAM array
        // ending in an all-zero entry, and its data outlives the call.
        let rc = unsafe { EVP_PKEY_CTX_set_params(raw, params.as_ptr()) };
        assert_eq!(rc, 1, "EVP_PKEY_CTX_set_params");
    }
}

/// A changed input for verification: (what changed, pk, msg, ctx, sig).
type Variant = (String, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

struct Level {
    level: u32,
    key_type: KeyType,
    oqs_alg: oqs::sig::Algorithm,
    pk_len: usize,
    sk_len: usize,
    sig_len: usize,
    /// Offset of the hint bytes (omega + k) in a signature.
    hint_off: usize,
}

fn openssl_sign(key: &PKey<Private>, msg: &[u8], ctx: &[u8], rnd: Option<&[u8; 32]>) -> Vec<u8> {
    let mut md = MdCtx::new().unwrap();
    let pctx = md.digest_sign_init(None, key).unwrap();
    if !ctx.is_empty() {
        pctx.set_context_string(ctx).unwrap();
    }
    if let Some(rnd) = rnd {
        ossl::set_rnd(pctx, rnd);
    }
    let mut sig = Vec::new();
    md.digest_sign_to_vec(msg, &mut sig).unwrap();
    sig
}

fn openssl_verify(lv: &Level, pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> bool {
    let key: PKey<Public> = match PKey::public_key_from_raw_bytes_ex(None, lv.key_type, None, pk) {
        Ok(k) => k,
        Err(_) => return false,
    };
    let mut md = MdCtx::new().unwrap();
    let pctx = md.digest_verify_init(None, &key).unwrap();
    if !ctx.is_empty() {
        pctx.set_context_string(ctx).unwrap();
    }
    let ok = md.digest_verify(msg, sig).unwrap_or(false);
    // Drain OpenSSL's error queue after a rejection.
    let _ = openssl::error::ErrorStack::get();
    ok
}

fn oqs_verify(sig_alg: &oqs::sig::Sig, pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> bool {
    let pk = sig_alg.public_key_from_bytes(pk).expect("oqs pk length");
    let sig = sig_alg.signature_from_bytes(sig).expect("oqs sig length");
    sig_alg.verify_with_ctx_str(msg, sig, ctx, pk).is_ok()
}

fn rc_expanded<P: MlDsaParams>(xi: &[u8; 32]) -> ExpandedSigningKey<P> {
    ExpandedSigningKey::<P>::from_seed(&Seed::try_from(&xi[..]).unwrap())
}

#[allow(deprecated)]
fn rc_keygen<P: MlDsaParams>(xi: &[u8; 32]) -> (Vec<u8>, Vec<u8>) {
    let esk = rc_expanded::<P>(xi);
    (
        esk.verifying_key().encode().to_vec(),
        esk.to_expanded().to_vec(),
    )
}

fn rc_sign<P: MlDsaParams>(xi: &[u8; 32], msg: &[u8], ctx: &[u8], rnd: &[u8; 32]) -> Vec<u8> {
    let esk = rc_expanded::<P>(xi);
    let sig = if rnd.iter().all(|&b| b == 0) {
        esk.sign_deterministic(msg, ctx).unwrap()
    } else {
        // Sign_internal on M' = 0 || |ctx| || ctx || M.
        let hdr = [0u8, ctx.len() as u8];
        let hdr: &[u8] = &hdr;
        esk.sign_internal(&[hdr, ctx, msg], &B32::try_from(&rnd[..]).unwrap())
    };
    sig.encode().to_vec()
}

fn rc_verify<P: MlDsaParams>(pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> bool {
    let vk = VerifyingKey::<P>::decode(&EncodedVerifyingKey::<P>::try_from(pk).unwrap());
    match Signature::<P>::try_from(sig) {
        Ok(s) => vk.verify_with_context(msg, ctx, &s),
        Err(_) => false,
    }
}

fn random_vec(rng: &mut ChaCha20Rng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

fn flip_bit(rng: &mut ChaCha20Rng, v: &mut [u8], from: usize) -> usize {
    let bit = rng.random_range(from * 8..v.len() * 8);
    v[bit / 8] ^= 1 << (bit % 8);
    bit
}

fn run_level<P: MlDsaParams>(lv: Level) {
    oqs::init();
    let oqs_sig = oqs::sig::Sig::new(lv.oqs_alg).unwrap();
    assert_eq!(oqs_sig.length_public_key(), lv.pk_len);
    assert_eq!(oqs_sig.length_secret_key(), lv.sk_len);
    assert_eq!(oqs_sig.length_signature(), lv.sig_len);
    let mut rng = ChaCha20Rng::seed_from_u64(SEED ^ lv.level as u64);
    let (mut flips, mut flips_accepted) = (0usize, 0usize);

    for case in 0..CASES {
        let mut xi = [0u8; 32];
        rng.fill_bytes(&mut xi);
        let msg = random_vec(&mut rng, MSG_LENS[case % MSG_LENS.len()]);
        // Empty context for even cases, 1..=255 bytes for odd ones.
        let ctx_len = if case % 2 == 0 {
            0
        } else {
            rng.random_range(1..=255usize)
        };
        let ctx = random_vec(&mut rng, ctx_len);
        let mut rnd = [0u8; 32];
        rng.fill_bytes(&mut rnd);
        let tag = format!(
            "seed={SEED:#x} ML-DSA-{} case={case} msg_len={} ctx_len={}",
            lv.level,
            msg.len(),
            ctx.len()
        );

        // KeyGen_internal(xi).
        let (pk, sk) =
            mldsa_keygen(lv.level, &xi).unwrap_or_else(|e| panic!("{tag}: keygen rc {e}"));
        assert_eq!(pk.len(), lv.pk_len, "{tag}");
        assert_eq!(sk.len(), lv.sk_len, "{tag}");
        let okey = PKey::private_key_from_seed(None, lv.key_type, None, &xi).unwrap();
        assert!(
            okey.raw_public_key().unwrap() == pk,
            "{tag}: pk differs from OpenSSL"
        );
        assert!(
            okey.raw_private_key().unwrap() == sk,
            "{tag}: sk differs from OpenSSL"
        );
        let (rpk, rsk) = rc_keygen::<P>(&xi);
        assert!(rpk == pk, "{tag}: pk differs from RustCrypto");
        assert!(rsk == sk, "{tag}: sk differs from RustCrypto");

        // Deterministic signature (rnd = 0).
        let zero = [0u8; 32];
        let sig = mldsa_sign(lv.level, &sk, &msg, &ctx, &zero)
            .unwrap_or_else(|e| panic!("{tag}: sign rc {e}"));
        assert_eq!(sig.len(), lv.sig_len, "{tag}");
        assert!(
            openssl_sign(&okey, &msg, &ctx, Some(&zero)) == sig,
            "{tag}: deterministic sig differs from OpenSSL"
        );
        assert!(
            rc_sign::<P>(&xi, &msg, &ctx, &zero) == sig,
            "{tag}: deterministic sig differs from RustCrypto"
        );

        // Hedged signature with the given rnd.
        let hsig = mldsa_sign(lv.level, &sk, &msg, &ctx, &rnd)
            .unwrap_or_else(|e| panic!("{tag}: sign rc {e}"));
        assert!(
            openssl_sign(&okey, &msg, &ctx, Some(&rnd)) == hsig,
            "{tag}: hedged sig differs from OpenSSL"
        );
        assert!(
            rc_sign::<P>(&xi, &msg, &ctx, &rnd) == hsig,
            "{tag}: hedged sig differs from RustCrypto"
        );

        // Ours verify under theirs.
        for s in [&sig, &hsig] {
            assert!(
                mldsa_verify(lv.level, &pk, &msg, &ctx, s).unwrap(),
                "{tag}: ours rejects own sig"
            );
            assert!(
                oqs_verify(&oqs_sig, &pk, &msg, &ctx, s),
                "{tag}: liboqs rejects our sig"
            );
            assert!(
                openssl_verify(&lv, &pk, &msg, &ctx, s),
                "{tag}: OpenSSL rejects our sig"
            );
            assert!(
                rc_verify::<P>(&pk, &msg, &ctx, s),
                "{tag}: RustCrypto rejects our sig"
            );
        }

        // Theirs verify under ours: liboqs (randomized, with our sk) and
        // OpenSSL (randomized).
        let osk = oqs_sig.secret_key_from_bytes(&sk).unwrap();
        let qsig = oqs_sig
            .sign_with_ctx_str(&msg, &ctx, osk)
            .unwrap()
            .into_vec();
        assert!(
            mldsa_verify(lv.level, &pk, &msg, &ctx, &qsig).unwrap(),
            "{tag}: ours rejects liboqs sig"
        );
        let ssig = openssl_sign(&okey, &msg, &ctx, None);
        assert!(
            mldsa_verify(lv.level, &pk, &msg, &ctx, &ssig).unwrap(),
            "{tag}: ours rejects OpenSSL sig"
        );

        // Flipped bits: ours rejects exactly when each of theirs does.
        let mut variants: Vec<Variant> = Vec::new();
        if !msg.is_empty() {
            let mut m = msg.clone();
            let b = flip_bit(&mut rng, &mut m, 0);
            variants.push((
                format!("msg bit {b}"),
                pk.clone(),
                m,
                ctx.clone(),
                hsig.clone(),
            ));
        }
        if !ctx.is_empty() {
            let mut c = ctx.clone();
            let b = flip_bit(&mut rng, &mut c, 0);
            variants.push((
                format!("ctx bit {b}"),
                pk.clone(),
                msg.clone(),
                c,
                hsig.clone(),
            ));
        }
        {
            let mut s = hsig.clone();
            let b = flip_bit(&mut rng, &mut s, 0);
            variants.push((
                format!("sig bit {b}"),
                pk.clone(),
                msg.clone(),
                ctx.clone(),
                s,
            ));
            let mut s = hsig.clone();
            let b = flip_bit(&mut rng, &mut s, lv.hint_off);
            variants.push((
                format!("sig hint bit {b}"),
                pk.clone(),
                msg.clone(),
                ctx.clone(),
                s,
            ));
            let mut p = pk.clone();
            let b = flip_bit(&mut rng, &mut p, 0);
            variants.push((
                format!("pk bit {b}"),
                p,
                msg.clone(),
                ctx.clone(),
                hsig.clone(),
            ));
        }
        for (what, p, m, c, s) in &variants {
            let ours = mldsa_verify(lv.level, p, m, c, s).unwrap();
            let q = oqs_verify(&oqs_sig, p, m, c, s);
            let o = openssl_verify(&lv, p, m, c, s);
            let r = rc_verify::<P>(p, m, c, s);
            assert!(
                ours == q && ours == o && ours == r,
                "{tag}: {what}: ours {ours}, liboqs {q}, OpenSSL {o}, RustCrypto {r}"
            );
            flips += 1;
            flips_accepted += ours as usize;
        }

        // Wrong lengths are invalid, not errors.
        assert!(
            !mldsa_verify(lv.level, &pk, &msg, &ctx, &hsig[..lv.sig_len - 1]).unwrap(),
            "{tag}"
        );
        assert!(
            !mldsa_verify(lv.level, &pk[..lv.pk_len - 1], &msg, &ctx, &hsig).unwrap(),
            "{tag}"
        );
    }
    // Every flipped bit of a public key, message, context or signature is
    // a forgery attempt: all four agreeing to accept one is a bug in all.
    assert!(flips > 0);
    assert_eq!(
        flips_accepted, 0,
        "ML-DSA-{}: {flips_accepted} of {flips} flipped inputs accepted (seed {SEED:#x})",
        lv.level
    );
}

#[test]
fn mldsa44_matches_openssl_rustcrypto_liboqs() {
    run_level::<MlDsa44>(Level {
        level: 44,
        key_type: KeyType::ML_DSA_44,
        oqs_alg: oqs::sig::Algorithm::MlDsa44,
        pk_len: 1312,
        sk_len: 2560,
        sig_len: 2420,
        hint_off: 2420 - (80 + 4),
    });
}

#[test]
fn mldsa65_matches_openssl_rustcrypto_liboqs() {
    run_level::<MlDsa65>(Level {
        level: 65,
        key_type: KeyType::ML_DSA_65,
        oqs_alg: oqs::sig::Algorithm::MlDsa65,
        pk_len: 1952,
        sk_len: 4032,
        sig_len: 3309,
        hint_off: 3309 - (55 + 6),
    });
}

#[test]
fn mldsa87_matches_openssl_rustcrypto_liboqs() {
    run_level::<MlDsa87>(Level {
        level: 87,
        key_type: KeyType::ML_DSA_87,
        oqs_alg: oqs::sig::Algorithm::MlDsa87,
        pk_len: 2592,
        sk_len: 4896,
        sig_len: 4627,
        hint_off: 4627 - (75 + 8),
    });
}

#[test]
fn mldsa_error_codes() {
    let xi = [7u8; 32];
    assert_eq!(mldsa_keygen(50, &xi), Err(-1));
    let (pk, sk) = mldsa_keygen(44, &xi).unwrap();
    let long_ctx = [0u8; 256];
    assert_eq!(mldsa_sign(44, &sk, b"m", &long_ctx, &[0u8; 32]), Err(-3));
    let sig = mldsa_sign(44, &sk, b"m", &long_ctx[..255], &[0u8; 32]).unwrap();
    assert_eq!(
        mldsa_verify(44, &pk, b"m", &long_ctx[..255], &sig),
        Ok(true)
    );
    assert!(mldsa_verify(44, &pk, b"m", &long_ctx, &sig).is_err());
}

/// (level, key type, liboqs algorithm, k, l) of each parameter set.
const SETS: [(u32, KeyType, oqs::sig::Algorithm, u64, u64); 3] = [
    (44, KeyType::ML_DSA_44, oqs::sig::Algorithm::MlDsa44, 4, 4),
    (65, KeyType::ML_DSA_65, oqs::sig::Algorithm::MlDsa65, 6, 5),
    (87, KeyType::ML_DSA_87, oqs::sig::Algorithm::MlDsa87, 8, 7),
];

#[test]
fn deterministic_signatures_of_many_iterations() {
    // Messages are the 8-byte little-endian counters 0..SEARCH under one key
    // per set; the iterations of each are geometric (mean about 4-5), so the
    // longest of SEARCH is well above 10.
    const SEARCH: u64 = 400;
    const KEEP: usize = 4;
    oqs::init();
    for (level, key_type, oqs_alg, k, l) in SETS {
        let xi = [level as u8; 32];
        let (pk, sk) = mldsa_keygen(level, &xi).unwrap();
        let okey = PKey::private_key_from_seed(None, key_type, None, &xi).unwrap();
        let oqs_sig = oqs::sig::Sig::new(oqs_alg).unwrap();
        let zero = [0u8; 32];
        let mut found: Vec<(u32, u64, Vec<u8>, Vec<u8>)> = (0..SEARCH)
            .map(|i| {
                let msg = i.to_le_bytes().to_vec();
                let (sig, work) = mldsa_sign_counted(level, &sk, &msg, b"", &zero).unwrap();
                (work.attempts, work.permutations, msg, sig)
            })
            .collect();
        let total: u64 = found.iter().map(|f| f.1).sum();
        let attempts: u64 = found.iter().map(|f| u64::from(f.0)).sum();
        eprintln!(
            "ML-DSA-{level}: {:.1} Keccak-f1600 permutations per deterministic signature, {:.2} iterations (mean of {SEARCH} 8-byte messages)",
            total as f64 / SEARCH as f64,
            attempts as f64 / SEARCH as f64
        );
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        assert!(
            found[0].0 >= 10,
            "ML-DSA-{level}: no message of {SEARCH} needs 10 iterations"
        );
        // Keccak work: mu and rho'' (short message: at most 4), A^ once
        // (k*l RejNTTPoly streams, 5 permutations each unless rejections run
        // past 840 bytes: at most 6), then per iteration l ExpandMask
        // polynomials (5 each), c~ (at most 9) and SampleInBall (at most 2).
        // Sampling A^ again in each iteration would add 5*k*l per iteration.
        let bound = |it: u64| 4 + 6 * k * l + it * (5 * l + 11);
        for (it, perms, msg, sig) in found.iter().take(KEEP) {
            let tag = format!("ML-DSA-{level} message {msg:?} ({it} iterations)");
            assert!(
                openssl_sign(&okey, msg, b"", Some(&zero)) == *sig,
                "{tag}: differs from OpenSSL"
            );
            assert!(
                oqs_verify(&oqs_sig, &pk, msg, b"", sig),
                "{tag}: liboqs rejects it"
            );
            assert!(
                *perms <= bound(u64::from(*it)),
                "{tag}: {perms} Keccak permutations, more than {}",
                bound(u64::from(*it))
            );
            eprintln!("{tag}: {perms} Keccak permutations");
        }
    }
}
