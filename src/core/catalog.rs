//! The catalogue: every algorithm pqcprof measures on every backend, with its
//! family, NIST security category and sizes.
//!
//! Sizes are computed from the parameter sets of FIPS 203 (ML-KEM, Table 2)
//! and FIPS 204 (ML-DSA, Table 1) with the standards' own size formulas, so
//! each fact is written once. Tests check the results against the byte
//! counts the standards print (FIPS 203 Table 3, FIPS 204 Table 2) and
//! against the buffers liboqs really produces.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The family an algorithm belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Family {
    /// FIPS 203 module-lattice KEM.
    #[serde(rename = "ML-KEM")]
    MlKem,
    /// FIPS 204 module-lattice signature.
    #[serde(rename = "ML-DSA")]
    MlDsa,
}

/// Key encapsulation or signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Key encapsulation mechanism.
    Kem,
    /// Digital signature.
    Signature,
}

/// One operation of an algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Operation {
    /// Key generation.
    KeyGen,
    /// KEM encapsulation.
    Encaps,
    /// KEM decapsulation.
    Decaps,
    /// Signing.
    Sign,
    /// Signature verification.
    Verify,
}

impl Family {
    /// The family's name as written in the standard.
    pub fn name(self) -> &'static str {
        match self {
            Family::MlKem => "ML-KEM",
            Family::MlDsa => "ML-DSA",
        }
    }
}

impl Operation {
    /// Every operation, in report order.
    pub const ALL: [Operation; 5] = [
        Operation::KeyGen,
        Operation::Encaps,
        Operation::Decaps,
        Operation::Sign,
        Operation::Verify,
    ];

    /// The name used in cuPQC_benchmark's JSON (`KeyGen`, `Encaps`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Operation::KeyGen => "KeyGen",
            Operation::Encaps => "Encaps",
            Operation::Decaps => "Decaps",
            Operation::Sign => "Sign",
            Operation::Verify => "Verify",
        }
    }

    /// The lower-case name used on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            Operation::KeyGen => "keygen",
            Operation::Encaps => "encaps",
            Operation::Decaps => "decaps",
            Operation::Sign => "sign",
            Operation::Verify => "verify",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cli_name())
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.cli_name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let valid: Vec<_> = Operation::ALL.iter().map(|o| o.cli_name()).collect();
                format!("unknown operation '{s}'; valid: {}", valid.join(", "))
            })
    }
}

/// FIPS 203 parameters of one ML-KEM set (Table 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlKemParams {
    /// Module rank.
    pub k: usize,
    /// Noise parameter of the secret and error in key generation.
    pub eta1: usize,
    /// Noise parameter of encryption.
    pub eta2: usize,
    /// Compression bits of the ciphertext's vector part.
    pub du: usize,
    /// Compression bits of the ciphertext's scalar part.
    pub dv: usize,
}

impl MlKemParams {
    /// Encapsulation (public) key: 384k + 32 bytes.
    pub const fn public_key_bytes(&self) -> usize {
        384 * self.k + 32
    }
    /// Decapsulation (secret) key: 768k + 96 bytes.
    pub const fn secret_key_bytes(&self) -> usize {
        768 * self.k + 96
    }
    /// Ciphertext: 32(du k + dv) bytes.
    pub const fn ciphertext_bytes(&self) -> usize {
        32 * (self.du * self.k + self.dv)
    }
}

/// FIPS 204 parameters of one ML-DSA set (Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlDsaParams {
    /// Rows of the matrix A.
    pub k: usize,
    /// Columns of the matrix A.
    pub l: usize,
    /// Private key range.
    pub eta: usize,
    /// Coefficient range of y (a power of two).
    pub gamma1: usize,
    /// Collision strength of the commitment hash, in bits.
    pub lambda: usize,
    /// Maximum number of ones in the hint.
    pub omega: usize,
}

/// Dropped bits from t (FIPS 204 Table 1).
const MLDSA_D: usize = 13;
/// bitlen(q - 1) for q = 8380417.
const MLDSA_BITLEN_Q: usize = 23;

const fn bitlen(x: usize) -> usize {
    (usize::BITS - x.leading_zeros()) as usize
}

impl MlDsaParams {
    /// Public key: 32 + 32 k (bitlen(q-1) - d) bytes.
    pub const fn public_key_bytes(&self) -> usize {
        32 + 32 * self.k * (MLDSA_BITLEN_Q - MLDSA_D)
    }
    /// Private key: 32 + 32 + 64 + 32((k + l) bitlen(2 eta) + d k) bytes.
    pub const fn secret_key_bytes(&self) -> usize {
        128 + 32 * ((self.k + self.l) * bitlen(2 * self.eta) + MLDSA_D * self.k)
    }
    /// Signature: lambda/4 + 32 l (1 + bitlen(gamma1 - 1)) + omega + k bytes.
    pub const fn signature_bytes(&self) -> usize {
        self.lambda / 4 + 32 * self.l * (1 + bitlen(self.gamma1 - 1)) + self.omega + self.k
    }
}

/// Every algorithm measured on every backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Algorithm {
    /// ML-KEM-512, NIST category 1.
    #[serde(rename = "ML-KEM-512")]
    MlKem512,
    /// ML-KEM-768, NIST category 3.
    #[serde(rename = "ML-KEM-768")]
    MlKem768,
    /// ML-KEM-1024, NIST category 5.
    #[serde(rename = "ML-KEM-1024")]
    MlKem1024,
    /// ML-DSA-44, NIST category 2.
    #[serde(rename = "ML-DSA-44")]
    MlDsa44,
    /// ML-DSA-65, NIST category 3.
    #[serde(rename = "ML-DSA-65")]
    MlDsa65,
    /// ML-DSA-87, NIST category 5.
    #[serde(rename = "ML-DSA-87")]
    MlDsa87,
}

/// Sizes in bytes of one algorithm's objects. A public or secret key size
/// of 0 stands for one not known (a provider that does not export the
/// key): it is written as `null` in files and read back as 0, and
/// [`Sizes::public_key`] and [`Sizes::secret_key`] give `None` for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Sizes {
    /// Public (encapsulation / verification) key; `null` when not known.
    #[serde(serialize_with = "zero_as_null", deserialize_with = "null_as_zero")]
    pub public_key_bytes: usize,
    /// Secret (decapsulation / signing) key; `null` when not known.
    #[serde(serialize_with = "zero_as_null", deserialize_with = "null_as_zero")]
    pub secret_key_bytes: usize,
    /// KEM ciphertext, if a KEM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ciphertext_bytes: Option<usize>,
    /// KEM shared secret, if a KEM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_secret_bytes: Option<usize>,
    /// Signature, if a signature scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_bytes: Option<usize>,
}

impl Sizes {
    /// The public key's size, when known.
    pub fn public_key(&self) -> Option<usize> {
        (self.public_key_bytes > 0).then_some(self.public_key_bytes)
    }

    /// The secret key's size, when known.
    pub fn secret_key(&self) -> Option<usize> {
        (self.secret_key_bytes > 0).then_some(self.secret_key_bytes)
    }
}

/// A key size of 0 (not known) written as `null`.
fn zero_as_null<S: serde::Serializer>(v: &usize, s: S) -> Result<S::Ok, S::Error> {
    match v {
        0 => s.serialize_none(),
        v => s.serialize_some(v),
    }
}

/// A key size read back: `null` (not known) as 0.
fn null_as_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(Option::<usize>::deserialize(d)?.unwrap_or(0))
}

/// Shared secret size of every ML-KEM set (FIPS 203).
pub const MLKEM_SHARED_SECRET_BYTES: usize = 32;

impl Algorithm {
    /// Every algorithm, in report order.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::MlKem512,
        Algorithm::MlKem768,
        Algorithm::MlKem1024,
        Algorithm::MlDsa44,
        Algorithm::MlDsa65,
        Algorithm::MlDsa87,
    ];

    /// The standard's name, e.g. `ML-KEM-768`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::MlKem512 => "ML-KEM-512",
            Algorithm::MlKem768 => "ML-KEM-768",
            Algorithm::MlKem1024 => "ML-KEM-1024",
            Algorithm::MlDsa44 => "ML-DSA-44",
            Algorithm::MlDsa65 => "ML-DSA-65",
            Algorithm::MlDsa87 => "ML-DSA-87",
        }
    }

    /// ML-KEM or ML-DSA.
    pub fn family(self) -> Family {
        match self {
            Algorithm::MlKem512 | Algorithm::MlKem768 | Algorithm::MlKem1024 => Family::MlKem,
            _ => Family::MlDsa,
        }
    }

    /// KEM or signature.
    pub fn kind(self) -> Kind {
        match self.family() {
            Family::MlKem => Kind::Kem,
            Family::MlDsa => Kind::Signature,
        }
    }

    /// Claimed NIST security category (FIPS 203 Table 2, FIPS 204 Table 1).
    pub fn nist_level(self) -> u8 {
        match self {
            Algorithm::MlKem512 => 1,
            Algorithm::MlDsa44 => 2,
            Algorithm::MlKem768 | Algorithm::MlDsa65 => 3,
            Algorithm::MlKem1024 | Algorithm::MlDsa87 => 5,
        }
    }

    /// The three operations of this algorithm, in report order.
    pub fn operations(self) -> [Operation; 3] {
        match self.kind() {
            Kind::Kem => [Operation::KeyGen, Operation::Encaps, Operation::Decaps],
            Kind::Signature => [Operation::KeyGen, Operation::Sign, Operation::Verify],
        }
    }

    /// Whether `op` belongs to this algorithm.
    pub fn has_operation(self, op: Operation) -> bool {
        self.operations().contains(&op)
    }

    /// FIPS 203 parameters, for ML-KEM sets.
    pub fn mlkem_params(self) -> Option<MlKemParams> {
        let (k, eta1, du, dv) = match self {
            Algorithm::MlKem512 => (2, 3, 10, 4),
            Algorithm::MlKem768 => (3, 2, 10, 4),
            Algorithm::MlKem1024 => (4, 2, 11, 5),
            _ => return None,
        };
        Some(MlKemParams {
            k,
            eta1,
            eta2: 2,
            du,
            dv,
        })
    }

    /// FIPS 204 parameters, for ML-DSA sets.
    pub fn mldsa_params(self) -> Option<MlDsaParams> {
        let (k, l, eta, gamma1, lambda, omega) = match self {
            Algorithm::MlDsa44 => (4, 4, 2, 1 << 17, 128, 80),
            Algorithm::MlDsa65 => (6, 5, 4, 1 << 19, 192, 55),
            Algorithm::MlDsa87 => (8, 7, 2, 1 << 19, 256, 75),
            _ => return None,
        };
        Some(MlDsaParams {
            k,
            l,
            eta,
            gamma1,
            lambda,
            omega,
        })
    }

    /// Byte sizes of keys, ciphertexts, secrets and signatures.
    pub fn sizes(self) -> Sizes {
        if let Some(p) = self.mlkem_params() {
            Sizes {
                public_key_bytes: p.public_key_bytes(),
                secret_key_bytes: p.secret_key_bytes(),
                ciphertext_bytes: Some(p.ciphertext_bytes()),
                shared_secret_bytes: Some(MLKEM_SHARED_SECRET_BYTES),
                signature_bytes: None,
            }
        } else {
            let p = self
                .mldsa_params()
                .expect("every algorithm is ML-KEM or ML-DSA");
            Sizes {
                public_key_bytes: p.public_key_bytes(),
                secret_key_bytes: p.secret_key_bytes(),
                ciphertext_bytes: None,
                shared_secret_bytes: None,
                signature_bytes: Some(p.signature_bytes()),
            }
        }
    }

    /// Signature slot in batched buffers: the size rounded up to 8 bytes, as
    /// cuPQC lays signatures out, so one layout serves both GPU backends.
    pub fn signature_stride(self) -> Option<usize> {
        self.sizes().signature_bytes.map(|s| s.div_ceil(8) * 8)
    }

    /// The liboqs algorithm identifier.
    pub fn liboqs_kem(self) -> Option<oqs::kem::Algorithm> {
        match self {
            Algorithm::MlKem512 => Some(oqs::kem::Algorithm::MlKem512),
            Algorithm::MlKem768 => Some(oqs::kem::Algorithm::MlKem768),
            Algorithm::MlKem1024 => Some(oqs::kem::Algorithm::MlKem1024),
            _ => None,
        }
    }

    /// The liboqs signature identifier.
    pub fn liboqs_sig(self) -> Option<oqs::sig::Algorithm> {
        match self {
            Algorithm::MlDsa44 => Some(oqs::sig::Algorithm::MlDsa44),
            Algorithm::MlDsa65 => Some(oqs::sig::Algorithm::MlDsa65),
            Algorithm::MlDsa87 => Some(oqs::sig::Algorithm::MlDsa87),
            _ => None,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses `ML-KEM-768`, `mlkem768`, `ml_kem_768` and the like.
impl FromStr for Algorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let squash = |x: &str| -> String {
            x.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let want = squash(s);
        Algorithm::ALL
            .into_iter()
            .find(|a| squash(a.name()) == want)
            .ok_or_else(|| {
                let valid: Vec<_> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                format!("unknown algorithm '{s}'; valid: {}", valid.join(", "))
            })
    }
}

/// Expands a list of names; the words `all`, `mlkem` and `mldsa` select
/// groups.
pub fn parse_algorithms(names: &[String]) -> Result<Vec<Algorithm>, String> {
    let mut out = Vec::new();
    for name in names {
        for part in name.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let group: Vec<Algorithm> =
                match part.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
                    "all" => Algorithm::ALL.to_vec(),
                    "mlkem" => Algorithm::ALL
                        .into_iter()
                        .filter(|a| a.family() == Family::MlKem)
                        .collect(),
                    "mldsa" => Algorithm::ALL
                        .into_iter()
                        .filter(|a| a.family() == Family::MlDsa)
                        .collect(),
                    _ => vec![part
                        .parse::<Algorithm>()
                        .map_err(|e| format!("{e} (or a group: all, mlkem, mldsa)"))?],
                };
            for a in group {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
    }
    if out.is_empty() {
        out = Algorithm::ALL.to_vec();
    }
    out.sort();
    Ok(out)
}

/// The hybrid KEM groups OpenSSL 3.5/3.6 offers as key types, with the
/// NIST level of their ML-KEM part.
pub const OPENSSL_HYBRIDS: [(&str, u8); 4] = [
    ("X25519MLKEM768", 3),
    ("SecP256r1MLKEM768", 3),
    ("X448MLKEM1024", 5),
    ("SecP384r1MLKEM1024", 5),
];

/// pqc-sig-bench-c's spelling of the algorithms whose names differ from
/// ours or that it also measures through OpenSSL: `(ours, its)`. Its
/// traditional benchmark names RSA `RSA-PKCS1v15-<bits>` and
/// `RSA-PSS-<bits>`, ECDSA by the curve alone (`P-256`, `P-384`, `P-521`)
/// and EdDSA `Ed25519`/`Ed448`; its liboqs benchmark writes liboqs's own
/// names, which are ours too, so they are not listed. The sweep's CSVs and
/// `sizes --format sig-bench` write these names; the run file keeps ours.
pub const SIG_BENCH_NAMES: [(&str, &str); 15] = [
    ("RSA-PKCS1-2048", "RSA-PKCS1v15-2048"),
    ("RSA-PKCS1-3072", "RSA-PKCS1v15-3072"),
    ("RSA-PKCS1-4096", "RSA-PKCS1v15-4096"),
    ("RSA-PKCS1-8192", "RSA-PKCS1v15-8192"),
    ("RSA-PKCS1-16384", "RSA-PKCS1v15-16384"),
    ("RSA-PSS-2048", "RSA-PSS-2048"),
    ("RSA-PSS-3072", "RSA-PSS-3072"),
    ("RSA-PSS-4096", "RSA-PSS-4096"),
    ("RSA-PSS-8192", "RSA-PSS-8192"),
    ("RSA-PSS-16384", "RSA-PSS-16384"),
    ("ECDSA-P256", "P-256"),
    ("ECDSA-P384", "P-384"),
    ("ECDSA-P521", "P-521"),
    ("Ed25519", "Ed25519"),
    ("Ed448", "Ed448"),
];

/// pqc-sig-bench-c's name for one of ours: its spelling from
/// [`SIG_BENCH_NAMES`], else ours unchanged (liboqs names, and algorithms
/// it does not have).
pub fn sig_bench_name(ours: &str) -> &str {
    SIG_BENCH_NAMES
        .iter()
        .find(|(o, _)| *o == ours)
        .map_or(ours, |(_, theirs)| theirs)
}

/// Our name for one of pqc-sig-bench-c's: the inverse of
/// [`sig_bench_name`], so its rows join with ours.
pub fn from_sig_bench_name(theirs: &str) -> &str {
    SIG_BENCH_NAMES
        .iter()
        .find(|(_, t)| *t == theirs)
        .map_or(theirs, |(ours, _)| ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 203 Table 3 and FIPS 204 Table 2, typed from the standards'
    /// tables: the formulas above must reproduce them.
    #[test]
    fn sig_bench_names_map_both_ways() {
        assert_eq!(sig_bench_name("RSA-PKCS1-2048"), "RSA-PKCS1v15-2048");
        assert_eq!(sig_bench_name("ECDSA-P384"), "P-384");
        assert_eq!(sig_bench_name("ML-DSA-44"), "ML-DSA-44");
        assert_eq!(from_sig_bench_name("P-521"), "ECDSA-P521");
        assert_eq!(
            from_sig_bench_name("SPHINCS+-SHA2-128f-simple"),
            "SPHINCS+-SHA2-128f-simple"
        );
        for (ours, theirs) in SIG_BENCH_NAMES {
            assert_eq!(from_sig_bench_name(sig_bench_name(ours)), ours);
            assert_eq!(sig_bench_name(from_sig_bench_name(theirs)), theirs);
        }
    }

    #[test]
    fn sizes_match_the_standards_tables() {
        let expect = [
            (Algorithm::MlKem512, 800, 1632, Some(768), None),
            (Algorithm::MlKem768, 1184, 2400, Some(1088), None),
            (Algorithm::MlKem1024, 1568, 3168, Some(1568), None),
            (Algorithm::MlDsa44, 1312, 2560, None, Some(2420)),
            (Algorithm::MlDsa65, 1952, 4032, None, Some(3309)),
            (Algorithm::MlDsa87, 2592, 4896, None, Some(4627)),
        ];
        for (alg, pk, sk, ct, sig) in expect {
            let s = alg.sizes();
            assert_eq!(s.public_key_bytes, pk, "{alg} public key");
            assert_eq!(s.secret_key_bytes, sk, "{alg} secret key");
            assert_eq!(s.ciphertext_bytes, ct, "{alg} ciphertext");
            assert_eq!(s.signature_bytes, sig, "{alg} signature");
        }
    }

    #[test]
    fn signature_stride_is_eight_byte_aligned() {
        assert_eq!(Algorithm::MlDsa44.signature_stride(), Some(2424));
        assert_eq!(Algorithm::MlDsa65.signature_stride(), Some(3312));
        assert_eq!(Algorithm::MlDsa87.signature_stride(), Some(4632));
        assert_eq!(Algorithm::MlKem512.signature_stride(), None);
    }

    #[test]
    fn parses_names_and_groups() {
        assert_eq!("ml-kem-768".parse::<Algorithm>(), Ok(Algorithm::MlKem768));
        assert_eq!("MLDSA44".parse::<Algorithm>(), Ok(Algorithm::MlDsa44));
        let err = "ML-KEM-999".parse::<Algorithm>().unwrap_err();
        assert!(
            err.contains("ML-KEM-999") && err.contains("ML-DSA-87"),
            "{err}"
        );
        assert_eq!(
            parse_algorithms(&["mlkem".into()]).unwrap(),
            vec![
                Algorithm::MlKem512,
                Algorithm::MlKem768,
                Algorithm::MlKem1024
            ]
        );
        assert_eq!(parse_algorithms(&[]).unwrap().len(), 6);
        assert!(parse_algorithms(&["rsa".into()]).is_err());
    }

    #[test]
    fn levels_and_operations() {
        assert_eq!(Algorithm::MlDsa44.nist_level(), 2);
        assert_eq!(Algorithm::MlKem1024.nist_level(), 5);
        assert!(Algorithm::MlKem512.has_operation(Operation::Decaps));
        assert!(!Algorithm::MlKem512.has_operation(Operation::Sign));
        assert_eq!("SIGN".parse::<Operation>(), Ok(Operation::Sign));
    }
}
