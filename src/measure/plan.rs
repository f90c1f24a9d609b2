//! What a session will measure, settled before anything runs: the backends
//! (`Slot`), how each chooses its batches (`Batches`), the algorithms,
//! operations and measurement settings (`Plan`), and the order of the
//! records (`Plan::steps`), which also gives the count every record's share
//! of a deadline is taken over.
//!
//! A GPU's default batch is calibrated when its record begins, not here:
//! the calibration is a timed launch that belongs to the record's own time
//! budget (`Timing::record_start`).

use crate::backend::Backend;
use crate::core::catalog::{Algorithm, Operation};
use crate::measure::runner::MeasureConfig;
use crate::monitor::Sampler;
use crate::schema::record::BatchBasis;

/// A backend with the sampler that watches it, or the reason it cannot run.
pub enum Slot {
    /// Ready to measure.
    Ready {
        /// The backend.
        backend: Box<dyn Backend>,
        /// Its sampler.
        sampler: Box<dyn Sampler>,
        /// Thread counts to measure (CPU); `[1]` for a GPU.
        threads: Vec<usize>,
        /// Batches to measure on this backend.
        batches: Batches,
    },
    /// One GPU backend on several devices of this node at once.
    MultiDevice(crate::measure::multi_device::MultiDevice),
    /// Asked for but not ready: every record is `skipped` with this reason.
    NotReady {
        /// Backend name.
        name: String,
        /// Why.
        reason: String,
    },
}

/// Which batches a backend measures for each (algorithm, operation).
#[derive(Debug, Clone, PartialEq)]
pub enum Batches {
    /// These batches.
    List(Vec<usize>),
    /// The backend's own default (`Backend::default_batch`; a GPU rounds
    /// up to whole waves), starting from this one.
    Default(usize),
    /// Powers of 4 from 1 up to `top`, or without one up to what the
    /// backend says fits (`Backend::max_batch`), else `fallback_top`.
    Sweep {
        /// The largest batch named by the user.
        top: Option<usize>,
        /// The top when neither the user nor the backend gives one.
        fallback_top: usize,
    },
}

impl Batches {
    /// The batches of `op` of `alg` on `backend`, in increasing order for
    /// a sweep; `cfg` carries the message size and context.
    pub fn resolve(
        &self,
        backend: &mut dyn Backend,
        alg: Algorithm,
        op: Operation,
        cfg: &crate::backend::BatchConfig,
    ) -> Vec<usize> {
        match self {
            Batches::List(v) => v.clone(),
            Batches::Default(b) => {
                let cfg = crate::backend::BatchConfig {
                    batch: *b,
                    ..cfg.clone()
                };
                vec![backend.default_batch(alg, op, &cfg)]
            }
            Batches::Sweep { top, fallback_top } => {
                let top = top
                    .or_else(|| {
                        backend
                            .max_batch(alg, op, cfg)
                            .map(|m| m.min(crate::core::batching::MAX_BATCH))
                    })
                    .unwrap_or(*fallback_top);
                crate::core::batching::sweep_points(top)
            }
        }
    }

    /// The batches as `resolve` gives them, each with how it was chosen: a
    /// default batch calibrated to `target` where the backend can (a GPU),
    /// or an error naming why calibration failed.
    pub fn resolve_with_basis(
        &self,
        backend: &mut dyn Backend,
        alg: Algorithm,
        op: Operation,
        cfg: &crate::backend::BatchConfig,
        target: std::time::Duration,
    ) -> Vec<Result<(usize, BatchBasis), String>> {
        match self {
            Batches::List(_) => self
                .resolve(backend, alg, op, cfg)
                .into_iter()
                .map(|b| Ok((b, BatchBasis::requested("--batch"))))
                .collect(),
            Batches::Sweep { .. } => self
                .resolve(backend, alg, op, cfg)
                .into_iter()
                .map(|b| Ok((b, BatchBasis::requested("--batch-sweep"))))
                .collect(),
            Batches::Default(b) => {
                let cfg = crate::backend::BatchConfig {
                    batch: *b,
                    ..cfg.clone()
                };
                match backend.calibrated_batch(alg, op, &cfg, target) {
                    Some(Ok(v)) => vec![Ok(v)],
                    Some(Err(e)) => vec![Err(format!("calibrating the batch failed: {e:#}"))],
                    None => {
                        let b = backend.default_batch(alg, op, &cfg);
                        vec![Ok((
                            b,
                            BatchBasis {
                                method: "default".into(),
                                detail: format!("the backend's default batch ({b})"),
                                ..BatchBasis::requested("")
                            },
                        ))]
                    }
                }
            }
        }
    }

    /// In a few words, for the run file's settings; `calibrated`: the
    /// backend chooses its default batch by time (a GPU of our kernels).
    pub fn describe(&self, calibrated: bool) -> String {
        match self {
            Batches::List(v) => v
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            Batches::Default(_) if calibrated => "default: calibrated per record, the largest whole-wave batch whose launch fits the target time".to_string(),
            Batches::Default(b) => format!("default ({b})"),
            Batches::Sweep {
                top: Some(t),
                ..
            } => format!("sweep: powers of 4 from 1 to {t}"),
            Batches::Sweep {
                top: None,
                fallback_top,
            } => format!(
                "sweep: powers of 4 from 1 to what fits in the device's memory (else {fallback_top})"
            ),
        }
    }
}

/// What to measure.
pub struct Plan {
    /// Backends in order.
    pub slots: Vec<Slot>,
    /// Algorithms in order.
    pub algorithms: Vec<Algorithm>,
    /// Operations to keep (empty: all of each algorithm).
    pub operations: Vec<Operation>,
    /// Measurement settings (the thread count is set per slot).
    pub measure: MeasureConfig,
    /// In process (the default), or cuPQC_benchmark's fresh processes.
    pub method: Method,
}

/// How each record's timed runs are made.
#[derive(Debug, Clone, Default)]
pub enum Method {
    /// Warm-up, gate and every timed run in this process.
    #[default]
    InProcess,
    /// `--fresh-process`: gate here, each timed run in a new process.
    FreshParent(crate::measure::fresh_process::FreshChild),
    /// `--fresh-child`: one cold timed run for a fresh-process parent.
    FreshChild,
}

/// One step of a session, in the order `Plan::steps` gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Index of the backend in `Plan::slots`.
    pub slot: usize,
    /// The record a ready backend measures; `None`: the slot is handled
    /// whole (every GPU of a node at once, or a backend that is not ready).
    pub record: Option<RecordStep>,
}

/// One (thread count, algorithm, operation) of a ready backend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordStep {
    /// Worker threads (CPU); 1 for a GPU.
    pub threads: usize,
    /// The algorithm.
    pub alg: Algorithm,
    /// The operation.
    pub op: Operation,
    /// The last operation of `alg` at this thread count: the run file is
    /// written after it, whatever happened to the others.
    pub ends_algorithm: bool,
}

impl Plan {
    /// Every step of the session in order: for each backend, each thread
    /// count, each algorithm, each wanted operation.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps = vec![];
        for (slot, s) in self.slots.iter().enumerate() {
            let Slot::Ready { threads, .. } = s else {
                steps.push(Step { slot, record: None });
                continue;
            };
            for &threads in threads {
                for &alg in &self.algorithms {
                    let ops = wanted_ops(alg, &self.operations);
                    let last = ops.len().saturating_sub(1);
                    for (i, &op) in ops.iter().enumerate() {
                        let record = RecordStep {
                            threads,
                            alg,
                            op,
                            ends_algorithm: i == last,
                        };
                        steps.push(Step {
                            slot,
                            record: Some(record),
                        });
                    }
                }
            }
        }
        steps
    }
}

/// The operations of `alg` that `filter` keeps (empty: all of them).
pub(crate) fn wanted_ops(alg: Algorithm, filter: &[Operation]) -> Vec<Operation> {
    alg.operations()
        .into_iter()
        .filter(|op| filter.is_empty() || filter.contains(op))
        .collect()
}
