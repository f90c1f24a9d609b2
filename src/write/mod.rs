//! Writers of everything pqcprof leaves on disk: atomic, output-path-safe
//! files ([`output`]), the cuPQC_benchmark-shaped JSON views of a run file
//! ([`cupqc_json`]) and pqc-sig-bench-c's CSV ([`csv`]).

pub mod csv;
pub mod cupqc_json;
pub mod output;
