//! Records the reader must not take at face value: those a time budget or
//! a signal cut short (fewer runs than asked for) and those measured while
//! NVML reported power or thermal throttling, one line each.

use crate::report::model::{Dataset, Entry};

/// One line per cut or throttled record, emulated ones included.
pub fn caveats(ds: &Dataset) -> Vec<String> {
    ds.entries
        .iter()
        .chain(ds.emulated.iter())
        .filter_map(line)
        .collect()
}

fn line(e: &Entry) -> Option<String> {
    let r = e.rec;
    let mut why = vec![];
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
    (!why.is_empty()).then(|| {
        format!(
            "{} {} {} batch {} ({}, {}): {}",
            r.algorithm,
            r.operation,
            match r.mode {
                crate::schema::record::Mode::Throughput => "throughput",
                crate::schema::record::Mode::Latency => "latency",
            },
            r.batch,
            e.setup(),
            e.src,
            why.join("; ")
        )
    })
}
