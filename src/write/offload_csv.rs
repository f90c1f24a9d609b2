//! The points of an offload run as CSV, one row per point, written beside
//! its run file (`run-X.json`, `run-X.csv`) and again after every point.
//! The columns are defined once, in `cells`; times in milliseconds.

use crate::schema::offload::{OffloadRun, Percentiles, Point};

/// A time, or nothing where there is none.
fn ms(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.6}"))
}

/// Each column's name and the point's cell in it, in order; `p` none:
/// the names alone (cells empty), for the header.
fn cells(o: &OffloadRun, p: Option<&Point>) -> Vec<(String, String)> {
    let text = |f: &dyn Fn(&Point) -> String| p.map_or(String::new(), f);
    let mut c: Vec<(String, String)> = [
        ("backend", text(&|p| p.backend.clone())),
        ("algorithm", o.algorithm.clone()),
        ("operation", o.operation.clone()),
        ("mix", o.mix.clone().unwrap_or_default()),
        ("workers", o.workers.to_string()),
        ("offered_rate", text(&|p| format!("{:.3}", p.offered_rate))),
        (
            "achieved_rate",
            text(&|p| format!("{:.3}", p.achieved_rate)),
        ),
        ("max_batch", text(&|p| p.max_batch.to_string())),
        ("max_wait_ms", text(&|p| p.max_wait_ms.to_string())),
        ("requests", text(&|p| p.requests.to_string())),
        ("dropped", text(&|p| p.dropped.to_string())),
        ("saturated", text(&|p| p.saturated.to_string())),
        ("slo", o.slo.clone().unwrap_or_default()),
        (
            "meets_slo",
            text(&|p| p.meets_slo.map_or(String::new(), |b| b.to_string())),
        ),
        (
            "gate_checked_ops",
            text(&|p| {
                p.gate
                    .as_ref()
                    .map_or(String::new(), |g| g.checked_ops.to_string())
            }),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let quantities: [(&str, Option<&Percentiles>); 4] = [
        ("latency", p.map(|p| &p.waits.latency_ms)),
        ("queue", p.map(|p| &p.waits.queue_ms)),
        ("service", p.map(|p| &p.waits.service_ms)),
        (
            "predicted_latency",
            p.and_then(|p| p.predicted_latency_ms.as_ref()),
        ),
    ];
    for (name, q) in quantities {
        let of = |f: fn(&Percentiles) -> f64| ms(q.map(f));
        c.push((format!("{name}_p50_ms"), of(|q| q.p50)));
        c.push((format!("{name}_p90_ms"), of(|q| q.p90)));
        c.push((format!("{name}_p99_ms"), of(|q| q.p99)));
        c.push((format!("{name}_p999_ms"), of(|q| q.p999)));
        c.push((format!("{name}_max_ms"), of(|q| q.max)));
    }
    let energy = p.and_then(|p| p.energy_per_request_mj);
    c.push((
        "energy_per_request_mj".into(),
        energy.map_or(String::new(), |e| format!("{e:.6}")),
    ));
    // The plugin serving (`--backend plugin:PATH`), empty for the others.
    let plugin = |f: fn(&crate::schema::plugin::PluginInfo) -> String| {
        p.and(o.plugin.as_ref()).map_or(String::new(), f)
    };
    c.push(("plugin".into(), plugin(|i| i.name.clone())));
    c.push(("plugin_version".into(), plugin(|i| i.version.clone())));
    c.push(("plugin_abi".into(), plugin(|i| i.abi())));
    c.push(("plugin_sha256".into(), plugin(|i| i.sha256.clone())));
    c.push(("plugin_memory".into(), plugin(|i| i.memory.name().into())));
    c
}

/// Quotes a cell that holds a comma, a quote or a line break, and keeps a
/// spreadsheet from reading it as a formula ([`super::csv::neutral`]).
fn quoted(s: String) -> String {
    let s = super::csv::neutral(&s).into_owned();
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The whole file: the header, then one row per point in the order
/// measured.
pub fn render(o: &OffloadRun) -> String {
    let names: Vec<String> = cells(o, None).into_iter().map(|(k, _)| k).collect();
    let mut s = names.join(",");
    s.push('\n');
    for p in &o.points {
        let row: Vec<String> = cells(o, Some(p))
            .into_iter()
            .map(|(_, v)| quoted(v))
            .collect();
        s += &row.join(",");
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::offload::Waits;

    fn point(rate: f64, saturated: bool) -> Point {
        let q = |base: f64| Percentiles {
            p50: base,
            p90: base * 2.0,
            p99: base * 3.0,
            p999: base * 4.0,
            max: base * 5.0,
        };
        Point {
            backend: "liboqs-cpu".into(),
            offered_rate: rate,
            achieved_rate: rate * 0.99,
            max_batch: 8,
            max_wait_ms: 0.5,
            waits: Waits {
                latency_ms: q(1.0),
                queue_ms: q(0.25),
                service_ms: q(0.75),
                batch_sizes: Default::default(),
            },
            dropped: 3,
            saturated,
            requests: 100,
            not_served: 0,
            meets_slo: Some(!saturated),
            slo_unresolved: None,
            gate: None,
            predicted_latency_ms: Some(q(1.1)),
            dispatch_late_max_ms: None,
            emulated: false,
            mix: None,
            energy_per_request_mj: None,
            energy_source: None,
        }
    }

    #[test]
    fn one_row_per_point_under_one_header_every_column_filled_where_known() {
        let o = OffloadRun {
            plugin: None,
            backend: "liboqs-cpu".into(),
            algorithm: "ML-KEM-768".into(),
            operation: "encaps".into(),
            mix: None,
            workers: 2,
            device: String::new(),
            device_ordinal: None,
            emulated: false,
            arrivals: "poisson, seed 1".into(),
            window_seconds: 1.0,
            curve_basis: String::new(),
            curve: vec![],
            handoff: None,
            contended: None,
            slo: Some("p99=2ms".into()),
            queue_limit: None,
            points: vec![
                Point {
                    energy_per_request_mj: Some(0.5),
                    ..point(100.0, false)
                },
                point(200.0, true),
            ],
            max_rate_under_slo: Some(100.0),
            predicted_max_rate_under_slo: None,
            stopped: None,
        };
        let text = render(&o);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(header.len(), 15 + 4 * 5 + 1 + 5);
        let at = |row: usize, name: &str| -> String {
            let i = header.iter().position(|h| *h == name).unwrap();
            lines[row].split(',').nth(i).unwrap().to_string()
        };
        assert_eq!(at(1, "offered_rate"), "100.000");
        assert_eq!(at(2, "saturated"), "true");
        assert_eq!(at(2, "meets_slo"), "false");
        assert_eq!(at(1, "dropped"), "3");
        assert_eq!(at(1, "workers"), "2");
        assert_eq!(at(1, "latency_p99_ms"), "3.000000");
        assert_eq!(at(1, "queue_p50_ms"), "0.250000");
        assert_eq!(at(1, "predicted_latency_p999_ms"), "4.400000");
        assert_eq!(at(1, "gate_checked_ops"), "");
        assert_eq!(at(1, "energy_per_request_mj"), "0.500000");
        assert_eq!(at(2, "energy_per_request_mj"), "");
        // No plugin served: its columns are empty.
        assert_eq!(at(1, "plugin"), "");
        assert_eq!(at(1, "plugin_sha256"), "");
        assert_eq!(quoted("a,b".into()), "\"a,b\"");
        // A plugin's version that would be a formula is text.
        assert_eq!(quoted("=1+1".into()), "'=1+1");
        assert_eq!(quoted("=A1,B1".into()), "\"'=A1,B1\"");
    }
}
