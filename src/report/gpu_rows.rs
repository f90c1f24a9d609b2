//! GPU against CPU: for each GPU record the best CPU figure of the same
//! algorithm and operation, the speed-up, and the headlines on speed and
//! energy per operation they give.

use crate::report::headline::Finding;
use crate::report::headline::Group;
use crate::report::model::{Dataset, Entry};

use crate::core::catalog::{Kind, Operation};
use crate::core::units;
use crate::report::table::natural_cmp;
use std::collections::{BTreeMap, BTreeSet};

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

pub(crate) fn op_order(op: Operation) -> usize {
    Operation::ALL.iter().position(|o| *o == op).unwrap_or(99)
}

/// GPU rows: every ok GPU throughput record at its best batch.
pub(crate) fn gpu_rows<'a>(ds: &Dataset<'a>) -> Vec<GpuRow<'a>> {
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

pub(crate) fn gpu_findings(rows: &[GpuRow]) -> Vec<Finding> {
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

/// One energy finding per GPU backend, from the record's energy window (at
/// least `energy::MIN_WINDOW_S` of back-to-back batches read off the
/// device's energy counter); the timed runs' own readings are too short
/// for NVML's averaging and are never quoted.
pub(crate) fn energy_findings(rows: &[GpuRow]) -> Vec<Finding> {
    let mut out = vec![];
    let with: Vec<&GpuRow> = rows.iter().filter(|r| r.gpu.rec.energy.is_some()).collect();
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
        let e = rep.gpu.rec.energy.as_ref().expect("filtered");
        let uj = e.joules_per_op * 1e6;
        out.push(Finding {
            group: Group::Energy,
            figure: format!("{} µJ", units::sig3(uj)),
            word: "per op".into(),
            sentence: format!(
                "{} {} on {} ({}) uses {} µJ per operation.",
                rep.gpu.rec.algorithm,
                rep.gpu.rec.operation.cli_name(),
                backend,
                rep.gpu.rec.device.name,
                units::sig3(uj)
            ),
            detail: format!(
                "{} operations in {} back-to-back batches of {} over {:.1} s, {:.2} J · {}",
                units::grouped(e.ops as f64),
                e.launches,
                units::grouped(rep.gpu.rec.batch as f64),
                e.window_seconds,
                e.joules,
                e.method
            ),
            sources: vec![rep.gpu.src],
        });
    }
    out
}
