//! What `pqcprof sweep` and `pqcprof sizes` run with: the validated
//! options (window, threads, message, symmetric primitives), and the
//! catalogue entries a filter selects.

use crate::core::catalog::Kind;
use crate::sweep::filter::Filter;
use crate::sweep::registry::Entry;
use crate::sweep::timing::Window;
use anyhow::{bail, Result};

/// How `sizes` names algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SizesFormat {
    /// pqcprof's names, as in run files.
    Pqcprof,
    /// pqc-sig-bench-c's names, as in the sweep's CSVs.
    SigBench,
}

/// The shortest measurement window `sweep` accepts, seconds.
pub const MIN_WINDOW_SECONDS: f64 = 0.01;

/// Validated sweep settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// Warm-up and window.
    pub window: Window,
    /// Threads per operation.
    pub threads: usize,
    /// Message bytes.
    pub message: Vec<u8>,
    /// Whether to measure the symmetric primitives.
    pub symmetric: bool,
}

/// The algorithms a filter selects, without `--slow` ones unless asked.
pub fn select(filter_args: &[String], slow: bool) -> Result<Vec<Entry>> {
    let filter = Filter::parse(filter_args)?;
    let chosen = filter.select(&crate::sweep::registry::all())?;
    let n = chosen.len();
    let kept: Vec<Entry> = chosen.into_iter().filter(|e| slow || !e.slow).collect();
    if kept.is_empty() && n > 0 {
        bail!(
            "the algorithms matched need --slow (RSA-8192, RSA-16384, the taller XMSS/LMS trees)"
        );
    }
    Ok(kept)
}

/// The entries as a table, one line each with its status, and a count.
pub fn list(entries: &[Entry]) -> String {
    let mut s = format!(
        "{:<34} {:<20} {:<9} {:<9} {:>5}  {}\n",
        "algorithm", "family", "kind", "provider", "level", "status"
    );
    for e in entries {
        s += &format!(
            "{:<34} {:<20} {:<9} {:<9} {:>5}  {}\n",
            e.name,
            e.family,
            match e.kind {
                Kind::Kem => "kem",
                Kind::Signature => "signature",
            },
            e.provider.name(),
            e.nist_level
                .map(|l| l.to_string())
                .unwrap_or_else(|| "-".into()),
            e.unavailable
                .as_ref()
                .map(|r| format!("skipped: {r}"))
                .unwrap_or_else(|| "runs".into())
        );
    }
    let runs = entries.iter().filter(|e| e.unavailable.is_none()).count();
    s += &format!(
        "{} algorithms, {runs} to run, {} skipped\n",
        entries.len(),
        entries.len() - runs
    );
    s
}
