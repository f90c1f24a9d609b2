//! The bottom layer: what every other layer builds on and that imports no
//! other module of the crate: the catalogue of algorithms, statistics, batch
//! sizes, waves, exit codes and how figures are written.

pub mod batching;
pub mod bounded;
pub mod catalog;
pub mod dynlib;
pub mod exit;
pub mod listing;
pub mod stats;
pub mod units;
pub mod waves;
