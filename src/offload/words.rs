//! Offload figures as a person reads them: rates, arrivals, percentiles,
//! for `plan`'s and `offload`'s printed output alike, and `offload`'s
//! point lines and table.

use super::arrivals::Arrivals;
use super::latency;
use super::planner::Point;
use crate::schema::offload::{rate_unit, OffloadRun};
use std::path::Path;

/// How requests arrive, in words (`poisson at 5,348.3/s, seed 1`).
pub fn describe_arrivals(a: &Arrivals) -> String {
    match a {
        Arrivals::Poisson { rate, seed } => {
            format!("poisson at {}/s, seed {seed}", fmt_rate(*rate))
        }
        Arrivals::Uniform { rate } => format!("uniform at {}/s", fmt_rate(*rate)),
        Arrivals::Trace(t) => format!("trace of {} requests", t.len()),
    }
}

/// A rate as a person reads it: grouped digits and one decimal where the
/// rate is not whole (`5,348.3`, `1,000`); three significant digits below
/// 10 (`0.250`).
pub fn fmt_rate(r: f64) -> String {
    use crate::core::units::{grouped, sig3};
    if !r.is_finite() || r.abs() < 10.0 {
        return sig3(r);
    }
    let tenths = (r * 10.0).round();
    let whole = grouped((tenths / 10.0).trunc());
    match (tenths.abs() % 10.0) as u32 {
        0 => whole,
        d => format!("{whole}.{d}"),
    }
}

pub fn percentiles(name: &str, p: &latency::Percentiles) -> String {
    format!(
        "  {name:<9} p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  p99.9 {:.3} ms  max {:.3} ms\n",
        p.p50, p.p90, p.p99, p.p999, p.max
    )
}

/// One point, as the line said when it is done.
pub fn point_line(p: &Point) -> String {
    let l = &p.waits.latency_ms;
    let u = rate_unit(p.mix.as_deref());
    format!(
        "offload: {}{u} offered, {}{u} served{}{}: p50 {:.3} ms, p99 {:.3} ms (predicted {}), batches up to {}",
        fmt_rate(p.offered_rate),
        fmt_rate(p.achieved_rate),
        if p.saturated { " (SATURATED)" } else { "" },
        dropped(p),
        l.p50,
        l.p99,
        p.predicted_latency_ms
            .map_or("-".into(), |q| format!("{:.3} ms", q.p99)),
        p.max_batch
    )
}

/// `, 12 dropped` when the queue limit dropped any.
fn dropped(p: &Point) -> String {
    if p.dropped > 0 {
        format!(
            ", {} dropped",
            crate::core::units::grouped(p.dropped as f64)
        )
    } else {
        String::new()
    }
}

/// The run's table, for the terminal.
pub fn summary(o: &OffloadRun, path: &Path) -> String {
    let u = rate_unit(o.mix.as_deref());
    let mix = o
        .mix
        .as_ref()
        .map_or(String::new(), |m| format!("mix {m}: "));
    let mut s = format!(
        "offload: {mix}{} {} {}, {} worker(s), {} ({} s of arrivals per point)\n",
        o.backend, o.algorithm, o.operation, o.workers, o.arrivals, o.window_seconds
    );
    for p in &o.points {
        s += &format!(
            "  {:>10}{u} offered  {:>10}{u} served{}{}  max-batch {} max-wait {} ms{}\n",
            fmt_rate(p.offered_rate),
            fmt_rate(p.achieved_rate),
            if p.saturated { "  SATURATED" } else { "" },
            dropped(p),
            p.max_batch,
            p.max_wait_ms,
            match p.meets_slo {
                Some(true) => "  objective met",
                Some(false) => "  objective missed",
                None => "",
            }
        );
        s += &percentiles("latency", &p.waits.latency_ms);
        if let Some(q) = &p.predicted_latency_ms {
            s += &percentiles("predicted", q);
        }
    }
    if let Some(slo) = &o.slo {
        s += &match o.max_rate_under_slo {
            Some(r) => format!("  highest rate measured with {slo}: {}{u}\n", fmt_rate(r)),
            None => format!("  no rate measured met {slo}\n"),
        };
        s += &match &o.predicted_max_rate_under_slo {
            Some(p) => format!(
                "  the planner's highest rate with {slo}: {}{u} (max-batch {}, max-wait {} ms, p99 {:.3} ms)\n",
                fmt_rate(p.offered_rate),
                p.max_batch,
                p.max_wait_ms,
                p.waits.latency_ms.p99
            ),
            None => format!("  the planner predicts no rate meets {slo}\n"),
        };
    }
    if let Some(why) = &o.stopped {
        s += &format!("  stopped: {why}\n");
    }
    s + &format!(
        "  run file: {}\n  points as CSV: {}",
        path.display(),
        path.with_extension("csv").display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_written_with_at_most_one_decimal() {
        for (rate, written) in [
            (5348.2871441884845, "5,348.3"),
            (1000.0, "1,000"),
            (9999.96, "10,000"),
            (0.25, "0.250"),
        ] {
            assert_eq!(fmt_rate(rate), written);
        }
        let a = Arrivals::Poisson {
            rate: 5348.2871441884845,
            seed: 1,
        };
        assert_eq!(describe_arrivals(&a), "poisson at 5,348.3/s, seed 1");
    }
}
