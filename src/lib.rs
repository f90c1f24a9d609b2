//! pqcprof: how fast post-quantum cryptography runs when batched on NVIDIA
//! GPUs, side by side with CPU baselines, checked for correctness first.
//!
//! The modules follow the pipeline: the [`catalog`] of algorithms,
//! [`backend`]s that execute batches, the [`runner`] that repeats and checks
//! them while a [`monitor`] samples the device, [`stats`], the [`results`]
//! schema, the [`session`] that writes them, and the [`export`]ers.
#![warn(missing_docs)]

pub mod analyse;
pub mod backend;
pub mod cluster;
pub mod cmd;
pub mod core;
pub mod measure;
pub mod monitor;
pub mod probe;
pub mod report;
pub mod schema;
pub mod sweep;
pub mod write;
