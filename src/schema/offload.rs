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
    pub batch_sizes: BTreeMap<usize, u64>,
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
    /// Requests refused by a queue limit (none: the batcher's queue is
    /// unbounded).
    pub dropped: u64,
    /// The batcher fell behind: its latency grows with the window, so the
    /// percentiles above hold only for this window.
    pub saturated: bool,
    /// Requests simulated or served.
    pub requests: usize,
    /// Requests scheduled but not served: the deadline came first.
    #[serde(default)]
    pub not_served: usize,
    /// Whether the objective asked for is met (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meets_slo: Option<bool>,
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
}

/// One batch size's time on one worker, as the planner used it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Requests in the batch.
    pub batch: usize,
    /// Median time of the batch, milliseconds.
    pub batch_ms: f64,
}

/// An offload run: one backend, algorithm and operation at one or more
/// offered rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffloadRun {
    /// The backend serving the batches.
    pub backend: String,
    /// The algorithm.
    pub algorithm: String,
    /// The operation (`keygen`, `encaps`, ...).
    pub operation: String,
    /// Workers serving batches at once (CPU threads, GPU streams).
    pub workers: usize,
    /// How requests arrived.
    pub arrivals: String,
    /// Seconds of arrivals per point.
    pub window_seconds: f64,
    /// The batch times measured before the first point (what `auto`
    /// batching and the predictions use), and what they cover.
    pub curve_basis: String,
    /// See `curve_basis`.
    pub curve: Vec<CurvePoint>,
    /// The latency objective, as given (`p99=2ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<String>,
    /// Every finished point, in the order measured.
    pub points: Vec<Point>,
    /// With an objective: the highest offered rate measured that met it
    /// without falling behind (null: none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate_under_slo: Option<f64>,
    /// Why the run stopped before its last point (a deadline, Ctrl-C, a
    /// failed gate), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}
