//! What `pqcprof offload` measured and `pqcprof plan` predicts: points of
//! an offered rate and a batching with the latency each request saw from
//! its intended arrival, and the whole offload run kept in the run file.

use crate::schema::device::GateReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Percentiles of one quantity, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The 99.9th percentile.
    pub p999: f64,
    /// The longest.
    pub max: f64,
}

/// What the requests of one point waited (a latency recorder's
/// percentiles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waits {
    /// Intended arrival to result.
    pub latency_ms: Percentiles,
    /// Intended arrival to dispatch.
    pub queue_ms: Percentiles,
    /// Dispatch to result.
    pub service_ms: Percentiles,
    /// Batches dispatched, by size.
    #[serde(deserialize_with = "sizes_from_text_keys")]
    pub batch_sizes: BTreeMap<usize, u64>,
}

/// Batch sizes read back: JSON writes the sizes as text keys (`"4": 12`),
/// and a map inside a flattened struct reaches serde as text, so they are
/// parsed here.
fn sizes_from_text_keys<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<usize, u64>, D::Error> {
    use serde::de::Error;
    BTreeMap::<String, u64>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| {
            k.parse::<usize>()
                .map(|k| (k, v))
                .map_err(|_| D::Error::custom(format!("batch size '{k}' is not a whole number")))
        })
        .collect()
}

/// One offered rate served by one batching: what each request waited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The backend whose batch times served the requests.
    pub backend: String,
    /// Requests per second offered.
    pub offered_rate: f64,
    /// Requests per second served.
    pub achieved_rate: f64,
    /// The batching: requests in one batch at most.
    pub max_batch: usize,
    /// The batching: milliseconds the oldest request may wait.
    pub max_wait_ms: f64,
    /// Latency, queue wait, service time and batch sizes.
    #[serde(flatten)]
    pub waits: Waits,
    /// Requests refused by the queue limit (`--queue-limit`): they arrived
    /// to find the limit already waiting and were never served; none
    /// without a limit.
    pub dropped: u64,
    /// The batcher fell behind: its latency grows with the window, so the
    /// percentiles above hold only for this window.
    pub saturated: bool,
    /// Requests simulated or served.
    pub requests: usize,
    /// Requests scheduled but not served: the deadline came first.
    #[serde(default)]
    pub not_served: usize,
    /// Whether the objective asked for is met: absent without one, and
    /// absent when the point's requests are too few to resolve its
    /// percentile (`slo_unresolved` says so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meets_slo: Option<bool>,
    /// Why the objective is neither met nor missed here: the point holds
    /// fewer requests than its percentile needs (10 beyond it: 1,000 for
    /// p99).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_unresolved: Option<String>,
    /// A measured point's correctness gate: before the window (each
    /// worker's largest batch) and after it (every batch size served);
    /// absent for a prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateReport>,
    /// A measured point: what the planner predicted for the same rate and
    /// batching from the batch times measured before the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_latency_ms: Option<Percentiles>,
    /// A measured point: how late, at most, the dispatcher handed a batch
    /// to an idle worker after the moment its rule said (its own overhead,
    /// inside every latency), milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_late_max_ms: Option<f64>,
    /// Measured on pqcprof's CPU stand-in driver, not a GPU: the point
    /// proves the serving path and the gate, its times mean nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// A request mix (`tls13-server`): each request is several operations
    /// and every rate counts whole requests of it (handshakes per second).
    /// Absent: each request is one operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    /// A GPU point: the device's energy over the window (NVML), shared by
    /// the requests served, millijoules per request; absent where the
    /// device has no energy reading (the CPU, or no NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_per_request_mj: Option<f64>,
    /// Where that energy came from (`energy counter`, `integrated power
    /// samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_source: Option<String>,
}

/// Millijoules per request of a window in which the device used
/// `usage.energy_j` and `served` requests were served; `None` without an
/// energy reading or a request.
pub fn energy_per_request(
    usage: &crate::monitor::RunUsage,
    served: usize,
) -> Option<(f64, String)> {
    let j = usage.energy_j.filter(|j| j.is_finite() && *j >= 0.0)?;
    (served > 0).then(|| {
        let source = usage.energy_source.clone().unwrap_or_else(|| "NVML".into());
        (j * 1e3 / served as f64, source)
    })
}

/// Whether a point kept up with its arrivals: not saturated and nothing
/// dropped at a queue limit.
pub fn kept_up(p: &Point) -> bool {
    !p.saturated && p.dropped == 0
}

/// What a rate counts, after the number: `/s` (requests of one
/// operation), ` handshakes/s` for a mix whose requests are handshakes.
pub fn rate_unit(mix: Option<&str>) -> &'static str {
    match mix {
        Some(_) => " handshakes/s",
        None => "/s",
    }
}

/// The dispatcher's own cost, beside the batch times: what a simulated
/// batch adds to what the backend takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    /// Added to every batch: handing it to the worker's thread and the
    /// result back (0 where the batch times were measured through that
    /// hand-over already).
    pub per_batch_ms: f64,
    /// Added to a batch the dispatcher had to wait for (an arrival or the
    /// end of --max-wait with a worker idle): waking at that moment. A
    /// batch dispatched as a worker frees does not pay it.
    pub wake_ms: f64,
}

/// One batch size's time on one worker, as the planner used it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Requests in the batch.
    pub batch: usize,
    /// Median time of the batch, milliseconds.
    pub batch_ms: f64,
}

/// Batch times with several workers busy at once, beside the one-worker
/// curve: what the planner takes for a batch that starts while the others
/// are all serving.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContendedCurve {
    /// Workers busy at once while these were measured.
    pub busy: usize,
    /// Each batch size's median time with all of them busy.
    pub curve: Vec<CurvePoint>,
}

/// An offload run: one backend, algorithm and operation at one or more
/// offered rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffloadRun {
    /// The backend serving the batches.
    pub backend: String,
    /// The plugin serving them (`--backend plugin:PATH`): name, version,
    /// ABI version, the library's SHA-256, memory kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<crate::schema::plugin::PluginInfo>,
    /// The algorithm.
    pub algorithm: String,
    /// The operation (`keygen`, `encaps`, ...); with a mix, the mix's
    /// operations.
    pub operation: String,
    /// The request mix, when each request is several operations (see
    /// `Point::mix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    /// Workers serving batches at once (CPU threads, GPU streams).
    pub workers: usize,
    /// The device the batches ran on (a CPU model, a GPU name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub device: String,
    /// The GPU's CUDA ordinal (`--device`); absent on the CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_ordinal: Option<usize>,
    /// Served by the CPU stand-in driver: see `Point::emulated`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// How requests arrived.
    pub arrivals: String,
    /// Seconds of arrivals per point.
    pub window_seconds: f64,
    /// The batch times measured before the first point (what `auto`
    /// batching and the predictions use), and what they cover.
    pub curve_basis: String,
    /// See `curve_basis`.
    pub curve: Vec<CurvePoint>,
    /// The dispatcher's own cost that the predictions add (see
    /// [`Handoff`]), measured before the first point; absent in files
    /// from before it was modelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    /// With several workers: the batch times measured with all of them
    /// serving at once, which the predictions use for a batch that starts
    /// while the others are busy; absent with one worker, on a GPU, and in
    /// files from before contention was modelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contended: Option<ContendedCurve>,
    /// The latency objective, as given (`p99=2ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<String>,
    /// Requests that may wait at most (`--queue-limit`); absent: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_limit: Option<usize>,
    /// Every finished point, in the order measured.
    pub points: Vec<Point>,
    /// With an objective: the highest offered rate measured that met it
    /// without falling behind (null: none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate_under_slo: Option<f64>,
    /// With an objective: the planner's highest Poisson rate that meets
    /// it, from the batch times measured before the first point, with its
    /// batching and percentiles (absent: no objective, or even a light
    /// load misses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_max_rate_under_slo: Option<Point>,
    /// Why the run stopped before its last point (a deadline, Ctrl-C, a
    /// failed gate), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

#[cfg(test)]
mod energy_tests {
    use super::energy_per_request;
    use crate::monitor::RunUsage;

    #[test]
    fn energy_is_shared_by_the_requests_served() {
        let usage = RunUsage {
            energy_j: Some(2.0),
            energy_source: Some("energy counter".into()),
            ..RunUsage::default()
        };
        let (mj, source) = energy_per_request(&usage, 4000).unwrap();
        assert!((mj - 0.5).abs() < 1e-12, "{mj}");
        assert_eq!(source, "energy counter");
        assert_eq!(energy_per_request(&usage, 0), None);
        assert_eq!(energy_per_request(&RunUsage::default(), 10), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_reads_back_as_it_was_written() {
        let q = Percentiles {
            p50: 1.0,
            p90: 2.0,
            p99: 3.0,
            p999: 4.0,
            max: 5.0,
        };
        let p = Point {
            backend: "liboqs-cpu".into(),
            offered_rate: 100.0,
            achieved_rate: 99.0,
            max_batch: 4,
            max_wait_ms: 0.5,
            waits: Waits {
                latency_ms: q,
                queue_ms: q,
                service_ms: q,
                batch_sizes: BTreeMap::from([(1, 7), (4, 12)]),
            },
            dropped: 2,
            saturated: false,
            requests: 55,
            not_served: 0,
            meets_slo: Some(true),
            slo_unresolved: None,
            gate: None,
            predicted_latency_ms: Some(q),
            dispatch_late_max_ms: Some(0.1),
            emulated: false,
            mix: Some("tls13-server".into()),
            energy_per_request_mj: None,
            energy_source: None,
        };
        let text = serde_json::to_string(&p).unwrap();
        assert!(
            text.contains("\"batch_sizes\":{\"1\":7,\"4\":12}"),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Point>(&text).unwrap(), p);
        // A point written before mixes existed reads as one operation.
        let old = text.replace(",\"mix\":\"tls13-server\"", "");
        assert_ne!(old, text);
        let read = serde_json::from_str::<Point>(&old).unwrap();
        assert_eq!(read.mix, None);
        let bad = text.replace("\"4\":12", "\"four\":12");
        let e = serde_json::from_str::<Point>(&bad).unwrap_err().to_string();
        assert!(e.contains("batch size 'four'"), "{e}");
    }
}
