//! NIST ACVP vectors for FIPS 203 and 204 (usnistgov/ACVP-Server release
//! 1.1.0.38, gen-val/json-files, internalProjection.json), kept gzip'd in
//! `tests/vectors/acvp/` (keyGen and encapDecap whole; sigGen and sigVer a
//! stated subset: see the README there) and built into the binary.

use super::case::{judge, judge_verify, Case, DsaForm, Group, Outcome, SignInput, VerifyInput};
use crate::core::catalog::Algorithm;
use anyhow::{anyhow, Context};
use serde_json::Value;
use std::io::Read;
use std::sync::Arc;

/// The ACVP-Server release the vectors come from.
pub const VERSION: &str = "ACVP-Server 1.1.0.38";

const FILES: [(&str, &[u8]); 5] = [
    (
        "ML-KEM-keyGen-FIPS203",
        include_bytes!("../../tests/vectors/acvp/ML-KEM-keyGen-FIPS203.json.gz"),
    ),
    (
        "ML-KEM-encapDecap-FIPS203",
        include_bytes!("../../tests/vectors/acvp/ML-KEM-encapDecap-FIPS203.json.gz"),
    ),
    (
        "ML-DSA-keyGen-FIPS204",
        include_bytes!("../../tests/vectors/acvp/ML-DSA-keyGen-FIPS204.json.gz"),
    ),
    (
        "ML-DSA-sigGen-FIPS204",
        include_bytes!("../../tests/vectors/acvp/ML-DSA-sigGen-FIPS204.json.gz"),
    ),
    (
        "ML-DSA-sigVer-FIPS204",
        include_bytes!("../../tests/vectors/acvp/ML-DSA-sigVer-FIPS204.json.gz"),
    ),
];

/// Bytes from a hex string (either case).
pub fn unhex(s: &str) -> anyhow::Result<Vec<u8>> {
    let b = s.as_bytes();
    anyhow::ensure!(b.len() % 2 == 0, "odd-length hex string");
    let nib = |c: u8| -> anyhow::Result<u8> {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| anyhow!("not a hex digit: {:?}", c as char))
    };
    b.chunks(2)
        .map(|p| Ok((nib(p[0])? << 4) | nib(p[1])?))
        .collect()
}

fn field(v: &Value, name: &str) -> anyhow::Result<Vec<u8>> {
    let s = v
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("missing field {name}"))?;
    unhex(s).with_context(|| format!("field {name}"))
}

fn text<'a>(v: &'a Value, name: &str) -> &'a str {
    v.get(name).and_then(Value::as_str).unwrap_or("")
}

fn alg_of(group: &Value) -> anyhow::Result<Algorithm> {
    let p = text(group, "parameterSet");
    p.parse::<Algorithm>()
        .map_err(|e| anyhow!("parameter set {p:?}: {e}"))
}

fn load(name: &str, gz: &[u8]) -> anyhow::Result<Value> {
    let mut s = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut s)
        .with_context(|| format!("unpacking ACVP {name}"))?;
    serde_json::from_str(&s).with_context(|| format!("reading ACVP {name}"))
}

/// Every ACVP test group, one [`Group`] per tgId.
pub fn groups() -> anyhow::Result<Vec<Group>> {
    let mut out = Vec::new();
    for (name, gz) in FILES {
        let doc = load(name, gz)?;
        let groups = doc
            .get("testGroups")
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("ACVP {name}: no testGroups"))?;
        for g in groups {
            let alg = alg_of(g)?;
            let (label, cases) = group_cases(name, g, alg)
                .with_context(|| format!("ACVP {name} tgId {}", g["tgId"]))?;
            out.push(Group {
                source: "ACVP",
                name: format!("{name} tg{} {alg}{label}", g["tgId"]),
                alg,
                cases,
            });
        }
    }
    Ok(out)
}

fn tests(g: &Value) -> &[Value] {
    g.get("tests")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn id(t: &Value) -> u64 {
    t.get("tcId").and_then(Value::as_u64).unwrap_or(0)
}

fn group_cases(name: &str, g: &Value, alg: Algorithm) -> anyhow::Result<(String, Vec<Case>)> {
    let mut cases = Vec::new();
    let label = match name {
        "ML-KEM-keyGen-FIPS203" => {
            for t in tests(g) {
                let mut seed = field(t, "d")?;
                seed.extend(field(t, "z")?);
                let want = (field(t, "ek")?, field(t, "dk")?);
                cases.push(Case {
                    id: id(t),
                    invalid: false,
                    run: Box::new(move |s| judge(s.kem_keygen(alg, &seed), Some(&want))),
                });
            }
            String::new()
        }
        "ML-KEM-encapDecap-FIPS203" => kem_encap_decap(g, alg, &mut cases)?,
        "ML-DSA-keyGen-FIPS204" => {
            for t in tests(g) {
                let seed = field(t, "seed")?;
                let want = (field(t, "pk")?, field(t, "sk")?);
                cases.push(Case {
                    id: id(t),
                    invalid: false,
                    run: Box::new(move |s| judge(s.dsa_keygen(alg, &seed), Some(&want))),
                });
            }
            String::new()
        }
        "ML-DSA-sigGen-FIPS204" | "ML-DSA-sigVer-FIPS204" => {
            dsa_group(name.contains("sigGen"), g, alg, &mut cases)?
        }
        _ => anyhow::bail!("unknown ACVP set {name}"),
    };
    Ok((label, cases))
}

fn kem_encap_decap(g: &Value, alg: Algorithm, cases: &mut Vec<Case>) -> anyhow::Result<String> {
    let function = text(g, "function");
    if function == "encapsulation" {
        for t in tests(g) {
            let (ek, m) = (field(t, "ek")?, field(t, "m")?);
            let want = (field(t, "c")?, field(t, "k")?);
            cases.push(Case {
                id: id(t),
                invalid: false,
                run: Box::new(move |s| judge(s.kem_encaps(alg, &ek, &m), Some(&want))),
            });
        }
    } else {
        let dk = Arc::new(field(g, "dk")?);
        for t in tests(g) {
            let c = field(t, "c")?;
            let want = field(t, "k")?;
            let dk = Arc::clone(&dk);
            // A modified ciphertext is still "valid" here: decapsulation
            // must give the implicit-rejection key the vector holds.
            cases.push(Case {
                id: id(t),
                invalid: text(t, "reason").contains("modified"),
                run: Box::new(move |s| judge(s.kem_decaps(alg, &dk, &c), Some(&want))),
            });
        }
    }
    Ok(format!(" {function}"))
}

/// The form a sigGen/sigVer group asks for, or why none fits.
fn dsa_form(g: &Value) -> Result<DsaForm, &'static str> {
    let external_mu = g.get("externalMu").and_then(Value::as_bool) == Some(true);
    match (text(g, "signatureInterface"), text(g, "preHash")) {
        (_, "preHash") => Err("HashML-DSA (pre-hashed) is not implemented"),
        ("internal", _) if external_mu => Ok(DsaForm::ExternalMu),
        ("internal", _) => Ok(DsaForm::Internal),
        _ => Ok(DsaForm::Pure),
    }
}

fn dsa_group(
    sign: bool,
    g: &Value,
    alg: Algorithm,
    cases: &mut Vec<Case>,
) -> anyhow::Result<String> {
    let form = dsa_form(g);
    let label = match form {
        Ok(f) => format!(" {}", super::case::form_name(f)),
        Err(_) => " HashML-DSA".to_string(),
    };
    let deterministic = g.get("deterministic").and_then(Value::as_bool) == Some(true);
    for t in tests(g) {
        let msg_field = if matches!(form, Ok(DsaForm::ExternalMu)) {
            "mu"
        } else {
            "message"
        };
        let msg = field(t, msg_field)?;
        let ctx = if t.get("context").is_some() {
            field(t, "context")?
        } else {
            Vec::new()
        };
        let sig = field(t, "signature")?;
        let tc = id(t);
        if let Err(why) = form {
            cases.push(Case {
                id: tc,
                invalid: false,
                run: Box::new(move |_| Outcome::NotApplicable(why.to_string())),
            });
            continue;
        }
        let f = form.expect("checked above");
        if sign {
            let rnd = if deterministic {
                vec![0u8; 32]
            } else {
                field(t, "rnd")?
            };
            let input = SignInput {
                sk: field(t, "sk")?,
                msg,
                ctx,
                rnd,
            };
            cases.push(Case {
                id: tc,
                invalid: false,
                run: Box::new(move |s| judge(s.dsa_sign(alg, f, &input), Some(&sig))),
            });
        } else {
            let want = t
                .get("testPassed")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let input = VerifyInput {
                pk: field(t, "pk")?,
                msg,
                ctx,
                sig,
            };
            cases.push(Case {
                id: tc,
                invalid: !want,
                run: Box::new(move |s| judge_verify(s.dsa_verify(alg, f, &input), want)),
            });
        }
    }
    Ok(label)
}
