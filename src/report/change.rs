//! The change statistics: for every record present in two runs, the change
//! in throughput (new / old - 1) with its 95% interval, and a verdict read
//! from that interval (`compare OLD NEW`, and the report's
//! PQC-against-classical and GPU-against-CPU ratios). [`super::compare`]
//! writes a comparison out.
//!
//! The change is the ratio of the two records' throughputs, each the median
//! of its kept runs, less 1, and its interval is that ratio's
//! ([`crate::analyse::estimate`]): the change printed is always what the
//! two medians printed beside it give, and always lies inside its
//! interval. Two records are compared only when they measured the same
//! thing ([`unlike`]): the same mode, both timed batches or both a timed
//! window (the sweep), the same timed window, and the same batch (unless
//! both were calibrated, or are windows).

use crate::analyse::estimate;
use crate::core::catalog::Operation;
use crate::core::stats;
use crate::core::units;
use crate::schema::agreement::problem;
use crate::schema::load::LoadedRun;
use crate::schema::record::{Mode, Record};
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

/// The noise threshold of a verdict when none is given: 1%, as a fraction.
pub const NOISE_THRESHOLD: f64 = 0.01;

/// The change in throughput from record `old` to record `new`, new / old
/// less 1, and its interval, from [`estimate::ratio`]; `None` when either
/// gives no throughput.
pub fn record_change(old: &Record, new: &Record) -> Option<(f64, Option<[f64; 2]>)> {
    Some(estimate::ratio(new, old)?.change())
}

/// Rounds `x` to `decimals` places, down (`-1`), to the nearest (`0`) or
/// up (`1`): an interval is printed rounded outwards and its figure to the
/// nearest, so the figure printed never falls outside the interval
/// printed.
pub fn rounded(x: f64, decimals: i32, way: i8) -> f64 {
    let k = 10f64.powi(decimals);
    let y = x * k;
    // A hair of tolerance so that 1.2300000000000002 does not round up.
    let y = match way {
        -1 => (y + 1e-9).floor(),
        1 => (y - 1e-9).ceil(),
        _ => y.round(),
    };
    y / k
}

/// The decimals a ratio is printed with: two below 10× (so an interval
/// near 1× stays readable), one below 100×, none above.
pub fn ratio_decimals(r: f64) -> i32 {
    if r < 10.0 {
        2
    } else if r < 100.0 {
        1
    } else {
        0
    }
}

/// A ratio of at least 1 as printed with an interval: `9.87×`.
pub fn ratio_figure(r: f64) -> String {
    ratio_with(r, ratio_decimals(r), 0)
}

fn ratio_with(r: f64, decimals: i32, way: i8) -> String {
    let v = rounded(r, decimals, way);
    if v >= 1000.0 {
        format!("{}×", units::grouped(v))
    } else {
        format!("{v:.*}×", decimals.max(0) as usize)
    }
}

/// A ratio's interval in words, at the figure's own decimals, rounded
/// outwards: `95% CI 9.27×–9.88×`.
pub fn ratio_interval_text(figure: f64, [low, high]: [f64; 2]) -> String {
    let d = ratio_decimals(figure);
    format!(
        "95% CI {}–{}",
        ratio_with(low, d, -1),
        ratio_with(high, d, 1)
    )
}

pub use crate::analyse::estimate::{FEW_RUNS, NO_RUNS};

/// `other`'s throughput over `base`'s as the report prints it: the ratio
/// itself (`other / base`, for the page's marks), whether `other` is
/// ahead, and the interval of the ratio read from the side ahead (at
/// least 1) in words, or what the ratio stands on without one.
pub fn ratio_words(base: &Record, other: &Record) -> Option<(estimate::Ratio, bool, String)> {
    let r = estimate::ratio(other, base)?;
    let (m, ahead) = r.magnitude();
    let basis = match m.ci95 {
        Some(ci) => ratio_interval_text(m.value, ci),
        None => m.basis().unwrap_or(NO_RUNS).to_string(),
    };
    Some((r, ahead, basis))
}

/// The verdict on `other`'s throughput against `base`'s at the default
/// noise threshold; `None` when either side has too few runs for an
/// interval.
pub fn records_verdict(base: &Record, other: &Record) -> Option<Verdict> {
    let ci = record_change(base, other)?.1?;
    Some(verdict(Some(ci), NOISE_THRESHOLD))
}

/// The words that set one figure against another in a sentence, from a
/// ratio of at least 1 as printed and its word: `7.6× faster than`, `on par (1.0×)
/// with`, `neither clearly faster nor slower (1.0×) than`.
pub fn ratio_phrase(figure: &str, word: &str) -> String {
    match word {
        "on par" => format!("on par ({figure}) with"),
        "unclear" => format!("neither clearly faster nor slower ({figure}) than"),
        _ => format!("{figure} {word} than"),
    }
}

/// A ratio of at least 1 as printed: at the decimals its interval is
/// printed with where it has one ([`ratio_figure`]), else as
/// [`units::ratio`] gives it.
pub fn ratio_text(mag: f64, with_interval: bool) -> String {
    if with_interval {
        ratio_figure(mag)
    } else {
        units::ratio(mag)
    }
}

/// A record's noise: the half-width of the distribution-free 95% interval
/// of its median per-run throughput, over that median (the figure `--runs
/// auto` aims below); absent below 6 runs.
fn noise(r: &Record) -> Option<f64> {
    stats::median_relative_half_width(&estimate::run_rates(r))
}

/// A record measured in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Old throughput, ops/s: the median of its kept runs
    /// ([`estimate::throughput`]).
    pub old: f64,
    /// New throughput, ops/s, likewise.
    pub new: f64,
    /// new / old - 1, from those two.
    pub change: f64,
    /// 95% interval of `change`, `[low, high]` (it contains `change`).
    pub change_ci95: Option<[f64; 2]>,
    /// What the interval says against the noise threshold.
    pub verdict: Verdict,
    /// Noise of the old record (see [`noise`]).
    pub old_noise: Option<f64>,
    /// Noise of the new record.
    pub new_noise: Option<f64>,
}

impl Measured {
    fn of(o: &Record, n: &Record, threshold: f64) -> Option<Self> {
        let (old, new) = (estimate::throughput(o)?, estimate::throughput(n)?);
        let (change, ci) = estimate::ratio_of(&new, &old)?.change();
        Some(Measured {
            old: old.value,
            new: new.value,
            change,
            change_ci95: ci,
            verdict: verdict(ci, threshold),
            old_noise: noise(o),
            new_noise: noise(n),
        })
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
    /// Several records that measured the same thing in one file (the file
    /// says which): which to compare cannot be told.
    Duplicate(String),
    /// Only in the new file.
    Added,
    /// A record whose throughput disagrees with its own runs, or whose
    /// numbers are out of bounds (the file says which and how; see
    /// [`crate::schema::agreement`]): left out, not compared.
    Inconsistent(String),
    /// The two files' records of this backend, threads, algorithm and
    /// operation measured different things (see [`unlike`]): named, not
    /// compared.
    NotComparable(String),
}

/// One line of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The record's identity.
    pub key: Key,
    /// Batch size (old side where both exist).
    pub batch: usize,
    /// The new record's batch size, where one was matched.
    pub new_batch: Option<usize>,
    /// The verdict.
    pub change: Change,
    /// Index in the old file's records.
    pub old_index: Option<usize>,
    /// Index in the new file's records.
    pub new_index: Option<usize>,
}

/// Throughput in ops/s of a record that passed ([`estimate::throughput`]).
fn throughput(r: &Record) -> Option<f64> {
    estimate::throughput(r).map(|e| e.value)
}

/// Whether a record is timed in a window of repeated operations (the
/// sweep) rather than in batches.
fn windowed(r: &Record) -> bool {
    r.iterations.is_some()
}

fn calibrated(r: &Record) -> bool {
    r.batch_basis
        .as_ref()
        .is_some_and(|b| b.method == "calibrated")
}

/// How a record was timed, in words: `a timed window of repeated
/// operations (the sweep)`, `batches of 64`, `a calibrated batch of 4,096`.
fn timing(r: &Record) -> String {
    if windowed(r) {
        "a timed window of repeated operations (the sweep)".into()
    } else if calibrated(r) {
        format!("a calibrated batch of {}", units::grouped(r.batch as f64))
    } else {
        format!("batches of {}", units::grouped(r.batch as f64))
    }
}

/// What a record's timed window holds: its `timed_window` up to the first
/// `;` (the rest says for how long and how often).
fn window_holds(r: &Record) -> &str {
    r.timed_window.split(';').next().unwrap_or("").trim()
}

/// Why two records of one backend, thread count, algorithm and operation
/// did not measure the same thing, or `None` when they did: another mode,
/// batches against a timed window, another timed window, or (timing
/// batches, not both calibrated) another batch.
pub fn unlike(old: &Record, new: &Record) -> Option<String> {
    let mode = |m: Mode| match m {
        Mode::Throughput => "throughput",
        Mode::Latency => "latency",
    };
    if old.mode != new.mode {
        return Some(format!("{} against {}", mode(old.mode), mode(new.mode)));
    }
    if windowed(old) != windowed(new) {
        return Some(format!("{} against {}", timing(old), timing(new)));
    }
    let (a, b) = (window_holds(old), window_holds(new));
    if !a.is_empty() && !b.is_empty() && a != b {
        return Some(format!("timed windows differ: '{a}' against '{b}'"));
    }
    if !windowed(old) && old.batch != new.batch && !(calibrated(old) && calibrated(new)) {
        return Some(format!("{} against {}", timing(old), timing(new)));
    }
    None
}

/// What groups the records of two files for matching: a [`Key`] without
/// its mode, so that a throughput record and a latency one of the same
/// operation are named as not comparable rather than one gone and one
/// added.
type Group = (String, usize, String, Operation, bool);

fn group_of(k: &Key) -> Group {
    (
        k.backend.clone(),
        k.threads,
        k.algorithm.clone(),
        k.operation,
        k.cold,
    )
}

/// Matches the records of two runs and measures the change; `threshold`
/// is the noise threshold of the verdicts (a fraction). Records made on
/// the CPU stand-in driver (`emulated`) are no speed measurements and take
/// no part.
pub fn compare(old: &LoadedRun, new: &LoadedRun, threshold: f64) -> Vec<Line> {
    let grouped = |run: &'_ LoadedRun| {
        let mut m: BTreeMap<Group, Vec<(usize, Record)>> = BTreeMap::new();
        for (i, r) in run.records.iter().filter(|(_, r)| !r.emulated) {
            m.entry(group_of(&Key::of(r)))
                .or_default()
                .push((*i, r.clone()));
        }
        m
    };
    let (olds, news) = (grouped(old), grouped(new));
    let mut lines = vec![];
    // Whether a list holds more than one record that measured what `r` did.
    let twice = |list: &[(usize, Record)], r: &Record| {
        list.iter().filter(|(_, x)| unlike(r, x).is_none()).count() > 1
    };
    let empty = vec![];
    for (group, o_list) in &olds {
        let n_list = news.get(group).unwrap_or(&empty);
        for (oi, o) in o_list {
            let key = Key::of(o);
            let dup = match (twice(o_list, o), twice(n_list, o)) {
                (true, true) => Some("both files"),
                (true, false) => Some("the old file"),
                (false, true) => Some("the new file"),
                (false, false) => None,
            };
            if let Some(which) = dup {
                lines.push(Line {
                    key,
                    batch: o.batch,
                    new_batch: None,
                    change: Change::Duplicate(which.into()),
                    old_index: Some(*oi),
                    new_index: None,
                });
                continue;
            }
            // The new record that measured the same thing; else, to name
            // what differs, the only one, or the one at the same batch.
            let matched = n_list
                .iter()
                .find(|(_, n)| unlike(o, n).is_none())
                .or_else(|| (o_list.len() == 1 && n_list.len() == 1).then(|| &n_list[0]))
                .or_else(|| {
                    n_list
                        .iter()
                        .find(|(_, n)| n.batch == o.batch && n.mode == o.mode)
                });
            let change = match matched {
                None if throughput(o).is_some() => Change::Lost,
                None => Change::Gone,
                Some((_, n)) => match unlike(o, n) {
                    Some(why) => Change::NotComparable(why),
                    None if problem(o).or(problem(n)).is_some() => {
                        let (which, why) = match problem(o) {
                            Some(w) => ("old", w),
                            None => ("new", problem(n).unwrap_or_default()),
                        };
                        Change::Inconsistent(format!("the {which} record's {why}"))
                    }
                    None => match (throughput(o), Measured::of(o, n, threshold)) {
                        (None, _) => Change::OldNotOk,
                        (Some(_), Some(m)) => Change::Measured(m),
                        (Some(_), None) => Change::NowFailing(
                            n.reason
                                .clone()
                                .unwrap_or_else(|| format!("status {:?}", n.status).to_lowercase()),
                        ),
                    },
                },
            };
            lines.push(Line {
                key,
                batch: o.batch,
                new_batch: matched.map(|m| m.1.batch),
                change,
                old_index: Some(*oi),
                new_index: matched.map(|m| m.0),
            });
        }
    }
    for (group, n_list) in &news {
        for (ni, n) in n_list {
            let key = Key::of(n);
            let covered = lines.iter().any(|l| {
                group_of(&l.key) == *group
                    && (l.new_index == Some(*ni)
                        || (matches!(l.change, Change::Duplicate(_))
                            && l.batch == n.batch
                            && l.key.mode == n.mode))
            });
            if covered {
                continue;
            }
            let change = if twice(n_list, n) {
                Change::Duplicate("the new file".into())
            } else {
                Change::Added
            };
            lines.push(Line {
                key,
                batch: n.batch,
                new_batch: Some(n.batch),
                change,
                old_index: None,
                new_index: Some(*ni),
            });
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
        let rates = |logs: Vec<f64>| -> estimate::Estimate {
            let v: Vec<f64> = logs.iter().map(|l| l.exp()).collect();
            estimate::of_rates(&v).unwrap()
        };
        let hits = (0..2000)
            .filter(|_| {
                let old = rates(simulated_runs(&mut rng, 0, 20, noise, 1.0));
                let new = rates(simulated_runs(&mut rng, 0, 20, noise, ratio));
                let (_, ci) = estimate::ratio_of(&new, &old).unwrap().change();
                verdict(ci, 0.01) == want
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
    fn a_change_is_what_its_two_medians_give_and_lies_inside_its_interval() {
        use crate::report::model::test_records::{loaded, ok_record};
        let jittered = |ops: f64| {
            let mut r = ok_record(false, ops, 10);
            r.run_seconds = (0..12)
                .map(|i| 10.0 / (ops * (1.0 + 0.01 * ((i * 5 % 12) as f64 / 11.0 - 0.5))))
                .collect();
            r.throughput_ops_per_sec = None;
            r
        };
        let lines = compare(
            &loaded(vec![jittered(1000.0)]),
            &loaded(vec![jittered(900.0)]),
            0.01,
        );
        let Change::Measured(m) = &lines[0].change else {
            panic!("{lines:?}")
        };
        assert!((m.change - (m.new / m.old - 1.0)).abs() < 1e-12, "{m:?}");
        let [low, high] = m.change_ci95.unwrap();
        assert!(low <= m.change && m.change <= high, "{m:?}");
        assert_eq!(m.verdict, Verdict::Slower);
    }

    #[test]
    fn only_records_that_measured_the_same_thing_are_compared() {
        use crate::report::model::test_records::{loaded, ok_record};
        let batch = |b: usize| ok_record(false, 1000.0, b);
        let window = || {
            let mut r = ok_record(false, 1000.0, 37);
            r.iterations = Some(37 * 6);
            r.timed_window = "one liboqs OQS_KEM_encaps call; repeated in batches".into();
            r
        };
        let latency = || {
            let mut r = ok_record(false, 1000.0, 1);
            r.mode = Mode::Latency;
            r
        };
        for (old, new, why) in [
            (batch(4), window(), "batches of 4 against a timed window"),
            (batch(4), batch(64), "batches of 4 against batches of 64"),
            (batch(1), latency(), "throughput against latency"),
        ] {
            let lines = compare(&loaded(vec![old]), &loaded(vec![new]), 0.01);
            assert_eq!(lines.len(), 1, "{lines:?}");
            match &lines[0].change {
                Change::NotComparable(w) => assert!(w.starts_with(why), "{w}"),
                other => panic!("{why}: {other:?}"),
            }
            assert!(!is_regression(&lines[0], 5.0));
        }
        // Two sweeps' windows are compared whatever their batch.
        let mut w2 = window();
        w2.batch = 41;
        let lines = compare(&loaded(vec![window()]), &loaded(vec![w2]), 0.01);
        assert!(matches!(lines[0].change, Change::Measured(_)), "{lines:?}");
        // Beside a comparable record, an unlike one is not chosen.
        let lines = compare(
            &loaded(vec![batch(64)]),
            &loaded(vec![latency(), batch(64)]),
            0.01,
        );
        assert!(matches!(lines[0].change, Change::Measured(_)), "{lines:?}");
        assert!(matches!(lines[1].change, Change::Added), "{lines:?}");
    }
}
