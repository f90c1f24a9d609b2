//! pqcprof: how fast post-quantum cryptography runs when batched on NVIDIA
//! GPUs, side by side with CPU baselines, checked for correctness first.
//!
//! The modules follow the pipeline: the [`catalog`] of algorithms,
//! [`backend`]s that execute batches, the [`runner`] that repeats and checks
//! them while a [`monitor`] samples the device, [`stats`], the [`results`]
//! schema, the [`session`] that writes them, and the [`export`]ers.
#![warn(missing_docs)]

pub mod aggregate;
pub mod app;
pub mod backend;
pub mod batching;
pub mod catalog;
pub mod cli;
pub mod cluster;
pub mod exit;
pub mod export;
pub mod fresh;
pub mod gpu;
pub mod monitor;
pub mod multi_device;
pub mod native;
pub mod output;
pub mod progress;
pub mod report;
pub mod results;
pub mod runner;
pub mod scaling;
pub mod session;
pub mod signals;
pub mod stats;
pub mod sweep;
pub mod system;
