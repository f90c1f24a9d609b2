//! The run file: records and their devices, aggregates, cluster and machine
//! metadata, and reading a run file back. Everything a later stage needs
//! travels in it, so `report`, `compare` and `merge` work on files from
//! other machines without re-running anything. Results other tools
//! published, imported beside run files, have their own types
//! ([`imported`]).

pub mod aggregate;
pub mod agreement;
pub mod cluster;
pub mod device;
pub mod diagnose;
pub mod imported;
pub mod load;
pub mod metadata;
pub mod offload;
pub mod plugin;
pub mod read;
pub mod record;
pub mod run_file;
pub mod shape;
pub mod vectors;
