//! The measuring commands' arguments (`bench`, `cpu`, `gpu`) and their
//! validation: [`BenchArgs::validate`] turns what was typed into the
//! [`BenchOptions`] the command runs with, naming any bad value and what is
//! valid; [`parse_devices`] reads `--device`.

use crate::backend::parallel::parse_threads;
use crate::core::catalog::{parse_algorithms, Algorithm, Operation};
use crate::measure::builder::{BenchOptions, DeviceSelection, DEFAULT_CPU_BATCH};
use crate::probe::system::available_cores;
use anyhow::{bail, Context};
use clap::Args;
use std::path::PathBuf;

/// Names of the backends a user can ask for, for error messages. `cupqc`
/// is always listed: a build without it skips its records with the reason
/// (and `check` says how to enable it) instead of calling the name unknown.
pub const BACKEND_NAMES: [&str; 3] = [
    crate::backend::liboqs::NAME,
    crate::backend::native_gpu::NAME,
    crate::backend::cupqc::BACKEND_NAME,
];

/// Options shared by the measuring commands.
#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    /// Algorithms: names (ML-KEM-768, mldsa44, ...) or groups (all, mlkem, mldsa), comma-separated.
    #[arg(long = "alg", value_name = "ALGS")]
    pub algorithms: Vec<String>,
    /// Operations to measure (keygen, encaps, decaps, sign, verify); default all.
    #[arg(long = "op", value_name = "OPS")]
    pub operations: Vec<String>,
    /// Backends to run (liboqs-cpu or liboqs, native-gpu or native, cupqc, plugin:PATH for a
    /// plugin library, several allowed); default every ready one.
    #[arg(long = "backend", value_name = "NAMES")]
    pub backends: Vec<String>,
    /// Operations per timed batch, or a list of batches: 1,32,1k,32k,1M (k
    /// = 1000, M = 1,000,000) [default: 1000 on CPUs; native-gpu on one GPU
    /// calibrated per operation: the largest whole-wave batch whose launch
    /// fits --launch-target-ms, at least one full wave, within memory;
    /// cupqc, and each GPU of a run on several: 100000]
    #[arg(
        long,
        value_name = "N[,N...]",
        conflicts_with = "batch_sweep",
        allow_negative_numbers = true
    )]
    pub batch: Option<String>,
    /// Measure batches 1, 4, 16, ... (powers of 4) up to MAX, or without
    /// MAX up to what fits in the GPU's memory (65536 on CPUs)
    #[arg(long, value_name = "MAX", num_args = 0..=1, default_missing_value = "fit")]
    pub batch_sweep: Option<String>,
    /// CUDA device(s) for GPU backends: an ordinal, a list (0,2,3) or
    /// `all`; several devices run at once, one host thread each [default: 0]
    #[arg(long, value_name = "N|N,N...|all", allow_negative_numbers = true)]
    pub device: Option<String>,
    /// Timed runs per operation, or `auto`: keep timing until the median
    /// throughput's 95% interval is within --max-noise of it, --max-runs
    /// are made, or --max-seconds (or --deadline) leaves no time for one
    /// more; at least 5 runs. Each record says how many it used and what
    /// stopped it.
    #[arg(
        long,
        value_name = "N|auto",
        default_value = "20",
        allow_negative_numbers = true
    )]
    pub runs: String,
    /// With --runs auto: the noise target, percent: the half-width of the
    /// median's distribution-free 95% interval over the median [default: 1]
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub max_noise: Option<f64>,
    /// With --runs auto: the most timed runs per operation [default: 200]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_runs: Option<usize>,
    /// Untimed warm-up runs before the correctness gate.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub warmup: usize,
    /// CPU thread counts, comma-separated: numbers or `all` (every core).
    #[arg(
        long,
        value_name = "N,...|all",
        default_value = "1,all",
        allow_negative_numbers = true
    )]
    pub threads: String,
    /// Message size for signing and verifying, bytes of 0xAB (0: the empty
    /// message, meaningful for ML-DSA).
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = 1024,
        allow_negative_numbers = true
    )]
    pub message_size: usize,
    /// ML-DSA context string, hex.
    #[arg(long, value_name = "HEX", default_value = "")]
    pub context: String,
    /// Sampler period, milliseconds [default: 10 for the host, 1 for NVML]
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    pub sample_period_ms: Option<f64>,
    /// Native GPU kernel variant: thread (one thread per operation), warp
    /// (one warp per operation) or block (one block per operation)
    /// [default: the variant the static cost predicts fastest on the device]
    #[arg(long, value_name = "VARIANT", value_parser = ["thread", "warp", "block"])]
    pub kernel: Option<String>,
    /// GPU backends: warm (inputs and state left in L2 by the previous run)
    /// or cold (before each timed run, outside its window, a write over a
    /// device buffer of twice the L2 size evicts them).
    #[arg(long, value_name = "warm|cold", default_value = "warm", value_parser = ["warm", "cold"])]
    pub cache: String,
    /// Per-operation latency: batch 1, `--runs` timed single operations.
    #[arg(long)]
    pub latency: bool,
    /// What the correctness gate checks after every run (untimed): `sample`,
    /// every item's outputs written and a fresh sample of 64 items against
    /// the reference; `full`, every item against the reference (slower:
    /// docs/statistics.md says how much).
    #[arg(long, value_name = "sample|full", default_value = "sample", value_parser = ["sample", "full"])]
    pub gate: String,
    /// cuPQC_benchmark's method: each timed run in a new process with no
    /// warm-up (the correctness gate still runs first, in this process).
    #[arg(long, conflicts_with = "fresh_child")]
    pub fresh_process: bool,
    /// Internal, for --fresh-process: one cold timed run, outputs checked after.
    #[arg(long, hide = true)]
    pub fresh_child: bool,
    /// Seconds one record may take (calibration, preparation, runs): at
    /// the limit it keeps the runs it finished, marked as cut.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
    /// Seconds the whole command may take: no run starts that would end
    /// past it, records keep the runs they finished, and records not begun
    /// are left out (exit 5).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub deadline: Option<f64>,
    /// Launch time a default native-gpu batch is calibrated to, milliseconds.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 100.0,
        allow_negative_numbers = true
    )]
    pub launch_target_ms: f64,
    /// Known-answer vectors (NIST ACVP, Wycheproof) of the measured
    /// parameter sets, run before measuring on the code of each backend
    /// and kept in the run file: sample (every case on liboqs, the first 4
    /// of each group on each GPU kernel variant), full (every case
    /// everywhere) or none
    #[arg(
        long,
        value_name = "EXTENT",
        value_enum,
        default_value = "sample",
        env = "PQCPROF_VECTORS"
    )]
    pub vectors: crate::vectors::record::Extent,
    /// Folder for results.
    #[arg(long, value_name = "DIR", default_value = "outputs")]
    pub out: PathBuf,
}

/// Largest batch accepted, whatever the memory.
pub const MAX_BATCH: usize = crate::core::batching::MAX_BATCH;
/// Largest number of runs accepted.
pub const MAX_RUNS: usize = 100_000;

/// Largest `--max-seconds` and `--deadline` accepted: a week.
pub const MAX_BUDGET_S: f64 = 7.0 * 86400.0;

/// `value` of `--{flag}` checked: a number of seconds from 0.001 to a week.
fn budget_seconds(flag: &str, value: Option<f64>) -> anyhow::Result<Option<f64>> {
    match value {
        Some(v) if !(v.is_finite() && (0.001..=MAX_BUDGET_S).contains(&v)) => bail!(
            "invalid --{flag} {v}: must be a number of seconds from 0.001 to {MAX_BUDGET_S} (a week)"
        ),
        v => Ok(v),
    }
}

/// Parses `--device`: `0`, `0,2,3` or `all`.
pub fn parse_devices(s: &str) -> anyhow::Result<DeviceSelection> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("all") {
        return Ok(DeviceSelection::All);
    }
    let mut list: Vec<usize> = vec![];
    for part in s.split(',').map(str::trim) {
        let Ok(n) = part.parse::<usize>() else {
            bail!("invalid --device '{s}': '{part}' is not a GPU ordinal; use an ordinal (0), a list (0,2,3) or `all`");
        };
        if list.contains(&n) {
            bail!("invalid --device '{s}': GPU {n} is listed twice; each device runs once");
        }
        list.push(n);
    }
    Ok(match list.as_slice() {
        [one] => DeviceSelection::One(*one),
        _ => DeviceSelection::List(list),
    })
}

fn parse_hex(s: &str) -> anyhow::Result<Vec<u8>> {
    let s = s.trim();
    if let Some(c) = s.chars().find(|c| !c.is_ascii_hexdigit()) {
        bail!("invalid --context '{s}': '{c}' is not a hex digit; give the context as hex, two digits (0-9, a-f) per byte, e.g. 0a1b");
    }
    if s.len() % 2 != 0 {
        bail!("invalid --context '{s}': an odd number of hex digits; give two per byte, e.g. 0a1b");
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).context("hex"))
        .collect()
}

/// Refuses an empty item in a list flag (`--alg ""`, `--op ,`): leaving
/// the flag out means "all", an empty value is a mistake.
fn no_empty_items(flag: &str, values: &[String], valid: &str) -> anyhow::Result<()> {
    for v in values {
        if v.split(',').any(|p| p.trim().is_empty()) {
            bail!("invalid {flag} '{v}': an empty name; valid: {valid} (leave {flag} out for all)");
        }
    }
    Ok(())
}

impl BenchArgs {
    /// Checks every value and names what is wrong and what is valid: the
    /// lists named, the batch asked for, the counts and limits, the context,
    /// the devices, the backends, then the CPU thread counts, in that order
    /// (the first bad value is the one reported).
    pub fn validate(&self) -> anyhow::Result<BenchOptions> {
        self.no_empty_lists()?;
        let algorithms = parse_algorithms(&self.algorithms).map_err(anyhow::Error::msg)?;
        let operations = parse_operations(&self.operations, &algorithms)?;
        let batch = self.batch_request()?;
        let (runs, until_noise) = self.run_count()?;
        self.check_counts()?;
        let max_seconds = budget_seconds("max-seconds", self.max_seconds)?;
        let deadline_s = budget_seconds("deadline", self.deadline)?;
        self.check_launch_target()?;
        let context = parse_hex(&self.context)?;
        let devices = parse_devices(self.device.as_deref().unwrap_or("0"))?;
        self.check_context(&context, &algorithms)?;
        let backends = parse_backends(&self.backends)?;
        if self.fresh_process
            && backends
                .iter()
                .any(|b| b.starts_with(crate::backend::plugin::PREFIX))
        {
            bail!("invalid --fresh-process with a plugin backend: a plugin already runs in a worker process of its own (docs/plugins.md); leave --fresh-process out or measure the plugin in a run of its own");
        }
        let threads = self.cpu_threads(&batch)?;
        Ok(BenchOptions {
            algorithms,
            operations,
            backends,
            batch,
            runs,
            until_noise,
            warmup: self.warmup,
            threads,
            message_size: self.message_size,
            context,
            device: match &devices {
                DeviceSelection::One(n) => *n,
                DeviceSelection::List(l) => l[0],
                DeviceSelection::All => 0,
            },
            devices,
            sample_period_ms: self.sample_period_ms,
            latency: self.latency,
            cold_cache: self.cache == "cold",
            kernel: self
                .kernel
                .as_deref()
                .and_then(crate::backend::native_gpu::sizing::Variant::parse),
            max_seconds,
            deadline_s,
            launch_target_s: self.launch_target_ms / 1000.0,
            out: self.out.clone(),
            started: std::time::Instant::now(),
            context_hex: self.context.clone(),
            fresh_process: self.fresh_process,
            fresh_child: self.fresh_child,
            gate: crate::backend::gate::GateSettings::new(if self.gate == "full" {
                crate::backend::gate::GateMode::Full
            } else {
                crate::backend::gate::GateMode::Sample
            }),
        })
    }

    /// `--alg`, `--op` and `--backend` hold no empty name.
    fn no_empty_lists(&self) -> anyhow::Result<()> {
        no_empty_items(
            "--alg",
            &self.algorithms,
            "ML-KEM-512/768/1024, ML-DSA-44/65/87, or a group: all, mlkem, mldsa",
        )?;
        no_empty_items(
            "--op",
            &self.operations,
            "keygen, encaps, decaps, sign, verify",
        )?;
        no_empty_items("--backend", &self.backends, &BACKEND_NAMES.join(", "))
    }

    /// The batches asked for: `--batch`, `--batch-sweep` or the default;
    /// batch 1 with `--latency`, which refuses either flag.
    fn batch_request(&self) -> anyhow::Result<crate::core::batching::BatchRequest> {
        use crate::core::batching::{parse_batch_list, parse_sweep_top, BatchRequest};
        if self.latency {
            if let Some(given) = &self.batch {
                bail!("invalid --batch {given} with --latency: latency mode times single operations (batch 1); leave --batch out");
            }
            if let Some(given) = &self.batch_sweep {
                bail!("invalid --batch-sweep {given} with --latency: latency mode times single operations (batch 1); leave --batch-sweep out");
            }
        }
        Ok(match (&self.batch, &self.batch_sweep) {
            _ if self.latency => BatchRequest::List(vec![1]),
            (Some(list), _) => BatchRequest::List(parse_batch_list(list)?),
            (None, Some(top)) => BatchRequest::Sweep(parse_sweep_top(top)?),
            (None, None) => BatchRequest::Default,
        })
    }

    /// `--runs`, `--warmup`, `--message-size` and `--sample-period-ms`
    /// within their ranges.
    fn check_counts(&self) -> anyhow::Result<()> {
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
        Ok(())
    }

    /// `--runs` (a count, or `auto` with `--max-noise` and `--max-runs`):
    /// the most timed runs, and the noise target that may stop them sooner.
    fn run_count(&self) -> anyhow::Result<(usize, Option<f64>)> {
        use crate::measure::budget::{AUTO_MIN_RUNS, DEFAULT_MAX_NOISE_PCT, DEFAULT_MAX_RUNS};
        let given = self.runs.trim();
        if !given.eq_ignore_ascii_case("auto") {
            let n = given
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_RUNS).contains(n));
            let Some(n) = n else {
                bail!("invalid --runs {given}: must be a number from 1 to {MAX_RUNS}, or auto");
            };
            for (flag, set) in [
                ("--max-noise", self.max_noise.map(|v| v.to_string())),
                ("--max-runs", self.max_runs.map(|v| v.to_string())),
            ] {
                if let Some(v) = set {
                    bail!("invalid {flag} {v} with --runs {n}: it applies to --runs auto only; add --runs auto or leave {flag} out");
                }
            }
            return Ok((n, None));
        }
        if self.fresh_process || self.fresh_child {
            bail!("invalid --runs auto with --fresh-process: each fresh-process run is a new process, and the count is fixed before they start; give --runs N");
        }
        let noise = self.max_noise.unwrap_or(DEFAULT_MAX_NOISE_PCT);
        if !(noise.is_finite() && (0.01..=50.0).contains(&noise)) {
            bail!("invalid --max-noise {noise}: must be a percentage from 0.01 to 50");
        }
        let most = self.max_runs.unwrap_or(DEFAULT_MAX_RUNS);
        if !(AUTO_MIN_RUNS..=MAX_RUNS).contains(&most) {
            bail!("invalid --max-runs {most}: must be from {AUTO_MIN_RUNS} (the fewest runs --runs auto makes) to {MAX_RUNS}");
        }
        Ok((most, Some(noise / 100.0)))
    }

    /// `--launch-target-ms` from 0.1 ms to a minute.
    fn check_launch_target(&self) -> anyhow::Result<()> {
        if !(self.launch_target_ms.is_finite() && (0.1..=60_000.0).contains(&self.launch_target_ms))
        {
            bail!(
                "invalid --launch-target-ms {}: must be from 0.1 to 60000",
                self.launch_target_ms
            );
        }
        Ok(())
    }

    /// The context: at most 255 bytes (FIPS 204), and only with ML-DSA
    /// among the algorithms (a warning when others run beside it).
    fn check_context(&self, context: &[u8], algorithms: &[Algorithm]) -> anyhow::Result<()> {
        if context.len() > 255 {
            bail!(
                "invalid --context: {} bytes, at most 255 allowed (FIPS 204)",
                context.len()
            );
        }
        if !context.is_empty() {
            let dsa = algorithms
                .iter()
                .any(|a| a.family() == crate::core::catalog::Family::MlDsa);
            if !dsa {
                bail!(
                    "invalid --context {}: only ML-DSA takes a context, and none of the algorithms chosen is ML-DSA",
                    self.context
                );
            }
            if algorithms
                .iter()
                .any(|a| a.family() != crate::core::catalog::Family::MlDsa)
            {
                log::warn!(
                    "--context applies to the ML-DSA algorithms only; the others run without it"
                );
            }
        }
        Ok(())
    }

    /// The CPU thread counts: `all` is every core; outside latency mode no
    /// count above the operations of a batch (a warning when above the
    /// cores).
    fn cpu_threads(
        &self,
        batch: &crate::core::batching::BatchRequest,
    ) -> anyhow::Result<Vec<usize>> {
        use crate::core::batching::BatchRequest;
        let cores = available_cores();
        let mut threads = parse_threads(&self.threads, cores)?;
        if !self.latency {
            // A CPU batch is split over the threads: no more threads than
            // operations can run, so a record must not claim more.
            // A batch sweep climbs from batch 1: there the records say how
            // many threads each batch really used (the chunks), and the
            // largest batch bounds the clamp.
            let (smallest, largest) = match batch {
                BatchRequest::List(v) => (
                    v.iter().copied().min().unwrap_or(DEFAULT_CPU_BATCH),
                    v.iter().copied().max().unwrap_or(DEFAULT_CPU_BATCH),
                ),
                BatchRequest::Default => (DEFAULT_CPU_BATCH, DEFAULT_CPU_BATCH),
                BatchRequest::Sweep(_) => (1, MAX_BATCH),
            };
            let explicit = self
                .threads
                .split(',')
                .filter_map(|p| p.trim().parse::<usize>().ok());
            if !matches!(batch, BatchRequest::Sweep(_)) {
                if let Some(t) = explicit.filter(|&t| t > smallest).max() {
                    bail!(
                        "invalid --threads {t}: more threads than operations per CPU batch ({smallest}); use at most {smallest}, or a larger --batch"
                    );
                }
            }
            // `all` on a machine with more cores than the batch: the batch's size.
            threads = threads
                .into_iter()
                .map(|t| t.min(largest))
                .fold(vec![], |mut v, t| {
                    if !v.contains(&t) {
                        v.push(t);
                    }
                    v
                });
        }
        if let Some(&t) = threads.iter().find(|&&t| t > cores) {
            log::warn!("--threads {t} is more than this machine's {cores} cores: the threads will share cores");
        }
        Ok(threads)
    }
}

/// The operations named in `--op` (comma-separated), each belonging to at
/// least one of `algorithms` taken together.
fn parse_operations(given: &[String], algorithms: &[Algorithm]) -> anyhow::Result<Vec<Operation>> {
    let mut operations = vec![];
    for part in given
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
    Ok(operations)
}

/// The library path of a `plugin:PATH` backend name (the prefix in any
/// case), `None` for another name; an empty path is refused.
pub fn plugin_path(b: &str) -> anyhow::Result<Option<&str>> {
    let prefix = crate::backend::plugin::PREFIX;
    if b.len() < prefix.len() || !b[..prefix.len()].eq_ignore_ascii_case(prefix) {
        return Ok(None);
    }
    let path = b[prefix.len()..].trim();
    if path.is_empty() {
        bail!("invalid --backend '{b}': plugin: takes the plugin library's path (plugin:./libmykem.so)");
    }
    Ok(Some(path))
}

/// One `--backend` value split at its commas, except that a `plugin:PATH`
/// keeps the commas of a path that names an existing file (the longest
/// such run of pieces).
fn split_backends(value: &str) -> Vec<String> {
    let pieces: Vec<&str> = value.split(',').collect();
    let mut out = vec![];
    let mut i = 0;
    while i < pieces.len() {
        let mut end = i + 1;
        if matches!(plugin_path(pieces[i].trim()), Ok(Some(_))) {
            for j in (i + 2..=pieces.len()).rev() {
                let joined = pieces[i..j].join(",");
                if let Ok(Some(path)) = plugin_path(joined.trim()) {
                    if std::path::Path::new(path).is_file() {
                        end = j;
                        break;
                    }
                }
            }
        }
        out.push(pieces[i..end].join(","));
        i = end;
    }
    out
}

/// The backends named in `--backend`, short names (`native`, `liboqs`)
/// in any case accepted, each once, in the order given.
fn parse_backends(given: &[String]) -> anyhow::Result<Vec<String>> {
    let valid = BACKEND_NAMES;
    let mut backends: Vec<String> = vec![];
    for b in given
        .iter()
        .flat_map(|b| split_backends(b))
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
    {
        let b = b.as_str();
        if let Some(path) = plugin_path(b)? {
            let name = format!("{}{path}", crate::backend::plugin::PREFIX);
            if !backends.contains(&name) {
                backends.push(name);
            }
            continue;
        }
        // Short names, as users write them, in any case.
        let lower = b.to_ascii_lowercase();
        let b = match lower.as_str() {
            "native" => crate::backend::native_gpu::NAME,
            "liboqs" => crate::backend::liboqs::NAME,
            other => other,
        };
        if !valid.contains(&b) {
            bail!(
                "unknown backend '{b}'; valid: {}, plugin:PATH (or native, liboqs)",
                valid.join(", ")
            );
        }
        if !backends.iter().any(|x| x == b) {
            backends.push(b.to_string());
        }
    }
    Ok(backends)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `pqcprof cpu`'s arguments alone.
    #[derive(Parser)]
    struct Cpu {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn args(extra: &[&str]) -> BenchArgs {
        let mut v = vec!["cpu"];
        v.extend_from_slice(extra);
        Cpu::try_parse_from(v).unwrap().args
    }

    #[test]
    fn a_plugin_path_keeps_its_commas_when_the_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib,kem.so");
        std::fs::write(&lib, b"").unwrap();
        let lib = lib.display().to_string();
        let value = format!("liboqs,plugin:{lib},native");
        assert_eq!(
            split_backends(&value),
            ["liboqs", &format!("plugin:{lib}"), "native"]
        );
        // A path that names no file is split as any list is.
        assert_eq!(
            split_backends("plugin:/no/a,b.so"),
            ["plugin:/no/a", "b.so"]
        );
        let o = args(&["--backend", &value]).validate().unwrap();
        assert!(
            o.backends.contains(&format!("plugin:{lib}")),
            "{:?}",
            o.backends
        );
    }

    #[test]
    fn defaults_are_valid() {
        let o = args(&[]).validate().unwrap();
        assert_eq!(o.algorithms.len(), 6);
        assert_eq!((o.runs, o.until_noise), (20, None));
        let a = args(&["--runs", "AUTO"]).validate().unwrap();
        assert_eq!((a.runs, a.until_noise), (200, Some(0.01)));
        let a = args(&["--runs", "auto", "--max-noise", "0.5", "--max-runs", "40"])
            .validate()
            .unwrap();
        assert_eq!((a.runs, a.until_noise), (40, Some(0.005)));
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
        assert!(e(&["--runs", "often"]).contains("--runs often"));
        assert!(e(&["--runs", "auto", "--max-noise", "0"]).contains("--max-noise 0"));
        assert!(e(&["--runs", "auto", "--max-noise", "nan"]).contains("--max-noise NaN"));
        assert!(e(&["--runs", "auto", "--max-runs", "4"]).contains("--max-runs 4"));
        let alone = e(&["--max-noise", "2"]);
        assert!(
            alone.contains("--max-noise 2") && alone.contains("--runs auto"),
            "{alone}"
        );
        assert!(e(&["--runs", "9", "--max-runs", "50"]).contains("--max-runs 50"));
        let fresh = e(&["--runs", "auto", "--fresh-process"]);
        assert!(
            fresh.contains("--runs auto") && fresh.contains("--runs N"),
            "{fresh}"
        );
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
    fn the_compile_waits_for_the_deadline_not_a_records_share() {
        let bound = |a: &[&str]| {
            let o = args(a).validate().unwrap();
            crate::measure::budget::compile_bound(o.started, o.deadline_s, o.max_seconds)
                .map(|b| (b.what, (b.by - o.started).as_secs_f64().round()))
        };
        assert_eq!(bound(&[]), None);
        let both = bound(&["--max-seconds", "4", "--deadline", "23"]);
        assert_eq!(both, Some(("--deadline 23".to_string(), 23.0)));
        let alone = bound(&["--max-seconds", "4"]);
        assert_eq!(alone, Some(("--max-seconds 4".to_string(), 4.0)));
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
    fn device_lists() {
        use DeviceSelection::*;
        assert_eq!(parse_devices("2").unwrap(), One(2));
        assert_eq!(parse_devices("0,2,3").unwrap(), List(vec![0, 2, 3]));
        assert_eq!(parse_devices("ALL").unwrap(), All);
        let e = parse_devices("0,0").unwrap_err().to_string();
        assert!(e.contains("GPU 0 is listed twice"), "{e}");
        let e = parse_devices("0,x").unwrap_err().to_string();
        assert!(e.contains("'x'") && e.contains("all"), "{e}");
        assert!(args(&["--device", "1,1"]).validate().is_err());
        let o = args(&["--device", "3,1"]).validate().unwrap();
        assert_eq!((o.device, o.devices), (3, List(vec![3, 1])));
        // Against what the driver lists.
        assert_eq!(All.resolve(&[0, 1]).unwrap(), [0, 1]);
        assert_eq!(List(vec![1, 0]).resolve(&[0, 1]).unwrap(), [1, 0]);
        let e = One(7).resolve(&[0, 1]).unwrap_err().to_string();
        assert!(
            e.contains("--device 7") && e.contains("ordinals 0, 1"),
            "{e}"
        );
        // No GPU at all: nothing to check against, the backends say why.
        assert_eq!(One(7).resolve(&[]).unwrap(), [7]);
        assert!(All.resolve(&[]).unwrap().is_empty());
    }

    #[test]
    fn latency_forces_batch_one() {
        use crate::core::batching::BatchRequest;
        assert_eq!(
            args(&["--latency"]).validate().unwrap().batch,
            BatchRequest::List(vec![1])
        );
        // A batch given with --latency would be ignored: refused instead.
        let e = args(&["--latency", "--batch", "50"])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--batch 50") && e.contains("--latency"), "{e}");
    }

    #[test]
    fn batch_lists_and_sweeps() {
        use crate::core::batching::BatchRequest;
        let b = |a: &[&str]| args(a).validate().map(|o| o.batch);
        assert_eq!(b(&[]).unwrap(), BatchRequest::Default);
        assert_eq!(
            b(&["--batch", "1,32,1k,32k,1M"]).unwrap(),
            BatchRequest::List(vec![1, 32, 1000, 32_000, 1_000_000])
        );
        assert_eq!(b(&["--batch-sweep"]).unwrap(), BatchRequest::Sweep(None));
        assert_eq!(
            b(&["--batch-sweep", "4k"]).unwrap(),
            BatchRequest::Sweep(Some(4000))
        );
        let e = |a: &[&str]| format!("{:#}", b(a).unwrap_err());
        assert!(e(&["--batch", "0,5"]).contains("--batch 0,5"));
        assert!(e(&["--batch", "1e99"]).contains("'1e99'"));
        assert!(e(&["--batch-sweep", "1e99"]).contains("--batch-sweep 1e99"));
        // Both at once is a usage error (clap).
        let mut v = vec!["cpu", "--batch", "5", "--batch-sweep"];
        assert!(Cpu::try_parse_from(&v).is_err());
        v.truncate(3);
        assert!(Cpu::try_parse_from(&v).is_ok());
    }
}
