//! `compare OLD NEW`: the change in median throughput of every record
//! present in both files, and whether the 95% confidence intervals overlap.

use crate::core::catalog::Operation;
use crate::core::stats::Interval;
use crate::core::units;
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
    /// `throughput` or `latency`.
    pub mode: String,
}

impl Key {
    fn of(r: &Record) -> Self {
        Key {
            backend: r.backend.clone(),
            threads: r.threads,
            algorithm: r.algorithm.clone(),
            operation: r.operation,
            mode: match r.mode {
                Mode::Throughput => "throughput".into(),
                Mode::Latency => "latency".into(),
            },
        }
    }
}

/// The verdict on one matched record.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Both measured: relative change of median ops/s (new / old - 1) and
    /// whether the intervals overlap (None when either lacks one).
    Measured {
        /// Old median ops/s.
        old: f64,
        /// New median ops/s.
        new: f64,
        /// new / old - 1.
        change: f64,
        /// Whether the 95% intervals overlap.
        overlap: Option<bool>,
    },
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

/// The interval of a summary's median: its own (distribution-free) where
/// the file has one, else the mean's (files written before it existed).
fn median_interval(s: &crate::core::stats::Summary) -> Option<Interval> {
    s.median_ci95.or(s.ci95)
}

/// Median throughput and its 95% interval, in ops/s, for either mode.
fn throughput(r: &Record) -> Option<(f64, Option<Interval>)> {
    if r.status != Status::Ok {
        return None;
    }
    match r.mode {
        Mode::Throughput => {
            let t = r.throughput_ops_per_sec.as_ref();
            let median = r.ops_per_sec.or_else(|| t.map(|t| t.median))?;
            Some((median, t.and_then(median_interval)))
        }
        Mode::Latency => {
            let l = r.latency_us.as_ref()?;
            let to_ops = |us: f64| 1e6 / us;
            let ci = median_interval(l)
                .filter(|c| c.low > 0.0)
                .map(|c| Interval {
                    low: to_ops(c.high),
                    high: to_ops(c.low),
                    level: c.level,
                });
            (l.median > 0.0).then(|| (to_ops(l.median), ci))
        }
    }
    .filter(|(m, _)| m.is_finite() && *m > 0.0)
}

/// Matches the records of two runs and measures the change. Records made
/// on the CPU stand-in driver (`emulated`) are no speed measurements and
/// take no part.
pub fn compare(old: &LoadedRun, new: &LoadedRun) -> Vec<Line> {
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
                Some((_, n)) => match (throughput(o), throughput(n)) {
                    (None, _) => Change::OldNotOk,
                    (Some(_), None) => Change::NowFailing(
                        n.reason
                            .clone()
                            .unwrap_or_else(|| format!("status {:?}", n.status).to_lowercase()),
                    ),
                    (Some((a, ca)), Some((b, cb))) => Change::Measured {
                        old: a,
                        new: b,
                        change: b / a - 1.0,
                        overlap: match (ca, cb) {
                            (Some(x), Some(y)) => Some(x.overlaps(&y)),
                            _ => None,
                        },
                    },
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

/// Whether a line is a regression beyond `pct` percent (a drop in
/// throughput, a record that no longer passes or is gone, or one that
/// cannot be checked because its key is not unique).
pub fn is_regression(line: &Line, pct: f64) -> bool {
    match &line.change {
        Change::Measured { change, .. } => -change * 100.0 > pct,
        Change::NowFailing(_) | Change::Lost | Change::Duplicate(_) => true,
        _ => false,
    }
}

/// The comparison as a text table.
pub fn render(old: &LoadedRun, new: &LoadedRun, lines: &[Line], fail_above: Option<f64>) -> String {
    let mut s = format!(
        "old: {} ({}, {})\nnew: {} ({}, {})\n\n",
        old.path.display(),
        old.metadata.hostname,
        old.metadata.date,
        new.path.display(),
        new.metadata.hostname,
        new.metadata.date
    );
    s += &format!(
        "{:<12} {:>3}  {:<14} {:<7} {:<10} {:>14} {:>14} {:>9}  {:<11} {}\n",
        "backend",
        "thr",
        "algorithm",
        "op",
        "mode",
        "old ops/s",
        "new ops/s",
        "change",
        "CI95",
        "verdict"
    );
    for l in lines {
        let (old_v, new_v, ch, ci, verdict) = match &l.change {
            Change::Measured {
                old,
                new,
                change,
                overlap,
            } => {
                let ci = match overlap {
                    Some(true) => "overlap",
                    Some(false) => "separate",
                    None => "n/a",
                };
                let verdict = if fail_above.is_some_and(|p| is_regression(l, p)) {
                    "REGRESSION".to_string()
                } else if *overlap == Some(true) {
                    "within noise".to_string()
                } else if *change < 0.0 {
                    "slower".to_string()
                } else {
                    "faster".to_string()
                };
                (
                    units::grouped(*old),
                    units::grouped(*new),
                    units::pct(*change),
                    ci,
                    verdict,
                )
            }
            Change::NowFailing(r) => (
                "ok".into(),
                "not ok".into(),
                "–".into(),
                "",
                format!("REGRESSION: now fails or is skipped: {r}"),
            ),
            Change::OldNotOk => (
                "not ok".into(),
                "–".into(),
                "–".into(),
                "",
                "not ok in the old file; not compared".into(),
            ),
            Change::Gone => (
                "–".into(),
                "missing".into(),
                "–".into(),
                "",
                "only in the old file".into(),
            ),
            Change::Lost => (
                "ok".into(),
                "missing".into(),
                "–".into(),
                "",
                "REGRESSION: passed in the old file, missing from the new one".into(),
            ),
            Change::Duplicate(which) => (
                "–".into(),
                "–".into(),
                "–".into(),
                "",
                format!(
                    "NOT COMPARED: several records with this key and batch {} in {which}",
                    l.batch
                ),
            ),
            Change::Added => (
                "missing".into(),
                "–".into(),
                "–".into(),
                "",
                "only in the new file".into(),
            ),
        };
        s += &format!(
            "{:<12} {:>3}  {:<14} {:<7} {:<10} {:>14} {:>14} {:>9}  {:<11} {}\n",
            l.key.backend,
            l.key.threads,
            l.key.algorithm,
            l.key.operation.cli_name(),
            l.key.mode,
            old_v,
            new_v,
            ch,
            ci,
            verdict
        );
    }
    s
}
