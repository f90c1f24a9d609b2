//! Totals over several devices or ranks as the run file stores them: the
//! aggregate of one (backend, algorithm, operation, batch, threads), its
//! spread over members, and per-node and per-model totals. How they are
//! computed is [`crate::analyse::aggregate`].

use crate::core::catalog::Operation;
use crate::schema::record::Mode;
use serde::{Deserialize, Serialize};

/// How one member's throughput compares with the others'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Lowest member throughput, operations per second.
    pub min_ops_per_sec: f64,
    /// Median member throughput, operations per second.
    pub median_ops_per_sec: f64,
    /// Highest member throughput, operations per second.
    pub max_ops_per_sec: f64,
    /// How much less the slowest member did than the fastest:
    /// (max - min) / max, percent.
    pub imbalance_pct: f64,
    /// Label of the slowest member.
    pub slowest: String,
}

/// The sum and spread of the members sharing a node or a GPU model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupTotal {
    /// Node name or GPU model.
    pub name: String,
    /// Members in the group that passed.
    pub members: usize,
    /// Sum of their throughputs, operations per second.
    pub total_ops_per_sec: f64,
    /// Their spread.
    pub spread: Spread,
}

/// Several records of one (backend, algorithm, operation, batch) measured
/// together, added up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    /// What was added up: `GPUs 0, 1 of vm` or `cluster job 42`.
    pub scope: String,
    /// Backend name.
    pub backend: String,
    /// Algorithm.
    pub algorithm: String,
    /// Operation.
    pub operation: Operation,
    /// Throughput (latency records are not added up).
    pub mode: Mode,
    /// Operations per batch.
    pub batch: usize,
    /// Threads per member.
    pub threads: usize,
    /// Index in the file's `records` of each member, in member order.
    pub records: Vec<usize>,
    /// Label of each member (`GPU 1`, `rank gpu/3 on node7`).
    pub members: Vec<String>,
    /// Members whose record did not pass (failed or skipped): not in the total.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_ok: Vec<String>,
    /// Each passing member's throughput over its overlapped runs, operations
    /// per second, in member order (members in `not_ok` left out).
    pub member_ops_per_sec: Vec<f64>,
    /// Each passing member's timed runs that overlapped in time with a run
    /// of every other member.
    pub overlapped_runs: Vec<usize>,
    /// Sum of `member_ops_per_sec`, operations per second; absent when a
    /// passing member had no overlapped run or nothing passed.
    pub total_ops_per_sec: Option<f64>,
    /// How overlap was established, and anything the total leaves out.
    pub overlap: String,
    /// Spread across the passing members.
    pub spread: Option<Spread>,
    /// Energy of all members per operation of all members, microjoules:
    /// the joules of every member's energy window (at least one second of
    /// back-to-back batches) over the operations of those windows; absent
    /// unless every passing member has one (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_per_op_uj: Option<f64>,
    /// Sum over members of each one's highest per-run mean power, watts
    /// (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_power_w: Option<f64>,
    /// Whether a member ran on pqcprof's CPU stand-in driver: then the
    /// figures prove only that the path works, never a speed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// Per node, when members sit on more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_node: Vec<GroupTotal>,
    /// Per GPU (or CPU) model, when members have more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_model: Vec<GroupTotal>,
}
