//! Byte-exact proof of our FIPS 203 ML-KEM and FIPS 202 Keccak code
//! (`cuda/native/{keccak,mlkem}.cuh`, the same source the GPU kernels are
//! compiled from) against liboqs (`oqs`), RustCrypto `ml-kem` and OpenSSL.
//!
//! Every random case comes from a ChaCha20 stream with a fixed seed; a
//! failure message names the seed and the iteration so it can be replayed.

#[allow(deprecated)] // expanded (1632/2400/3168-byte) dk, as FIPS 203 and liboqs store it
use ml_kem::ExpandedKeyEncoding;
use ml_kem::{Decapsulate, KeyExport};
use pqcprof::backend::native_gpu::host;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

const SEED: u64 = 0x5043_5150_524f_4620; // "PCQPROF "
const ITERS: usize = 200;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn oqs_init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(oqs::init);
}

// ---------------------------------------------------------------------------
// Keccak

/// FIPS 202 example values (SHA-3 and SHAKE of the empty string and "abc").
#[test]
fn keccak_known_answers() {
    let cases: [(&[u8], &str, &str, &str, &str); 2] = [
        (
            b"",
            "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
            "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6\
             15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26",
            "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26",
            "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f\
             d75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be",
        ),
        (
            b"abc",
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
            "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e\
             10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
            "5881092dd818bf5cf8a3ddb793fbcba74097d5c526a6d35f97b83351940f2cc8",
            "483366601360a8771c6863080cc4114d8db44530f8f1e1ee4f94ea37e78b5739\
             d5a15bef186a5386c75744c0527e1faa9f8726e462a12a4feb06bd8801e751e4",
        ),
    ];
    for (input, s256, s512, k128, k256) in cases {
        let name = String::from_utf8_lossy(input);
        assert_eq!(
            host::sha3_256(input).to_vec(),
            hex(s256),
            "SHA3-256({name:?})"
        );
        assert_eq!(
            host::sha3_512(input).to_vec(),
            hex(s512),
            "SHA3-512({name:?})"
        );
        assert_eq!(
            host::shake128(input, 32),
            hex(k128),
            "SHAKE128({name:?}, 32)"
        );
        assert_eq!(
            host::shake256(input, 64),
            hex(k256),
            "SHAKE256({name:?}, 64)"
        );
    }
    // SHAKE output is one stream: a shorter squeeze is a prefix of a longer one.
    let long = host::shake128(b"abc", 1000);
    assert_eq!(&long[..32], &hex(cases[1].3)[..]);
    assert!(host::shake256(b"", 0).is_empty());
}

fn openssl_digest(
    md: openssl::hash::MessageDigest,
    input: &[u8],
    xof_len: Option<usize>,
) -> Vec<u8> {
    let mut h = openssl::hash::Hasher::new(md).unwrap();
    h.update(input).unwrap();
    match xof_len {
        Some(n) => {
            let mut out = vec![0u8; n];
            h.finish_xof(&mut out).unwrap();
            out
        }
        None => h.finish().unwrap().to_vec(),
    }
}

/// Random inputs of many lengths (around every block boundary) and long
/// squeezes, against OpenSSL.
#[test]
fn keccak_vs_openssl() {
    use openssl::hash::MessageDigest;
    let seed = SEED ^ 0x4b;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut lens: Vec<usize> = (0..=600).collect();
    lens.extend((0..100).map(|_| rng.random_range(600..5000)));
    for (it, &len) in lens.iter().enumerate() {
        let ctx = format!("seed {seed:#x} iteration {it} input length {len}");
        let mut input = vec![0u8; len];
        rng.fill_bytes(&mut input);
        let outlen = rng.random_range(0..1200);
        assert_eq!(
            host::sha3_256(&input).to_vec(),
            openssl_digest(MessageDigest::sha3_256(), &input, None),
            "{ctx}: SHA3-256"
        );
        assert_eq!(
            host::sha3_512(&input).to_vec(),
            openssl_digest(MessageDigest::sha3_512(), &input, None),
            "{ctx}: SHA3-512"
        );
        assert_eq!(
            host::shake128(&input, outlen),
            openssl_digest(MessageDigest::shake_128(), &input, Some(outlen)),
            "{ctx}: SHAKE128 to {outlen} bytes"
        );
        assert_eq!(
            host::shake256(&input, outlen),
            openssl_digest(MessageDigest::shake_256(), &input, Some(outlen)),
            "{ctx}: SHAKE256 to {outlen} bytes"
        );
    }
}

// ---------------------------------------------------------------------------
// ML-KEM

macro_rules! mlkem_suite {
    ($test:ident, $k:expr, $alg:ident, $module:ident) => {
        /// KeyGen against liboqs and RustCrypto, Encaps against RustCrypto,
        /// cross-decapsulation with liboqs, implicit rejection against liboqs
        /// and RustCrypto.
        #[test]
        fn $test() {
            use ml_kem::$module::{Ciphertext, DecapsulationKey};
            oqs_init();
            let k: usize = $k;
            let kem = oqs::kem::Kem::new(oqs::kem::Algorithm::$alg).unwrap();
            let seed = SEED ^ k as u64;
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            for it in 0..ITERS {
                let ctx = format!("{} seed {seed:#x} iteration {it}", stringify!($alg));
                let mut d = [0u8; 32];
                let mut z = [0u8; 32];
                let mut m = [0u8; 32];
                rng.fill_bytes(&mut d);
                rng.fill_bytes(&mut z);
                rng.fill_bytes(&mut m);
                let mut dz = [0u8; 64];
                dz[..32].copy_from_slice(&d);
                dz[32..].copy_from_slice(&z);

                // KeyGen_internal(d, z)
                let (pk, sk) = host::mlkem_keygen(k, &d, &z)
                    .unwrap_or_else(|e| panic!("{ctx}: keygen rc {e}"));
                let (opk, osk) = kem
                    .keypair_derand(kem.keypair_seed_from_bytes(&dz).unwrap())
                    .unwrap();
                assert!(
                    pk == opk.as_ref(),
                    "{ctx}: ek differs from liboqs keypair_derand"
                );
                assert!(
                    sk == osk.as_ref(),
                    "{ctx}: dk differs from liboqs keypair_derand"
                );
                let rdk = DecapsulationKey::from_seed(ml_kem::Seed::from(dz));
                let rek = rdk.encapsulation_key();
                assert!(
                    pk == rek.to_bytes().as_slice(),
                    "{ctx}: ek differs from RustCrypto"
                );
                #[allow(deprecated)]
                let rsk = rdk.to_expanded_bytes();
                assert!(sk == rsk.as_slice(), "{ctx}: dk differs from RustCrypto");

                // Encaps_internal(ek, m)
                let (ct, ss) = host::mlkem_encaps(k, &pk, &m)
                    .unwrap_or_else(|e| panic!("{ctx}: encaps rc {e}"));
                let (rct, rss) = rek.encapsulate_deterministic(&ml_kem::B32::from(m));
                assert!(
                    ct == rct.as_slice(),
                    "{ctx}: ciphertext differs from RustCrypto"
                );
                assert!(
                    ss == rss.as_slice(),
                    "{ctx}: shared secret differs from RustCrypto"
                );

                // Our ciphertext under liboqs and under ours.
                let osk_ref = kem.secret_key_from_bytes(&sk).unwrap();
                let oss = kem
                    .decapsulate(osk_ref, kem.ciphertext_from_bytes(&ct).unwrap())
                    .unwrap();
                assert!(
                    oss.as_ref() == ss,
                    "{ctx}: liboqs decapsulates our ciphertext differently"
                );
                let dss = host::mlkem_decaps(k, &ct, &sk)
                    .unwrap_or_else(|e| panic!("{ctx}: decaps rc {e}"));
                assert!(dss == ss, "{ctx}: our decaps of our ciphertext");

                // liboqs's ciphertext under ours.
                let (oct, oss2) = kem
                    .encapsulate(kem.public_key_from_bytes(&pk).unwrap())
                    .unwrap();
                let dss2 = host::mlkem_decaps(k, oct.as_ref(), &sk).unwrap();
                assert!(
                    dss2 == oss2.as_ref(),
                    "{ctx}: our decaps of a liboqs ciphertext"
                );

                // Implicit rejection: one flipped bit.
                let mut bad = ct.clone();
                let bit = rng.random_range(0..bad.len() * 8);
                bad[bit / 8] ^= 1 << (bit % 8);
                let ours = host::mlkem_decaps(k, &bad, &sk).unwrap();
                let theirs = kem
                    .decapsulate(osk_ref, kem.ciphertext_from_bytes(&bad).unwrap())
                    .unwrap();
                assert!(
                    ours == theirs.as_ref(),
                    "{ctx}: tampered (bit {bit}) decaps differs from liboqs"
                );
                let rbad = Ciphertext::try_from(bad.as_slice()).unwrap();
                assert!(
                    ours == rdk.decapsulate(&rbad).as_slice(),
                    "{ctx}: tampered decaps differs from RustCrypto"
                );
                assert!(
                    ours != ss,
                    "{ctx}: tampered ciphertext gave the real secret"
                );
            }
        }
    };
}

mlkem_suite!(
    mlkem512_matches_liboqs_and_rustcrypto,
    2,
    MlKem512,
    ml_kem_512
);
mlkem_suite!(
    mlkem768_matches_liboqs_and_rustcrypto,
    3,
    MlKem768,
    ml_kem_768
);
mlkem_suite!(
    mlkem1024_matches_liboqs_and_rustcrypto,
    4,
    MlKem1024,
    ml_kem_1024
);

/// FIPS 203 section 7.2 modulus check, section 7.3 hash check, parameter check.
#[test]
fn mlkem_input_checks() {
    let seed = SEED ^ 0x7;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for k in 2..=4usize {
        for it in 0..20 {
            let ctx = format!("k={k} seed {seed:#x} iteration {it}");
            let mut d = [0u8; 32];
            let mut z = [0u8; 32];
            let mut m = [0u8; 32];
            rng.fill_bytes(&mut d);
            rng.fill_bytes(&mut z);
            rng.fill_bytes(&mut m);
            let (pk, sk) = host::mlkem_keygen(k, &d, &z).unwrap();
            let (ct, _) = host::mlkem_encaps(k, &pk, &m).unwrap();

            // A coefficient of t-hat in [q, 4096): encaps must refuse the key.
            let mut bad = pk.clone();
            let i = 3 * rng.random_range(0..128 * k);
            let v: u16 = rng.random_range(3329..4096);
            if rng.random::<bool>() {
                bad[i] = v as u8;
                bad[i + 1] = (bad[i + 1] & 0xf0) | (v >> 8) as u8;
            } else {
                bad[i + 1] = (bad[i + 1] & 0x0f) | ((v & 15) << 4) as u8;
                bad[i + 2] = (v >> 4) as u8;
            }
            assert_eq!(
                host::mlkem_encaps(k, &bad, &m),
                Err(-2),
                "{ctx}: modulus check"
            );

            // ek inside dk no longer matches H(ek): decaps must refuse the key.
            let mut bad = sk.clone();
            let j = 384 * k + rng.random_range(0..384 * k + 32);
            bad[j] ^= rng.random_range(1..=255u8);
            assert_eq!(
                host::mlkem_decaps(k, &ct, &bad),
                Err(-2),
                "{ctx}: hash check"
            );
        }
    }
    let zero = [0u8; 32];
    assert_eq!(host::mlkem_keygen(5, &zero, &zero), Err(-1));
}
