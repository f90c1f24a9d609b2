//! Results published by other tools and imported into a report beside
//! pqcprof's own: pqc-sig-bench-c's CSVs and cuPQC_benchmark's
//! `mlkem_results.json` / `mldsa_results.json` and latency files.
//!
//! They are kept apart from run files on purpose: an imported row is never
//! a [`crate::schema::record::Record`], so nothing that speaks of this
//! machine's speed can use it. `report` reads them
//! (`crate::report::imports`) and shows them only in its "Beside published
//! results" section, each labelled with its file and machine.

use crate::core::catalog::Operation;
use std::path::PathBuf;

/// The layout an imported file was recognised by (from its content, not
/// its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    /// pqc-sig-bench-c's CSV: `# key: value` lines, the column header,
    /// one row per algorithm and operation (one thread, a timed window).
    SigBenchCsv,
    /// cuPQC_benchmark's throughput JSON (`throughput.mean`, ops/s).
    CupqcThroughput,
    /// cuPQC_benchmark's latency JSON (`latency_us.mean`, microseconds).
    CupqcLatency,
}

impl ImportFormat {
    /// How the report names the layout.
    pub fn describe(self) -> &'static str {
        match self {
            ImportFormat::SigBenchCsv => "pqc-sig-bench-c CSV",
            ImportFormat::CupqcThroughput => "cuPQC_benchmark throughput JSON",
            ImportFormat::CupqcLatency => "cuPQC_benchmark latency JSON",
        }
    }
}

/// What an imported figure is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ImportedFigure {
    /// Operations per second.
    OpsPerSec(f64),
    /// Microseconds per single operation.
    LatencyUs(f64),
}

/// One imported figure.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedRow {
    /// The algorithm under pqcprof's name (`ECDSA-P256`), so it joins
    /// with pqcprof's records.
    pub algorithm: String,
    /// The algorithm as the file writes it (`P-256`).
    pub name_in_file: String,
    /// The operation.
    pub operation: Operation,
    /// The figure.
    pub figure: ImportedFigure,
}

/// One imported file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedFile {
    /// Short label used in the report: `I1`, `I2`, ... in command-line order.
    pub label: String,
    /// The path as given.
    pub path: PathBuf,
    /// The file name without folders.
    pub file_name: String,
    /// Its layout.
    pub format: ImportFormat,
    /// The machine that measured it, as the file's metadata or its name
    /// says (`AMD Ryzen 9 7900X3D 12-Core Processor`, `NVIDIA GeForce RTX 4090`).
    pub machine: String,
    /// Where [`ImportedFile::machine`] came from: `its metadata`, `its file name` or both.
    pub machine_from: &'static str,
    /// True when the figures were measured on a GPU.
    pub gpu: bool,
    /// The figures, in file order.
    pub rows: Vec<ImportedRow>,
}
