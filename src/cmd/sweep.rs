//! `pqcprof sweep`: its arguments, their checks, and the sweep run with
//! the files it wrote named on standard output.

use crate::core::catalog::Algorithm;
use crate::core::exit;
use crate::sweep::filter::Filter;
use crate::sweep::options::{list, select, SweepOptions, MIN_WINDOW_SECONDS};
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
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub warmup: Option<f64>,
    /// Measurement window per operation, seconds [default: 10; 0.25 with --quick]
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// A short sweep: 0.05 s warm-up and 0.25 s window (overridden by --warmup/--seconds).
    #[arg(long)]
    pub quick: bool,
    /// Also RSA-8192 and RSA-16384 and the taller XMSS/LMS trees (key
    /// generation takes seconds to minutes).
    #[arg(long)]
    pub slow: bool,
    /// Threads, each with its own keys, for throughput: a number or `all`.
    #[arg(
        long,
        value_name = "N|all",
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub threads: String,
    /// Message signed and verified, bytes of 0xAB (50, as liboqs's speed_sig).
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = 50,
        allow_negative_numbers = true
    )]
    pub message_size: usize,
    /// Measure the symmetric primitives even with --filter (they run by default without one, or with exclusions only).
    #[arg(long, conflicts_with = "no_symmetric")]
    pub symmetric: bool,
    /// Skip the symmetric primitives.
    #[arg(long)]
    pub no_symmetric: bool,
    /// Known-answer vectors (NIST ACVP, Wycheproof) of the ML-KEM and
    /// ML-DSA parameter sets swept, run first on each library's code and
    /// kept in the run file: sample or full (both every case on a CPU
    /// library) or none
    #[arg(
        long,
        value_name = "EXTENT",
        value_enum,
        default_value = "sample",
        env = "PQCPROF_VECTORS"
    )]
    pub vectors: crate::vectors::record::Extent,
    /// Folder for the run file and the CSVs.
    #[arg(long, value_name = "DIR", default_value = "outputs")]
    pub out: PathBuf,
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

/// `pqcprof sweep`: the entries chosen, measured one by one (the files
/// written after each), then the symmetric primitives; the files named.
pub fn sweep(args: &SweepArgs) -> Result<i32> {
    let opts = args.validate()?;
    let entries = select(&args.filter, args.slow)?;
    if args.list {
        print!("{}", list(&entries));
        return Ok(exit::OK);
    }
    let vectors = sweep_vectors(&entries, args.vectors);
    let done = crate::sweep::run_sweep(&opts, &entries, &args.out, vectors)?;
    println!("Run file: {}", done.run_path.display());
    for c in &done.csvs {
        println!("CSV: {}", c.display());
    }
    log::info!(target: "sweep", "took {:.1} s", done.wall_seconds);
    if done.interrupted {
        log::warn!(
            "interrupted; finished algorithms are in {}",
            done.run_path.display()
        );
    }
    Ok(done.code)
}

/// The vectors of the ML-KEM and ML-DSA parameter sets swept, on the code
/// of each library that measures them (every case).
fn sweep_vectors(
    entries: &[Entry],
    extent: crate::vectors::record::Extent,
) -> Vec<crate::schema::vectors::BackendVectors> {
    let mut by_library: std::collections::BTreeMap<&str, Vec<Algorithm>> = Default::default();
    for e in entries.iter().filter(|e| e.unavailable.is_none()) {
        if let Ok(alg) = e.name.parse::<Algorithm>() {
            let algs = by_library.entry(e.provider.backend()).or_default();
            if !algs.contains(&alg) {
                algs.push(alg);
            }
        }
    }
    by_library
        .iter()
        .flat_map(|(b, algs)| crate::vectors::record::for_backend(b, algs, &[], 0, extent))
        .collect()
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
