//! What exists: every KEM and signature scheme the linked liboqs lists
//! (enumerated at run time through `OQS_*_alg_count`/`_identifier`/
//! `_is_enabled`), the OpenSSL algorithms, and the composites; plus the
//! `--filter` language over them.
//!
//! Longer than most files: most of it is the catalogue's data (liboqs and
//! OpenSSL names, composites, hybrids) in tables.

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

fn openssl_entries() -> Vec<Entry> {
    let mut v = vec![];
    let mut add = |name: String, family: &str, kind, level, alg, slow| {
        v.push(Entry {
            name,
            family: family.into(),
            kind,
            provider: Provider::Openssl,
            nist_level: level,
            imp: Impl::Ossl(alg),
            unavailable: ossl::available(alg).err().map(|e| format!("{e:#}")),
            slow,
        })
    };
    let rsa_level = |bits: u32| match bits {
        b if b >= 15360 => Some(5),
        b if b >= 7680 => Some(3),
        b if b >= 3072 => Some(1),
        _ => None,
    };
    for pss in [false, true] {
        for bits in [2048u32, 3072, 4096, 8192, 16384] {
            let name = format!("RSA-{}-{bits}", if pss { "PSS" } else { "PKCS1" });
            add(
                name,
                "RSA",
                Kind::Signature,
                rsa_level(bits),
                OsslAlg::Rsa { bits, pss },
                bits > 4096,
            );
        }
    }
    for (c, l) in [(Curve::P256, 1), (Curve::P384, 3), (Curve::P521, 5)] {
        add(
            format!("ECDSA-{}", c.label()),
            "ECDSA",
            Kind::Signature,
            Some(l),
            OsslAlg::Ecdsa(c),
            false,
        );
    }
    add(
        "Ed25519".into(),
        "EdDSA",
        Kind::Signature,
        Some(1),
        OsslAlg::EdDsa(true),
        false,
    );
    add(
        "Ed448".into(),
        "EdDSA",
        Kind::Signature,
        Some(3),
        OsslAlg::EdDsa(false),
        false,
    );
    // SM2 (256-bit curve: category 1, as P-256), where OpenSSL has it.
    add(
        "SM2".into(),
        "SM2",
        Kind::Signature,
        Some(1),
        OsslAlg::Sm2,
        false,
    );
    for (c, l) in [(Curve::P256, 1), (Curve::P384, 3), (Curve::P521, 5)] {
        add(
            format!("ECDH-{}", c.label()),
            "ECDH",
            Kind::Kem,
            Some(l),
            OsslAlg::Ecdh(c),
            false,
        );
    }
    add(
        "X25519".into(),
        "XDH",
        Kind::Kem,
        Some(1),
        OsslAlg::Xdh(true),
        false,
    );
    add(
        "X448".into(),
        "XDH",
        Kind::Kem,
        Some(3),
        OsslAlg::Xdh(false),
        false,
    );
    for (n, l) in [("ML-KEM-512", 1), ("ML-KEM-768", 3), ("ML-KEM-1024", 5)] {
        add(
            n.into(),
            "ML-KEM",
            Kind::Kem,
            Some(l),
            OsslAlg::NamedKem(n),
            false,
        );
    }
    for (n, l) in OPENSSL_HYBRIDS {
        add(
            n.into(),
            "Hybrid KEM",
            Kind::Kem,
            Some(l),
            OsslAlg::NamedKem(n),
            false,
        );
    }
    for (n, l) in [("ML-DSA-44", 2), ("ML-DSA-65", 3), ("ML-DSA-87", 5)] {
        add(
            n.into(),
            "ML-DSA",
            Kind::Signature,
            Some(l),
            OsslAlg::NamedSig(n),
            false,
        );
    }
    for n in SLH_DSA_SETS {
        let l = if n.contains("128") {
            1
        } else if n.contains("192") {
            3
        } else {
            5
        };
        add(
            n.into(),
            "SLH-DSA",
            Kind::Signature,
            Some(l),
            OsslAlg::NamedSig(n),
            false,
        );
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

// ---------------------------------------------------------------- filters

/// Lower-case with separators removed, for loose name matching.
pub fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '*' || *c == '+')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Other names accepted for a family, normalised: (alias, name). FIPS 206
/// names Falcon FN-DSA, so `FN-DSA-512` selects Falcon-512 (and
/// `FN-DSA*` every Falcon set).
pub const ALIASES: [(&str, &str); 1] = [("fndsa", "falcon")];

/// A normalised pattern with a leading alias replaced by what it stands for.
pub fn dealias(normalized: &str) -> String {
    for (alias, name) in ALIASES {
        if let Some(rest) = normalized.strip_prefix(alias) {
            return format!("{name}{rest}");
        }
    }
    normalized.to_string()
}

fn glob(pattern: &str, text: &str) -> bool {
    // Iterative glob with `*` only.
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// One `--filter` term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A name pattern: case- and separator-insensitive; `*` is a wildcard,
    /// otherwise a substring; pqc-sig-bench-c's spelling of a name
    /// (`P-256`, `RSA-PKCS1v15-2048`) matches too.
    Name(String),
    /// `family:NAME` (same matching as names).
    Family(String),
    /// `provider:liboqs|openssl|composite`.
    Provider(String),
    /// `level:N` (NIST category).
    Level(u8),
    /// `kind:kem|sig`.
    Kind(Kind),
}

fn pattern_matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (dealias(&normalize(pattern)), normalize(text));
    if p.contains('*') {
        glob(&p, &t)
    } else {
        t.contains(&p)
    }
}

impl Term {
    /// Parses `family:x`, `provider:x`, `level:n`, `kind:x` or a name pattern.
    pub fn parse(s: &str) -> Result<Term> {
        let s = s.trim();
        let Some((k, v)) = s.split_once(':') else {
            return Ok(Term::Name(s.to_string()));
        };
        let v = v.trim();
        Ok(match k.trim().to_ascii_lowercase().as_str() {
            "family" => Term::Family(v.to_string()),
            "provider" => {
                let valid = ["liboqs", "openssl", "composite"];
                let p = v.to_ascii_lowercase();
                if !valid.contains(&p.as_str()) {
                    bail!("unknown provider '{v}' in --filter; valid: {}", valid.join(", "));
                }
                Term::Provider(p)
            }
            "level" | "nist" => match v.trim_start_matches(['L', 'l']).parse::<u8>() {
                Ok(n) if (1..=5).contains(&n) => Term::Level(n),
                _ => bail!("invalid NIST level '{v}' in --filter: use 1 to 5"),
            },
            "kind" => match v.to_ascii_lowercase().as_str() {
                "kem" => Term::Kind(Kind::Kem),
                "sig" | "signature" => Term::Kind(Kind::Signature),
                _ => bail!("invalid kind '{v}' in --filter: use kem or sig"),
            },
            other => bail!(
                "unknown --filter key '{other}:'; use family:, provider:, level:, kind: or a name pattern, each with a leading ! to exclude (!family:XMSS)"
            ),
        })
    }
    fn field(&self) -> u8 {
        match self {
            // Names and families both say what to run: alternatives.
            Term::Name(_) | Term::Family(_) => 0,
            Term::Provider(_) => 2,
            Term::Level(_) => 3,
            Term::Kind(_) => 4,
        }
    }
    /// Whether `e` matches this term.
    pub fn matches(&self, e: &Entry) -> bool {
        match self {
            Term::Name(p) => {
                pattern_matches(p, &e.name)
                    || pattern_matches(p, crate::core::catalog::sig_bench_name(&e.name))
            }
            Term::Family(p) => pattern_matches(p, &e.family),
            Term::Provider(p) => e.provider.name() == p,
            Term::Level(n) => e.nist_level == Some(*n),
            Term::Kind(k) => e.kind == *k,
        }
    }
}

/// A parsed `--filter`. Inclusive terms choose: name patterns and
/// `family:` terms are alternatives (OR), and so are the terms of each of
/// `provider:`, `level:` and `kind:`; those groups must all hold (AND); no
/// inclusive term chooses everything. Exclusive terms, any term with a
/// leading `!` (`!family:XMSS`, `!Falcon-512`, `!provider:openssl`), then
/// take away every algorithm that matches any of them, as pqc-sig-bench-c's
/// `run_liboqs_no_stfl` leaves out the stateful schemes.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    include: Vec<Term>,
    exclude: Vec<Term>,
}

impl Filter {
    /// Parses comma-separated terms from every `--filter` given.
    pub fn parse(args: &[String]) -> Result<Filter> {
        let mut f = Filter::default();
        for a in args {
            for t in a.split(',') {
                let t = t.trim();
                let (exclude, term) = match t.strip_prefix('!') {
                    Some(rest) => (true, rest.trim()),
                    None => (false, t),
                };
                let empty = term.is_empty()
                    || term
                        .split_once(':')
                        .is_some_and(|(k, v)| k.trim().is_empty() || v.trim().is_empty());
                if empty && exclude {
                    bail!(
                        "invalid --filter {:?}: empty exclusion {:?}, which names nothing; write `!` before a term, e.g. `!family:XMSS`",
                        a,
                        t
                    );
                }
                if empty {
                    bail!(
                        "invalid --filter {:?}: it holds an empty term ({:?}), which would select every algorithm; give a name pattern, family:NAME, provider:NAME, level:N or kind:kem|sig (each may start with `!` to exclude), comma-separated, or leave --filter out",
                        a,
                        t
                    );
                }
                if exclude {
                    f.exclude.push(Term::parse(term)?);
                } else {
                    f.include.push(Term::parse(term)?);
                }
            }
        }
        Ok(f)
    }
    /// True when no term was given.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }
    /// True when some term chooses (rather than only excludes).
    pub fn has_inclusive(&self) -> bool {
        !self.include.is_empty()
    }
    /// Whether `e` passes.
    pub fn matches(&self, e: &Entry) -> bool {
        let chosen = (0..5u8).all(|f| {
            let of: Vec<_> = self.include.iter().filter(|t| t.field() == f).collect();
            of.is_empty() || of.iter().any(|t| t.matches(e))
        });
        chosen && !self.exclude.iter().any(|t| t.matches(e))
    }
    /// The entries that pass; an error naming the closest names when a
    /// name or family pattern, inclusive or exclusive, matches nothing at
    /// all (a misspelt exclusion would otherwise exclude nothing silently).
    pub fn select(&self, all: &[Entry]) -> Result<Vec<Entry>> {
        for (t, bang) in self
            .include
            .iter()
            .map(|t| (t, ""))
            .chain(self.exclude.iter().map(|t| (t, "!")))
        {
            let (Term::Name(p) | Term::Family(p)) = t else {
                continue;
            };
            if !all.iter().any(|e| t.matches(e)) {
                let (names, key): (Vec<&str>, &str) = match t {
                    Term::Name(_) => (all.iter().map(|e| e.name.as_str()).collect(), ""),
                    _ => (all.iter().map(|e| e.family.as_str()).collect(), "family:"),
                };
                bail!(
                    "no algorithm matches '{bang}{key}{p}'; closest: {}",
                    closest(p, &names, 5).join(", ")
                );
            }
        }
        let v: Vec<Entry> = all.iter().filter(|e| self.matches(e)).cloned().collect();
        if v.is_empty() {
            bail!("no algorithm passes every --filter term together");
        }
        Ok(v)
    }
}

/// Levenshtein distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The `n` names closest to `query` (normalised edit distance), distinct.
pub fn closest(query: &str, names: &[&str], n: usize) -> Vec<String> {
    let q = dealias(&normalize(query));
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .map(|name| (edit_distance(&q, &normalize(name)), *name))
        .collect();
    scored.sort();
    let mut out: Vec<String> = vec![];
    for (_, name) in scored {
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
        if out.len() == n {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_substrings() {
        assert!(pattern_matches("falcon*512", "Falcon-padded-512"));
        assert!(pattern_matches("mldsa65", "ML-DSA-65"));
        assert!(!pattern_matches("mldsa65", "ML-DSA-87"));
        assert!(glob("a*c", "abbc") && !glob("a*c", "abcd"));
    }

    #[test]
    fn fn_dsa_names_select_falcon() {
        let all = all();
        let names = |f: &str| -> Vec<String> {
            Filter::parse(&[f.into()])
                .unwrap()
                .select(&all)
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names("FN-DSA-512"), vec!["Falcon-512"]);
        assert_eq!(
            names("fn_dsa_1024"),
            vec!["Falcon-1024", "Falcon-1024+Ed25519"]
        );
        assert_eq!(
            names("family:FN-DSA").len(),
            4,
            "{:?}",
            names("family:FN-DSA")
        );
        let e = Filter::parse(&["FN-DSA-513".into()])
            .unwrap()
            .select(&all)
            .unwrap_err();
        assert!(e.to_string().contains("Falcon-512"), "{e}");
    }

    #[test]
    fn closest_names_come_first() {
        let c = closest("ML-DSA-66", &["Ed25519", "ML-DSA-65", "ML-KEM-768"], 2);
        assert_eq!(c[0], "ML-DSA-65");
    }

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
    fn filters_combine_keys_with_and() {
        let all = all();
        let f = Filter::parse(&["provider:openssl,level:3,kind:sig".into()]).unwrap();
        let v = f.select(&all).unwrap();
        assert!(v
            .iter()
            .all(|e| e.provider == Provider::Openssl && e.nist_level == Some(3)));
        assert!(v.iter().any(|e| e.name == "Ed448"));
        let e = Filter::parse(&["Falcn-512".into()])
            .unwrap()
            .select(&all)
            .unwrap_err();
        assert!(e.to_string().contains("Falcon-512"), "{e}");
        assert!(Filter::parse(&["level:9".into()]).is_err());
    }

    #[test]
    fn exclusions_take_away_what_they_match() {
        let all = all();
        let pick = |f: &str| Filter::parse(&[f.into()]).unwrap().select(&all);
        let stateful = |e: &Entry| ["XMSS", "XMSS^MT", "LMS"].contains(&e.family.as_str());
        assert!(all.iter().any(stateful));
        // Exclusions alone start from everything.
        let v = pick("!family:XMSS,!family:LMS").unwrap();
        assert!(
            !v.iter().any(stateful),
            "{:?}",
            v.iter().find(|e| stateful(e))
        );
        assert_eq!(v.len(), all.iter().filter(|e| !stateful(e)).count());
        // With inclusive terms: chosen first, then taken away.
        let v = pick("provider:liboqs,!family:XMSS,!family:LMS").unwrap();
        assert!(!v.is_empty());
        assert!(v
            .iter()
            .all(|e| e.provider == Provider::Liboqs && !stateful(e)));
        let v = pick("family:ML-DSA,!ML-DSA-87,!provider:openssl").unwrap();
        let names: Vec<&str> = v.iter().map(|e| e.name.as_str()).collect();
        assert!(
            names.contains(&"ML-DSA-44") && !names.contains(&"ML-DSA-87"),
            "{names:?}"
        );
        assert!(v.iter().all(|e| e.provider != Provider::Openssl));
        // A misspelt exclusion is an error naming what exists, not a no-op.
        let e = pick("!family:XMSSS").unwrap_err().to_string();
        assert!(e.contains("!family:XMSSS") && e.contains("XMSS"), "{e}");
        let e = Filter::parse(&["!".into()]).unwrap_err().to_string();
        assert!(e.contains("empty exclusion"), "{e}");
        let e = Filter::parse(&["!provider:gnutls".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("gnutls") && e.contains("liboqs"), "{e}");
        // Everything excluded is said, not an empty run.
        assert!(pick("!kind:kem,!kind:sig").is_err());
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
    fn sig_bench_spellings_select_our_algorithms() {
        let all = all();
        let names = |f: &str| -> Vec<String> {
            Filter::parse(&[f.into()])
                .unwrap()
                .select(&all)
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names("RSA-PKCS1v15-2048"), vec!["RSA-PKCS1-2048"]);
        assert!(names("P-384").contains(&"ECDSA-P384".to_string()));
    }

    #[test]
    fn an_unknown_openssl_algorithm_is_unavailable_with_a_reason() {
        let r = ossl::available(OsslAlg::NamedKem("NOT-A-KEM")).unwrap_err();
        assert!(format!("{r:#}").contains("NOT-A-KEM"));
    }
}
