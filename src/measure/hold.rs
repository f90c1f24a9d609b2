//! The device-side hold behind each timed GPU window, checked after the
//! timed runs: a hold that ended before the host had queued the window's
//! work leaves host time inside the window. Every record with a hold
//! says how it ran; a latency record keeps only the runs it covered and is
//! refused when it covered none.

use crate::backend::HoldRun;
use crate::core::stats::{percentile, Sample};
use crate::schema::record::{HoldCheck, Mode, Record};

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Records on `rec` what the hold did in each of its timed runs (`runs`,
/// one per entry of `rec.run_seconds`); nothing where a run had no hold.
/// A latency record's uncovered runs leave `run_seconds` and `usage` for
/// `hold.dropped_run_seconds`; `Err` with the reason when no run was
/// covered: that latency is not a kernel's. A `--fresh-process` child
/// passes `Mode::Throughput`, records only, and leaves the verdict to its
/// parent, which checks all its children's runs together.
pub fn check(rec: &mut Record, mode: Mode, runs: &[Option<HoldRun>]) -> Result<(), String> {
    let Some(runs) = runs.iter().copied().collect::<Option<Vec<HoldRun>>>() else {
        return Ok(());
    };
    let (Some(first), true) = (runs.first(), runs.len() == rec.run_seconds.len()) else {
        return Ok(());
    };
    let measured_ms: Vec<f64> = runs.iter().map(|h| ms(h.measured)).collect();
    let median = Sample::new(measured_ms.clone()).map_or(0.0, |s| percentile(&s, 50.0));
    let uncovered = runs.iter().filter(|h| !h.covered).count();
    let mut hold = HoldCheck {
        requested_ms: ms(first.requested),
        measured_ms,
        measured_ms_median: median,
        covered_runs: runs.len() - uncovered,
        uncovered_runs: uncovered,
        dropped_run_seconds: vec![],
    };
    if mode == Mode::Latency && uncovered > 0 {
        let seconds = std::mem::take(&mut rec.run_seconds);
        for (s, h) in seconds.into_iter().zip(&runs) {
            match h.covered {
                true => rec.run_seconds.push(s),
                false => hold.dropped_run_seconds.push(s),
            }
        }
        let mut covered = runs.iter().map(|h| h.covered);
        rec.usage.retain(|_| covered.next().unwrap_or(true));
    }
    let reason = hold.refusal(mode);
    rec.hold = Some(hold);
    reason.map_or(Ok(()), Err)
}

/// The hold of a `--fresh-process` child's one timed run, from its record.
pub fn of_one_run(rec: &Record) -> Option<HoldRun> {
    let h = rec.hold.as_ref()?;
    let ms = |v: f64| std::time::Duration::from_secs_f64(v.max(0.0) / 1000.0);
    Some(HoldRun {
        requested: ms(h.requested_ms),
        measured: ms(*h.measured_ms.first()?),
        covered: h.covered_runs > 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::{Kind, Operation};
    use crate::monitor::RunUsage;
    use std::time::Duration;

    fn rec(seconds: &[f64]) -> Record {
        let mut r = Record::unmeasured(
            "native-gpu".into(),
            crate::schema::device::Device {
                kind: crate::schema::device::DeviceKind::Gpu,
                name: "gpu".into(),
                memory_total_mb: 0,
            },
            "pqcprof-native".into(),
            "ML-KEM-512".into(),
            "ML-KEM".into(),
            Kind::Kem,
            Operation::KeyGen,
        );
        r.run_seconds = seconds.to_vec();
        r.usage = seconds
            .iter()
            .map(|s| RunUsage {
                peak_mem_mb: Some(*s),
                ..RunUsage::default()
            })
            .collect();
        r
    }

    fn held(covered: &[bool]) -> Vec<Option<HoldRun>> {
        covered
            .iter()
            .enumerate()
            .map(|(i, &covered)| {
                Some(HoldRun {
                    requested: Duration::from_micros(500),
                    measured: Duration::from_micros(500 + i as u64),
                    covered,
                })
            })
            .collect()
    }

    #[test]
    fn covered_runs_are_kept_and_the_hold_recorded() {
        let mut r = rec(&[1.0, 2.0, 3.0]);
        check(&mut r, Mode::Latency, &held(&[true; 3])).unwrap();
        let h = r.hold.unwrap();
        assert_eq!((h.covered_runs, h.uncovered_runs), (3, 0));
        assert_eq!(h.requested_ms, 0.5);
        assert!((h.measured_ms_median - 0.501).abs() < 1e-9, "{h:?}");
        assert_eq!(h.measured_ms.len(), 3);
        assert!(h.dropped_run_seconds.is_empty());
        assert_eq!(r.run_seconds, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_latency_record_drops_its_uncovered_runs() {
        let mut r = rec(&[1.0, 2.0, 3.0]);
        check(&mut r, Mode::Latency, &held(&[true, false, true])).unwrap();
        assert_eq!(r.run_seconds, vec![1.0, 3.0]);
        let kept: Vec<Option<f64>> = r.usage.iter().map(|u| u.peak_mem_mb).collect();
        assert_eq!(kept, vec![Some(1.0), Some(3.0)]);
        let h = r.hold.unwrap();
        assert_eq!((h.covered_runs, h.uncovered_runs), (2, 1));
        assert_eq!(h.dropped_run_seconds, vec![2.0]);
    }

    #[test]
    fn a_latency_record_with_no_covered_run_is_refused() {
        let mut r = rec(&[1.0, 2.0]);
        let why = check(&mut r, Mode::Latency, &held(&[false, false])).unwrap_err();
        assert!(why.contains("0.5 ms device-side hold"), "{why}");
        assert!(why.contains("in 2 of 2 timed runs"), "{why}");
        assert!(r.run_seconds.is_empty());
        assert_eq!(r.hold.unwrap().dropped_run_seconds, vec![1.0, 2.0]);
    }

    #[test]
    fn throughput_keeps_every_run_and_says_how_many_were_uncovered() {
        let mut r = rec(&[1.0, 2.0]);
        check(&mut r, Mode::Throughput, &held(&[false, false])).unwrap();
        assert_eq!(r.run_seconds, vec![1.0, 2.0]);
        assert_eq!(r.hold.unwrap().uncovered_runs, 2);
    }

    #[test]
    fn runs_without_a_hold_record_nothing() {
        let mut r = rec(&[1.0]);
        check(&mut r, Mode::Latency, &[None]).unwrap();
        check(&mut r, Mode::Latency, &[]).unwrap();
        assert!(r.hold.is_none());
        assert_eq!(r.run_seconds, vec![1.0]);
    }

    #[test]
    fn a_childs_one_run_reads_back_as_it_was_recorded() {
        for covered in [true, false] {
            let mut r = rec(&[1.0]);
            check(&mut r, Mode::Throughput, &held(&[covered])).unwrap();
            let h = of_one_run(&r).unwrap();
            assert_eq!(h.covered, covered);
            assert_eq!(h.requested, Duration::from_micros(500));
            assert!((h.measured.as_secs_f64() - 500e-6).abs() < 1e-12, "{h:?}");
        }
        assert!(of_one_run(&rec(&[1.0])).is_none());
    }
}
