//! What a batched request waits. Requests arrive one at a time
//! ([`arrivals`]); a dynamic batcher ([`batcher`]) hands them to a backend
//! in batches; each request's latency counts from its intended arrival
//! ([`latency`]). `pqcprof offload` measures it in real time ([`live`]);
//! `pqcprof plan` predicts it from the batch times a run file measured
//! ([`curve`], [`planner`]): for a rate, the best batching and its
//! percentiles; for a latency objective, the highest rate that meets it.

pub mod arrivals;
pub mod batcher;
pub mod curve;
mod gpu;
pub mod latency;
pub mod live;
pub mod mix;
pub mod options;
mod plan_cmd;
pub mod planner;
mod run_cmd;
mod words;

pub use plan_cmd::{run_plan, PlanArgs};
pub use run_cmd::{run_offload, OffloadArgs};
