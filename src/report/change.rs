//! The change statistics: for every record present in two runs, the change
//! in throughput (new / old - 1) with a 95% confidence interval computed
//! from the raw runs, and a verdict read from that interval (`compare OLD
//! NEW`, and the report's PQC-against-classical and GPU-against-CPU
//! ratios). [`super::compare`] writes a comparison out.
//!
//! The change is the Hodges-Lehmann estimate of the shift of log
//! throughput (`ln(batch / run_seconds)` of each run) from the old record
//! to the new, and its interval is the one that inverts the Mann-Whitney
//! (Wilcoxon rank-sum) test ([`stats::hodges_lehmann_shift`]): it assumes
//! no distribution, only that a change moves every run by the same factor,
//! and on the logs a factor is a shift. A ratio of medians with a
//! bootstrap would need far more than the usual 20 runs to reach its
//! nominal coverage; the rank interval is exact at any size from 4 runs a
//! side. Exact critical values are used up to 50 x 50 runs, the normal
//! approximation with a continuity correction beyond (see
//! [`stats::mann_whitney_critical`] for why there).

use crate::core::catalog::Operation;
use crate::core::stats;
use crate::core::units;
use crate::schema::agreement::problem;
use crate::schema::load::LoadedRun;
use crate::schema::record::{Mode, Record, Status};
use std::collections::BTreeMap;

/// What identifies a record across two runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    /// Backend name.
    pub backend: String,
    /// Threads.
    pub threads: usize,
    /// Algorithm.
    pub algorithm: String,
    /// Operation.
    pub operation: Operation,
    /// Throughput or latency.
    pub mode: Mode,
    /// Measured with a cold L2 (`--cache cold`): never matched with a
    /// warm record.
    pub cold: bool,
}

impl Key {
    fn of(r: &Record) -> Self {
        Key {
            backend: r.backend.clone(),
            threads: r.threads,
            algorithm: r.algorithm.clone(),
            operation: r.operation,
            mode: r.mode,
            cold: r.cache.as_deref() == Some("cold"),
        }
    }
}

/// What the change interval says, against the noise threshold `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval lies above `+t`.
    Faster,
    /// The whole interval lies below `-t`.
    Slower,
    /// The whole interval lies inside `[-t, +t]`.
    Same,
    /// The interval straddles `+t` or `-t`, or there is none (fewer than 4
    /// runs on a side).
    Unclear,
}

impl Verdict {
    /// The word printed and written to JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Unclear => "unclear",
        }
    }
}

/// The verdict on a change interval `[low, high]` of new / old - 1 with
/// the noise threshold `threshold` (a fraction: 0.01 for 1%).
pub fn verdict(ci: Option<[f64; 2]>, threshold: f64) -> Verdict {
    match ci {
        Some([low, high]) if low >= -threshold && high <= threshold => Verdict::Same,
        Some([low, _]) if low > threshold => Verdict::Faster,
        Some([_, high]) if high < -threshold => Verdict::Slower,
        _ => Verdict::Unclear,
    }
}

/// The change from one set of runs to another, as new / old - 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunChange {
    /// The Hodges-Lehmann estimate.
    pub change: f64,
    /// Its 95% interval `[low, high]`, absent below 4 runs a side.
    pub ci95: Option<[f64; 2]>,
    /// The interval's exact coverage.
    pub level: Option<f64>,
}

/// The change in throughput between two sets of log throughputs.
pub fn run_change(old_log: &[f64], new_log: &[f64]) -> Option<RunChange> {
    let shift = stats::hodges_lehmann_shift(old_log, new_log)?;
    let ratio = |x: f64| x.exp() - 1.0;
    Some(RunChange {
        change: ratio(shift.estimate),
        ci95: shift.ci95.map(|c| [ratio(c.low), ratio(c.high)]),
        level: shift.ci95.map(|c| c.level),
    })
}

/// The noise threshold of a verdict when none is given: 1%, as a fraction.
pub const NOISE_THRESHOLD: f64 = 0.01;

/// The change in throughput from record `old` to record `new` (new / old
/// - 1) from their raw runs; `None` when either lists no usable run.
pub fn record_change(old: &Record, new: &Record) -> Option<RunChange> {
    run_change(&log_throughputs(old), &log_throughputs(new))
}

/// The 95% interval of a change as a ratio of throughputs, `[low, high]`
/// of new / old, or of old / new when `inverted`; `None` without one.
pub fn ratio_interval(change: Option<RunChange>, inverted: bool) -> Option<[f64; 2]> {
    let [low, high] = change?.ci95?;
    Some(if inverted {
        [1.0 / (1.0 + high), 1.0 / (1.0 + low)]
    } else {
        [1.0 + low, 1.0 + high]
    })
}

/// A ratio interval in words: `95% CI 1.02×–1.10×` (two decimals below
/// 10×, so an interval near 1× stays readable).
pub fn ratio_interval_text([low, high]: [f64; 2]) -> String {
    let r = |x: f64| {
        if x < 10.0 {
            format!("{x:.2}×")
        } else {
            units::ratio(x)
        }
    };
    format!("95% CI {}–{}", r(low), r(high))
}

/// What a ratio stands on when either record lists no runs.
pub const NO_RUNS: &str = "ratio of medians, no runs to compare";

/// The 95% interval of `other`'s throughput over `base`'s (of `base`'s
/// over `other`'s when `inverted`) from both records' raw runs, in words;
/// [`NO_RUNS`] when there is none.
pub fn ratio_basis(base: &Record, other: &Record, inverted: bool) -> String {
    ratio_interval(record_change(base, other), inverted)
        .map(ratio_interval_text)
        .unwrap_or_else(|| NO_RUNS.to_string())
}

/// The verdict on `other`'s throughput against `base`'s from both
/// records' raw runs at the default noise threshold; `None` when either
/// lists too few runs for an interval.
pub fn records_verdict(base: &Record, other: &Record) -> Option<Verdict> {
    let ci = record_change(base, other)?.ci95?;
    Some(verdict(Some(ci), NOISE_THRESHOLD))
}

/// The words that set one figure against another in a sentence, from a
/// ratio of at least 1 and its word: `7.6× faster than`, `on par (1.0×)
/// with`, `neither clearly faster nor slower (1.0×) than`.
pub fn ratio_phrase(mag: f64, word: &str) -> String {
    match word {
        "on par" => format!("on par ({}) with", units::ratio(mag)),
        "unclear" => format!(
            "neither clearly faster nor slower ({}) than",
            units::ratio(mag)
        ),
        _ => format!("{} {word} than", units::ratio(mag)),
    }
}

/// The log throughput of each timed run of a record (either mode: a run
/// of `batch` operations in `run_seconds`).
fn log_throughputs(r: &Record) -> Vec<f64> {
    r.run_seconds
        .iter()
        .filter(|s| s.is_finite() && **s > 0.0)
        .map(|s| (r.batch as f64 / s).ln())
        .collect()
}

/// A record's noise: the half-width of the distribution-free 95% interval
/// of its median per-run throughput, over that median (the figure `--runs
/// auto` aims below); absent below 6 runs.
fn noise(r: &Record) -> Option<f64> {
    let ops: Vec<f64> = log_throughputs(r).iter().map(|l| l.exp()).collect();
    stats::median_relative_half_width(&ops)
}

/// A record measured in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Old median ops/s, as the file reports it.
    pub old: f64,
    /// New median ops/s, as the file reports it.
    pub new: f64,
    /// new / old - 1: the Hodges-Lehmann estimate from the runs, or the
    /// ratio of the reported medians when a record has no runs listed.
    pub change: f64,
    /// 95% interval of `change`, `[low, high]`.
    pub change_ci95: Option<[f64; 2]>,
    /// The exact coverage of `change_ci95` (at least 0.95).
    pub ci_level: Option<f64>,
    /// What the interval says against the noise threshold.
    pub verdict: Verdict,
    /// Noise of the old record (see [`noise`]).
    pub old_noise: Option<f64>,
    /// Noise of the new record.
    pub new_noise: Option<f64>,
}

impl Measured {
    fn of(o: &Record, n: &Record, old: f64, new: f64, threshold: f64) -> Self {
        let rc = record_change(o, n);
        let ci = rc.and_then(|c| c.ci95);
        Measured {
            old,
            new,
            change: rc.map_or(new / old - 1.0, |c| c.change),
            change_ci95: ci,
            ci_level: rc.and_then(|c| c.level),
            verdict: verdict(ci, threshold),
            old_noise: noise(o),
            new_noise: noise(n),
        }
    }
}

/// The verdict on one matched record.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Both measured: the change with its interval and verdict.
    Measured(Measured),
    /// Ok before, failed or skipped now.
    NowFailing(String),
    /// Not ok in the old file; nothing to compare with.
    OldNotOk,
    /// Only in the old file, where it was not ok.
    Gone,
    /// Ok in the old file and missing from the new one: a regression.
    Lost,
    /// Several records with this key and batch size in one file (the
    /// file says which): which to compare cannot be told.
    Duplicate(String),
    /// Only in the new file.
    Added,
    /// A record whose throughput disagrees with its own runs, or whose
    /// numbers are out of bounds (the file says which and how; see
    /// [`crate::schema::agreement`]): left out, not compared.
    Inconsistent(String),
}

/// One line of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The record's identity.
    pub key: Key,
    /// Batch size (old side where both exist).
    pub batch: usize,
    /// The verdict.
    pub change: Change,
    /// Index in the old file's records.
    pub old_index: Option<usize>,
    /// Index in the new file's records.
    pub new_index: Option<usize>,
}

/// Median throughput in ops/s, for either mode, of a record that passed.
fn throughput(r: &Record) -> Option<f64> {
    if r.status != Status::Ok {
        return None;
    }
    match r.mode {
        Mode::Throughput => r
            .ops_per_sec
            .or_else(|| r.throughput_ops_per_sec.as_ref().map(|t| t.median)),
        Mode::Latency => {
            let l = r.latency_us.as_ref()?;
            (l.median > 0.0).then(|| 1e6 / l.median)
        }
    }
    .filter(|m| m.is_finite() && *m > 0.0)
}

/// Matches the records of two runs and measures the change; `threshold`
/// is the noise threshold of the verdicts (a fraction). Records made on
/// the CPU stand-in driver (`emulated`) are no speed measurements and take
/// no part.
pub fn compare(old: &LoadedRun, new: &LoadedRun, threshold: f64) -> Vec<Line> {
    let mut olds: BTreeMap<Key, Vec<(usize, &Record)>> = BTreeMap::new();
    for (i, r) in old.records.iter().filter(|(_, r)| !r.emulated) {
        olds.entry(Key::of(r)).or_default().push((*i, r));
    }
    let mut news: BTreeMap<Key, Vec<(usize, &Record)>> = BTreeMap::new();
    for (i, r) in new.records.iter().filter(|(_, r)| !r.emulated) {
        news.entry(Key::of(r)).or_default().push((*i, r));
    }
    let mut lines = vec![];
    // Which file holds more than one record of a key and batch size.
    let twice = |list: &[(usize, &Record)], batch: usize| {
        list.iter().filter(|(_, r)| r.batch == batch).count() > 1
    };
    for (key, o_list) in &olds {
        let n_list = news.get(key).cloned().unwrap_or_default();
        for (oi, o) in o_list {
            let dup = match (twice(o_list, o.batch), twice(&n_list, o.batch)) {
                (true, true) => Some("both files"),
                (true, false) => Some("the old file"),
                (false, true) => Some("the new file"),
                (false, false) => None,
            };
            if let Some(which) = dup {
                lines.push(Line {
                    key: key.clone(),
                    batch: o.batch,
                    change: Change::Duplicate(which.into()),
                    old_index: Some(*oi),
                    new_index: None,
                });
                continue;
            }
            // One record per key on both sides: match it; several (a batch
            // sweep): match on the batch size too.
            let matched = if o_list.len() == 1 && n_list.len() == 1 {
                Some(n_list[0])
            } else {
                n_list.iter().find(|(_, n)| n.batch == o.batch).copied()
            };
            let change = match matched {
                None if throughput(o).is_some() => Change::Lost,
                None => Change::Gone,
                Some((_, n)) if problem(o).or(problem(n)).is_some() => {
                    let (which, why) = match problem(o) {
                        Some(w) => ("old", w),
                        None => ("new", problem(n).unwrap_or_default()),
                    };
                    Change::Inconsistent(format!("the {which} record's {why}"))
                }
                Some((_, n)) => match (throughput(o), throughput(n)) {
                    (None, _) => Change::OldNotOk,
                    (Some(_), None) => Change::NowFailing(
                        n.reason
                            .clone()
                            .unwrap_or_else(|| format!("status {:?}", n.status).to_lowercase()),
                    ),
                    (Some(a), Some(b)) => Change::Measured(Measured::of(o, n, a, b, threshold)),
                },
            };
            lines.push(Line {
                key: key.clone(),
                batch: o.batch,
                change,
                old_index: Some(*oi),
                new_index: matched.map(|m| m.0),
            });
        }
    }
    for (key, n_list) in &news {
        for (ni, n) in n_list {
            let covered = lines.iter().any(|l| {
                &l.key == key
                    && (l.new_index == Some(*ni)
                        || (matches!(l.change, Change::Duplicate(_)) && l.batch == n.batch))
            });
            if !covered && twice(n_list, n.batch) {
                lines.push(Line {
                    key: key.clone(),
                    batch: n.batch,
                    change: Change::Duplicate("the new file".into()),
                    old_index: None,
                    new_index: Some(*ni),
                });
            } else if !covered {
                lines.push(Line {
                    key: key.clone(),
                    batch: n.batch,
                    change: Change::Added,
                    old_index: None,
                    new_index: Some(*ni),
                });
            }
        }
    }
    lines
}

/// Whether a line is a regression beyond `pct` percent: a `slower`
/// verdict whose change is a drop of more than `pct`, a record that no
/// longer passes or is gone, or one that cannot be checked because its key
/// is not unique.
pub fn is_regression(line: &Line, pct: f64) -> bool {
    match &line.change {
        Change::Measured(m) => m.verdict == Verdict::Slower && -m.change * 100.0 > pct,
        Change::NowFailing(_) | Change::Lost | Change::Duplicate(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stats::tests::simulated_runs;
    use rand::SeedableRng;

    /// The share of 2,000 simulated pairs (20 runs a side, normal noise
    /// `noise`, new throughput `ratio` times the old) given `want`.
    fn share_with_verdict(seed: u64, noise: f64, ratio: f64, want: Verdict) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let hits = (0..2000)
            .filter(|_| {
                let old = simulated_runs(&mut rng, 0, 20, noise, 1.0);
                let new = simulated_runs(&mut rng, 0, 20, noise, ratio);
                let c = run_change(&old, &new).unwrap();
                verdict(c.ci95, 0.01) == want
            })
            .count();
        hits as f64 / 2000.0
    }

    #[test]
    fn equal_distributions_are_the_same_and_a_5_percent_drop_is_slower() {
        // At 0.5% noise the interval of 20 runs a side is about +-0.3%
        // wide, well inside +-1%. (At 1% noise it is about +-0.65% around
        // an estimate that itself wanders by 0.3%: often `unclear`, as it
        // should be.)
        let same = share_with_verdict(21, 0.005, 1.0, Verdict::Same);
        assert!(same >= 0.90, "same: {same}");
        let slower = share_with_verdict(22, 0.01, 0.95, Verdict::Slower);
        assert!(slower >= 0.90, "slower: {slower}");
        let faster = share_with_verdict(23, 0.01, 1.05, Verdict::Faster);
        assert!(faster >= 0.90, "faster: {faster}");
    }

    #[test]
    fn the_verdict_reads_the_interval_against_the_threshold() {
        let t = 0.01;
        assert_eq!(verdict(Some([-0.01, 0.01]), t), Verdict::Same);
        assert_eq!(verdict(Some([-0.003, 0.002]), t), Verdict::Same);
        assert_eq!(verdict(Some([0.011, 0.05]), t), Verdict::Faster);
        assert_eq!(verdict(Some([-0.2, -0.0101]), t), Verdict::Slower);
        // Straddling either threshold, or both.
        assert_eq!(verdict(Some([0.002, 0.03]), t), Verdict::Unclear);
        assert_eq!(verdict(Some([-0.03, -0.005]), t), Verdict::Unclear);
        assert_eq!(verdict(Some([-0.03, 0.03]), t), Verdict::Unclear);
        assert_eq!(verdict(None, t), Verdict::Unclear);
    }

    #[test]
    fn cold_and_warm_records_are_compared_each_with_its_own_kind() {
        use crate::report::model::test_records::{loaded, ok_record};
        let rec = |ops, cache: &str| {
            let mut r = ok_record(true, ops, 64);
            r.cache = Some(cache.into());
            r
        };
        let run = || loaded(vec![rec(1e6, "warm"), rec(2e5, "cold")]);
        let lines = compare(&run(), &run(), 0.01);
        assert_eq!(lines.len(), 2);
        for l in &lines {
            match &l.change {
                Change::Measured(m) => assert_eq!(m.old, m.new, "{:?}", l.key),
                other => panic!("{:?}: {other:?}", l.key),
            }
        }
        assert_eq!(lines.iter().filter(|l| l.key.cold).count(), 1);
    }

    #[test]
    fn a_run_change_is_the_factor_between_the_runs() {
        let old: Vec<f64> = (0..8).map(|i| (100.0 + i as f64).ln()).collect();
        let new: Vec<f64> = old.iter().map(|l| l + 0.9f64.ln()).collect();
        let c = run_change(&old, &new).unwrap();
        assert!((c.change + 0.1).abs() < 1e-12, "{c:?}");
        let [low, high] = c.ci95.unwrap();
        assert!(low < -0.1 && -0.1 < high && high < 0.0, "{c:?}");
        assert!(c.level.unwrap() >= 0.95);
    }
}
