//! `pqcprof sweep`: its arguments, their checks, and the sweep run with
//! the files it wrote named on standard output.

use crate::cmd::bench_args::heading;
use crate::cmd::stdout;
use crate::core::catalog::Algorithm;
use crate::core::exit;
use crate::core::exit::Usage;
use crate::sweep::filter::Filter;
use crate::sweep::options::{list, select, SweepOptions, MIN_WINDOW_SECONDS};
use crate::sweep::registry::Entry;
use crate::sweep::timing::Window;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Options of `pqcprof sweep`.
#[derive(Debug, Args, Clone)]
pub struct SweepArgs {
    /// Algorithms matching: names, family:F, provider:P, !TERM
    ///
    /// Comma-separated or repeated: name patterns (`ML-DSA-65`, `falcon*`,
    /// case and dashes ignored), `family:NAME`,
    /// `provider:liboqs|openssl|composite`, `level:1..5`, `kind:kem|sig`.
    /// Names and families are alternatives, and so are the terms of each
    /// other key; the keys must all hold (e.g. `Falcon-512, family:ML-DSA
    /// --filter provider:liboqs`). A leading `!` excludes what a term
    /// matches, after the others chose (`'!family:XMSS,!family:LMS'` leaves
    /// out the stateful schemes).
    #[arg(long, value_name = "TERMS", help_heading = heading::MEASURE, value_parser = filter_terms)]
    pub filter: Vec<String>,
    /// Print what would run (and what is skipped, and why), then exit
    #[arg(long, help_heading = heading::MEASURE)]
    pub list: bool,
    /// Also RSA-8192, RSA-16384 and the taller XMSS/LMS trees (slow)
    ///
    /// Their key generation takes seconds to minutes.
    #[arg(long, help_heading = heading::MEASURE)]
    pub slow: bool,
    /// Bytes signed and verified [default: 1024]
    ///
    /// Bytes of 0xAB, from 1 to 64 MiB.
    #[arg(
        long,
        value_name = "BYTES",
        default_value = "1024",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = heading::MEASURE,
        value_parser = super::bench_args::message_bytes
    )]
    pub message_size: usize,
    /// Measure the symmetric primitives even with --filter
    ///
    /// They run by default without --filter, or with exclusions only.
    #[arg(long, conflicts_with = "no_symmetric", help_heading = heading::MEASURE)]
    pub symmetric: bool,
    /// Skip the symmetric primitives
    #[arg(long, help_heading = heading::MEASURE)]
    pub no_symmetric: bool,
    /// Known-answer vectors run first [default: sample]
    ///
    /// NIST ACVP and Wycheproof vectors of the ML-KEM and ML-DSA parameter
    /// sets swept, run first on each library's code and kept in the run
    /// file: sample or full (both every case on a CPU library) or none.
    /// Also read from the environment variable PQCPROF_VECTORS.
    #[arg(
        long,
        value_name = "sample|full|none",
        value_enum,
        default_value = "sample",
        hide_default_value = true,
        hide_possible_values = true,
        hide_env = true,
        env = "PQCPROF_VECTORS",
        help_heading = heading::MEASURE
    )]
    pub vectors: crate::vectors::record::Extent,
    /// Measurement window per operation, seconds [default: 10; 0.25 with --quick]
    ///
    /// From 0.01 to 3600.
    #[arg(
        long,
        value_name = "SECS",
        allow_negative_numbers = true,
        help_heading = heading::HOW_LONG,
        value_parser = window_seconds
    )]
    pub seconds: Option<f64>,
    /// Warm-up before each window, seconds [default: 1; 0.05 with --quick]
    ///
    /// From 0 to 3600. (`bench`'s --warmup counts runs; the sweep's
    /// warm-up is a time.)
    #[arg(
        long,
        value_name = "SECS",
        allow_negative_numbers = true,
        help_heading = heading::HOW_LONG,
        value_parser = warmup_seconds
    )]
    pub warmup_seconds: Option<f64>,
    /// A short sweep: 0.05 s warm-up and 0.25 s windows
    ///
    /// --warmup-seconds and --seconds, when given, take precedence.
    #[arg(long, help_heading = heading::HOW_LONG)]
    pub quick: bool,
    /// Threads, each with its own keys: a number or all [default: 1]
    ///
    /// One number from 1 to 4096, or `all` (every core).
    #[arg(
        short = 'j',
        long,
        value_name = "N|all",
        default_value = "1",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = heading::CPU,
        value_parser = one_thread_count
    )]
    pub threads: String,
    /// Folder for the run file and the CSVs [default: outputs]
    #[arg(
        short = 'o',
        long,
        value_name = "DIR",
        default_value = "outputs",
        hide_default_value = true,
        help_heading = heading::RESULTS
    )]
    pub out: PathBuf,
}

/// `--filter`: terms that each match some algorithm.
pub fn filter_terms(s: &str) -> Result<String, String> {
    select(&[s.to_string()], true).map_err(|e| format!("{e:#}"))?;
    Ok(s.to_string())
}

/// `--seconds`: a window from [`MIN_WINDOW_SECONDS`] to an hour (below 10
/// ms a window holds a handful of iterations, too few to mean anything).
fn window_seconds(s: &str) -> Result<f64, String> {
    crate::core::bounded::number(s, MIN_WINDOW_SECONDS, 3600.0, "seconds")
}

/// `--warmup-seconds`: from 0 to an hour.
fn warmup_seconds(s: &str) -> Result<f64, String> {
    crate::core::bounded::number(s, 0.0, 3600.0, "seconds")
}

/// `--threads`: one count from 1 to 4096, or `all`.
fn one_thread_count(s: &str) -> Result<String, String> {
    let cores = crate::probe::system::available_cores();
    let threads =
        crate::backend::parallel::parse_threads(s, cores).map_err(|e| format!("{e:#}"))?;
    if threads.len() != 1 || s.contains(',') {
        return Err("give one number or `all`".into());
    }
    Ok(s.to_string())
}

impl SweepArgs {
    /// Checks every value, naming a bad one.
    pub fn validate(&self) -> Result<SweepOptions> {
        let warmup = self
            .warmup_seconds
            .unwrap_or(if self.quick { 0.05 } else { 1.0 });
        let seconds = self.seconds.unwrap_or(if self.quick { 0.25 } else { 10.0 });
        let cores = crate::probe::system::available_cores();
        let threads = crate::backend::parallel::parse_threads(&self.threads, cores)?;
        if self.message_size == 0 {
            // OpenSSL's and liboqs's stateful and RSA signers want a message.
            return Err(Usage(
                "invalid value '0' for '--message-size <BYTES>': the sweep signs at least 1 byte"
                    .into(),
            )
            .into());
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
    // Each term matched something (checked as parsed); together, or
    // without --slow, they may leave nothing.
    let entries = select(&args.filter, args.slow).map_err(|e| Usage(format!("{e:#}")))?;
    if args.list {
        stdout::print(list(&entries))?;
        return Ok(exit::OK);
    }
    let vectors = sweep_vectors(&entries, args.vectors);
    let done = crate::sweep::run_sweep(&opts, &entries, &args.out, vectors)?;
    stdout::println(format!("Run file: {}", done.run_path.display()))?;
    for c in &done.csvs {
        stdout::println(format!("CSV: {}", c.display()))?;
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
        let refused = |extra: &[&str]| {
            let mut v = vec!["sweep"];
            v.extend_from_slice(extra);
            use clap::Parser;
            Sweep::try_parse_from(v).err().unwrap().to_string()
        };
        let e = refused(&["--seconds", "0"]);
        assert!(e.contains("'0' for '--seconds"), "{e}");
        let e = refused(&["--warmup-seconds", "-1"]);
        assert!(e.contains("'-1' for '--warmup-seconds"), "{e}");
        let e = refused(&["--threads", "1,2"]);
        assert!(e.contains("one number"), "{e}");
        let e = a(&["--message-size", "0"]).validate().unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{e:#}");
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
