//! The report's Offload section, from `pqcprof offload` run files: per
//! run, the highest offered rate measured under its latency objective, the
//! batching that served it and its p99 beside the planner's prediction;
//! every point in a table; and latency against offered rate as a chart
//! (p50 and p99 per backend, the objective as a line, saturated points
//! circled).

use crate::core::units;
use crate::report::model::Dataset;
use crate::report::table::{Cell, Row, Table};
use crate::schema::offload::{kept_up, OffloadRun, Point};

/// How to read the section (both formats).
pub const INTRO: &str = "Requests arrived one at a time at each offered rate and a dynamic batcher served them in batches; latency counts from each request's intended arrival to its result, queue wait included. A point is saturated when the batcher fell behind its arrivals (its percentiles hold for that window only); dropped requests met a full queue (--queue-limit). Predicted figures are the planner's: a simulation of the same batcher over the batch times measured before the first point, not a measurement. A request mix counts whole requests of it: tls13-server's rates are handshakes per second, each an ML-KEM-768 encapsulation, an X25519 key pair and secret, and an ML-DSA-65 signature. Energy per request is a GPU point's: the device's energy over the window (NVML's counter, or its power samples integrated) over the requests served, the idle gaps between batches included; the CPU has no energy reading here. Sources read Fn points[i]: file n, index i of its offload points.";

/// The section's content.
pub struct OffloadSection {
    /// One row per offload run: its best rate, batching and p99.
    pub summary: Table,
    /// Every point of every run.
    pub points: Table,
    /// The runs with points, each with its file's index: what
    /// [`crate::report::render::charts::offload_charts`] draws.
    pub runs: Vec<(usize, OffloadRun)>,
    /// Where a measured figure lies more than a factor of 2 from its
    /// prediction ([`crate::offload::prediction_caveats`]), one sentence
    /// each naming its run.
    pub caveats: Vec<String>,
}

/// The offload runs of the loaded files, each with its file's index.
fn runs<'a>(ds: &Dataset<'a>) -> Vec<(usize, &'a OffloadRun)> {
    ds.runs
        .iter()
        .enumerate()
        .filter_map(|(f, r)| r.offload.as_ref().map(|o| (f, o)))
        .collect()
}

/// The section, when any file is an offload run with points.
pub fn section(ds: &Dataset) -> Option<OffloadSection> {
    let runs: Vec<(usize, &OffloadRun)> = runs(ds)
        .into_iter()
        .filter(|(_, o)| !o.points.is_empty())
        .collect();
    if runs.is_empty() {
        return None;
    }
    let caveats = runs
        .iter()
        .flat_map(|&(f, o)| {
            crate::offload::prediction_caveats(o)
                .into_iter()
                .map(move |c| format!("F{} {}, {}: {c}", f + 1, setup(o), operation(o)))
        })
        .collect();
    Some(OffloadSection {
        summary: summary_table(&runs),
        points: points_table(&runs),
        runs: runs.iter().map(|&(f, o)| (f, o.clone())).collect(),
        caveats,
    })
}

/// `liboqs-cpu, 2 workers`; a GPU other than the first named (`native-gpu
/// on GPU 1, ...`); served on the CPU stand-in driver, said so.
fn setup(o: &OffloadRun) -> String {
    format!(
        "{}{}, {} worker{}{}",
        o.backend,
        match o.device_ordinal {
            Some(n) if n > 0 => format!(" on GPU {n}"),
            _ => String::new(),
        },
        o.workers,
        if o.workers == 1 { "" } else { "s" },
        if o.emulated {
            ", emulated (CPU stand-in driver, not a GPU: times mean nothing)"
        } else {
            ""
        }
    )
}

fn operation(o: &OffloadRun) -> String {
    match &o.mix {
        Some(m) => format!("mix {m}: {} ({})", o.algorithm, o.operation),
        None => format!("{} {}", o.algorithm, o.operation),
    }
}

/// A rate of `o`'s requests: `1,234/s`, or `1,234 handshakes/s` for a mix.
pub fn rate_of(o: &OffloadRun, v: f64) -> String {
    let r = units::ops(v);
    let unit = crate::schema::offload::rate_unit(o.mix.as_deref());
    match r.strip_suffix("/s") {
        Some(n) => format!("{n}{unit}"),
        None => r,
    }
}

/// `max-batch 8, max-wait 0.5 ms`.
fn batching(p: &Point) -> String {
    format!("max-batch {}, max-wait {} ms", p.max_batch, p.max_wait_ms)
}

/// The point a run's row stands for: the highest offered rate that met
/// the objective and kept up (with an objective), else the highest that
/// kept up; with its index.
fn best(o: &OffloadRun) -> Option<(usize, &Point)> {
    o.points
        .iter()
        .enumerate()
        .filter(|(_, p)| kept_up(p) && (o.slo.is_none() || p.meets_slo == Some(true)))
        .max_by(|a, b| a.1.offered_rate.total_cmp(&b.1.offered_rate))
}

fn source(file: usize, index: usize) -> Cell {
    Cell::text(format!("F{} points[{index}]", file + 1)).class("src")
}

fn summary_table(runs: &[(usize, &OffloadRun)]) -> Table {
    let mut t = Table::new(
        "t-offload",
        &[
            "Backend",
            "Operation",
            "Objective",
            "Highest rate measured under it",
            "Batching used",
            "p99 there",
            "Planner's highest rate",
            "Energy per request there",
            "Source",
        ],
        false,
    );
    for &(file, o) in runs {
        let objective = o.slo.clone().unwrap_or_else(|| "none".into());
        let (rate, batch, p99, src) = match best(o) {
            Some((i, p)) => (
                Cell::num(rate_of(o, p.offered_rate))
                    .below(if o.slo.is_some() {
                        format!("served {}", rate_of(o, p.achieved_rate))
                    } else {
                        "no objective: the highest that kept up".into()
                    })
                    .value(p.offered_rate),
                Cell::text(batching(p)),
                Cell::num(units::time_ms(p.waits.latency_ms.p99))
                    .below(match &p.predicted_latency_ms {
                        Some(q) => format!("predicted {}", units::time_ms(q.p99)),
                        None => "no prediction".into(),
                    })
                    .value(p.waits.latency_ms.p99),
                source(file, i),
            ),
            None => (
                Cell::text("none").class("bad").below(format!(
                    "of {} rate(s) measured, none {}",
                    o.points.len(),
                    if o.slo.is_some() {
                        "met it and kept up"
                    } else {
                        "kept up"
                    }
                )),
                Cell::empty(),
                Cell::empty(),
                Cell::text(format!("F{} offload", file + 1)).class("src"),
            ),
        };
        let planned = match (&o.slo, &o.predicted_max_rate_under_slo) {
            (None, _) => Cell::empty(),
            (Some(_), None) => Cell::text("none").below("even a light load misses it"),
            (Some(_), Some(p)) => Cell::num(rate_of(o, p.offered_rate))
                .below(format!(
                    "{}, p99 {}",
                    batching(p),
                    units::time_ms(p.waits.latency_ms.p99)
                ))
                .value(p.offered_rate),
        };
        t.rows.push(Row {
            filters: vec![],
            cells: vec![
                Cell::text(setup(o)),
                Cell::text(operation(o)),
                Cell::text(objective),
                rate,
                batch,
                p99,
                planned,
                energy_cell(best(o).map(|(_, p)| p)),
                src,
            ],
        });
    }
    t
}

/// A point's energy per request, where its device had an energy reading.
fn energy_cell(p: Option<&Point>) -> Cell {
    match p.and_then(|p| Some((p.energy_per_request_mj?, p.energy_source.as_deref()))) {
        Some((mj, source)) => Cell::num(format!("{mj:.3} mJ"))
            .below(source.unwrap_or("NVML").to_string())
            .value(mj),
        None => Cell::text("–").below("no energy reading"),
    }
}

/// What became of a point, in a few words.
fn state(p: &Point) -> Cell {
    let mut words = vec![];
    if p.saturated {
        words.push("saturated".to_string());
    }
    if p.dropped > 0 {
        words.push(format!("{} dropped", units::grouped(p.dropped as f64)));
    }
    match (p.meets_slo, &p.slo_unresolved) {
        (Some(true), _) => words.push("objective met".into()),
        (Some(false), _) => words.push("objective missed".into()),
        (None, Some(why)) => words.push(format!("objective {why}")),
        (None, None) => {}
    }
    let bad = p.saturated || p.dropped > 0 || p.meets_slo == Some(false);
    let text = if words.is_empty() {
        "kept up".to_string()
    } else {
        words.join(", ")
    };
    Cell::text(text).class(if bad { "bad" } else { "good" })
}

fn points_table(runs: &[(usize, &OffloadRun)]) -> Table {
    let mut t = Table::new(
        "t-offload-points",
        &[
            "Backend",
            "Operation",
            "Offered",
            "Served",
            "Batching",
            "Latency p50",
            "Latency p99",
            "Queue p99",
            "Service p99",
            "State",
            "Source",
        ],
        false,
    );
    for &(file, o) in runs {
        for (i, p) in o.points.iter().enumerate() {
            let l = &p.waits.latency_ms;
            let predicted = |q: Option<f64>| match q {
                Some(v) => format!("predicted {}", units::time_ms(v)),
                None => "no prediction".into(),
            };
            t.rows.push(Row {
                filters: vec![],
                cells: vec![
                    Cell::text(setup(o)),
                    Cell::text(operation(o)),
                    Cell::num(rate_of(o, p.offered_rate)).value(p.offered_rate),
                    Cell::num(rate_of(o, p.achieved_rate)).value(p.achieved_rate),
                    Cell::text(batching(p)),
                    Cell::num(units::time_ms(l.p50))
                        .below(predicted(p.predicted_latency_ms.map(|q| q.p50)))
                        .value(l.p50),
                    Cell::num(units::time_ms(l.p99))
                        .below(predicted(p.predicted_latency_ms.map(|q| q.p99)))
                        .value(l.p99),
                    Cell::num(units::time_ms(p.waits.queue_ms.p99)).value(p.waits.queue_ms.p99),
                    Cell::num(units::time_ms(p.waits.service_ms.p99)).value(p.waits.service_ms.p99),
                    state(p),
                    source(file, i),
                ],
            });
        }
    }
    t
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// A plugin's offload run (test only): one point whose p99 was
    /// measured at 3.83 ms where 0.206 ms was predicted, and a highest rate
    /// measured under the objective of 9,871/s where the planner said
    /// 27,732/s.
    pub(crate) fn far_from_its_prediction() -> OffloadRun {
        let q = |p99: f64| json!({"p50": p99 / 2.0, "p90": p99 / 1.5, "p99": p99, "p999": p99, "max": p99});
        serde_json::from_value(json!({
            "backend": "plugin:x.so", "algorithm": "ML-KEM-768", "operation": "encaps",
            "workers": 1, "arrivals": "poisson, seed 1", "window_seconds": 0.5,
            "curve_basis": "", "curve": [], "slo": "p99=10ms", "max_rate_under_slo": 9871.0,
            "predicted_max_rate_under_slo": {
                "backend": "x", "offered_rate": 27732.0, "achieved_rate": 27700.0,
                "max_batch": 8, "max_wait_ms": 0.0, "latency_ms": q(1.0), "queue_ms": q(0.5),
                "service_ms": q(0.5), "batch_sizes": {}, "dropped": 0, "saturated": false,
                "requests": 1000
            },
            "points": [{
                "backend": "x", "offered_rate": 1000.0, "achieved_rate": 990.0,
                "max_batch": 4, "max_wait_ms": 0.0, "latency_ms": q(3.83),
                "queue_ms": q(0.1), "service_ms": q(0.1), "batch_sizes": {"1": 10},
                "dropped": 0, "saturated": false, "requests": 5000, "meets_slo": true,
                "predicted_latency_ms": q(0.206)
            }]
        }))
        .unwrap()
    }

    #[test]
    fn a_measurement_far_from_its_prediction_is_a_caveat_of_the_section() {
        let mut run = crate::report::model::test_records::loaded(vec![]);
        run.offload = Some(far_from_its_prediction());
        let set = crate::schema::load::LoadSet {
            runs: vec![run],
            problems: vec![],
            imported: vec![],
        };
        let ds = Dataset::new(&set.runs);
        let s = section(&ds).unwrap();
        assert_eq!(s.caveats.len(), 2, "{:?}", s.caveats);
        assert!(
            s.caveats[0]
                .starts_with("F1 plugin:x.so, 1 worker, ML-KEM-768 encaps: at 1,000/s offered")
                && s.caveats[0].contains("18.6× the prediction"),
            "{}",
            s.caveats[0]
        );
    }
}
