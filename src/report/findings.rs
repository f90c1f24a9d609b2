//! What the report says: headline findings, PQC against classical at each
//! NIST level, GPU against CPU. Every figure keeps the records it came from.

use crate::report::gpu_rows::energy_findings;
use crate::report::gpu_rows::gpu_findings;
use crate::report::gpu_rows::gpu_rows;
use crate::report::gpu_rows::GpuRow;
use crate::report::headline::Finding;
use crate::report::headline::Group;
use crate::report::model::{level_bucket, Dataset, Entry};
use crate::report::pairs::pair_findings;
use crate::report::pairs::pairs;
use crate::report::pairs::Pair;

use crate::core::catalog::Kind;
use crate::core::units;
use crate::report::change;
use crate::report::families::Class;
use crate::schema::record::Status;
use std::collections::BTreeSet;

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
    /// Where no GPU was measured, the first screen's one line saying so and
    /// how to measure one.
    pub gpu_answer: Option<String>,
}

/// Where no GPU figure was measured: one line saying so, why (per GPU
/// backend, its records' most common reason, to its first clause), and how
/// to measure one.
fn gpu_answer(ds: &Dataset) -> String {
    let gpu: Vec<&Entry> = ds.entries.iter().filter(|e| e.is_gpu()).collect();
    let mut reasons: std::collections::BTreeMap<&str, std::collections::BTreeMap<String, usize>> =
        Default::default();
    for e in &gpu {
        let why = e.rec.reason.as_deref().unwrap_or("no reason given");
        let first = why
            .split([':', '(', ';'])
            .next()
            .unwrap_or(why)
            .trim()
            .chars()
            .take(80)
            .collect::<String>();
        *reasons
            .entry(e.rec.backend.as_str())
            .or_default()
            .entry(crate::core::units::printable(&first))
            .or_default() += 1;
    }
    let why: Vec<String> = reasons
        .iter()
        .filter_map(|(b, r)| {
            let (top, _) = r.iter().max_by_key(|(_, n)| **n)?;
            Some(format!("{b}: {top}"))
        })
        .collect();
    let skipped = if gpu.is_empty() {
        String::new()
    } else {
        format!(
            ": its {} GPU record{} {} skipped or failed ({})",
            gpu.len(),
            if gpu.len() == 1 { "" } else { "s" },
            if gpu.len() == 1 { "was" } else { "were" },
            why.join("; ")
        )
    };
    format!(
        "No GPU was measured in these files{skipped}. To measure one, run `pqcprof check` and `./pipeline` on a machine with an NVIDIA GPU, or `scripts/gpu-check OUT` there for one bounded check of every GPU operation; docs/gpu.md has the rest."
    )
}

/// Whether a family is one of the two the GPU backends implement.
pub fn is_ml_family(family: &str) -> bool {
    family == "ML-KEM" || family == "ML-DSA"
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
    // Every card that shows a figure of code that failed known-answer
    // vectors carries the mark.
    for f in &mut findings {
        f.kat = ds.kat_of(&f.sources).map(|k| k.card());
    }
    let gpu_answer = gpu.is_empty().then(|| gpu_answer(ds));
    Analysis {
        findings,
        pairs,
        pair_notes,
        gpu,
        gpu_note,
        gpu_answer,
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

/// The widest gap between another PQC family and ML-KEM / ML-DSA at the
/// same level, host and threads: one KEM and one signature example, as
/// pqcbench gives them.
fn spread_finding(ds: &Dataset) -> Option<Finding> {
    // Per kind (KEM, signature): the widest (ratio, other, baseline).
    let mut worst: [Option<(f64, Entry, Entry)>; 2] = [None, None];
    for e in ds.ok().filter(|e| {
        e.class == Class::Pqc && !is_ml_family(&e.rec.family) && !e.is_gpu() && !e.is_noisy()
    }) {
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
                && !b.is_noisy()
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
    // Each example's ratio as printed: at its interval's decimals where it
    // has one, so the sentence and the card say the same figure.
    let text_of = |e: &Entry, b: &Entry, r: f64| {
        let has_ci = change::ratio_words(e.rec, b.rec).is_some_and(|w| w.0.ci95.is_some());
        change::ratio_text(r, has_ci)
    };
    let said: Vec<String> = examples
        .iter()
        .map(|(r, e, b)| {
            format!(
                "{} {} runs {} slower than {}",
                e.rec.algorithm,
                e.rec.operation.cli_name(),
                text_of(e, b, *r),
                b.rec.algorithm
            )
        })
        .collect();
    let top_example = examples.iter().find(|w| w.0 == top)?;
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
    let (_, te, tb) = top_example;
    let words = change::ratio_words(te.rec, tb.rec);
    Some(Finding {
        group: Group::PqcCosts,
        figure: format!("up to {}", text_of(te, tb, top)),
        word: "slower".into(),
        sentence: format!(
            "Among post-quantum schemes the spread is wide: {}.",
            said.join("; ")
        ),
        detail: figures.join(" · "),
        interval: words.as_ref().map(|w| w.2.clone()),
        ratio: words.map(|w| crate::report::table::Marked::ahead(tb.src, te.src, w.0)),
        kat: None,
        sources: examples
            .iter()
            .flat_map(|(_, e, b)| [e.src, b.src])
            .collect(),
    })
}

/// Findings from CPU records alone, so a CPU-only run still has headlines:
/// the widest spread between schemes on one core, and how throughput
/// scales with threads.
fn cpu_findings(ds: &Dataset) -> Vec<Finding> {
    let single: Vec<&Entry> = ds
        .ok()
        .filter(|e| !e.is_gpu() && e.rec.threads == 1 && e.ok_throughput().is_some())
        .collect();
    widest_spread(&single)
        .into_iter()
        .chain(scaling_finding(ds, &single))
        .collect()
}

/// The widest spread between schemes doing the same thing (same kind,
/// same operation) on one core; never between unrelated operations, nor
/// on a noisy record.
fn widest_spread(single: &[&Entry]) -> Option<Finding> {
    let by = |a: &&&Entry, b: &&&Entry| {
        a.ok_throughput()
            .unwrap_or(0.0)
            .total_cmp(&b.ok_throughput().unwrap_or(0.0))
    };
    let mut widest: Option<(f64, &Entry, &Entry)> = None;
    for kind in [Kind::Kem, Kind::Signature] {
        for op in crate::core::catalog::Operation::ALL {
            let same: Vec<&&Entry> = single
                .iter()
                .filter(|e| e.rec.kind == kind && e.rec.operation == op && !e.is_noisy())
                .collect();
            if let (Some(fast), Some(slow)) = (
                same.iter().copied().max_by(by),
                same.iter().copied().min_by(by),
            ) {
                let r = fast.ok_throughput().unwrap_or(0.0) / slow.ok_throughput().unwrap_or(1.0);
                if fast.src != slow.src && widest.as_ref().is_none_or(|w| r > w.0) {
                    widest = Some((r, fast, slow));
                }
            }
        }
    }
    let (r, fast, slow) = widest?;
    let words = change::ratio_words(slow.rec, fast.rec);
    let figure = change::ratio_text(r, words.as_ref().is_some_and(|w| w.0.ci95.is_some()));
    Some(Finding {
            group: Group::Cpu,
            figure: figure.clone(),
            word: "spread".into(),
            sentence: format!(
                "On one core, among {} {} operations, {} is the fastest measured and {} the slowest: {} apart.",
                fast.kind_name(),
                fast.rec.operation.cli_name(),
                fast.rec.algorithm,
                slow.rec.algorithm,
                figure
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
            interval: words.as_ref().map(|w| w.2.clone()),
            ratio: words.map(|w| crate::report::table::Marked::ahead(fast.src, slow.src, w.0)),
            kat: None,
            sources: vec![fast.src, slow.src],
        })
}

/// Scaling from one thread to the most threads measured, over every
/// operation measured at both.
fn scaling_finding(ds: &Dataset, single: &[&Entry]) -> Option<Finding> {
    let mut scal: Vec<(f64, &Entry, &Entry)> = vec![];
    let mut left_out = 0usize;
    for one in single {
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
            let r = m.ok_throughput().unwrap_or(0.0) / one.ok_throughput().unwrap_or(1.0);
            // More than the thread count is impossible: it is noise (or
            // another process slowing the one-thread run), never a finding.
            if r > m.rec.threads as f64 || one.is_noisy() || m.is_noisy() {
                left_out += 1;
                continue;
            }
            scal.push((r, one, m));
        }
    }
    scal.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (lo, hi) = (scal.first()?, scal.last()?);
    let mid = &scal[scal.len() / 2];
    let median = mid.0;
    let threads = hi.2.rec.threads;
    // The gain itself, many threads over one, below 1 when more threads
    // were slower, with its own interval.
    let raw = crate::analyse::estimate::ratio(mid.2.rec, mid.1.rec);
    let figure = change::ratio_text(median, raw.is_some_and(|r| r.ci95.is_some()));
    let basis = raw.map(|r| match r.ci95 {
        Some(ci) => change::ratio_interval_text(r.value, ci),
        None => r.basis().unwrap_or(change::NO_RUNS).to_string(),
    });
    Some(Finding {
            group: Group::Cpu,
            figure: figure.clone(),
            word: "with all cores".into(),
            sentence: format!(
                "Spreading a batch over {threads} threads gives a median {} the one-thread throughput, from {} ({} {}) to {} ({} {}).",
                figure,
                units::ratio(lo.0),
                lo.1.rec.algorithm,
                lo.1.rec.operation.cli_name(),
                units::ratio(hi.0),
                hi.1.rec.algorithm,
                hi.1.rec.operation.cli_name()
            ),
            detail: format!(
                "{} operations measured at 1 and {threads} threads · ideal is {threads}.0×{}",
                scal.len(),
                if left_out > 0 {
                    format!(" · {left_out} left out: noisy, or faster than the thread count allows")
                } else {
                    String::new()
                }
            ),
            interval: basis.map(|b| format!("{b} for the median operation")),
            ratio: raw.map(|r| crate::report::table::Marked::of(mid.2.src, mid.1.src, r)),
            kat: None,
            sources: vec![lo.1.src, lo.2.src, mid.1.src, mid.2.src, hi.1.src, hi.2.src],
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::Operation;
    use crate::core::stats::{summarize, Sample};
    use crate::schema::device::{Device, DeviceKind};
    use crate::schema::load::LoadedRun;
    use crate::schema::record::{Record, RunConfig};
    use crate::schema::run_file::RunFile;

    /// An ok liboqs CPU record whose runs gave `samples` ops/s.
    fn cpu(alg: &str, kind: Kind, op: Operation, threads: usize, samples: &[f64]) -> Record {
        let mut r = Record::unmeasured(
            "liboqs-cpu".into(),
            Device {
                kind: DeviceKind::Cpu,
                name: "test CPU (test only)".into(),
                memory_total_mb: 1,
            },
            "liboqs".into(),
            alg.into(),
            alg.split('-').next().unwrap().into(),
            kind,
            op,
        );
        r.status = Status::Ok;
        r.threads = threads;
        let s = summarize(&Sample::new(samples.to_vec()).unwrap());
        r.ops_per_sec = Some(s.median);
        r.ms_per_op = Some(1000.0 / s.median);
        r.throughput_ops_per_sec = Some(s);
        r
    }

    fn loaded(records: Vec<Record>) -> LoadedRun {
        let mut run = RunFile::new(crate::probe::system::collect(None), RunConfig::for_tests());
        run.records = records;
        let bytes = serde_json::to_vec(&run).unwrap();
        crate::schema::load::parse_run(&bytes, std::path::Path::new("run.json"), "F1")
            .unwrap()
            .0
    }

    const STEADY: [f64; 5] = [1.0, 1.01, 0.99, 1.0, 1.0];

    fn times(k: f64) -> Vec<f64> {
        STEADY.iter().map(|v| v * k).collect()
    }

    #[test]
    fn no_speed_up_above_the_thread_count_and_no_spread_across_operations() {
        let (kem, sig) = (Kind::Kem, Kind::Signature);
        let (kg, dec) = (Operation::KeyGen, Operation::Decaps);
        let runs = [loaded(vec![
            // 3.1x on 2 threads: impossible, so noise; 1.8x is real.
            cpu("Kyber512", kem, kg, 1, &times(1000.0)),
            cpu("Kyber512", kem, kg, 2, &times(3100.0)),
            cpu("ML-KEM-512", kem, kg, 1, &times(1000.0)),
            cpu("ML-KEM-512", kem, kg, 2, &times(1800.0)),
            // Fast decaps against a slow key generation of another kind.
            cpu("Kyber512", kem, dec, 1, &times(1e6)),
            cpu("XMSS-SHA2_10_256", sig, kg, 1, &times(3.0)),
            cpu("ML-DSA-44", sig, kg, 1, &times(30.0)),
        ])];
        let ds = Dataset::new(&runs);
        let f = cpu_findings(&ds);
        let scaling = f.iter().find(|f| f.word == "with all cores").unwrap();
        assert_eq!(scaling.figure, units::ratio(1.8), "{scaling:?}");
        assert!(!scaling.sentence.contains("3.1"), "{}", scaling.sentence);
        assert!(scaling.detail.contains("1 left out"), "{}", scaling.detail);
        let spread = f.iter().find(|f| f.word == "spread").unwrap();
        // Between two key generations of signatures (10x), never decaps
        // against XMSS key generation (333,333x).
        assert_eq!(spread.figure, units::ratio(10.0), "{spread:?}");
        assert!(spread.sentence.contains("keygen"), "{}", spread.sentence);
    }

    #[test]
    fn the_report_says_when_the_machine_was_busy() {
        use crate::report::summary::busy_note;
        let mut run = loaded(vec![]);
        let idle = crate::schema::metadata::MachineLoad {
            seconds: 30.0,
            other_processes_cpu_pct: Some(2.0),
            load_average_start: Some(0.3),
            load_average_end: Some(0.4),
            cores: 2,
        };
        run.metadata.machine_load = Some(idle.clone());
        assert_eq!(busy_note(&Dataset::new(std::slice::from_ref(&run))), None);
        run.metadata.machine_load = Some(crate::schema::metadata::MachineLoad {
            other_processes_cpu_pct: Some(63.0),
            load_average_end: Some(8.8),
            ..idle
        });
        let runs = [run];
        let ds = Dataset::new(&runs);
        let note = busy_note(&ds).unwrap();
        assert!(note.contains("F1 (other processes used 63%"), "{note}");
        // The first screen's caveats say it.
        let first = crate::report::caveats::first_screen(&ds, &[], None);
        assert!(
            first.iter().any(|c| c.contains("The machine was busy")),
            "{first:?}"
        );
    }

    #[test]
    fn a_scaling_below_one_is_printed_with_its_own_interval() {
        // Two threads slower than one (a busy machine): the figure is the
        // gain as it is, 0.80, and its interval is that figure's, not the
        // one of its inverse read from the side ahead.
        let with_runs = |mut r: Record| {
            r.batch = 1;
            r.run_seconds = r
                .throughput_ops_per_sec
                .as_ref()
                .unwrap()
                .raw
                .iter()
                .map(|v| 1.0 / v)
                .collect();
            r
        };
        let kg = Operation::KeyGen;
        let runs = [loaded(vec![
            with_runs(cpu("ML-KEM-512", Kind::Kem, kg, 1, &times(1000.0))),
            with_runs(cpu("ML-KEM-512", Kind::Kem, kg, 2, &times(800.0))),
        ])];
        let ds = Dataset::new(&runs);
        let f = cpu_findings(&ds);
        let scaling = f.iter().find(|f| f.word == "with all cores").unwrap();
        assert_eq!(scaling.figure, "0.80×", "{scaling:?}");
        let m = scaling.ratio.unwrap();
        let [low, high] = m.ci95.unwrap();
        assert!(
            (m.value - 0.8).abs() < 1e-9 && low < m.value && m.value < high,
            "{m:?}"
        );
        let interval = scaling.interval.as_deref().unwrap();
        assert!(interval.starts_with("95% CI 0.7"), "{interval}");
    }

    #[test]
    fn noisy_records_are_counted_and_kept_out_of_the_scaling_headline() {
        let kg = Operation::KeyGen;
        let noisy = [600.0, 1000.0, 1400.0, 1000.0, 700.0, 1300.0];
        let runs = [loaded(vec![
            cpu("ML-KEM-512", Kind::Kem, kg, 1, &noisy),
            cpu("ML-KEM-512", Kind::Kem, kg, 2, &times(1900.0)),
            cpu("ML-KEM-768", Kind::Kem, kg, 1, &times(1000.0)),
            cpu("ML-KEM-768", Kind::Kem, kg, 2, &times(1500.0)),
        ])];
        let ds = Dataset::new(&runs);
        assert!(ds.entries[0].is_noisy() && !ds.entries[2].is_noisy());
        let f = cpu_findings(&ds);
        let scaling = f.iter().find(|f| f.word == "with all cores").unwrap();
        assert_eq!(scaling.figure, units::ratio(1.5), "{scaling:?}");
        let note = crate::report::summary::noisy_note(&ds).unwrap();
        assert!(note.starts_with("1 record is noisy"), "{note}");
    }
}
