//! pqcprof: how fast post-quantum cryptography runs when batched on NVIDIA
//! GPUs, side by side with CPU baselines, checked for correctness first.
//!
//! Each stage of the flow is a module folder, in layers from the bottom up:
//! [`core`] (catalogue, statistics, batch sizes, exit codes), [`monitor`]
//! (samplers), [`schema`] (the run file), [`write`] (files on disk),
//! [`probe`] (what the machine offers), [`backend`] (what executes batches),
//! [`analyse`] (totals, saturation, hybrids), [`measure`] (runner,
//! session, and the plan builder that opens the backends), [`offload`]
//! (arrivals, the dynamic batcher, latency, the planner), [`sweep`] (the
//! whole-catalogue CPU sweep), [`report`], [`cluster`] (Slurm ranks
//! merged) and [`cmd`] (the command line and one file per command). A
//! module imports only from its own layer and those below it (the order is
//! written once, in `tests/architecture.rs`, which checks it). The stages
//! return values; only [`cmd`] prints to standard output.
#![warn(missing_docs)]

pub mod analyse;
pub mod backend;
pub mod cluster;
pub mod cmd;
pub mod core;
pub mod measure;
pub mod monitor;
pub mod offload;
pub mod probe;
pub mod report;
pub mod schema;
pub mod sweep;
pub mod vectors;
pub mod write;
