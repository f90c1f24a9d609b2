//! What `pqcprof offload` serves, checked: the request (one operation or a
//! mix), the rates, the batching, and the settings the serving runs with.

use super::arrivals::Arrivals;
use super::batcher::Policy;
use super::mix::Mix;
use super::options::LoadOptions;
use crate::core::catalog::{Algorithm, Operation};
use std::path::PathBuf;

/// The rates to measure.
#[derive(Debug, PartialEq)]
pub enum Rates {
    /// One rate, or a trace's own.
    One(Arrivals),
    /// A sweep from `low` (None: from the predicted capacity) up to `high`.
    Sweep {
        /// The first rate; `None`: a sixteenth of the predicted capacity.
        low: Option<f64>,
        /// The last rate; `None`: twice the predicted capacity.
        high: Option<f64>,
    },
}

/// What one request is: one operation, or a mix of several.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Request {
    /// One operation of one algorithm.
    One(Algorithm, Operation),
    /// A mix of several operations per request.
    Mix(Mix),
}

impl Request {
    /// The run file's `algorithm`.
    pub fn algorithm(self) -> String {
        match self {
            Request::One(alg, _) => alg.name().into(),
            Request::Mix(m) => m.describe().into(),
        }
    }
    /// The run file's `operation`.
    pub fn operation(self) -> String {
        match self {
            Request::One(_, op) => op.cli_name().into(),
            Request::Mix(m) => m.operation_names().into(),
        }
    }
    /// The operations a request runs on the backend.
    pub fn operations(self) -> Vec<(Algorithm, Operation)> {
        match self {
            Request::One(alg, op) => vec![(alg, op)],
            Request::Mix(m) => m.operations().to_vec(),
        }
    }
    /// The mix's name, for a mix.
    pub fn mix(self) -> Option<String> {
        match self {
            Request::One(..) => None,
            Request::Mix(m) => Some(m.name().into()),
        }
    }
}

/// The batching asked for: the largest batch a worker prepares, the fixed
/// policy (none with auto) and the queue limit.
#[derive(Debug, PartialEq)]
pub struct Batching {
    /// The largest batch a worker prepares.
    pub top: usize,
    /// The fixed batching (`None`: auto, per rate).
    pub fixed: Option<Policy>,
    /// Requests that may wait at most (`None`: no limit).
    pub queue_limit: Option<usize>,
}

/// Everything `offload` serves with, its arguments checked.
#[derive(Debug)]
pub struct Settings {
    /// The backend serving the batches.
    pub backend: String,
    /// The GPU that serves (GPU backends only; `None`: GPU 0).
    pub device: Option<usize>,
    /// What one request is.
    pub request: Request,
    /// The rates to measure.
    pub rates: Rates,
    /// The batching asked for.
    pub batching: Batching,
    /// Workers, each serving one batch at a time.
    pub threads: u32,
    /// Seconds of arrivals per point.
    pub window: f64,
    /// Arrivals, batching and objective.
    pub load: LoadOptions,
    /// The arrival times replayed, if a trace was given (for the run file).
    pub trace: Option<PathBuf>,
    /// Bytes signed and verified per request.
    pub message_size: usize,
    /// Seconds the whole command may take.
    pub deadline: Option<f64>,
    /// Folder for results.
    pub out: PathBuf,
}
