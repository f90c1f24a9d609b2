//! GPU against CPU: for each GPU record the best CPU figure of the same
//! algorithm and operation, the speed-up, and the headlines on speed and
//! energy per operation they give.

use crate::report::headline::Finding;
use crate::report::headline::Group;
use crate::report::model::{Dataset, Entry};

use crate::core::catalog::{Kind, Operation};
use crate::core::units;
use crate::report::change::{self, Verdict};
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

/// Speed-ups in order, a row without one counting as 0.
fn by_speedup(a: &GpuRow, b: &GpuRow) -> std::cmp::Ordering {
    a.speedup()
        .unwrap_or(0.0)
        .total_cmp(&b.speedup().unwrap_or(0.0))
}

/// `12× faster` or `3.0× slower`: a speed-up in words.
fn faster_or_slower(s: f64) -> String {
    if s >= 1.0 {
        format!("{} faster", units::ratio(s))
    } else {
        format!("{} slower", units::ratio(1.0 / s))
    }
}

/// Per GPU backend, the speed-up of its representative operation and,
/// with several operations, the range of its speed-ups.
pub(crate) fn gpu_findings(rows: &[GpuRow]) -> Vec<Finding> {
    let mut out = vec![];
    let backends: BTreeSet<&str> = rows.iter().map(|r| r.gpu.rec.backend.as_str()).collect();
    for backend in backends {
        let mine: Vec<&GpuRow> = rows
            .iter()
            .filter(|r| r.gpu.rec.backend == backend && r.speedup().is_some())
            .collect();
        let Some(rep) = representative(&mine) else {
            continue;
        };
        // A row with a speed-up has its CPU record.
        let Some(cpu) = rep.cpu else { continue };
        out.push(speedup_finding(backend, rep, &cpu));
        out.extend(range_finding(backend, &mine));
    }
    out
}

/// The operation a backend's headline speaks of: ML-KEM-768 encaps, else
/// ML-DSA-65 sign, else the largest speed-up.
fn representative<'r, 'a>(mine: &[&'r GpuRow<'a>]) -> Option<&'r GpuRow<'a>> {
    let is = |r: &GpuRow, alg: &str, op: Operation| {
        r.gpu.rec.algorithm == alg && r.gpu.rec.operation == op
    };
    mine.iter()
        .find(|r| is(r, "ML-KEM-768", Operation::Encaps))
        .or_else(|| mine.iter().find(|r| is(r, "ML-DSA-65", Operation::Sign)))
        .copied()
        .or_else(|| mine.iter().max_by(|a, b| by_speedup(a, b)).copied())
}

/// `backend on device runs ML-KEM-768 encaps 12× faster than the best CPU
/// figure`.
fn speedup_finding(backend: &str, rep: &GpuRow, cpu: &Entry) -> Finding {
    let s = rep.speedup().unwrap_or(0.0);
    let mag = if s >= 1.0 { s } else { 1.0 / s };
    let word = match change::records_verdict(cpu.rec, rep.gpu.rec) {
        Some(Verdict::Same) => "on par",
        Some(Verdict::Unclear) => "unclear",
        _ if s >= 1.0 => "faster",
        _ => "slower",
    };
    let words = change::ratio_words(cpu.rec, rep.gpu.rec);
    let figure = change::ratio_text(mag, words.as_ref().is_some_and(|w| w.0.ci95.is_some()));
    Finding {
        group: Group::Gpu,
        figure: figure.clone(),
        word: word.into(),
        sentence: format!(
            "{} on {} runs {} {} {} the best CPU figure ({}).",
            backend,
            rep.gpu.rec.device.name,
            rep.gpu.rec.algorithm,
            rep.gpu.rec.operation.cli_name(),
            change::ratio_phrase(&figure, word),
            cpu.setup()
        ),
        detail: format!(
            "{} against {} · batch {}",
            units::ops(rep.gpu.ok_throughput().unwrap_or(0.0)),
            units::ops(cpu.ok_throughput().unwrap_or(0.0)),
            units::grouped(rep.gpu.rec.batch as f64)
        ),
        interval: words.as_ref().map(|w| w.2.clone()),
        ratio: words.map(|w| crate::report::table::Marked::ahead(rep.gpu.src, cpu.src, w.0)),
        kat: None,
        sources: vec![rep.gpu.src, cpu.src],
    }
}

/// From the smallest to the largest speed-up of a backend's operations;
/// `None` with fewer than two.
fn range_finding(backend: &str, mine: &[&GpuRow]) -> Option<Finding> {
    if mine.len() < 2 {
        return None;
    }
    let lo = mine.iter().min_by(|a, b| by_speedup(a, b)).copied()?;
    let hi = mine.iter().max_by(|a, b| by_speedup(a, b)).copied()?;
    let name = |r: &GpuRow| format!("{} {}", r.gpu.rec.algorithm, r.gpu.rec.operation.cli_name());
    let spd = |r: &GpuRow| faster_or_slower(r.speedup().unwrap_or(0.0));
    let basis = |r: &GpuRow| {
        r.cpu
            .and_then(|c| change::ratio_words(c.rec, r.gpu.rec))
            .map_or(change::NO_RUNS.to_string(), |w| w.2)
    };
    let figures = |r: &GpuRow| {
        format!(
            "{}: {} vs {}",
            name(r),
            units::ops(r.gpu.ok_throughput().unwrap_or(0.0)),
            units::ops(r.cpu.and_then(|c| c.ok_throughput()).unwrap_or(0.0)),
        )
    };
    Some(Finding {
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
        detail: format!("{}; {}", figures(lo), figures(hi)),
        interval: Some(format!("lowest {}; highest {}", basis(lo), basis(hi))),
        ratio: None,
        kat: None,
        sources: vec![
            lo.gpu.src,
            lo.cpu.map(|c| c.src).unwrap_or(lo.gpu.src),
            hi.gpu.src,
            hi.cpu.map(|c| c.src).unwrap_or(hi.gpu.src),
        ],
    })
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
        let Some((rep, e)) = rep.and_then(|r| Some((r, r.gpu.rec.energy.as_ref()?))) else {
            continue;
        };
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
            interval: Some("one energy window, no interval".into()),
            ratio: None,
            kat: None,
            sources: vec![rep.gpu.src],
        });
    }
    out
}
