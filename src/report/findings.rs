//! What the report says: headline findings, PQC against classical at each
//! NIST level, GPU against CPU. Every figure keeps the records it came from.

use crate::report::headline::Finding;
use crate::report::headline::Group;
use crate::report::model::{level_bucket, Dataset, Entry, SrcRef};

use crate::core::catalog::{Kind, Operation};
use crate::core::units;
use crate::report::families::Class;
use crate::report::table::natural_cmp;
use crate::schema::record::Status;
use std::collections::{BTreeMap, BTreeSet};

/// What is compared in a PQC-against-classical pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Aspect {
    /// `KeyGen`, `Exchange`, `Public key`, ...
    pub name: String,
    /// PQC's value (milliseconds or bytes).
    pub pqc: f64,
    /// The classical value.
    pub classical: f64,
    /// Time (lower is better) or bytes (lower is better too).
    pub is_time: bool,
    /// Records used.
    pub sources: Vec<SrcRef>,
    /// What the sum covers, for `Exchange`.
    pub note: Option<String>,
}

impl Aspect {
    /// Ratio ≥ 1 and its word from PQC's side: faster/slower or
    /// smaller/larger.
    pub fn verdict(&self) -> (f64, &'static str, bool) {
        let r = self.classical / self.pqc;
        let pqc_wins = r >= 1.0;
        let mag = if pqc_wins { r } else { 1.0 / r };
        let word = match (self.is_time, pqc_wins) {
            _ if mag < 1.05 => "on par",
            (true, true) => "faster",
            (true, false) => "slower",
            (false, true) => "smaller",
            (false, false) => "larger",
        };
        (mag, word, pqc_wins)
    }

    /// `7.6× faster`.
    pub fn words(&self) -> String {
        let (mag, word, _) = self.verdict();
        if word == "on par" {
            format!("on par ({})", units::ratio(mag))
        } else {
            format!("{} {word}", units::ratio(mag))
        }
    }

    /// The two figures: `74.0 µs vs 560 µs`.
    pub fn figures(&self) -> String {
        if self.is_time {
            format!(
                "{} vs {}",
                units::time_ms(self.pqc),
                units::time_ms(self.classical)
            )
        } else {
            format!(
                "{} vs {}",
                units::bytes(self.pqc as usize),
                units::bytes(self.classical as usize)
            )
        }
    }
}

/// A PQC algorithm against a classical one of the same NIST level.
#[derive(Debug, Clone)]
pub struct Pair {
    /// KEM or signature.
    pub kind: Kind,
    /// Level column: 1, 3 or 5.
    pub level: u8,
    /// The PQC algorithm.
    pub pqc: String,
    /// Its NIST category.
    pub pqc_level: u8,
    /// The classical algorithm.
    pub classical: String,
    /// Its category of equivalent strength.
    pub classical_level: u8,
    /// Host both ran on.
    pub host: String,
    /// Threads both ran with.
    pub threads: usize,
    /// Time and size aspects.
    pub aspects: Vec<Aspect>,
}

/// One GPU figure against the best CPU figure for the same operation.
#[derive(Debug, Clone)]
pub struct GpuRow<'a> {
    /// The GPU record (best batch).
    pub gpu: Entry<'a>,
    /// The best CPU throughput record for the same algorithm and operation.
    pub cpu: Option<Entry<'a>>,
    /// Single-thread CPU record, when there is one.
    pub cpu_one: Option<Entry<'a>>,
}

impl GpuRow<'_> {
    /// GPU ops/s over the best CPU ops/s.
    pub fn speedup(&self) -> Option<f64> {
        Some(self.gpu.ok_throughput()? / self.cpu?.ok_throughput()?)
    }
}

/// Everything the writers need.
pub struct Analysis<'a> {
    /// Headline findings.
    pub findings: Vec<Finding>,
    /// PQC against classical pairs.
    pub pairs: Vec<Pair>,
    /// A plain sentence when pairs are missing (wholly or at some levels).
    pub pair_notes: Vec<String>,
    /// GPU against CPU rows.
    pub gpu: Vec<GpuRow<'a>>,
    /// A plain sentence about GPU records (or their absence).
    pub gpu_note: String,
}

/// Preferred level for a headline pair: 3 (the common deployment choice),
/// then 1, then 5.
const LEVEL_PREFERENCE: [u8; 3] = [3, 1, 5];

/// Order of classical baselines within a level: the ones the standards
/// bodies compare against first.
fn baseline_rank(name: &str) -> usize {
    let n = name.to_ascii_uppercase();
    let order = [
        "ECDH", "X25519", "X448", "ECDSA", "RSA-PSS", "PSS", "RSA", "ED25519", "ED448",
    ];
    order
        .iter()
        .position(|m| n.contains(m))
        .unwrap_or(order.len())
}

/// Whether a family is one of the two the GPU backends implement.
pub fn is_ml_family(family: &str) -> bool {
    family == "ML-KEM" || family == "ML-DSA"
}

fn op_order(op: Operation) -> usize {
    Operation::ALL.iter().position(|o| *o == op).unwrap_or(99)
}

/// The record to quote for (host, algorithm, operation, threads) on a CPU:
/// ok throughput, liboqs before others, the latest file last wins.
fn pick_cpu<'a>(
    ds: &Dataset<'a>,
    host: &str,
    alg: &str,
    op: Operation,
    threads: usize,
) -> Option<Entry<'a>> {
    ds.entries
        .iter()
        .filter(|e| {
            !e.is_gpu()
                && e.host() == host
                && e.rec.algorithm == alg
                && e.rec.operation == op
                && e.rec.threads == threads
                && e.ok_throughput().is_some()
        })
        .max_by(|a, b| {
            let pa = (a.rec.provider == "liboqs") as u8;
            let pb = (b.rec.provider == "liboqs") as u8;
            pa.cmp(&pb)
                .then_with(|| a.run.metadata.date.cmp(&b.run.metadata.date))
                .then_with(|| a.src.cmp(&b.src))
        })
        .copied()
}

/// Builds the analysis.
pub fn analyse<'a>(ds: &Dataset<'a>) -> Analysis<'a> {
    let pairs = pairs(ds);
    let mut pair_notes = vec![];
    let classical_any = ds.ok().any(|e| e.class == Class::Classical);
    if !classical_any {
        let families: BTreeSet<&str> = ds.ok().map(|e| e.rec.family.as_str()).collect();
        let providers: BTreeSet<&str> = ds.ok().map(|e| e.rec.provider.as_str()).collect();
        pair_notes.push(format!(
            "No classical records in these files: they measured only {} ({}), so PQC cannot be set against ECDH, X25519, ECDSA or RSA here. \
             Add a run file from the CPU sweep (`pqcprof sweep`, OpenSSL baselines) to the same report to see these comparisons.",
            join_words(families.iter().copied()),
            join_words(providers.iter().copied())
        ));
    } else {
        for kind in [Kind::Kem, Kind::Signature] {
            let fam = if kind == Kind::Kem {
                "ML-KEM"
            } else {
                "ML-DSA"
            };
            for level in [1u8, 3, 5] {
                let has_pqc = ds
                    .ok()
                    .any(|e| e.rec.family == fam && level_bucket(e.rec.nist_level) == Some(level));
                let has_pair = pairs.iter().any(|p| p.kind == kind && p.level == level);
                if has_pqc && !has_pair {
                    pair_notes.push(format!(
                        "NIST level {level}: no classical {} baseline on the same host and thread count as {fam}, so no pair.",
                        if kind == Kind::Kem { "key-exchange" } else { "signature" }
                    ));
                }
            }
        }
    }
    let gpu = gpu_rows(ds);
    let gpu_note = if gpu.is_empty() {
        let failed = ds
            .entries
            .iter()
            .filter(|e| e.is_gpu() && e.rec.status != Status::Ok)
            .count();
        if failed > 0 {
            format!("GPU records exist but none was measured successfully ({failed} skipped or failed; see the appendix).")
        } else {
            "No GPU records in these files: the runs used CPU backends only. GPU backends (`native-gpu`, `cupqc`) run where `pqcprof check` finds a ready GPU; add such a run file to this report to compare.".to_string()
        }
    } else if gpu.iter().all(|r| r.cpu.is_none()) {
        "GPU records exist, but no CPU throughput record of the same algorithms to compare them with.".to_string()
    } else {
        "Each GPU figure is the backend's best batch size; the CPU figure is the best CPU throughput for the same algorithm and operation (same host where it has one).".to_string()
    };
    let mut findings = vec![];
    findings.extend(pair_findings(&pairs));
    findings.extend(spread_finding(ds));
    findings.extend(gpu_findings(&gpu));
    findings.extend(energy_findings(&gpu));
    findings.extend(cpu_findings(ds));
    findings.extend(crate::report::batch_curves::break_even_findings(
        &crate::report::batch_curves::curves(ds),
    ));
    findings.sort_by_key(|f| f.group);
    Analysis {
        findings,
        pairs,
        pair_notes,
        gpu,
        gpu_note,
    }
}

fn join_words<'s>(items: impl Iterator<Item = &'s str>) -> String {
    let v: Vec<&str> = items.collect();
    match v.len() {
        0 => "nothing".into(),
        1 => v[0].into(),
        _ => format!("{} and {}", v[..v.len() - 1].join(", "), v[v.len() - 1]),
    }
}

/// Every PQC-against-classical pair on every host.
fn pairs(ds: &Dataset) -> Vec<Pair> {
    let mut out = vec![];
    let hosts: BTreeSet<&str> = ds.entries.iter().map(|e| e.host()).collect();
    for host in hosts {
        let on_host: Vec<&Entry> = ds
            .entries
            .iter()
            .filter(|e| e.host() == host && !e.is_gpu() && e.ok_throughput().is_some())
            .collect();
        for (kind, fam) in [(Kind::Kem, "ML-KEM"), (Kind::Signature, "ML-DSA")] {
            // (algorithm, level, threads set)
            let algs = |class: Class, want_fam: Option<&str>| {
                let mut m: BTreeMap<String, (u8, BTreeSet<usize>)> = BTreeMap::new();
                for e in on_host.iter().filter(|e| {
                    e.class == class
                        && e.rec.kind == kind
                        && want_fam.is_none_or(|f| e.rec.family == f)
                }) {
                    if let Some(l) = e.rec.nist_level {
                        m.entry(e.rec.algorithm.clone())
                            .or_insert((l, BTreeSet::new()))
                            .1
                            .insert(e.rec.threads);
                    }
                }
                m
            };
            let pqc = algs(Class::Pqc, Some(fam));
            let classical = algs(Class::Classical, None);
            for (p_alg, (p_level, p_threads)) in &pqc {
                let bucket = level_bucket(Some(*p_level));
                let mut cands: Vec<(&String, &(u8, BTreeSet<usize>))> = classical
                    .iter()
                    .filter(|(_, (l, _))| level_bucket(Some(*l)) == bucket)
                    .collect();
                cands.sort_by(|a, b| {
                    baseline_rank(a.0)
                        .cmp(&baseline_rank(b.0))
                        .then_with(|| natural_cmp(a.0, b.0))
                });
                for (c_alg, (c_level, c_threads)) in cands {
                    let common: Vec<usize> = p_threads.intersection(c_threads).copied().collect();
                    let Some(&threads) = common.iter().find(|t| **t == 1).or(common.first()) else {
                        continue;
                    };
                    if let Some(pair) =
                        make_pair(ds, host, kind, p_alg, *p_level, c_alg, *c_level, threads)
                    {
                        out.push(pair);
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| {
        (a.kind == Kind::Signature, a.level, &a.host)
            .cmp(&(b.kind == Kind::Signature, b.level, &b.host))
            .then_with(|| baseline_rank(&a.classical).cmp(&baseline_rank(&b.classical)))
            .then_with(|| natural_cmp(&a.classical, &b.classical))
    });
    out
}

#[allow(clippy::too_many_arguments)]
fn make_pair(
    ds: &Dataset,
    host: &str,
    kind: Kind,
    pqc: &str,
    pqc_level: u8,
    classical: &str,
    classical_level: u8,
    threads: usize,
) -> Option<Pair> {
    let mut aspects = vec![];
    let mut sum = (0.0, 0.0, vec![], vec![], vec![]);
    for op in Operation::ALL {
        let p = pick_cpu(ds, host, pqc, op, threads);
        let c = pick_cpu(ds, host, classical, op, threads);
        if let Some(p) = p {
            sum.0 += p.ms()?;
            sum.2.push(p.src);
            sum.4.push(op.cli_name());
        }
        if let Some(c) = c {
            sum.1 += c.ms()?;
            sum.3.push(c.src);
        }
        if let (Some(p), Some(c)) = (p, c) {
            let signs = matches!(op, Operation::Sign | Operation::Verify);
            aspects.push(Aspect {
                name: op.label().to_string(),
                pqc: p.ms()?,
                classical: c.ms()?,
                is_time: true,
                sources: vec![p.src, c.src],
                note: signs
                    .then(|| message_note(p.rec.message_bytes, c.rec.message_bytes))
                    .flatten(),
            });
        }
    }
    if aspects.is_empty() {
        return None;
    }
    if kind == Kind::Kem && sum.2.len() > 1 && !sum.3.is_empty() {
        let mut sources = sum.2.clone();
        sources.extend(sum.3.iter().copied());
        aspects.push(Aspect {
            name: "Exchange".into(),
            pqc: sum.0,
            classical: sum.1,
            is_time: true,
            sources,
            note: Some(format!("sum of {} on each side", sum.4.join(" + "))),
        });
    }
    let sizes_of = |alg: &str| {
        ds.entries
            .iter()
            .find(|e| e.rec.algorithm == alg && e.rec.sizes.public_key_bytes > 0)
            .map(|e| (e.rec.sizes, e.src))
    };
    if let (Some((ps, psrc)), Some((cs, csrc))) = (sizes_of(pqc), sizes_of(classical)) {
        let src = vec![psrc, csrc];
        let mut size = |name: &str, a: usize, b: usize| {
            if a > 0 && b > 0 {
                aspects.push(Aspect {
                    name: name.into(),
                    pqc: a as f64,
                    classical: b as f64,
                    is_time: false,
                    sources: src.clone(),
                    note: None,
                });
            }
        };
        size("Public key", ps.public_key_bytes, cs.public_key_bytes);
        match kind {
            Kind::Kem => {
                // A Diffie-Hellman reply is the peer's public key.
                let pct = ps.ciphertext_bytes.unwrap_or(0);
                let cct = cs.ciphertext_bytes.unwrap_or(cs.public_key_bytes);
                size("Ciphertext", pct, cct);
                size(
                    "Wire (public key + ciphertext)",
                    ps.public_key_bytes.saturating_add(pct),
                    cs.public_key_bytes.saturating_add(cct),
                );
            }
            Kind::Signature => {
                let psig = ps.signature_bytes.unwrap_or(0);
                let csig = cs.signature_bytes.unwrap_or(0);
                size("Signature", psig, csig);
                if psig > 0 && csig > 0 {
                    size(
                        "Signature + public key",
                        ps.public_key_bytes.saturating_add(psig),
                        cs.public_key_bytes.saturating_add(csig),
                    );
                }
            }
        }
    }
    Some(Pair {
        kind,
        level: level_bucket(Some(pqc_level)).unwrap_or(pqc_level),
        pqc: pqc.into(),
        pqc_level,
        classical: classical.into(),
        classical_level,
        host: host.into(),
        threads,
        aspects,
    })
}

/// The message a signing or verifying figure is for: `at a 1,024 B
/// message`, or both sizes when the two records differ.
pub fn message_note(pqc: Option<usize>, classical: Option<usize>) -> Option<String> {
    match (pqc, classical) {
        (Some(a), Some(b)) if a == b => Some(format!("at a {} message", units::bytes(a))),
        (Some(a), Some(b)) => Some(format!(
            "messages of {} and {}",
            units::bytes(a),
            units::bytes(b)
        )),
        (Some(a), None) | (None, Some(a)) => Some(format!("at a {} message", units::bytes(a))),
        (None, None) => None,
    }
}

/// Verb phrase for a headline about an aspect.
fn phrase(aspect: &str) -> &'static str {
    match aspect {
        "Exchange" => "completes a key exchange",
        "KeyGen" => "generates a key pair",
        "Encaps" => "encapsulates",
        "Decaps" => "decapsulates",
        "Sign" => "signs",
        "Verify" => "verifies",
        _ => "",
    }
}

fn pair_findings(pairs: &[Pair]) -> Vec<Finding> {
    let mut out = vec![];
    let headline_aspects: [(Kind, &[&str]); 2] = [
        (
            Kind::Kem,
            &["Exchange", "Encaps", "Wire (public key + ciphertext)"],
        ),
        (
            Kind::Signature,
            &["Sign", "Verify", "KeyGen", "Signature + public key"],
        ),
    ];
    for (kind, names) in headline_aspects {
        let mut used_exchange = false;
        for name in names {
            if *name == "Encaps" && used_exchange {
                continue;
            }
            let chosen = LEVEL_PREFERENCE.iter().find_map(|lvl| {
                pairs
                    .iter()
                    .filter(|p| p.kind == kind && p.level == *lvl)
                    .find_map(|p| p.aspects.iter().find(|a| a.name == *name).map(|a| (p, a)))
            });
            let Some((p, a)) = chosen else { continue };
            used_exchange |= *name == "Exchange";
            let (mag, word, wins) = a.verdict();
            let sentence = if a.is_time {
                format!(
                    "{} {} {} {} than {}.",
                    p.pqc,
                    phrase(name),
                    units::ratio(mag),
                    word,
                    p.classical
                )
            } else {
                format!(
                    "{}'s {} is {} {} than {}'s.",
                    p.pqc,
                    name.to_lowercase(),
                    units::ratio(mag),
                    word,
                    p.classical
                )
            };
            let detail = format!(
                "{} vs {} · NIST level {} · {}{}{}",
                p.pqc,
                p.classical,
                p.level,
                a.figures(),
                a.note
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                if a.is_time {
                    format!(
                        " · {} thread{} on {}",
                        p.threads,
                        if p.threads == 1 { "" } else { "s" },
                        p.host
                    )
                } else {
                    String::new()
                }
            );
            out.push(Finding {
                group: if wins && word != "on par" {
                    Group::PqcFaster
                } else {
                    Group::PqcCosts
                },
                figure: units::ratio(mag),
                word: word.into(),
                sentence,
                detail,
                sources: a.sources.clone(),
            });
        }
    }
    out
}

/// The widest gap between another PQC family and ML-KEM / ML-DSA at the
/// same level, host and threads: one KEM and one signature example, as
/// pqcbench gives them.
fn spread_finding(ds: &Dataset) -> Option<Finding> {
    // Per kind (KEM, signature): the widest (ratio, other, baseline).
    let mut worst: [Option<(f64, Entry, Entry)>; 2] = [None, None];
    for e in ds
        .ok()
        .filter(|e| e.class == Class::Pqc && !is_ml_family(&e.rec.family) && !e.is_gpu())
    {
        let (Some(ops), Some(bucket)) = (e.ok_throughput(), level_bucket(e.rec.nist_level)) else {
            continue;
        };
        let (slot, base_fam) = if e.rec.kind == Kind::Kem {
            (0, "ML-KEM")
        } else {
            (1, "ML-DSA")
        };
        let base = ds.ok().find(|b| {
            b.rec.family == base_fam
                && !b.is_gpu()
                && b.host() == e.host()
                && b.rec.threads == e.rec.threads
                && b.rec.operation == e.rec.operation
                && level_bucket(b.rec.nist_level) == Some(bucket)
                && b.ok_throughput().is_some()
        });
        if let Some(b) = base {
            let r = b.ok_throughput()? / ops;
            if worst[slot].as_ref().is_none_or(|w| r > w.0) {
                worst[slot] = Some((r, *e, *b));
            }
        }
    }
    let examples: Vec<&(f64, Entry, Entry)> =
        worst.iter().flatten().filter(|w| w.0 >= 1.5).collect();
    let top = examples.iter().map(|w| w.0).fold(0.0, f64::max);
    if examples.is_empty() {
        return None;
    }
    let said: Vec<String> = examples
        .iter()
        .map(|(r, e, b)| {
            format!(
                "{} {} runs {} slower than {}",
                e.rec.algorithm,
                e.rec.operation.cli_name(),
                units::ratio(*r),
                b.rec.algorithm
            )
        })
        .collect();
    let figures: Vec<String> = examples
        .iter()
        .map(|(_, e, b)| {
            Some(format!(
                "{} vs {} {}: {} vs {}",
                e.rec.algorithm,
                b.rec.algorithm,
                e.rec.operation.cli_name(),
                units::ops(e.ok_throughput()?),
                units::ops(b.ok_throughput()?)
            ))
        })
        .collect::<Option<_>>()?;
    Some(Finding {
        group: Group::PqcCosts,
        figure: format!("up to {}", units::ratio(top)),
        word: "slower".into(),
        sentence: format!(
            "Among post-quantum schemes the spread is wide: {}.",
            said.join("; ")
        ),
        detail: figures.join(" · "),
        sources: examples
            .iter()
            .flat_map(|(_, e, b)| [e.src, b.src])
            .collect(),
    })
}

/// GPU rows: every ok GPU throughput record at its best batch.
fn gpu_rows<'a>(ds: &Dataset<'a>) -> Vec<GpuRow<'a>> {
    let mut best: BTreeMap<(String, String, String, String, usize), Entry<'a>> = BTreeMap::new();
    for e in ds.entries.iter().filter(|e| e.is_gpu()) {
        let Some(ops) = e.ok_throughput() else {
            continue;
        };
        let key = (
            e.rec.algorithm.clone(),
            e.rec.backend.clone(),
            e.rec.device.name.clone(),
            e.host().to_string(),
            op_order(e.rec.operation),
        );
        let better = best
            .get(&key)
            .is_none_or(|b| b.ok_throughput().unwrap_or(0.0) < ops);
        if better {
            best.insert(key, *e);
        }
    }
    let mut rows: Vec<GpuRow> = best
        .into_values()
        .map(|g| {
            let cpu_for = |same_host: bool, one: bool| {
                ds.entries
                    .iter()
                    .filter(|c| {
                        !c.is_gpu()
                            && c.rec.algorithm == g.rec.algorithm
                            && c.rec.operation == g.rec.operation
                            && (!same_host || c.host() == g.host())
                            && (!one || c.rec.threads == 1)
                            && c.ok_throughput().is_some()
                    })
                    .max_by(|a, b| {
                        a.ok_throughput()
                            .unwrap_or(0.0)
                            .total_cmp(&b.ok_throughput().unwrap_or(0.0))
                    })
                    .copied()
            };
            GpuRow {
                gpu: g,
                cpu: cpu_for(true, false).or_else(|| cpu_for(false, false)),
                cpu_one: cpu_for(true, true).or_else(|| cpu_for(false, true)),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.gpu.rec.kind == Kind::Signature)
            .cmp(&(b.gpu.rec.kind == Kind::Signature))
            .then_with(|| natural_cmp(&a.gpu.rec.algorithm, &b.gpu.rec.algorithm))
            .then_with(|| op_order(a.gpu.rec.operation).cmp(&op_order(b.gpu.rec.operation)))
            .then_with(|| a.gpu.rec.backend.cmp(&b.gpu.rec.backend))
    });
    rows
}

fn gpu_findings(rows: &[GpuRow]) -> Vec<Finding> {
    let mut out = vec![];
    let backends: BTreeSet<&str> = rows.iter().map(|r| r.gpu.rec.backend.as_str()).collect();
    for backend in backends {
        let mine: Vec<&GpuRow> = rows
            .iter()
            .filter(|r| r.gpu.rec.backend == backend && r.speedup().is_some())
            .collect();
        if mine.is_empty() {
            continue;
        }
        // The representative operation: ML-KEM-768 encaps, else ML-DSA-65
        // sign, else the largest speed-up.
        let rep = mine
            .iter()
            .find(|r| {
                r.gpu.rec.algorithm == "ML-KEM-768" && r.gpu.rec.operation == Operation::Encaps
            })
            .or_else(|| {
                mine.iter().find(|r| {
                    r.gpu.rec.algorithm == "ML-DSA-65" && r.gpu.rec.operation == Operation::Sign
                })
            })
            .copied()
            .or_else(|| {
                mine.iter()
                    .max_by(|a, b| {
                        a.speedup()
                            .unwrap_or(0.0)
                            .total_cmp(&b.speedup().unwrap_or(0.0))
                    })
                    .copied()
            });
        let Some(rep) = rep else { continue };
        let s = rep.speedup().unwrap_or(0.0);
        let cpu = rep.cpu.expect("speed-up implies a CPU record");
        let (word, mag) = if s >= 1.0 {
            ("faster", s)
        } else {
            ("slower", 1.0 / s)
        };
        out.push(Finding {
            group: Group::Gpu,
            figure: units::ratio(mag),
            word: word.into(),
            sentence: format!(
                "{} on {} runs {} {} {} {word} than the best CPU figure ({}).",
                backend,
                rep.gpu.rec.device.name,
                rep.gpu.rec.algorithm,
                rep.gpu.rec.operation.cli_name(),
                units::ratio(mag),
                cpu.setup()
            ),
            detail: format!(
                "{} against {} · batch {}",
                units::ops(rep.gpu.ok_throughput().unwrap_or(0.0)),
                units::ops(cpu.ok_throughput().unwrap_or(0.0)),
                units::grouped(rep.gpu.rec.batch as f64)
            ),
            sources: vec![rep.gpu.src, cpu.src],
        });
        if mine.len() > 1 {
            let lo = mine
                .iter()
                .min_by(|a, b| {
                    a.speedup()
                        .unwrap_or(0.0)
                        .total_cmp(&b.speedup().unwrap_or(0.0))
                })
                .copied()
                .expect("non-empty");
            let hi = mine
                .iter()
                .max_by(|a, b| {
                    a.speedup()
                        .unwrap_or(0.0)
                        .total_cmp(&b.speedup().unwrap_or(0.0))
                })
                .copied()
                .expect("non-empty");
            let name =
                |r: &GpuRow| format!("{} {}", r.gpu.rec.algorithm, r.gpu.rec.operation.cli_name());
            let spd = |r: &GpuRow| {
                let s = r.speedup().unwrap_or(0.0);
                if s >= 1.0 {
                    format!("{} faster", units::ratio(s))
                } else {
                    format!("{} slower", units::ratio(1.0 / s))
                }
            };
            out.push(Finding {
                group: Group::Gpu,
                figure: format!(
                    "{}–{}",
                    units::ratio(lo.speedup().unwrap_or(0.0)).trim_end_matches('×'),
                    units::ratio(hi.speedup().unwrap_or(0.0))
                ),
                word: "range".into(),
                sentence: format!(
                    "Across {} operations, {backend} ranges from {} ({}) to {} ({}) against the CPU.",
                    mine.len(),
                    spd(lo),
                    name(lo),
                    spd(hi),
                    name(hi)
                ),
                detail: format!(
                    "{}: {} vs {}; {}: {} vs {}",
                    name(lo),
                    units::ops(lo.gpu.ok_throughput().unwrap_or(0.0)),
                    units::ops(lo.cpu.and_then(|c| c.ok_throughput()).unwrap_or(0.0)),
                    name(hi),
                    units::ops(hi.gpu.ok_throughput().unwrap_or(0.0)),
                    units::ops(hi.cpu.and_then(|c| c.ok_throughput()).unwrap_or(0.0)),
                ),
                sources: vec![
                    lo.gpu.src,
                    lo.cpu.map(|c| c.src).unwrap_or(lo.gpu.src),
                    hi.gpu.src,
                    hi.cpu.map(|c| c.src).unwrap_or(hi.gpu.src),
                ],
            });
        }
    }
    out
}

fn energy_findings(rows: &[GpuRow]) -> Vec<Finding> {
    let mut out = vec![];
    let with: Vec<&GpuRow> = rows
        .iter()
        .filter(|r| r.gpu.rec.energy_per_op_uj.is_some())
        .collect();
    let backends: BTreeSet<&str> = with.iter().map(|r| r.gpu.rec.backend.as_str()).collect();
    for backend in backends {
        let mine: Vec<&&GpuRow> = with
            .iter()
            .filter(|r| r.gpu.rec.backend == backend)
            .collect();
        let rep = mine
            .iter()
            .find(|r| {
                r.gpu.rec.algorithm == "ML-KEM-768" && r.gpu.rec.operation == Operation::Encaps
            })
            .or(mine.first())
            .copied();
        let Some(rep) = rep else { continue };
        let e = rep.gpu.rec.energy_per_op_uj.as_ref().expect("filtered");
        let power = rep
            .gpu
            .rec
            .mean_power_w
            .as_ref()
            .map(|p| format!(" · mean board power {} W", units::sig3(p.median)))
            .unwrap_or_default();
        out.push(Finding {
            group: Group::Energy,
            figure: format!("{} µJ", units::sig3(e.median)),
            word: "per op".into(),
            sentence: format!(
                "{} {} on {} ({}) uses {} µJ per operation.",
                rep.gpu.rec.algorithm,
                rep.gpu.rec.operation.cli_name(),
                backend,
                rep.gpu.rec.device.name,
                units::sig3(e.median)
            ),
            detail: format!(
                "median of {} runs at batch {}{}",
                e.raw.len(),
                units::grouped(rep.gpu.rec.batch as f64),
                power
            ),
            sources: vec![rep.gpu.src],
        });
    }
    out
}

/// Findings from CPU records alone, so a CPU-only run still has headlines.
fn cpu_findings(ds: &Dataset) -> Vec<Finding> {
    let mut out = vec![];
    let single: Vec<&Entry> = ds
        .ok()
        .filter(|e| !e.is_gpu() && e.rec.threads == 1 && e.ok_throughput().is_some())
        .collect();
    let by = |a: &&&Entry, b: &&&Entry| {
        a.ok_throughput()
            .unwrap_or(0.0)
            .total_cmp(&b.ok_throughput().unwrap_or(0.0))
    };
    if let (Some(fast), Some(slow)) = (
        single.iter().max_by(by).copied(),
        single.iter().min_by(by).copied(),
    ) {
        if fast.src != slow.src {
            let r = fast.ok_throughput().unwrap_or(0.0) / slow.ok_throughput().unwrap_or(1.0);
            out.push(Finding {
                group: Group::Cpu,
                figure: units::ratio(r),
                word: "spread".into(),
                sentence: format!(
                    "On one core, {} {} is the fastest operation measured and {} {} the slowest: {} apart.",
                    fast.rec.algorithm,
                    fast.rec.operation.cli_name(),
                    slow.rec.algorithm,
                    slow.rec.operation.cli_name(),
                    units::ratio(r)
                ),
                detail: format!(
                    "{} ({}) vs {} ({}) · {} on {}",
                    units::ops(fast.ok_throughput().unwrap_or(0.0)),
                    units::time_ms(fast.ms().unwrap_or(0.0)),
                    units::ops(slow.ok_throughput().unwrap_or(0.0)),
                    units::time_ms(slow.ms().unwrap_or(0.0)),
                    fast.setup(),
                    fast.host()
                ),
                sources: vec![fast.src, slow.src],
            });
        }
    }
    // Scaling from one thread to the most threads measured.
    let mut scal: Vec<(f64, &Entry, &Entry)> = vec![];
    for one in &single {
        let many = ds
            .ok()
            .filter(|m| {
                !m.is_gpu()
                    && m.src.file == one.src.file
                    && m.rec.backend == one.rec.backend
                    && m.rec.algorithm == one.rec.algorithm
                    && m.rec.operation == one.rec.operation
                    && m.rec.threads > 1
                    && m.ok_throughput().is_some()
            })
            .max_by_key(|m| m.rec.threads);
        if let Some(m) = many {
            scal.push((
                m.ok_throughput().unwrap_or(0.0) / one.ok_throughput().unwrap_or(1.0),
                one,
                m,
            ));
        }
    }
    if !scal.is_empty() {
        scal.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (lo, hi) = (&scal[0], &scal[scal.len() - 1]);
        let median = scal[scal.len() / 2].0;
        let threads = hi.2.rec.threads;
        out.push(Finding {
            group: Group::Cpu,
            figure: units::ratio(median),
            word: "with all cores".into(),
            sentence: format!(
                "Spreading a batch over {threads} threads gives a median {} the one-thread throughput, from {} ({} {}) to {} ({} {}).",
                units::ratio(median),
                units::ratio(lo.0),
                lo.1.rec.algorithm,
                lo.1.rec.operation.cli_name(),
                units::ratio(hi.0),
                hi.1.rec.algorithm,
                hi.1.rec.operation.cli_name()
            ),
            detail: format!(
                "{} operations measured at 1 and {threads} threads · ideal is {threads}.0×",
                scal.len()
            ),
            sources: vec![lo.1.src, lo.2.src, hi.1.src, hi.2.src],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_words() {
        let a = Aspect {
            name: "Sign".into(),
            pqc: 0.1,
            classical: 0.76,
            is_time: true,
            sources: vec![],
            note: None,
        };
        assert_eq!(a.words(), "7.6× faster");
        let b = Aspect {
            name: "Public key".into(),
            pqc: 1184.0,
            classical: 97.0,
            is_time: false,
            sources: vec![],
            note: None,
        };
        assert_eq!(b.words(), "12× larger");
        assert_eq!(b.figures(), "1,184 B vs 97 B");
    }

    #[test]
    fn baselines_in_order() {
        assert!(baseline_rank("ECDH-P256") < baseline_rank("X25519"));
        assert!(baseline_rank("ECDSA-P256") < baseline_rank("RSA-3072-PSS"));
        assert!(baseline_rank("RSA-3072-PSS") < baseline_rank("Ed25519"));
    }
}
