//! What `pqcprof sweep` and `pqcprof sizes` are asked: their arguments, the
//! validated options (window, threads, filters), and the catalogue entries
//! a filter selects.

use crate::core::catalog::Kind;
use crate::sweep::filter::Filter;
use crate::sweep::registry::Entry;
use crate::sweep::timing::Window;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

/// Options of `pqcprof sweep`.
#[derive(Debug, Args, Clone)]
pub struct SweepArgs {
    /// Only algorithms matching these terms, comma-separated or repeated:
    /// name patterns (`ML-DSA-65`, `falcon*`, case and dashes ignored),
    /// `family:NAME`, `provider:liboqs|openssl|composite`, `level:1..5`,
    /// `kind:kem|sig`. Names and families are alternatives, and so are the
    /// terms of each other key; the keys must all hold (e.g. `Falcon-512,
    /// family:ML-DSA --filter provider:liboqs`). A leading `!` excludes
    /// what a term matches, after the others chose (`'!family:XMSS,!family:LMS'`
    /// leaves out the stateful schemes).
    #[arg(long, value_name = "TERMS")]
    pub filter: Vec<String>,
    /// Print what would run (and what is skipped, with the reason), then exit.
    #[arg(long)]
    pub list: bool,
    /// Warm-up before each operation's window, seconds [default: 1; 0.05 with --quick]
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub warmup: Option<f64>,
    /// Measurement window per operation, seconds [default: 10; 0.25 with --quick]
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// A short sweep: 0.05 s warm-up and 0.25 s window (overridden by --warmup/--seconds).
    #[arg(long)]
    pub quick: bool,
    /// Also RSA-8192 and RSA-16384 and the taller XMSS/LMS trees (key
    /// generation takes seconds to minutes).
    #[arg(long)]
    pub slow: bool,
    /// Threads, each with its own keys, for throughput: a number or `all`.
    #[arg(long, default_value = "1", allow_negative_numbers = true)]
    pub threads: String,
    /// Message signed and verified, bytes of 0xAB (50, as liboqs's speed_sig).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub message_size: usize,
    /// Measure the symmetric primitives even with --filter (they run by default without one, or with exclusions only).
    #[arg(long, conflicts_with = "no_symmetric")]
    pub symmetric: bool,
    /// Skip the symmetric primitives.
    #[arg(long)]
    pub no_symmetric: bool,
    /// Folder for the run file and the CSVs.
    #[arg(long, default_value = "outputs")]
    pub out: PathBuf,
}

/// Options of `pqcprof sizes`.
#[derive(Debug, Args, Clone)]
pub struct SizesArgs {
    /// Only algorithms matching these terms (as `sweep --filter`).
    #[arg(long, value_name = "TERMS")]
    pub filter: Vec<String>,
    /// Include RSA-8192 and RSA-16384 and the taller XMSS/LMS trees.
    #[arg(long)]
    pub slow: bool,
    /// Write the CSV here instead of standard output (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Algorithm names: pqcprof's, or pqc-sig-bench-c's spelling
    /// (`RSA-PKCS1v15-2048`, `P-256`), as in the sweep's CSVs.
    #[arg(long, value_enum, default_value_t = SizesFormat::Pqcprof)]
    pub format: SizesFormat,
}

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

impl SweepArgs {
    /// Checks every value, naming a bad one.
    pub fn validate(&self) -> Result<SweepOptions> {
        let warmup = self.warmup.unwrap_or(if self.quick { 0.05 } else { 1.0 });
        let seconds = self.seconds.unwrap_or(if self.quick { 0.25 } else { 10.0 });
        if !(warmup.is_finite() && (0.0..=3600.0).contains(&warmup)) {
            bail!("invalid --warmup {warmup}: must be from 0 to 3600 seconds");
        }
        // Below 10 ms a window holds a handful of iterations, too few to mean anything.
        if !(seconds.is_finite() && (MIN_WINDOW_SECONDS..=3600.0).contains(&seconds)) {
            bail!("invalid --seconds {seconds}: the window must be from {MIN_WINDOW_SECONDS} to 3600 seconds");
        }
        let cores = crate::probe::system::available_cores();
        let threads = crate::backend::parallel::parse_threads(&self.threads, cores)?;
        if threads.len() != 1 {
            bail!(
                "invalid --threads '{}': give one number or `all`",
                self.threads
            );
        }
        if self.message_size == 0 || self.message_size > 64 * 1024 * 1024 {
            bail!(
                "invalid --message-size {}: must be from 1 byte to 64 MiB",
                self.message_size
            );
        }
        Ok(SweepOptions {
            window: Window {
                warmup,
                window: seconds,
            },
            threads: threads[0],
            message: vec![0xAB; self.message_size],
            // Exclusions alone still sweep everything else, symmetric included.
            symmetric: self.symmetric
                || (!Filter::parse(&self.filter)?.has_inclusive() && !self.no_symmetric),
        })
    }
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

pub(crate) fn list(entries: &[Entry]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_validated() {
        #[derive(clap::Parser)]
        struct Sweep {
            #[command(flatten)]
            args: SweepArgs,
        }
        let a = |extra: &[&str]| {
            let mut v = vec!["sweep"];
            v.extend_from_slice(extra);
            use clap::Parser;
            Sweep::try_parse_from(v).unwrap().args
        };
        let e = a(&["--seconds", "0"]).validate().unwrap_err().to_string();
        assert!(e.contains("--seconds 0"), "{e}");
        let e = a(&["--warmup", "-1"]).validate().unwrap_err().to_string();
        assert!(e.contains("--warmup -1"), "{e}");
        let q = a(&["--quick"]).validate().unwrap();
        assert_eq!(
            q.window,
            Window {
                warmup: 0.05,
                window: 0.25
            }
        );
    }
}
