//! Command-line parsing only. `BenchArgs::validate` turns what was typed into
//! the `BenchOptions` the rest of the program sees, naming any bad value and
//! what is valid.

use crate::backend::parallel::available_cores;
use crate::catalog::{parse_algorithms, Algorithm, Operation};
use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Exit codes, documented in `--help` and the README.
pub mod exit {
    /// Everything asked for ran and passed its correctness gate.
    pub const OK: i32 = 0;
    /// An error: bad input, an unwritable folder, an I/O failure.
    pub const ERROR: i32 = 1;
    /// The command line could not be parsed (clap's own code).
    pub const USAGE: i32 = 2;
    /// The run finished but some record failed (its gate or a run), or
    /// `check --require-gpu` found no ready GPU backend.
    pub const SOME_FAILED: i32 = 3;
    /// Stopped by Ctrl-C; what finished is on disk.
    pub const INTERRUPTED: i32 = 130;
}

const AFTER_HELP: &str = "Exit codes: 0 success; 1 error (bad input, unwritable output, I/O); \
2 command-line usage error; 3 finished but a record failed its correctness gate \
(or `check --require-gpu` found no ready GPU backend); 130 interrupted by Ctrl-C \
(finished records stay on disk as valid JSON).";

/// pqcprof: batched post-quantum cryptography throughput on GPUs and CPUs.
#[derive(Debug, Parser)]
#[command(name = "pqcprof", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report the machine, CUDA driver, GPUs, NVML, NVRTC and cuPQC SDK, and
    /// whether each backend is ready.
    Check(CheckArgs),
    /// Measure every ready backend (the pipeline's main step).
    Bench(BenchArgs),
    /// Measure the CPU baselines only (liboqs).
    Cpu(BenchArgs),
    /// Measure the GPU backends only (native-gpu).
    Gpu(BenchArgs),
    /// Measure every algorithm liboqs and OpenSSL enable, plus composites
    /// (pqc-sig-bench-c-style windows and CSVs).
    Sweep(crate::sweep::SweepArgs),
    /// Print key, ciphertext, signature and secret sizes of every algorithm as CSV.
    Sizes(crate::sweep::SizesArgs),
    /// Write one self-contained HTML (or Markdown) report from run files.
    Report(crate::report::ReportArgs),
    /// Compare two run files: change in median throughput per record.
    Compare(crate::report::CompareArgs),
    /// Registers, stack and spills of every native kernel (ptxas's report
    /// through NVRTC) and the occupancy they allow; needs NVRTC, not a GPU.
    Kernels(KernelsArgs),
}

/// Options of `kernels`.
#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// GPU architectures, comma-separated, or `all`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "sm_90",
        value_parser = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "all"]
    )]
    pub arch: Vec<String>,
    /// Threads per block for the occupancy estimate [default: the native-gpu
    /// launch's]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads_per_block: Option<u32>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Options of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print the probe as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 unless a GPU backend is ready.
    #[arg(long)]
    pub require_gpu: bool,
}

/// Options shared by the measuring commands.
#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    /// Algorithms: names (ML-KEM-768, mldsa44, ...) or groups (all, mlkem, mldsa), comma-separated.
    #[arg(long = "alg", value_name = "NAMES")]
    pub algorithms: Vec<String>,
    /// Operations to measure (keygen, encaps, decaps, sign, verify); default all.
    #[arg(long = "op", value_name = "OPS")]
    pub operations: Vec<String>,
    /// Backends to run (liboqs-cpu or liboqs, native-gpu or native, cupqc); default every ready one.
    #[arg(long = "backend", value_name = "NAMES")]
    pub backends: Vec<String>,
    /// Operations per timed batch [default: 1000 on CPUs, 100000 on GPUs]
    #[arg(long)]
    pub batch: Option<usize>,
    /// CUDA device ordinal for GPU backends.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Timed runs per operation.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Untimed warm-up runs before the correctness gate.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// CPU thread counts, comma-separated: numbers or `all` (every core).
    #[arg(long, default_value = "1,all")]
    pub threads: String,
    /// Message size for signing and verifying, bytes of 0xAB.
    #[arg(long, default_value_t = 1024)]
    pub message_size: usize,
    /// ML-DSA context string, hex (empty by default).
    #[arg(long, default_value = "")]
    pub context: String,
    /// Sampler period, milliseconds [default: 10 for the host, 1 for NVML]
    #[arg(long)]
    pub sample_period_ms: Option<f64>,
    /// Per-operation latency: batch 1, `--runs` timed single operations.
    #[arg(long)]
    pub latency: bool,
    /// cuPQC_benchmark's method: each timed run in a new process with no
    /// warm-up (the correctness gate still runs first, in this process).
    #[arg(long, conflicts_with = "fresh_child")]
    pub fresh_process: bool,
    /// Internal, for --fresh-process: one cold timed run, outputs checked after.
    #[arg(long, hide = true)]
    pub fresh_child: bool,
    /// Folder for results.
    #[arg(long, default_value = "outputs")]
    pub out: PathBuf,
}

/// Largest batch accepted, whatever the memory.
pub const MAX_BATCH: usize = 50_000_000;
/// Largest number of runs accepted.
pub const MAX_RUNS: usize = 100_000;
/// Default CPU batch.
pub const DEFAULT_CPU_BATCH: usize = 1000;
/// Default GPU batch, as cuPQC_benchmark.
pub const DEFAULT_GPU_BATCH: usize = 100_000;

/// Validated settings of a measuring command.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    /// Algorithms, in report order.
    pub algorithms: Vec<Algorithm>,
    /// Operation filter (empty: all).
    pub operations: Vec<Operation>,
    /// Backends asked for by name (empty: every ready one).
    pub backends: Vec<String>,
    /// Batch given on the command line.
    pub batch: Option<usize>,
    /// Timed runs.
    pub runs: usize,
    /// Warm-up runs.
    pub warmup: usize,
    /// CPU thread counts.
    pub threads: Vec<usize>,
    /// Message bytes.
    pub message_size: usize,
    /// Context bytes.
    pub context: Vec<u8>,
    /// CUDA device ordinal.
    pub device: usize,
    /// Sampler period, ms, if given.
    pub sample_period_ms: Option<f64>,
    /// Latency mode.
    pub latency: bool,
    /// Output folder.
    pub out: PathBuf,
}

/// Parses `1,all,4` into thread counts.
pub fn parse_threads(s: &str, cores: usize) -> anyhow::Result<Vec<usize>> {
    let mut out = vec![];
    for part in s.split(',').map(str::trim) {
        let n = if part.eq_ignore_ascii_case("all") {
            cores
        } else {
            match part.parse::<usize>() {
                Ok(n) if (1..=4096).contains(&n) => n,
                _ => bail!("invalid --threads value '{part}': use a number from 1 to 4096 or `all` (this machine has {cores} cores)"),
            }
        };
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

fn parse_hex(s: &str) -> anyhow::Result<Vec<u8>> {
    let s = s.trim();
    if s.len() % 2 != 0 || !s.chars().all(|c| c.is_ascii_hexdigit()) {
        bail!("invalid --context '{s}': expected an even number of hex digits");
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).context("hex"))
        .collect()
}

impl BenchArgs {
    /// Checks every value and names what is wrong and what is valid.
    pub fn validate(&self) -> anyhow::Result<BenchOptions> {
        let algorithms = parse_algorithms(&self.algorithms).map_err(anyhow::Error::msg)?;
        let mut operations = vec![];
        for part in self
            .operations
            .iter()
            .flat_map(|o| o.split(','))
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            operations.push(part.parse::<Operation>().map_err(anyhow::Error::msg)?);
        }
        if !operations.is_empty()
            && !algorithms
                .iter()
                .any(|a| operations.iter().any(|o| a.has_operation(*o)))
        {
            bail!("none of the operations {operations:?} belongs to the algorithms chosen");
        }
        if let Some(b) = self.batch {
            if b == 0 || b > MAX_BATCH {
                bail!("invalid --batch {b}: must be from 1 to {MAX_BATCH}");
            }
        }
        if self.runs == 0 || self.runs > MAX_RUNS {
            bail!("invalid --runs {}: must be from 1 to {MAX_RUNS}", self.runs);
        }
        if self.warmup > 1000 {
            bail!("invalid --warmup {}: must be from 0 to 1000", self.warmup);
        }
        if self.message_size > 64 * 1024 * 1024 {
            bail!(
                "invalid --message-size {}: must be at most 64 MiB",
                self.message_size
            );
        }
        if let Some(p) = self.sample_period_ms {
            if !(0.1..=10_000.0).contains(&p) {
                bail!("invalid --sample-period-ms {p}: must be from 0.1 to 10000");
            }
        }
        let context = parse_hex(&self.context)?;
        if context.len() > 255 {
            bail!(
                "invalid --context: {} bytes, at most 255 allowed (FIPS 204)",
                context.len()
            );
        }
        let valid = crate::backend::BACKEND_NAMES;
        let mut backends = vec![];
        for b in self
            .backends
            .iter()
            .flat_map(|b| b.split(','))
            .map(str::trim)
            .filter(|b| !b.is_empty())
        {
            // Short names, as users (and the issues) write them.
            let b = match b {
                "native" => crate::backend::native_gpu::NAME,
                "liboqs" => crate::backend::liboqs::NAME,
                other => other,
            };
            if !valid.contains(&b) {
                bail!(
                    "unknown backend '{b}'; valid: {} (or native, liboqs)",
                    valid.join(", ")
                );
            }
            if !backends.iter().any(|x| x == b) {
                backends.push(b.to_string());
            }
        }
        Ok(BenchOptions {
            algorithms,
            operations,
            backends,
            batch: if self.latency { Some(1) } else { self.batch },
            runs: self.runs,
            warmup: self.warmup,
            threads: parse_threads(&self.threads, available_cores())?,
            message_size: self.message_size,
            context,
            device: self.device,
            sample_period_ms: self.sample_period_ms,
            latency: self.latency,
            out: self.out.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> BenchArgs {
        let mut v = vec!["pqcprof", "cpu"];
        v.extend_from_slice(extra);
        match Cli::try_parse_from(v).unwrap().command {
            Command::Cpu(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_are_valid() {
        let o = args(&[]).validate().unwrap();
        assert_eq!(o.algorithms.len(), 6);
        assert_eq!(o.runs, 20);
        assert_eq!(o.message_size, 1024);
        assert!(o.context.is_empty());
        assert_eq!(o.threads[0], 1);
    }

    #[test]
    fn bad_values_name_themselves() {
        let e = |a: &[&str]| format!("{:#}", args(a).validate().unwrap_err());
        assert!(e(&["--batch", "0"]).contains("--batch 0"));
        assert!(e(&["--batch", "999999999"]).contains("50000000"));
        assert!(e(&["--runs", "0"]).contains("--runs 0"));
        let unknown = e(&["--alg", "ML-KEM-999"]);
        assert!(
            unknown.contains("ML-KEM-999") && unknown.contains("ML-KEM-768"),
            "{unknown}"
        );
        assert!(e(&["--backend", "fpga"]).contains("liboqs-cpu"));
        assert!(e(&["--threads", "0"]).contains("'0'"));
        assert!(e(&["--context", "zz"]).contains("hex"));
        assert!(e(&["--op", "frobnicate"]).contains("valid: keygen"));
        assert!(e(&["--alg", "mlkem", "--op", "sign"]).contains("belongs"));
    }

    #[test]
    fn short_backend_names() {
        let o = args(&["--backend", "native,liboqs,native-gpu"])
            .validate()
            .unwrap();
        assert_eq!(o.backends, ["native-gpu", "liboqs-cpu"]);
    }

    #[test]
    fn threads_lists() {
        assert_eq!(parse_threads("1,all", 8).unwrap(), vec![1, 8]);
        assert_eq!(parse_threads("all,all", 2).unwrap(), vec![2]);
        assert!(parse_threads("x", 2).is_err());
    }

    #[test]
    fn latency_forces_batch_one() {
        assert_eq!(
            args(&["--latency", "--batch", "50"])
                .validate()
                .unwrap()
                .batch,
            Some(1)
        );
    }
}
