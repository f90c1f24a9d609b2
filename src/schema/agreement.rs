//! Whether a record's numbers can be believed: every time finite and not
//! negative, an ok record's batch and threads at least 1, and its stated
//! throughput (or batch time) within [`AGREEMENT_FACTOR`] of the one its
//! own runs give. Every reader of run files applies it: `report`, `merge`
//! and `plan --from` leave such a record out ([`leave_out`]), each with one
//! line naming the file, the record and what is wrong; `compare` lists it
//! as left out, not compared.

use crate::schema::diagnose::{capped_with, Warning};
use crate::schema::read::LoadedRun;
use crate::schema::record::{Mode, Record, Status};

/// How far a record's stated throughput may lie from the one its runs
/// give (`batch` operations in the median of `run_seconds`) before the two
/// are said to disagree: a factor of 10 either way. Window timing at
/// several threads and the filtering of outliers move the two apart by far
/// less; a figure off by more was not made from these runs.
///
/// With an even number of runs the median lies between the two middle
/// runs, and so does a median taken of the runs' rates rather than their
/// times (what pqcprof writes): the figure is checked against both middle
/// runs, the slower one's rate over 10 to the faster one's times 10. Two
/// runs of which one was held up (a busy machine, 30 times slower) give a
/// true median far from either run alone.
pub const AGREEMENT_FACTOR: f64 = 10.0;

/// The median run of the finite, positive times in `secs`, as the fastest
/// and slowest of its middle runs (the same run for an odd count); `None`
/// without one.
fn middle_seconds(secs: &[f64]) -> Option<(f64, f64)> {
    let mut s: Vec<f64> = secs
        .iter()
        .copied()
        .filter(|s| s.is_finite() && *s > 0.0)
        .collect();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let upper = *s.get(n / 2)?;
    let lower = if n % 2 == 0 { s[n / 2 - 1] } else { upper };
    Some((lower, upper))
}

/// The first stated rate of `stated` (field name, operations per second)
/// further than [`AGREEMENT_FACTOR`] from `batch` operations in the median
/// of `secs` (between its middle runs' rates, for an even count), in words.
fn first_disagreeing(batch: usize, secs: &[f64], stated: &[(&str, Option<f64>)]) -> Option<String> {
    let (fast, slow) = middle_seconds(secs)?;
    let (low, high) = (batch as f64 / slow, batch as f64 / fast);
    let runs = if fast == slow {
        format!("{batch} operations in a median run of {slow:e} s: {low:.6e}/s")
    } else {
        format!(
            "{batch} operations in its middle runs of {fast:e} and {slow:e} s: {low:.6e} to {high:.6e}/s"
        )
    };
    stated.iter().find_map(|(field, v)| {
        let v = (*v)?;
        let agrees = v.is_finite()
            && v > 0.0
            && v * AGREEMENT_FACTOR >= low
            && v <= high * AGREEMENT_FACTOR;
        (!agrees).then(|| {
            format!(
                "{field} {v:e} disagrees with its runs ({runs}), more than a factor of {AGREEMENT_FACTOR}"
            )
        })
    })
}

/// A window record's (the sweep's, `iterations` set) `ops_per_sec` is all
/// its operations over the time of its timed runs, `iterations /
/// sum(run_seconds)`: the same runs as its per-run figures. Files from
/// before took the whole window, barriers between rounds included, which
/// can only be lower, by as much as a busy machine kept the threads waiting
/// at the barriers: no view uses that figure (they take the runs, see
/// `crate::analyse::estimate`). A figure above it (beyond rounding) was
/// not made from these runs.
fn window_disagreement(r: &Record) -> Option<String> {
    let ops = r.iterations? as f64;
    let v = r.ops_per_sec?;
    let timed: f64 = r
        .run_seconds
        .iter()
        .filter(|s| s.is_finite() && **s > 0.0)
        .sum();
    if timed <= 0.0 {
        return None;
    }
    let most = ops / timed;
    let agrees = v.is_finite() && v > 0.0 && v <= most * (1.0 + 1e-6);
    (!agrees).then(|| {
        format!(
            "ops_per_sec {v:e} disagrees with its runs ({ops} operations in {timed:e} s of timed runs: {most:.6e}/s, which a window's figure may not exceed)"
        )
    })
}

/// Why a record's throughput cannot be used: its `ops_per_sec`, its
/// throughput median or its batch time (`batch_ms`, and the end-to-end
/// ones) disagrees with its runs (see [`AGREEMENT_FACTOR`]; a window
/// record's `ops_per_sec` is checked as [`window_disagreement`] says).
/// `None` when they agree, or when there are no runs to check against.
pub fn disagreement(r: &Record) -> Option<String> {
    if r.mode != Mode::Throughput || r.status != Status::Ok || r.batch == 0 {
        return None;
    }
    if let Some(why) = window_disagreement(r) {
        return Some(why);
    }
    // A batch time of `ms` milliseconds is a rate of batch / (ms / 1000).
    let rate_of_ms = |ms: Option<f64>| ms.map(|m| r.batch as f64 / (m / 1e3));
    let window = r.iterations.is_some();
    let stated = [
        ("ops_per_sec", r.ops_per_sec.filter(|_| !window)),
        (
            "throughput_ops_per_sec.median",
            r.throughput_ops_per_sec.as_ref().map(|t| t.median),
        ),
        ("batch_ms (as a rate)", rate_of_ms(r.batch_ms)),
    ];
    first_disagreeing(r.batch, &r.run_seconds, &stated).or_else(|| {
        let e = r.end_to_end.as_ref()?;
        let stated = [
            ("end_to_end.ops_per_sec", e.ops_per_sec),
            ("end_to_end.batch_ms (as a rate)", rate_of_ms(e.batch_ms)),
        ];
        first_disagreeing(r.batch, &e.run_seconds, &stated)
    })
}

/// Why a record's numbers are out of bounds: a time that is not a finite
/// number of 0 or more (`run_seconds`, `batch_ms`, latency), or an ok
/// record with a batch or thread count of 0. `None` when all are in bounds.
pub fn out_of_bounds(r: &Record) -> Option<String> {
    if r.status == Status::Ok && r.batch == 0 {
        return Some("batch 0: an ok record times at least one operation".into());
    }
    if r.status == Status::Ok && r.threads == 0 {
        return Some("threads 0: an ok record runs on at least one thread".into());
    }
    let bad = |v: f64| !(v.is_finite() && v >= 0.0);
    let runs = |field: &'static str, secs: &[f64]| {
        secs.iter()
            .position(|s| bad(*s))
            .map(|i| (format!("{field}[{i}]"), secs[i]))
    };
    let single =
        |field: &'static str, v: Option<f64>| v.filter(|v| bad(*v)).map(|v| (field.to_string(), v));
    let e2e = r.end_to_end.as_ref();
    let latency = r.latency_us.as_ref().map(|l| l.median);
    let found = runs("run_seconds", &r.run_seconds)
        .or_else(|| single("batch_ms", r.batch_ms))
        .or_else(|| single("latency_us.median", latency))
        .or_else(|| e2e.and_then(|e| runs("end_to_end.run_seconds", &e.run_seconds)))
        .or_else(|| e2e.and_then(|e| single("end_to_end.batch_ms", e.batch_ms)));
    found.map(|(field, v)| {
        format!("{field} {v} is not a time: times must be finite numbers of 0 or more")
    })
}

/// Why a record is left out by every reader: out of bounds, or its
/// throughput at odds with its runs; `None` for a record that can be used.
pub fn problem(r: &Record) -> Option<String> {
    out_of_bounds(r).or_else(|| disagreement(r))
}

/// The record in words, as a message names it: `ML-KEM-512 keygen on
/// liboqs-cpu, batch 2`.
pub fn record_name(r: &Record) -> String {
    crate::core::units::printable(&format!(
        "{} {} on {}, batch {}",
        r.algorithm,
        r.operation.cli_name(),
        r.backend,
        r.batch
    ))
}

/// Leaves out of `run` every record [`problem`] finds fault with; returns
/// one warning per record left out, naming it and what is wrong, for the
/// first few ([`crate::core::listing::SHOWN`]); past those, one warning with the count of the
/// rest, each of them logged at debug level (`-v`).
pub fn leave_out(run: &mut LoadedRun) -> Vec<Warning> {
    let mut warnings = vec![];
    run.records.retain(|(i, r)| match problem(r) {
        None => true,
        Some(why) => {
            warnings.push(Warning {
                field: format!("records[{i}]"),
                message: format!("{}: {why}; this record is left out", record_name(r)),
            });
            false
        }
    });
    capped_with(&run.path, warnings, |_, more, all| {
        Warning {
        field: "records".into(),
        message: format!(
            "{more} more record(s) left out, {all} in all, each out of bounds or at odds with its runs (each named with -v)"
        ),
    }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::{Kind, Operation};
    use crate::schema::device::{Device, DeviceKind};

    fn ok(batch: usize, secs: Vec<f64>, ops: f64) -> Record {
        Record {
            status: Status::Ok,
            batch,
            run_seconds: secs,
            ops_per_sec: Some(ops),
            ..Record::unmeasured(
                "liboqs-cpu".into(),
                Device {
                    kind: DeviceKind::Cpu,
                    name: "cpu".into(),
                    memory_total_mb: 0,
                },
                "liboqs".into(),
                "ML-KEM-512".into(),
                "ML-KEM".into(),
                Kind::Kem,
                Operation::KeyGen,
            )
        }
    }

    #[test]
    fn a_window_record_s_rate_is_checked_against_its_runs_time_not_its_median() {
        // A sweep round of 10 operations that mostly takes 1 ms and once
        // 150 ms (a busy machine): the median run gives 10,000/s, the
        // operations over the runs' time about 1,200/s. The window figure is
        // the second, and is believed.
        let mut secs = vec![0.001; 19];
        secs.push(0.15);
        let timed: f64 = secs.iter().sum();
        let mut r = ok(10, secs.clone(), 200.0 / timed);
        r.iterations = Some(200);
        assert_eq!(problem(&r), None);
        // Older files' window took the barriers too: lower, by 15 times on
        // a busy machine, and still believed (no view uses it).
        r.ops_per_sec = Some(200.0 / (timed * 15.0));
        assert_eq!(problem(&r), None);
        // Above what the runs allow: not made from these runs.
        r.ops_per_sec = Some(200.0 / timed * 1.01);
        let p = problem(&r).unwrap();
        assert!(
            p.contains("ops_per_sec") && p.contains("may not exceed"),
            "{p}"
        );
        // Without `iterations` the same figure is a batch record's median,
        // 8.5 times below its runs': still within the factor of 10.
        let mut b = ok(10, secs, 200.0 / timed);
        b.iterations = None;
        assert_eq!(problem(&b), None);
    }

    #[test]
    fn two_runs_far_apart_agree_with_the_median_of_their_rates() {
        // Two runs of 32 operations, the first held up 34 times (a busy
        // machine): 3,861/s and 130,186/s. pqcprof writes the median of
        // the rates, 67,023/s, which lies between them: believed, though
        // it is 17 times the slower run's rate.
        let secs = vec![0.008288145, 0.000245803];
        let median = (32.0 / secs[0] + 32.0 / secs[1]) / 2.0;
        assert_eq!(problem(&ok(32, secs.clone(), median)), None);
        let mut r = ok(32, secs.clone(), median);
        r.batch_ms = Some(32.0 / median * 1e3);
        assert_eq!(problem(&r), None);
        // Beyond ten times the faster run, or below a tenth of the slower
        // one: both middle runs named.
        for v in [130_186.0 * 10.5, 3_861.0 / 10.5] {
            let p = problem(&ok(32, secs.clone(), v)).unwrap();
            assert!(
                p.contains("middle runs of 2.45803e-4 and 8.288145e-3 s")
                    && p.contains("3.860936e3 to 1.301856e5/s"),
                "{p}"
            );
        }
        // An odd count has one median run, and the check is as tight.
        let p = problem(&ok(32, vec![0.0083, 0.00025, 0.00026], 2.0e6)).unwrap();
        assert!(p.contains("a median run of 2.6e-4 s"), "{p}");
    }

    #[test]
    fn agreeing_records_pass_and_the_rest_are_named() {
        assert_eq!(problem(&ok(10, vec![0.01, 0.01, 0.011], 1000.0)), None);
        // Off by 100x.
        let p = problem(&ok(10, vec![0.01; 3], 10.0)).unwrap();
        assert!(p.contains("ops_per_sec 1e1 disagrees"), "{p}");
        // A batch time 100x the runs'.
        let mut r = ok(10, vec![0.01; 3], 1000.0);
        r.batch_ms = Some(1000.0);
        assert!(problem(&r).unwrap().contains("batch_ms"));
        let p = problem(&ok(0, vec![0.01], 1000.0)).unwrap();
        assert!(p.starts_with("batch 0"), "{p}");
        let p = problem(&ok(10, vec![0.01, -1.0], 1000.0)).unwrap();
        assert!(p.contains("run_seconds[1] -1 is not a time"), "{p}");
        let p = problem(&ok(10, vec![f64::INFINITY], 1000.0)).unwrap();
        assert!(p.contains("inf is not a time"), "{p}");
    }
}
