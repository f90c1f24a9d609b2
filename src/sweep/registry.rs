//! What exists: every KEM and signature scheme the linked liboqs lists
//! (enumerated at run time through `OQS_*_alg_count`/`_identifier`/
//! `_is_enabled`), the OpenSSL algorithms, and the composites; the
//! `--filter` language over them is in [`crate::sweep::filter`].
//!
//! Most of it is the catalogue's data (liboqs and OpenSSL names,
//! composites, hybrids) in tables.

use crate::core::catalog::OPENSSL_HYBRIDS;
use crate::core::catalog::{Kind, Operation};
use crate::sweep::composite::{CompositeKem, CompositeSig};
use crate::sweep::openssl::{self as ossl, Curve, OsslAlg, OsslKem, OsslSig};
use crate::sweep::oqs::{self as liboqs, OqsKem, OqsSig};
use crate::sweep::scheme::Scheme;
use crate::sweep::stfl::{self, Cost, StflSig};
use anyhow::{bail, Result};

/// Library behind an algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// liboqs 0.13 (vendored by the `oqs` crate).
    Liboqs,
    /// OpenSSL 3.6 (vendored by the `openssl` crate).
    Openssl,
    /// Two real parts combined by pqcprof.
    Composite,
}

impl Provider {
    /// `liboqs`, `openssl`, `composite`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Liboqs => "liboqs",
            Provider::Openssl => "openssl",
            Provider::Composite => "composite",
        }
    }
    /// Backend name in records.
    pub fn backend(self) -> &'static str {
        match self {
            Provider::Liboqs => "liboqs-cpu",
            Provider::Openssl => "openssl-cpu",
            Provider::Composite => "composite-cpu",
        }
    }
}

/// How to open an algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Impl {
    /// A liboqs KEM by its liboqs name.
    OqsKem(String),
    /// A liboqs signature scheme by its liboqs name.
    OqsSig(String),
    /// A stateful liboqs signature scheme (XMSS, LMS) by its liboqs name,
    /// from pqcprof's stateful-only build.
    Stfl(String),
    /// An OpenSSL algorithm.
    Ossl(OsslAlg),
    /// liboqs signature (ML-DSA set, Falcon-1024) + OpenSSL Ed25519.
    CompositeSig(&'static str),
    /// liboqs KEM (ML-KEM set, HQC-256) + OpenSSL X25519.
    CompositeKem(&'static str),
}

/// One algorithm the sweep can measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Name in records and CSVs.
    pub name: String,
    /// Family, e.g. `Falcon`, `RSA`, `Hybrid KEM`.
    pub family: String,
    /// KEM (key exchange included) or signature.
    pub kind: Kind,
    /// Library.
    pub provider: Provider,
    /// NIST category (classical: of equivalent strength).
    pub nist_level: Option<u8>,
    /// How to open it.
    pub imp: Impl,
    /// Why it cannot run in this build, if so.
    pub unavailable: Option<String>,
    /// Only measured with `--slow`.
    pub slow: bool,
}

impl Entry {
    /// The operations measured, in order (each relies on the one before).
    pub fn operations(&self) -> [Operation; 3] {
        match self.kind {
            Kind::Kem => [Operation::KeyGen, Operation::Encaps, Operation::Decaps],
            Kind::Signature => [Operation::KeyGen, Operation::Sign, Operation::Verify],
        }
    }
    /// Which CSV file its rows go to: `liboqs`, `traditional`,
    /// `openssl-pqc` or `composite`.
    pub fn csv_type(&self) -> &'static str {
        match (&self.provider, &self.imp) {
            (Provider::Liboqs, _) => "liboqs",
            (Provider::Composite, _) => "composite",
            (_, Impl::Ossl(OsslAlg::NamedKem(_) | OsslAlg::NamedSig(_))) => "openssl-pqc",
            _ => "traditional",
        }
    }
    /// Opens it with a first key pair (signatures sign `message`).
    pub fn open(&self, message: &[u8]) -> Result<Scheme> {
        if let Some(r) = &self.unavailable {
            bail!("{r}");
        }
        Ok(match &self.imp {
            Impl::OqsKem(n) => Scheme::Kem(Box::new(OqsKem::open(n)?)),
            Impl::OqsSig(n) => Scheme::Sig(Box::new(OqsSig::open(n, message.to_vec())?)),
            Impl::Stfl(n) => Scheme::Sig(Box::new(StflSig::open(n, message.to_vec())?)),
            Impl::Ossl(a) => match self.kind {
                Kind::Kem => Scheme::Kem(Box::new(OsslKem::open(*a)?)),
                Kind::Signature => Scheme::Sig(Box::new(OsslSig::open(*a, message.to_vec())?)),
            },
            Impl::CompositeSig(n) => {
                Scheme::Sig(Box::new(CompositeSig::open(n, message.to_vec())?))
            }
            Impl::CompositeKem(n) => Scheme::Kem(Box::new(CompositeKem::open(n)?)),
        })
    }
}

/// Family of a liboqs algorithm, from its name.
pub fn liboqs_family(name: &str) -> String {
    let prefixes: [(&str, &str); 15] = [
        ("ML-KEM", "ML-KEM"),
        ("Dilithium", "Dilithium"),
        ("ML-DSA", "ML-DSA"),
        ("Kyber", "Kyber"),
        ("HQC", "HQC"),
        ("FrodoKEM", "FrodoKEM"),
        ("Classic-McEliece", "Classic McEliece"),
        ("sntrup", "NTRU Prime"),
        ("BIKE", "BIKE"),
        ("Falcon", "Falcon"),
        ("SPHINCS+", "SPHINCS+"),
        ("MAYO", "MAYO"),
        ("cross", "CROSS"),
        ("OV-", "UOV"),
        ("SNOVA", "SNOVA"),
    ];
    prefixes
        .iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|(_, f)| f.to_string())
        .unwrap_or_else(|| name.split(['-', '_']).next().unwrap_or(name).to_string())
}

fn oqs_entries(kind: Kind) -> Vec<Entry> {
    let list = match kind {
        Kind::Kem => liboqs::kems(),
        Kind::Signature => liboqs::sigs(),
    };
    list.into_iter()
        .map(|a| {
            let level = if a.enabled {
                match kind {
                    Kind::Kem => OqsKem::open(&a.name).ok().map(|k| k.claimed_nist_level()),
                    Kind::Signature => OqsSig::open(&a.name, vec![])
                        .ok()
                        .map(|s| s.claimed_nist_level()),
                }
            } else {
                None
            };
            Entry {
                family: liboqs_family(&a.name),
                kind,
                provider: Provider::Liboqs,
                nist_level: level,
                imp: match kind {
                    Kind::Kem => Impl::OqsKem(a.name.clone()),
                    Kind::Signature => Impl::OqsSig(a.name.clone()),
                },
                unavailable: (!a.enabled).then(|| {
                    format!(
                        "{} is disabled in this liboqs {} build",
                        a.name,
                        crate::probe::libraries::liboqs_version()
                    )
                }),
                slow: false,
                name: a.name,
            }
        })
        .collect()
}

/// XMSS, XMSS^MT and LMS: every set the stateful build lists. Sets whose
/// key generation takes seconds to minutes are `--slow`; those with a layer
/// of 2^20 one-time keys or more are listed as skipped (see [`Cost`]).
fn stfl_entries() -> Vec<Entry> {
    stfl::algs()
        .into_iter()
        .map(|a| {
            let params = stfl::Params::parse(&a.name);
            let cost = params.as_ref().map(|p| p.cost());
            let unavailable = match (&params, cost) {
                _ if !a.enabled => Some(format!(
                    "liboqs {} reports {} disabled in its stateful build (OQS_SIG_STFL_alg_is_enabled is 0: liboqs's generated configuration has no switch for it)",
                    stfl::version(),
                    a.name
                )),
                (Err(e), _) => Some(format!("{e:#}")),
                (_, Ok(Cost::TooTall(h))) => Some(format!(
                    "not measured: key generation computes all 2^{h} one-time keys of a layer, from about half an hour to about a day per key on one core (extrapolated from the height-10 sets)"
                )),
                _ => None,
            };
            Entry {
                family: params
                    .as_ref()
                    .map(|p| p.family.to_string())
                    .unwrap_or_else(|_| liboqs_family(&a.name)),
                kind: Kind::Signature,
                provider: Provider::Liboqs,
                // Neither liboqs's OQS_SIG_STFL nor RFC 8391/8554 states a NIST category.
                nist_level: None,
                imp: Impl::Stfl(a.name.clone()),
                unavailable,
                slow: matches!(cost, Ok(Cost::Slow)),
                name: a.name,
            }
        })
        .collect()
}

/// The OpenSSL cross-provider row for LMS: OpenSSL 3.6 verifies LMS
/// signatures (EVP_SIGNATURE-LMS, verification only) but compiles it only
/// with `enable-lms`, which is off by default and which the vendored
/// openssl-src does not pass; this row says so instead of silently missing.
fn openssl_lms_entry() -> Entry {
    let reason = match ossl::available(OsslAlg::NamedSig("LMS")) {
        Err(e) => format!(
            "{e:#}: OpenSSL 3.6 compiles its LMS verification only with enable-lms, off by default and not set by the vendored openssl-src"
        ),
        Ok(()) => "this OpenSSL verifies LMS, but pqcprof has no cross-provider verify path for it yet".into(),
    };
    Entry {
        name: "LMS_SHA256_H5_W1".into(),
        family: "LMS".into(),
        kind: Kind::Signature,
        provider: Provider::Openssl,
        nist_level: None,
        imp: Impl::Ossl(OsslAlg::NamedSig("LMS")),
        unavailable: Some(reason),
        slow: false,
    }
}

/// The twelve SLH-DSA sets of FIPS 205.
pub const SLH_DSA_SETS: [&str; 12] = [
    "SLH-DSA-SHA2-128s",
    "SLH-DSA-SHA2-128f",
    "SLH-DSA-SHA2-192s",
    "SLH-DSA-SHA2-192f",
    "SLH-DSA-SHA2-256s",
    "SLH-DSA-SHA2-256f",
    "SLH-DSA-SHAKE-128s",
    "SLH-DSA-SHAKE-128f",
    "SLH-DSA-SHAKE-192s",
    "SLH-DSA-SHAKE-192f",
    "SLH-DSA-SHAKE-256s",
    "SLH-DSA-SHAKE-256f",
];

/// One OpenSSL algorithm the sweep lists, before OpenSSL is asked whether
/// this build has it.
struct OsslRow {
    name: String,
    family: &'static str,
    kind: Kind,
    level: Option<u8>,
    alg: OsslAlg,
    slow: bool,
}

/// A row measured by default, with its NIST category.
fn row(
    name: impl Into<String>,
    family: &'static str,
    kind: Kind,
    level: u8,
    alg: OsslAlg,
) -> OsslRow {
    OsslRow {
        name: name.into(),
        family,
        kind,
        level: Some(level),
        alg,
        slow: false,
    }
}

/// Every OpenSSL algorithm, in sweep order: RSA, the elliptic curves, then
/// the post-quantum sets OpenSSL 3.6 names.
fn openssl_entries() -> Vec<Entry> {
    let mut rows = rsa_rows();
    rows.extend(curve_rows());
    rows.extend(named_pqc_rows());
    rows.into_iter()
        .map(|r| Entry {
            name: r.name,
            family: r.family.into(),
            kind: r.kind,
            provider: Provider::Openssl,
            nist_level: r.level,
            imp: Impl::Ossl(r.alg),
            unavailable: ossl::available(r.alg).err().map(|e| format!("{e:#}")),
            slow: r.slow,
        })
        .collect()
}

/// RSA PKCS#1 v1.5 and PSS at five sizes; keys over 4096 bits are `--slow`.
fn rsa_rows() -> Vec<OsslRow> {
    let rsa_level = |bits: u32| match bits {
        b if b >= 15360 => Some(5),
        b if b >= 7680 => Some(3),
        b if b >= 3072 => Some(1),
        _ => None,
    };
    let mut v = vec![];
    for pss in [false, true] {
        for bits in [2048u32, 3072, 4096, 8192, 16384] {
            v.push(OsslRow {
                name: format!("RSA-{}-{bits}", if pss { "PSS" } else { "PKCS1" }),
                family: "RSA",
                kind: Kind::Signature,
                level: rsa_level(bits),
                alg: OsslAlg::Rsa { bits, pss },
                slow: bits > 4096,
            });
        }
    }
    v
}

/// ECDSA, EdDSA and SM2 signatures, then ECDH and X25519/X448 key exchange.
fn curve_rows() -> Vec<OsslRow> {
    let nist = [(Curve::P256, 1), (Curve::P384, 3), (Curve::P521, 5)];
    let (sig, kem) = (Kind::Signature, Kind::Kem);
    let mut v: Vec<OsslRow> = nist
        .iter()
        .map(|&(c, l)| {
            row(
                format!("ECDSA-{}", c.label()),
                "ECDSA",
                sig,
                l,
                OsslAlg::Ecdsa(c),
            )
        })
        .collect();
    v.push(row("Ed25519", "EdDSA", sig, 1, OsslAlg::EdDsa(true)));
    v.push(row("Ed448", "EdDSA", sig, 3, OsslAlg::EdDsa(false)));
    // SM2 (256-bit curve: category 1, as P-256), where OpenSSL has it.
    v.push(row("SM2", "SM2", sig, 1, OsslAlg::Sm2));
    v.extend(nist.iter().map(|&(c, l)| {
        row(
            format!("ECDH-{}", c.label()),
            "ECDH",
            kem,
            l,
            OsslAlg::Ecdh(c),
        )
    }));
    v.push(row("X25519", "XDH", kem, 1, OsslAlg::Xdh(true)));
    v.push(row("X448", "XDH", kem, 3, OsslAlg::Xdh(false)));
    v
}

/// ML-KEM, the hybrid KEMs, ML-DSA and SLH-DSA by their OpenSSL names.
fn named_pqc_rows() -> Vec<OsslRow> {
    let (sig, kem) = (Kind::Signature, Kind::Kem);
    let mut v = vec![];
    for (n, l) in [("ML-KEM-512", 1), ("ML-KEM-768", 3), ("ML-KEM-1024", 5)] {
        v.push(row(n, "ML-KEM", kem, l, OsslAlg::NamedKem(n)));
    }
    for (n, l) in OPENSSL_HYBRIDS {
        v.push(row(n, "Hybrid KEM", kem, l, OsslAlg::NamedKem(n)));
    }
    for (n, l) in [("ML-DSA-44", 2), ("ML-DSA-65", 3), ("ML-DSA-87", 5)] {
        v.push(row(n, "ML-DSA", sig, l, OsslAlg::NamedSig(n)));
    }
    for n in SLH_DSA_SETS {
        let l = if n.contains("128") {
            1
        } else if n.contains("192") {
            3
        } else {
            5
        };
        v.push(row(n, "SLH-DSA", sig, l, OsslAlg::NamedSig(n)));
    }
    v
}

fn composite_entries(oqs_sigs: &[Entry], oqs_kems: &[Entry]) -> Vec<Entry> {
    let part = |list: &[Entry], n: &str| {
        list.iter()
            .find(|e| e.name == n)
            .and_then(|e| e.unavailable.clone())
    };
    let mut v = vec![];
    // The 2026 study's FN-DSA-1024 + Ed25519 is Falcon-1024 here (FN-DSA
    // names are accepted as aliases); its HQC-256 + X25519 below.
    for (n, l) in [
        ("ML-DSA-44", 2),
        ("ML-DSA-65", 3),
        ("ML-DSA-87", 5),
        ("Falcon-1024", 5),
    ] {
        v.push(Entry {
            name: format!("{n}+Ed25519"),
            family: "Composite signature".into(),
            kind: Kind::Signature,
            provider: Provider::Composite,
            nist_level: Some(l),
            imp: Impl::CompositeSig(n),
            unavailable: part(oqs_sigs, n),
            slow: false,
        });
    }
    for (n, l) in [
        ("ML-KEM-512", 1),
        ("ML-KEM-768", 3),
        ("ML-KEM-1024", 5),
        ("HQC-256", 5),
    ] {
        v.push(Entry {
            name: format!("{n}+X25519"),
            family: "Composite KEM".into(),
            kind: Kind::Kem,
            provider: Provider::Composite,
            nist_level: Some(l),
            imp: Impl::CompositeKem(n),
            unavailable: part(oqs_kems, n),
            slow: false,
        });
    }
    v
}

/// Every algorithm, in sweep order: liboqs signatures and KEMs, OpenSSL,
/// composites.
pub fn all() -> Vec<Entry> {
    let sigs = oqs_entries(Kind::Signature);
    let kems = oqs_entries(Kind::Kem);
    let comp = composite_entries(&sigs, &kems);
    let mut v = sigs;
    v.extend(stfl_entries());
    v.extend(kems);
    v.extend(openssl_entries());
    v.push(openssl_lms_entry());
    v.extend(comp);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_liboqs_openssl_and_composites() {
        let all = all();
        let has = |p: Provider, n: &str| all.iter().any(|e| e.provider == p && e.name == n);
        assert!(has(Provider::Liboqs, "ML-DSA-65"));
        assert!(has(Provider::Liboqs, "Falcon-512"));
        assert!(has(Provider::Openssl, "Ed25519"));
        assert!(has(Provider::Openssl, "SLH-DSA-SHAKE-256f"));
        assert!(has(Provider::Composite, "ML-KEM-768+X25519"));
        // The stateful schemes, the required three measured by default.
        for n in ["LMS_SHA256_H5_W1", "LMS_SHA256_H10_W2", "XMSS-SHA2_10_256"] {
            let e = all
                .iter()
                .find(|e| e.provider == Provider::Liboqs && e.name == n)
                .unwrap();
            assert!(e.unavailable.is_none() && !e.slow, "{n}: {e:?}");
            assert!(matches!(e.imp, Impl::Stfl(_)));
        }
        assert!(has(Provider::Openssl, "LMS_SHA256_H5_W1"));
        assert!(has(Provider::Composite, "Falcon-1024+Ed25519"));
        assert!(has(Provider::Composite, "HQC-256+X25519"));
        // Names are unique within a provider.
        for e in &all {
            assert_eq!(
                all.iter()
                    .filter(|o| o.provider == e.provider && o.name == e.name)
                    .count(),
                1,
                "{}",
                e.name
            );
        }
    }

    #[test]
    fn every_traditional_signature_has_its_sig_bench_name() {
        use crate::core::catalog::SIG_BENCH_NAMES;
        let all = all();
        let traditional: Vec<&Entry> = all
            .iter()
            .filter(|e| {
                e.provider == Provider::Openssl
                    && ["RSA", "ECDSA", "EdDSA"].contains(&e.family.as_str())
            })
            .collect();
        assert_eq!(traditional.len(), SIG_BENCH_NAMES.len());
        for e in traditional {
            assert!(
                SIG_BENCH_NAMES.iter().any(|(ours, _)| *ours == e.name),
                "{} has no pqc-sig-bench-c name",
                e.name
            );
        }
    }

    #[test]
    fn an_unknown_openssl_algorithm_is_unavailable_with_a_reason() {
        let r = ossl::available(OsslAlg::NamedKem("NOT-A-KEM")).unwrap_err();
        assert!(format!("{r:#}").contains("NOT-A-KEM"));
    }
}
