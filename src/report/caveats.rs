//! Records the reader must not take at face value: those a time budget or
//! a signal cut short (fewer runs than asked for), those `--runs auto`
//! stopped before their noise target, those whose window is under 100
//! times its floor (the empty window), those whose device-side hold ended
//! before the host had queued the window's work in some run (a latency
//! refused for it among them), and those measured while NVML reported
//! power or thermal throttling, or with gaps in what NVML answered, one
//! line each.

use crate::core::units;
use crate::report::model::{Dataset, Entry};
use crate::schema::record::{HoldCheck, Mode, StoppedBy, FLOOR_MULTIPLE};

/// One line per cut or throttled record, emulated ones included. (The
/// known-answer failures of a backend's code are the report's own list,
/// [`crate::report::model::kat_failures`].)
pub fn caveats(ds: &Dataset) -> Vec<String> {
    ds.entries
        .iter()
        .chain(ds.emulated.iter())
        .filter_map(line)
        .collect()
}

/// The caveats in short, for the report's first screen: a busy machine,
/// noisy records, how many records have caveats of their own, offload
/// figures far from their prediction, and records made on the stand-in
/// driver.
pub fn first_screen(
    ds: &Dataset,
    caveats: &[String],
    offload: Option<&crate::report::offload::OffloadSection>,
) -> Vec<String> {
    let mut out = vec![];
    out.extend(crate::report::summary::busy_note(ds));
    out.extend(crate::report::summary::noisy_note(ds));
    if !caveats.is_empty() {
        out.push(format!(
            "{} record{} cut short, throttled, or timed in a window that holds more than the work.",
            caveats.len(),
            if caveats.len() == 1 { " was" } else { "s were" }
        ));
    }
    if let Some(o) = offload.filter(|o| !o.caveats.is_empty()) {
        out.push(format!(
            "{} offload figure{} more than a factor of 2 from the planner's prediction (see Offload).",
            o.caveats.len(),
            if o.caveats.len() == 1 { " lies" } else { "s lie" }
        ));
    }
    if !ds.emulated.is_empty() {
        out.push(format!(
            "{} record{} made on pqcprof's CPU stand-in driver: correctness only, in no figure.",
            ds.emulated.len(),
            if ds.emulated.len() == 1 {
                " was"
            } else {
                "s were"
            }
        ));
    }
    out
}

fn line(e: &Entry) -> Option<String> {
    let r = e.rec;
    let mut why = vec![];
    if let Some(by) = r.stopped_by.filter(|b| *b != StoppedBy::Noise) {
        // `--runs auto` that ran out of runs or time before its noise
        // target: the record is whole, its median only less certain.
        why.push(format!(
            "noise target not met: stopped by {} after {} runs (--runs auto, at most {}), the median known to {} where {} was asked for",
            by.name(),
            r.runs_used.unwrap_or(r.run_seconds.len()),
            r.runs_requested.unwrap_or(r.runs),
            r.noise_reached.map_or("no interval (under six runs)".into(), |w| format!("+-{:.2}%", w * 100.0)),
            r.max_noise.map_or("?".into(), |m| format!("+-{:.2}%", m * 100.0)),
        ));
    }
    if let Some(x) = r.window_over_floor.filter(|x| *x < FLOOR_MULTIPLE) {
        why.push(format!(
            "its median window is only {} its floor, the same window timed empty ({}): under {}, the timer's own cost is part of the figure",
            units::ratio(x),
            r.floor.as_ref().map_or("?".into(), |f| units::time_ms(f.seconds * 1000.0)),
            units::ratio(FLOOR_MULTIPLE)
        ));
    }
    if let Some(h) = r.hold.as_ref().filter(|h| h.uncovered_runs > 0) {
        why.push(hold_line(h, r.mode));
    }
    if let Some(c) = &r.cut {
        why.push(format!(
            "cut short ({} of {} runs): {c}",
            r.runs_completed.unwrap_or(r.run_seconds.len()),
            r.runs_requested.unwrap_or(r.runs)
        ));
    }
    if let Some(c) = r.clocks.as_ref().filter(|c| c.throttled) {
        why.push(format!(
            "measured while throttled ({}; SM clock {}-{} MHz)",
            c.throttle_reasons.join(", "),
            c.sm_clock_min_mhz.map_or("?".into(), |v| format!("{v:.0}")),
            c.sm_clock_max_mhz.map_or("?".into(), |v| format!("{v:.0}"))
        ));
    }
    if let Some(g) = sampler_gaps(&r.usage) {
        why.push(g);
    }
    (!why.is_empty()).then(|| {
        format!(
            "{} {} {} batch {} ({}, {}): {}",
            r.algorithm,
            r.operation,
            match r.mode {
                Mode::Throughput => "throughput",
                Mode::Latency => "latency",
            },
            r.batch,
            e.setup(),
            e.src,
            why.join("; ")
        )
    })
}

/// What the NVML sampler could not measure over a record's runs, in one
/// clause however many figures and runs it hit (NVML gone mid-run fails
/// every figure): the runs, the figures, and the first gap in full.
fn sampler_gaps(usage: &[crate::monitor::RunUsage]) -> Option<String> {
    let all = || usage.iter().flat_map(|u| &u.gaps);
    let first = all().next()?;
    let mut figures: Vec<&str> = vec![];
    for f in all().map(|g| g.split(": ").next().unwrap_or(g)) {
        if !figures.contains(&f) {
            figures.push(f);
        }
    }
    Some(format!(
        "NVML left gaps in {} of {} runs ({}), the first: {first}",
        usage.iter().filter(|u| !u.gaps.is_empty()).count(),
        usage.len(),
        figures.join(", ")
    ))
}

/// A hold that ended before the host had queued the window's work, and
/// what became of those runs.
fn hold_line(h: &HoldCheck, mode: Mode) -> String {
    if let Some(refused) = h.refusal(mode) {
        return refused;
    }
    let what = match mode {
        Mode::Latency => "those windows (host time inside) are left out of its figures",
        Mode::Throughput => "those windows include host time",
    };
    format!(
        "the {} ms device-side hold (pqcprof_hold) ended before the work was queued in {} of {} timed runs: {what}",
        h.requested_ms,
        h.uncovered_runs,
        h.covered_runs + h.uncovered_runs
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::record::{EmptyWindow, Record, Status};

    fn rec(over_floor: f64, stopped_by: Option<StoppedBy>) -> Record {
        let mut r = crate::report::model::test_records::ok_record(false, 1e4, 10);
        r.floor = Some(EmptyWindow {
            seconds: 1e-3 / over_floor,
            samples: 51,
            launches_per_s: None,
            method: "test".into(),
        });
        r.window_over_floor = Some(over_floor);
        r.stopped_by = stopped_by;
        r.runs_used = stopped_by.map(|_| 6);
        r.max_noise = stopped_by.map(|_| 0.01);
        r.noise_reached = stopped_by.map(|_| 0.034);
        r
    }

    fn lines(records: Vec<Record>) -> Vec<String> {
        let loaded = crate::report::model::test_records::loaded(records);
        caveats(&Dataset::new(std::slice::from_ref(&loaded)))
    }

    #[test]
    fn a_window_under_100_times_its_floor_is_marked() {
        let l = lines(vec![rec(40.0, None)]);
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(l[0].contains("only 40") && l[0].contains("floor"), "{l:?}");
        assert!(lines(vec![rec(100.0, None)]).is_empty());
    }

    #[test]
    fn runs_auto_short_of_its_target_is_marked_and_on_target_is_not() {
        let l = lines(vec![rec(1e4, Some(StoppedBy::MaxRuns))]);
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(
            l[0].contains("stopped by max_runs after 6 runs")
                && l[0].contains("+-3.40%")
                && l[0].contains("+-1.00%"),
            "{l:?}"
        );
        assert!(lines(vec![rec(1e4, Some(StoppedBy::Noise))]).is_empty());
    }

    #[test]
    fn a_hold_that_ended_before_the_work_was_queued_is_marked() {
        let hold = |covered, uncovered| HoldCheck {
            requested_ms: 0.5,
            measured_ms: vec![0.5; covered + uncovered],
            measured_ms_median: 0.5,
            covered_runs: covered,
            uncovered_runs: uncovered,
            dropped_run_seconds: vec![],
        };
        let mut latency = rec(1e4, None);
        latency.mode = Mode::Latency;
        latency.hold = Some(hold(4, 2));
        let mut refused = latency.clone();
        refused.status = Status::Failed;
        refused.hold = Some(hold(0, 3));
        let mut throughput = rec(1e4, None);
        throughput.hold = Some(hold(5, 1));
        let mut fine = rec(1e4, None);
        fine.hold = Some(hold(6, 0));
        let l = lines(vec![latency, refused, throughput, fine]);
        assert_eq!(l.len(), 3, "{l:#?}");
        assert!(
            l[0].contains("in 2 of 6 timed runs") && l[0].contains("left out of its figures"),
            "{l:#?}"
        );
        assert!(
            l[1].contains("latency refused") && l[1].contains("in 3 of 3 timed runs"),
            "{l:#?}"
        );
        assert!(
            l[2].contains("in 1 of 6 timed runs") && l[2].contains("include host time"),
            "{l:#?}"
        );
    }
}
