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

/// A measured figure more than this many times its prediction, or under
/// its inverse, is named wherever the two are shown (the terminal, the
/// report): the planner's model of the machine did not hold while serving.
pub const PREDICTION_FACTOR: f64 = 2.0;

/// `measured` against `predicted` when they are more than
/// [`PREDICTION_FACTOR`] apart: `18.6× the prediction`, `0.31× the
/// prediction`.
fn far_apart(measured: f64, predicted: f64) -> Option<String> {
    if !(measured.is_finite() && predicted.is_finite() && measured > 0.0 && predicted > 0.0) {
        return None;
    }
    let r = measured / predicted;
    (!(1.0 / PREDICTION_FACTOR..=PREDICTION_FACTOR).contains(&r))
        .then(|| format!("{}× the prediction", crate::core::units::sig3(r)))
}

/// Where a run's measurements and the planner's predictions lie more than
/// [`PREDICTION_FACTOR`] apart, one sentence each: a point's measured p99
/// against its predicted p99, and the highest rate measured under the
/// objective against the planner's highest rate.
pub fn prediction_caveats(o: &OffloadRun) -> Vec<String> {
    let u = rate_unit(o.mix.as_deref());
    let mut out = vec![];
    for (i, p) in o.points.iter().enumerate() {
        let Some(q) = &p.predicted_latency_ms else {
            continue;
        };
        if let Some(how) = far_apart(p.waits.latency_ms.p99, q.p99) {
            out.push(format!(
                "at {}{u} offered (points[{i}]): p99 measured {:.3} ms, {how} of {:.3} ms",
                fmt_rate(p.offered_rate),
                p.waits.latency_ms.p99,
                q.p99
            ));
        }
    }
    if let (Some(slo), Some(measured), Some(pred)) = (
        &o.slo,
        o.max_rate_under_slo,
        &o.predicted_max_rate_under_slo,
    ) {
        if let Some(how) = far_apart(measured, pred.offered_rate) {
            out.push(format!(
                "the highest rate measured with {slo}, {}{u}, is {how} ({}{u})",
                fmt_rate(measured),
                fmt_rate(pred.offered_rate)
            ));
        }
    }
    out
}

/// One point, as the line said when it is done.
pub fn point_line(p: &Point) -> String {
    let l = &p.waits.latency_ms;
    let u = rate_unit(p.mix.as_deref());
    format!(
        "offload: {}{u} offered, {}{u} served{}{}: p50 {:.3} ms, p99 {:.3} ms (predicted {}), batches up to {}{}",
        fmt_rate(p.offered_rate),
        fmt_rate(p.achieved_rate),
        if p.saturated { " (SATURATED)" } else { "" },
        dropped(p),
        l.p50,
        l.p99,
        p.predicted_latency_ms
            .map_or("-".into(), |q| format!("{:.3} ms", q.p99)),
        p.max_batch,
        p.predicted_latency_ms
            .and_then(|q| far_apart(l.p99, q.p99))
            .map_or(String::new(), |how| format!("; CAVEAT: the p99 measured is {how}"))
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
            match (p.meets_slo, &p.slo_unresolved) {
                (Some(true), _) => "  objective met",
                (Some(false), _) => "  objective missed",
                (None, Some(_)) => "  objective not resolvable (too few requests)",
                (None, None) => "",
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
    for c in prediction_caveats(o) {
        s += &format!("  caveat: {c}\n");
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

    /// An offload run with one point: p99 measured and predicted.
    fn run(measured: f64, predicted: f64) -> OffloadRun {
        let q = |p99: f64| serde_json::json!({"p50": p99 / 2.0, "p90": p99 / 1.5, "p99": p99, "p999": p99, "max": p99});
        serde_json::from_value(serde_json::json!({
            "backend": "plugin:x.so", "algorithm": "ML-KEM-768", "operation": "encaps",
            "workers": 1, "arrivals": "poisson, seed 1", "window_seconds": 0.5,
            "curve_basis": "", "curve": [], "slo": "p99=10ms",
            "max_rate_under_slo": 9871.0,
            "predicted_max_rate_under_slo": {
                "backend": "x", "offered_rate": 27732.0, "achieved_rate": 27700.0,
                "max_batch": 8, "max_wait_ms": 0.0, "latency_ms": q(1.0), "queue_ms": q(0.5),
                "service_ms": q(0.5), "batch_sizes": {}, "dropped": 0, "saturated": false,
                "requests": 1000
            },
            "points": [{
                "backend": "x", "offered_rate": 1000.0, "achieved_rate": 990.0,
                "max_batch": 4, "max_wait_ms": 0.0, "latency_ms": q(measured),
                "queue_ms": q(0.1), "service_ms": q(0.1), "batch_sizes": {"1": 10},
                "dropped": 0, "saturated": false, "requests": 500,
                "predicted_latency_ms": q(predicted)
            }]
        }))
        .unwrap()
    }

    #[test]
    fn a_measurement_far_from_its_prediction_is_named_in_the_terminal() {
        let far = run(3.83, 0.206);
        let c = prediction_caveats(&far);
        assert_eq!(c.len(), 2, "{c:?}");
        assert!(
            c[0].contains("p99 measured 3.830 ms, 18.6× the prediction of 0.206 ms"),
            "{}",
            c[0]
        );
        assert!(
            c[1].contains("9,871/s, is 0.356× the prediction (27,732/s)"),
            "{}",
            c[1]
        );
        assert!(point_line(&far.points[0]).contains("CAVEAT: the p99 measured is 18.6×"));
        let s = summary(&far, Path::new("run.json"));
        assert_eq!(s.matches("  caveat: ").count(), 2, "{s}");
        // Within a factor of 2 either way: nothing said.
        let near = run(0.3, 0.206);
        assert_eq!(prediction_caveats(&near).len(), 1, "only the rates");
        assert!(!point_line(&near.points[0]).contains("CAVEAT"));
        assert!(prediction_caveats(&run(0.11, 0.206)).len() == 1);
        assert!(
            prediction_caveats(&run(0.09, 0.206)).len() == 2,
            "under half"
        );
    }

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
