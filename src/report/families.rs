//! The catalogue of algorithm families the report knows: for each family
//! (as records name it) its class, its standing at NIST (tier), where it
//! comes from (origin) and the document that specifies it with its status.
//! One table, so the PQC/classical/hybrid class, the tier and origin
//! filters and the standards list cannot disagree, and nothing is guessed
//! from an algorithm's name (`SPHINCS+` has a `+` and is no hybrid).

/// PQC, classical, or a combination of both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Post-quantum.
    Pqc,
    /// Pre-quantum (RSA, elliptic curves).
    Classical,
    /// A hybrid KEM or composite signature of both.
    Hybrid,
}

impl Class {
    /// Lower-case name used in filters.
    pub fn name(self) -> &'static str {
        match self {
            Class::Pqc => "pqc",
            Class::Classical => "classical",
            Class::Hybrid => "hybrid",
        }
    }
}

/// A family's standing in NIST's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Published or selected for a NIST standard (FIPS, SP), including
    /// the pre-quantum standards of FIPS 186-5 and SP 800-56A.
    NistStandard,
    /// Fourth-round KEM candidate not selected.
    NistRound4,
    /// A candidate of NIST's additional signatures on-ramp.
    OnRamp,
    /// Anything else: IETF-only, round-3 versions, pqcprof's own
    /// combinations, families this catalogue does not know.
    Other,
}

impl Tier {
    /// As shown in filters and tables.
    pub fn name(self) -> &'static str {
        match self {
            Tier::NistStandard => "NIST standard",
            Tier::NistRound4 => "NIST round 4",
            Tier::OnRamp => "additional signatures on-ramp",
            Tier::Other => "other",
        }
    }
}

/// A document that specifies something, with its status.
#[derive(Debug, Clone, Copy)]
pub struct Standard {
    /// Document, e.g. `FIPS 203`.
    pub document: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Status and date.
    pub status: &'static str,
    /// Where to read it.
    pub url: &'static str,
}

/// One family (or a group of families with one document).
#[derive(Debug, Clone, Copy)]
pub struct FamilyInfo {
    /// Family names as records state them (compared without case).
    pub names: &'static [&'static str],
    /// PQC, classical or hybrid.
    pub class: Class,
    /// Standing at NIST.
    pub tier: Tier,
    /// Where it comes from.
    pub origin: &'static str,
    /// Its specification.
    pub standard: Standard,
}

const NIST_PQC: &str = "NIST PQC process";
const ON_RAMP: &str = "NIST additional signatures";
const PRE_QUANTUM: &str = "NIST (pre-quantum)";
const IETF: &str = "IETF";
const PQCPROF: &str = "pqcprof (combination of two real parts)";
const CHINA: &str = "China (OSCCA)";

const FIPS_203: Standard = Standard {
    document: "FIPS 203",
    title: "Module-Lattice-Based Key-Encapsulation Mechanism",
    status: "final, August 2024",
    url: "https://csrc.nist.gov/pubs/fips/203/final",
};
const FIPS_204: Standard = Standard {
    document: "FIPS 204",
    title: "Module-Lattice-Based Digital Signature",
    status: "final, August 2024",
    url: "https://csrc.nist.gov/pubs/fips/204/final",
};
const FIPS_205: Standard = Standard {
    document: "FIPS 205",
    title: "Stateless Hash-Based Digital Signature",
    status: "final, August 2024",
    url: "https://csrc.nist.gov/pubs/fips/205/final",
};
const IR_8545: &str = "https://csrc.nist.gov/pubs/ir/8545/final";
const IR_8413: &str = "https://csrc.nist.gov/pubs/ir/8413/upd1/final";

/// Every family the report knows.
pub const FAMILIES: &[FamilyInfo] = &[
    FamilyInfo {
        names: &["ML-KEM"],
        class: Class::Pqc,
        tier: Tier::NistStandard,
        origin: NIST_PQC,
        standard: FIPS_203,
    },
    FamilyInfo {
        names: &["ML-DSA"],
        class: Class::Pqc,
        tier: Tier::NistStandard,
        origin: NIST_PQC,
        standard: FIPS_204,
    },
    FamilyInfo {
        names: &["SLH-DSA"],
        class: Class::Pqc,
        tier: Tier::NistStandard,
        origin: NIST_PQC,
        standard: FIPS_205,
    },
    FamilyInfo {
        names: &["FN-DSA", "Falcon"],
        class: Class::Pqc,
        tier: Tier::NistStandard,
        origin: NIST_PQC,
        standard: Standard {
            document: "FIPS 206 (draft)",
            title: "FFT-over-NTRU-Lattice-Based Digital Signature (FN-DSA, from Falcon)",
            status: "selected July 2022; FIPS 206 in draft",
            url: "https://csrc.nist.gov/projects/post-quantum-cryptography",
        },
    },
    FamilyInfo {
        names: &["HQC"],
        class: Class::Pqc,
        tier: Tier::NistStandard,
        origin: NIST_PQC,
        standard: Standard {
            document: "NIST IR 8545",
            title: "Status report on the fourth round: HQC selected",
            status: "selected for standardisation, March 2025; draft standard pending",
            url: IR_8545,
        },
    },
    FamilyInfo {
        names: &["SPHINCS+"],
        class: Class::Pqc,
        tier: Tier::Other,
        origin: NIST_PQC,
        standard: Standard {
            document: "FIPS 205 (from SPHINCS+ round 3)",
            title: "SPHINCS+, the round-3 submission standardised as SLH-DSA",
            status: "round-3 version; FIPS 205 changed it, so its outputs differ from SLH-DSA's",
            url: "https://csrc.nist.gov/pubs/fips/205/final",
        },
    },
    FamilyInfo {
        names: &["Kyber"],
        class: Class::Pqc,
        tier: Tier::Other,
        origin: NIST_PQC,
        standard: Standard {
            document: "FIPS 203 (from Kyber round 3)",
            title: "CRYSTALS-Kyber, the round-3 submission standardised as ML-KEM",
            status: "round-3 version; FIPS 203 changed it",
            url: "https://csrc.nist.gov/pubs/fips/203/final",
        },
    },
    FamilyInfo {
        names: &["Dilithium"],
        class: Class::Pqc,
        tier: Tier::Other,
        origin: NIST_PQC,
        standard: Standard {
            document: "FIPS 204 (from Dilithium round 3)",
            title: "CRYSTALS-Dilithium, the round-3 submission standardised as ML-DSA",
            status: "round-3 version; FIPS 204 changed it",
            url: "https://csrc.nist.gov/pubs/fips/204/final",
        },
    },
    FamilyInfo {
        names: &["BIKE", "Classic McEliece"],
        class: Class::Pqc,
        tier: Tier::NistRound4,
        origin: NIST_PQC,
        standard: Standard {
            document: "NIST IR 8545",
            title: "Status report on the fourth round (BIKE, Classic McEliece)",
            status: "round 4, not selected by NIST (March 2025)",
            url: IR_8545,
        },
    },
    FamilyInfo {
        names: &["FrodoKEM", "NTRU Prime"],
        class: Class::Pqc,
        tier: Tier::Other,
        origin: NIST_PQC,
        standard: Standard {
            document: "NIST IR 8413",
            title: "Status report on the third round (alternate candidates)",
            status: "round-3 alternates, not selected (July 2022); FrodoKEM is proposed for ISO/IEC 18033-2",
            url: IR_8413,
        },
    },
    FamilyInfo {
        names: &["MAYO", "CROSS", "UOV", "SNOVA"],
        class: Class::Pqc,
        tier: Tier::OnRamp,
        origin: ON_RAMP,
        standard: Standard {
            document: "NIST IR 8528",
            title: "Status report on the first round of the additional signatures",
            status: "additional signatures, round 2 (October 2024)",
            url: "https://csrc.nist.gov/pubs/ir/8528/final",
        },
    },
    FamilyInfo {
        names: &["LMS", "HSS", "XMSS", "XMSS^MT", "XMSSMT"],
        class: Class::Pqc,
        tier: Tier::NistStandard,
        origin: NIST_PQC,
        standard: Standard {
            document: "NIST SP 800-208",
            title: "Recommendation for Stateful Hash-Based Signature Schemes (LMS, XMSS)",
            status: "final, October 2020",
            url: "https://csrc.nist.gov/pubs/sp/800/208/final",
        },
    },
    FamilyInfo {
        names: &["RSA", "ECDSA"],
        class: Class::Classical,
        tier: Tier::NistStandard,
        origin: PRE_QUANTUM,
        standard: Standard {
            document: "FIPS 186-5",
            title: "Digital Signature Standard (RSA, ECDSA, EdDSA)",
            status: "final, February 2023",
            url: "https://csrc.nist.gov/pubs/fips/186-5/final",
        },
    },
    FamilyInfo {
        names: &["EdDSA", "Ed25519", "Ed448"],
        class: Class::Classical,
        tier: Tier::NistStandard,
        origin: PRE_QUANTUM,
        standard: Standard {
            document: "RFC 8032",
            title: "Edwards-Curve Digital Signature Algorithm (Ed25519, Ed448)",
            status: "IETF informational, January 2017; also approved in FIPS 186-5",
            url: "https://www.rfc-editor.org/rfc/rfc8032",
        },
    },
    FamilyInfo {
        names: &["ECDH"],
        class: Class::Classical,
        tier: Tier::NistStandard,
        origin: PRE_QUANTUM,
        standard: Standard {
            document: "NIST SP 800-56A Rev. 3",
            title: "Pair-Wise Key Establishment Using Discrete Logarithm Cryptography (ECDH)",
            status: "final, April 2018",
            url: "https://csrc.nist.gov/pubs/sp/800/56/a/r3/final",
        },
    },
    FamilyInfo {
        names: &["XDH", "X25519", "X448"],
        class: Class::Classical,
        tier: Tier::Other,
        origin: IETF,
        standard: Standard {
            document: "RFC 7748",
            title: "Elliptic Curves for Security (X25519, X448)",
            status: "IETF informational, January 2016",
            url: "https://www.rfc-editor.org/rfc/rfc7748",
        },
    },
    FamilyInfo {
        names: &["SM2"],
        class: Class::Classical,
        tier: Tier::Other,
        origin: CHINA,
        standard: Standard {
            document: "GB/T 32918, ISO/IEC 14888-3",
            title: "SM2 elliptic-curve signature (RFC 8998 for TLS 1.3)",
            status: "Chinese national standard (2016); in ISO/IEC 14888-3:2018",
            url: "https://www.rfc-editor.org/rfc/rfc8998",
        },
    },
    FamilyInfo {
        names: &["Hybrid KEM"],
        class: Class::Hybrid,
        tier: Tier::Other,
        origin: IETF,
        standard: Standard {
            document: "draft-ietf-tls-ecdhe-mlkem",
            title: "Post-quantum hybrid ECDHE-MLKEM key agreement for TLS 1.3 (X25519MLKEM768, ...)",
            status: "IETF Internet-Draft; ML-KEM part FIPS 203",
            url: "https://datatracker.ietf.org/doc/draft-ietf-tls-ecdhe-mlkem/",
        },
    },
    FamilyInfo {
        names: &["Composite KEM"],
        class: Class::Hybrid,
        tier: Tier::Other,
        origin: PQCPROF,
        standard: Standard {
            document: "draft-connolly-cfrg-xwing-kem (in its spirit)",
            title: "pqcprof's PQC KEM + X25519: SHA3-256 of both secrets and the X25519 ciphertext",
            status: "pqcprof's own combiner, not a standard",
            url: "https://datatracker.ietf.org/doc/draft-connolly-cfrg-xwing-kem/",
        },
    },
    FamilyInfo {
        names: &["Composite signature"],
        class: Class::Hybrid,
        tier: Tier::Other,
        origin: PQCPROF,
        standard: Standard {
            document: "draft-ietf-lamps-pq-composite-sigs (compare)",
            title: "pqcprof's PQC signature + Ed25519: both signatures concatenated, both must verify",
            status: "pqcprof's own encoding, not the draft's",
            url: "https://datatracker.ietf.org/doc/draft-ietf-lamps-pq-composite-sigs/",
        },
    },
];

/// Standards of the symmetric primitives (`symmetric` records), matched
/// by the start of the primitive's name.
pub const SYMMETRIC: &[(&[&str], Standard)] = &[
    (
        &["SHA-256", "SHA-384", "SHA-512", "SHA-2"],
        Standard {
            document: "FIPS 180-4",
            title: "Secure Hash Standard (SHA-2)",
            status: "final, August 2015",
            url: "https://csrc.nist.gov/pubs/fips/180-4/upd1/final",
        },
    ),
    (
        &["SHA3", "SHAKE"],
        Standard {
            document: "FIPS 202",
            title: "SHA-3 Standard (SHA3, SHAKE)",
            status: "final, August 2015",
            url: "https://csrc.nist.gov/pubs/fips/202/final",
        },
    ),
    (
        &["AES"],
        Standard {
            document: "FIPS 197",
            title: "Advanced Encryption Standard (with GCM: SP 800-38D)",
            status: "final, November 2001 (updated 2023)",
            url: "https://csrc.nist.gov/pubs/fips/197/final",
        },
    ),
    (
        &["ChaCha20"],
        Standard {
            document: "RFC 8439",
            title: "ChaCha20 and Poly1305 for IETF Protocols",
            status: "IETF informational, June 2018",
            url: "https://www.rfc-editor.org/rfc/rfc8439",
        },
    ),
    (
        &["SM3"],
        Standard {
            document: "GB/T 32905, ISO/IEC 10118-3",
            title: "SM3 hash function",
            status: "Chinese national standard (2016); in ISO/IEC 10118-3:2018",
            url: "https://www.rfc-editor.org/rfc/rfc8998",
        },
    ),
    (
        &["SM4"],
        Standard {
            document: "GB/T 32907, ISO/IEC 18033-3",
            title: "SM4 block cipher",
            status: "Chinese national standard (2016); in ISO/IEC 18033-3:2010/Amd 1:2021",
            url: "https://www.rfc-editor.org/rfc/rfc8998",
        },
    ),
];

/// The catalogue entry of a record's family, if the catalogue knows it.
pub fn lookup(family: &str) -> Option<&'static FamilyInfo> {
    FAMILIES
        .iter()
        .find(|f| f.names.iter().any(|n| n.eq_ignore_ascii_case(family)))
}

/// Tier of a family: `other` for one the catalogue does not know.
pub fn tier(family: &str) -> Tier {
    lookup(family).map_or(Tier::Other, |f| f.tier)
}

/// Origin of a family: says so when the catalogue does not know it.
pub fn origin(family: &str) -> &'static str {
    lookup(family).map_or("not in pqcprof's catalogue", |f| f.origin)
}

/// The standard of a symmetric primitive, by the start of its name.
pub fn symmetric_standard(algorithm: &str) -> Option<&'static Standard> {
    let a = algorithm.to_ascii_uppercase();
    SYMMETRIC
        .iter()
        .find(|(covers, _)| {
            covers
                .iter()
                .any(|c| a.starts_with(&c.to_ascii_uppercase()))
        })
        .map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_the_sweep_measures_is_catalogued() {
        for e in crate::sweep::registry::all() {
            assert!(
                lookup(&e.family).is_some(),
                "{} ({}) has no catalogue entry",
                e.family,
                e.name
            );
        }
        for (name, _) in crate::sweep::symmetric::PRIMITIVES {
            assert!(symmetric_standard(name).is_some(), "{name}");
        }
    }

    #[test]
    fn names_are_unique() {
        let mut all: Vec<String> = FAMILIES
            .iter()
            .flat_map(|f| f.names.iter().map(|n| n.to_ascii_uppercase()))
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn sphincs_plus_is_pqc_and_composites_are_hybrid() {
        assert_eq!(lookup("SPHINCS+").unwrap().class, Class::Pqc);
        assert_eq!(lookup("Composite signature").unwrap().class, Class::Hybrid);
        assert_eq!(tier("MAYO"), Tier::OnRamp);
        assert_eq!(tier("BIKE"), Tier::NistRound4);
        assert_eq!(tier("no such family"), Tier::Other);
    }
}
