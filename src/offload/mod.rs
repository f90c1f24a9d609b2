//! What a batched request waits. Requests arrive one at a time
//! ([`arrivals`]); a dynamic batcher ([`batcher`]) hands them to a backend
//! in batches; each request's latency counts from its intended arrival
//! ([`latency`]). `pqcprof offload` measures it in real time ([`live`]):
//! [`serve`] runs the points of a [`request`], [`saved`] keeps them on
//! disk. `pqcprof plan` predicts it from the batch times a run file
//! measured ([`curve`], [`planner`], [`plan`]): for a rate, the best
//! batching and its percentiles; for a latency objective, the highest rate
//! that meets it. Nothing here prints to standard output: the commands in
//! `crate::cmd` print what these return.

pub mod arrivals;
pub mod batcher;
pub mod curve;
mod gpu;
pub mod latency;
pub mod live;
pub mod mix;
pub mod options;
pub mod plan;
pub mod planner;
pub mod request;
pub mod saved;
pub mod serve;
mod words;

pub use gpu::is_gpu;
pub use words::{prediction_caveats, PREDICTION_FACTOR};
