//! Writers of everything pqcprof leaves on disk: atomic, output-path-safe
//! files ([`output`]), the cuPQC_benchmark-shaped JSON views of a run file
//! ([`cupqc_json`]), pqc-sig-bench-c's CSV ([`csv`]) and an offload run's
//! points as CSV ([`offload_csv`]).

pub mod csv;
pub mod cupqc_json;
pub mod offload_csv;
pub mod output;
