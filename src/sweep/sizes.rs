//! `pqcprof sizes`: public key, secret key, ciphertext or signature and
//! shared-secret sizes, read from real buffers of every algorithm.
//!
//! Raw and DER forms for OpenSSL keys (DER lengths of classical keys vary a
//! few bytes with the key; the largest over several fresh keys is given);
//! for signatures both the largest possible length (liboqs's
//! `length_signature`, OpenSSL's `EVP_PKEY_get_size`) and the length of a
//! real signature. The `key_sizes` column says which kind of figure the
//! key columns are: `fixed` (every key of the algorithm has that length)
//! or `largest of N observed` (RSA's DER structures, or any length that
//! varied between the sampled keys), never a possible maximum.

use crate::core::catalog::Kind;
use crate::sweep::openssl::OsslAlg;
use crate::sweep::registry::{Entry, Impl};
use crate::sweep::scheme::{KeyBytes, Scheme};
use anyhow::Result;
use std::time::{Duration, Instant};

/// Sizes of one algorithm, bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeRow {
    /// Algorithm name.
    pub algorithm: String,
    /// `liboqs`, `openssl`, `composite`.
    pub provider: String,
    /// `kem` or `signature`.
    pub kind: Kind,
    /// NIST category.
    pub nist_level: Option<u8>,
    /// Key sizes.
    pub keys: KeyBytes,
    /// KEM ciphertext (for key exchanges: the ephemeral public key).
    pub ciphertext: Option<usize>,
    /// KEM shared secret.
    pub shared_secret: Option<usize>,
    /// Largest possible signature.
    pub signature_max: Option<usize>,
    /// A real signature's length.
    pub signature_observed: Option<usize>,
    /// What the key columns are: `fixed` or `largest of N observed`.
    pub key_sizes: String,
}

/// Fresh keys looked at for DER lengths, when key generation is quick.
const KEY_SAMPLES: usize = 8;

/// Measures the sizes of `e` from real buffers.
pub fn size_row(e: &Entry, message: &[u8]) -> Result<SizeRow> {
    let mut s = e.open(message)?;
    let mut row = SizeRow {
        algorithm: e.name.clone(),
        provider: e.provider.name().into(),
        kind: e.kind,
        nist_level: e.nist_level,
        keys: KeyBytes::default(),
        ciphertext: None,
        shared_secret: None,
        signature_max: None,
        signature_observed: None,
        key_sizes: String::new(),
    };
    let mut keys: Option<KeyBytes> = None;
    let (mut samples, mut varied) = (0, false);
    for i in 0..KEY_SAMPLES {
        let t = Instant::now();
        match &mut s {
            Scheme::Kem(k) => k.keygen()?,
            Scheme::Sig(g) => g.keygen()?,
        }
        let kb = match &s {
            Scheme::Kem(k) => k.key_bytes()?,
            Scheme::Sig(g) => g.key_bytes()?,
        };
        samples += 1;
        varied |= keys.as_ref().is_some_and(|k| *k != kb);
        keys = Some(keys.map_or(kb.clone(), |k| k.max(&kb)));
        if i == 0 && t.elapsed() > Duration::from_millis(20) {
            break;
        }
    }
    row.keys = keys.unwrap_or_default();
    // RSA keys have no raw form: their DER lengths depend on the numbers.
    let rsa = matches!(e.imp, Impl::Ossl(OsslAlg::Rsa { .. }));
    row.key_sizes = if rsa || varied {
        format!("largest of {samples} observed")
    } else {
        "fixed".into()
    };
    match &mut s {
        Scheme::Kem(k) => {
            k.encaps()?;
            row.shared_secret = Some(k.secrets().0.len());
            row.ciphertext = Some(k.ciphertext_mut().len());
        }
        Scheme::Sig(g) => {
            g.sign()?;
            row.signature_observed = Some(g.signature_mut().len());
            row.signature_max = Some(g.max_signature_len());
        }
    }
    Ok(row)
}

/// One CSV column of `sizes`.
pub struct SizeColumn {
    /// Header name.
    pub name: &'static str,
    /// The cell for a row.
    pub cell: fn(&SizeRow) -> String,
}

fn opt(v: Option<usize>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The columns of `pqcprof sizes`, in order, defined once.
pub const SIZE_COLUMNS: [SizeColumn; 13] = [
    SizeColumn {
        name: "algorithm",
        cell: |r| r.algorithm.clone(),
    },
    SizeColumn {
        name: "provider",
        cell: |r| r.provider.clone(),
    },
    SizeColumn {
        name: "kind",
        cell: |r| match r.kind {
            Kind::Kem => "kem".into(),
            Kind::Signature => "signature".into(),
        },
    },
    SizeColumn {
        name: "nist_level",
        cell: |r| r.nist_level.map(|l| l.to_string()).unwrap_or_default(),
    },
    SizeColumn {
        name: "public_key",
        cell: |r| r.keys.public_raw.to_string(),
    },
    SizeColumn {
        name: "secret_key",
        cell: |r| opt(r.keys.secret_raw),
    },
    SizeColumn {
        name: "public_key_der",
        cell: |r| opt(r.keys.public_der),
    },
    SizeColumn {
        name: "secret_key_der",
        cell: |r| opt(r.keys.secret_der),
    },
    SizeColumn {
        name: "ciphertext",
        cell: |r| opt(r.ciphertext),
    },
    SizeColumn {
        name: "shared_secret",
        cell: |r| opt(r.shared_secret),
    },
    SizeColumn {
        name: "signature_max",
        cell: |r| opt(r.signature_max),
    },
    SizeColumn {
        name: "signature_observed",
        cell: |r| opt(r.signature_observed),
    },
    SizeColumn {
        name: "key_sizes",
        cell: |r| r.key_sizes.clone(),
    },
];

/// The CSV: header, then one line per row.
pub fn render(rows: &[SizeRow]) -> String {
    let mut s = SIZE_COLUMNS
        .iter()
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    for r in rows {
        s += &SIZE_COLUMNS
            .iter()
            .map(|c| crate::write::csv::neutral(&(c.cell)(r)).into_owned())
            .collect::<Vec<_>>()
            .join(",");
        s.push('\n');
    }
    s
}

/// Published sizes: (name, public key, secret key, ciphertext or signature).
/// FIPS 203 (ML-KEM) Table 3; FIPS 204 (ML-DSA) Table 2; FIPS 205
/// (SLH-DSA) Table 2 gives public key and signature bytes, and the secret
/// key is 4n bytes (FIPS 205 §9.1: SK.seed, SK.prf, PK.seed, PK.root).
pub const FIPS_SIZES: [(&str, usize, usize, usize); 18] = [
    ("ML-KEM-512", 800, 1632, 768),
    ("ML-KEM-768", 1184, 2400, 1088),
    ("ML-KEM-1024", 1568, 3168, 1568),
    ("ML-DSA-44", 1312, 2560, 2420),
    ("ML-DSA-65", 1952, 4032, 3309),
    ("ML-DSA-87", 2592, 4896, 4627),
    ("SLH-DSA-SHA2-128s", 32, 64, 7856),
    ("SLH-DSA-SHAKE-128s", 32, 64, 7856),
    ("SLH-DSA-SHA2-128f", 32, 64, 17088),
    ("SLH-DSA-SHAKE-128f", 32, 64, 17088),
    ("SLH-DSA-SHA2-192s", 48, 96, 16224),
    ("SLH-DSA-SHAKE-192s", 48, 96, 16224),
    ("SLH-DSA-SHA2-192f", 48, 96, 35664),
    ("SLH-DSA-SHAKE-192f", 48, 96, 35664),
    ("SLH-DSA-SHA2-256s", 64, 128, 29792),
    ("SLH-DSA-SHAKE-256s", 64, 128, 29792),
    ("SLH-DSA-SHA2-256f", 64, 128, 49856),
    ("SLH-DSA-SHAKE-256f", 64, 128, 49856),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::registry;

    /// Differences between measured rows and [`FIPS_SIZES`], one line each.
    fn fips_mismatches(rows: &[SizeRow]) -> Vec<String> {
        let mut out = vec![];
        for r in rows {
            let Some(&(_, pk, sk, third)) = FIPS_SIZES.iter().find(|f| f.0 == r.algorithm) else {
                continue;
            };
            let got_third = match r.kind {
                Kind::Kem => r.ciphertext,
                Kind::Signature => r.signature_observed,
            };
            let want = (pk, sk, Some(third));
            let got = (r.keys.public_raw, r.keys.secret_raw.unwrap_or(0), got_third);
            if got != want || r.signature_max.is_some_and(|m| m != third) {
                out.push(format!(
                    "{} ({}): measured pk/sk/ct-or-sig {:?} (max sig {:?}), standard {:?}",
                    r.algorithm, r.provider, got, r.signature_max, want
                ));
            }
            if r.kind == Kind::Kem && r.shared_secret != Some(32) {
                out.push(format!(
                    "{} ({}): shared secret {:?}, standard 32",
                    r.algorithm, r.provider, r.shared_secret
                ));
            }
        }
        out
    }

    /// Differences between measured XMSS/LMS rows and the sizes RFC 8391,
    /// RFC 8554 and SP 800-208 give ([`super::stfl::Params::standard_sizes`]):
    /// public key, and both the largest and a real signature (the secret key's
    /// layout is liboqs's own, which no standard fixes).
    fn stateful_mismatches(rows: &[SizeRow]) -> Vec<String> {
        rows.iter()
            .filter_map(|r| {
                let p = crate::sweep::stfl::Params::parse(&r.algorithm).ok()?;
                let (pk, sig) = p.standard_sizes();
                let got = (r.keys.public_raw, r.signature_max, r.signature_observed);
                (got != (pk, Some(sig), Some(sig))).then(|| {
                    format!(
                        "{} ({}): measured pk/max sig/sig {got:?}, standard ({pk}, {sig})",
                        r.algorithm, r.provider
                    )
                })
            })
            .collect()
    }

    #[test]
    fn fips_203_204_205_sets_match_the_standards() {
        let all = registry::all();
        let mut rows = vec![];
        for (name, ..) in FIPS_SIZES {
            for e in all
                .iter()
                .filter(|e| e.name == name && e.unavailable.is_none())
            {
                rows.push(size_row(e, b"sizes").unwrap());
            }
        }
        // Every FIPS 205 set is in OpenSSL; ML-KEM/ML-DSA in both libraries.
        assert!(rows.len() >= FIPS_SIZES.len() + 6, "{} rows", rows.len());
        let bad = fips_mismatches(&rows);
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn xmss_and_lms_sizes_match_rfc_8391_8554_and_sp_800_208() {
        let all = registry::all();
        let mut rows = vec![];
        for name in [
            "LMS_SHA256_H5_W1",
            "LMS_SHA256_H10_W2",
            "LMS_SHA256_H5_W8_H5_W8",
            "XMSS-SHA2_10_256",
            "XMSS-SHAKE256_10_192",
            "XMSSMT-SHA2_20/4_256",
        ] {
            let e = all
                .iter()
                .find(|e| e.name == name && e.provider == registry::Provider::Liboqs)
                .unwrap_or_else(|| panic!("{name} is not in the registry"));
            assert!(e.unavailable.is_none(), "{name}: {:?}", e.unavailable);
            rows.push(size_row(e, b"sizes").unwrap());
        }
        let bad = stateful_mismatches(&rows);
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn classical_sizes_have_der_forms() {
        let all = registry::all();
        let e = all.iter().find(|e| e.name == "ECDSA-P256").unwrap();
        let r = size_row(e, b"m").unwrap();
        assert_eq!(r.keys.public_raw, 65);
        assert_eq!(r.keys.public_der, Some(91));
        assert_eq!(r.signature_max, Some(72));
        let x = all.iter().find(|e| e.name == "X25519").unwrap();
        let r = size_row(x, b"m").unwrap();
        assert_eq!(
            (r.keys.public_raw, r.ciphertext, r.shared_secret),
            (32, Some(32), Some(32))
        );
        assert_eq!(r.key_sizes, "fixed");
    }

    #[test]
    fn rsa_key_sizes_are_the_largest_observed() {
        let all = registry::all();
        let e = all.iter().find(|e| e.name == "RSA-PSS-2048").unwrap();
        let r = size_row(e, b"m").unwrap();
        assert!(r.key_sizes.starts_with("largest of "), "{}", r.key_sizes);
        assert!(r.key_sizes.ends_with(" observed"), "{}", r.key_sizes);
        assert_eq!(r.signature_max, Some(256));
    }
}
