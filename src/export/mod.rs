//! Writers of everything pqcprof leaves on disk in the seed tools'
//! shapes. Paths are written through [`crate::output`], which owns
//! atomic replacement and output-path safety.

pub mod cupqc;

pub use crate::output::{ensure_writable_dir, write_atomic, write_json};
