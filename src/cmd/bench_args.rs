//! The measuring commands' arguments (`bench`, `cpu`, `gpu`) and their
//! checks. The options come in groups, one struct each, shown under their
//! own heading in `--help`: what to measure ([`MeasureArgs`]), how long
//! ([`HowLongArgs`]), the CPU ([`CpuArgs`]), the GPU ([`GpuArgs`]) and where
//! results go ([`ResultsArgs`]). `bench` takes every group, `cpu` all but
//! the GPU's and `gpu` all but the CPU's, so neither offers an option that
//! does not apply to it. Each value is checked where it is parsed (a value
//! parser naming what is valid, exit 2); [`BenchArgs::validate`] checks
//! the values that must fit together (also exit 2) and turns them into the
//! [`BenchOptions`] the command runs with.

use crate::backend::parallel::parse_threads;
use crate::core::batching::parse_count;
use crate::core::bounded;
use crate::core::catalog::{parse_algorithms, Algorithm, Operation};
use crate::core::exit::Usage;
use crate::measure::budget::AUTO_MIN_RUNS;
use crate::measure::builder::{BenchOptions, DeviceSelection, DEFAULT_CPU_BATCH};
use crate::probe::system::available_cores;
use anyhow::bail;
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

/// The headings of `--help`, one per group of options, the same in every
/// command.
pub mod heading {
    /// What is measured (or served, or predicted).
    pub const MEASURE: &str = "What to measure";
    /// How long it runs.
    pub const HOW_LONG: &str = "How long";
    /// The CPU backends' options.
    pub const CPU: &str = "CPU";
    /// The GPU backends' options.
    pub const GPU: &str = "GPU";
    /// How requests arrive (`offload`, `plan`).
    pub const LOAD: &str = "Load";
    /// How requests are batched and served (`offload`, `plan`).
    pub const BATCHING: &str = "Batching";
    /// Where the files written go.
    pub const RESULTS: &str = "Where results go";
    /// What is printed, and how much is said on standard error.
    pub const OUTPUT: &str = "Output and logging";
}

/// What to measure: shared by `bench`, `cpu` and `gpu`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = heading::MEASURE)]
pub struct MeasureArgs {
    /// Algorithms or groups: ML-KEM-768, mldsa44, mlkem, all
    ///
    /// Names (ML-KEM-512/768/1024, ML-DSA-44/65/87, in any case, dashes
    /// optional) or groups (all, mlkem, mldsa); repeat the option or
    /// separate with commas. Left out: every algorithm.
    #[arg(short = 'a', long = "alg", value_name = "ALGS", value_parser = algorithm_list)]
    pub algorithms: Vec<String>,
    /// Operations: keygen, encaps, decaps, sign, verify
    ///
    /// Comma-separated; left out: every operation of the algorithms chosen.
    #[arg(long = "op", value_name = "OPS", value_parser = operation_list)]
    pub operations: Vec<String>,
    /// Backends: liboqs, native, cupqc, plugin:PATH
    ///
    /// liboqs-cpu (or liboqs), native-gpu (or native), cupqc, or
    /// plugin:PATH for a plugin library; several allowed. Left out: every
    /// ready backend this command runs.
    #[arg(long = "backend", value_name = "NAMES", value_parser = backend_list)]
    pub backends: Vec<String>,
    /// Operations per timed batch, or a list: 1,32,1k,32k,1M
    ///
    /// k = 1000, M = 1,000,000, at most 50M. [default: 1000 on CPUs;
    /// native-gpu on one GPU calibrated per operation: the largest
    /// whole-wave batch whose launch fits --launch-target-ms, at least one
    /// full wave, within memory; cupqc, and each GPU of a run on several:
    /// 100000]
    #[arg(
        short = 'b',
        long,
        value_name = "N[,N...]",
        conflicts_with = "batch_sweep",
        allow_negative_numbers = true,
        value_parser = batch_list
    )]
    pub batch: Option<String>,
    /// Batches 1, 4, 16, ... up to MAX, or up to what fits
    ///
    /// Powers of 4 up to MAX, or without MAX (or with `fit`) up to what fits
    /// in the GPU's memory (65536 on CPUs).
    #[arg(
        long,
        value_name = "MAX",
        num_args = 0..=1,
        default_missing_value = "fit",
        value_parser = sweep_top
    )]
    pub batch_sweep: Option<String>,
    /// Time single operations (batch 1), `--runs` of them
    #[arg(long)]
    pub latency: bool,
    /// Bytes signed and verified [default: 1024]
    ///
    /// From 0 (the empty message, meaningful for ML-DSA) to 64 MiB;
    /// cuPQC_benchmark's default. Batched backends sign a message of their
    /// own per item, drawn afresh each run; liboqs signs bytes of 0xAB.
    #[arg(
        long,
        value_name = "BYTES",
        default_value = "1024",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = message_bytes
    )]
    pub message_size: usize,
    /// ML-DSA context string, hex (at most 255 bytes)
    #[arg(long, value_name = "HEX", default_value = "", value_parser = context_hex)]
    pub context: String,
    /// Known-answer vectors run first [default: sample]
    ///
    /// NIST ACVP and Wycheproof vectors of the measured parameter sets, run
    /// before measuring on the code of each backend and kept in the run
    /// file: sample (every case on liboqs, the first 4 of each group on each
    /// GPU kernel variant), full (every case everywhere) or none. Also read
    /// from the environment variable PQCPROF_VECTORS.
    #[arg(
        long,
        value_name = "sample|full|none",
        value_enum,
        default_value = "sample",
        hide_default_value = true,
        hide_possible_values = true,
        hide_env = true,
        env = "PQCPROF_VECTORS"
    )]
    pub vectors: crate::vectors::record::Extent,
    /// Items judged after every run [default: sample]
    ///
    /// After every run (untimed) the gate checks every item's outputs
    /// written, the guard bytes and the inputs, then judges items against
    /// the reference: sample (64 items before and after the timed runs, 8
    /// after each timed run, the first, the last and the rest drawn afresh;
    /// a batch of 64 or fewer whole) or full (every item, every run: one
    /// reference computation per item and run, docs/statistics.md).
    #[arg(
        long,
        value_name = "sample|full",
        value_enum,
        default_value = "sample",
        hide_default_value = true,
        hide_possible_values = true
    )]
    pub gate: crate::backend::gate::GateMode,
    /// Period of the power and utilisation sampler, ms
    ///
    /// Milliseconds, from 0.1 to 10000. [default: 10 for the host, 1 for
    /// NVML]
    #[arg(
        long,
        value_name = "MS",
        allow_negative_numbers = true,
        value_parser = sample_period
    )]
    pub sample_period_ms: Option<f64>,
}

/// How long: shared by `bench`, `cpu` and `gpu`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = heading::HOW_LONG)]
pub struct HowLongArgs {
    /// Timed runs per operation, or auto [default: 20]
    ///
    /// A number from 1 to 100000, or `auto`: keep timing until the median
    /// throughput's 95% interval is within --max-noise of it, --max-runs
    /// are made, or --max-seconds (or --deadline) leaves no time for one
    /// more; at least 5 runs. Each record says how many it used and what
    /// stopped it.
    #[arg(
        short = 'r',
        long,
        value_name = "N|auto",
        default_value = "20",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = run_count
    )]
    pub runs: String,
    /// With --runs auto: the noise target, percent [default: 1]
    ///
    /// The half-width of the median's distribution-free 95% interval over
    /// the median, from 0.01 to 50.
    #[arg(
        long,
        value_name = "PCT",
        allow_negative_numbers = true,
        value_parser = noise_pct
    )]
    pub max_noise: Option<f64>,
    /// With --runs auto: the most timed runs [default: 200]
    ///
    /// From 5 (the fewest --runs auto makes) to 100000.
    #[arg(
        short = 'M',
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = most_runs
    )]
    pub max_runs: Option<usize>,
    /// Untimed warm-up runs before the correctness gate [default: 1]
    ///
    /// From 0 to 1000; one always runs before the gate.
    #[arg(
        short = 'w',
        long,
        value_name = "N",
        default_value = "1",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = warmup_runs
    )]
    pub warmup: usize,
    /// Seconds one record may take; its finished runs are kept
    ///
    /// Calibration, preparation and runs, from 0.001 to a week: at the
    /// limit the record keeps the runs it finished, marked as cut.
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = bounded::deadline
    )]
    pub max_seconds: Option<f64>,
    /// Seconds the whole command may take (exit 5 when reached)
    ///
    /// From 0.001 to a week: no run starts that would end past it, records
    /// keep the runs they finished, and records not begun are left out.
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = bounded::deadline
    )]
    pub deadline: Option<f64>,
    /// Each timed run in a new process, with no warm-up
    ///
    /// cuPQC_benchmark's method: each timed run in a new process with no
    /// warm-up (the correctness gate still runs first, in this process).
    #[arg(long, conflicts_with = "fresh_child")]
    pub fresh_process: bool,
    /// Internal, for --fresh-process: one cold timed run, outputs checked after.
    #[arg(long, hide = true)]
    pub fresh_child: bool,
}

/// The CPU backends' options (`bench` and `cpu`).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = heading::CPU)]
pub struct CpuArgs {
    /// CPU thread counts: numbers or all (every core) [default: 1,all]
    ///
    /// Comma-separated, each from 1 to 4096 or `all`; a batch is split
    /// over the threads, so outside --latency no count may exceed the
    /// operations of a batch.
    #[arg(
        short = 'j',
        long,
        value_name = "N,...|all",
        default_value = "1,all",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = thread_list
    )]
    pub threads: String,
}

/// The GPU backends' options (`bench` and `gpu`).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = heading::GPU)]
pub struct GpuArgs {
    /// CUDA devices: an ordinal, a list (0,2,3) or all [default: 0]
    ///
    /// Several devices run at once, one host thread each.
    #[arg(
        short = 'd',
        long,
        value_name = "N|N,N...|all",
        allow_negative_numbers = true,
        value_parser = device_list
    )]
    pub device: Option<String>,
    /// Kernel variant: thread, warp or block [default: fastest]
    ///
    /// thread (one thread per operation), warp (one warp per operation) or
    /// block (one block per operation). [default: fastest, the variant the
    /// static cost predicts fastest on the device]
    #[arg(
        long,
        value_name = "thread|warp|block",
        hide_possible_values = true,
        value_parser = ["thread", "warp", "block"]
    )]
    pub kernel: Option<String>,
    /// L2 between runs: warm or cold (evicted) [default: warm]
    ///
    /// warm: inputs and state left in L2 by the previous run; cold: before
    /// each timed run, outside its window, a write over a device buffer of
    /// twice the L2 size evicts them.
    #[arg(
        long,
        value_name = "warm|cold",
        default_value = "warm",
        hide_default_value = true,
        hide_possible_values = true,
        value_parser = ["warm", "cold"]
    )]
    pub cache: String,
    /// Launch time a default native-gpu batch fits, ms [default: 100]
    ///
    /// Milliseconds, from 0.1 to 60000.
    #[arg(
        long,
        value_name = "MS",
        default_value = "100",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = launch_ms
    )]
    pub launch_target_ms: f64,
}

/// Where results go: shared by `bench`, `cpu` and `gpu`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = heading::RESULTS)]
pub struct ResultsArgs {
    /// Folder for the run file and cuPQC-shaped files [default: outputs]
    ///
    /// Created if missing. Run files get unique names, so runs into one
    /// folder keep each other's.
    #[arg(
        short = 'o',
        long,
        value_name = "DIR",
        default_value = "outputs",
        hide_default_value = true
    )]
    pub out: PathBuf,
}

/// `bench`'s options: every group.
#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    /// What to measure.
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// How long.
    #[command(flatten)]
    pub how_long: HowLongArgs,
    /// The CPU backends' options.
    #[command(flatten)]
    pub cpu: CpuArgs,
    /// The GPU backends' options.
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Where results go.
    #[command(flatten)]
    pub results: ResultsArgs,
}

/// `cpu`'s options: no GPU option.
#[derive(Debug, Args, Clone)]
pub struct CpuCommandArgs {
    /// What to measure.
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// How long.
    #[command(flatten)]
    pub how_long: HowLongArgs,
    /// The CPU backends' options.
    #[command(flatten)]
    pub cpu: CpuArgs,
    /// Where results go.
    #[command(flatten)]
    pub results: ResultsArgs,
}

/// `gpu`'s options: no CPU option.
#[derive(Debug, Args, Clone)]
pub struct GpuCommandArgs {
    /// What to measure.
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// How long.
    #[command(flatten)]
    pub how_long: HowLongArgs,
    /// The GPU backends' options.
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Where results go.
    #[command(flatten)]
    pub results: ResultsArgs,
}

/// A group's defaults, as the command line gives them when none of its
/// options is typed (one source of truth: the `#[arg]` attributes).
fn defaults<T: clap::Args + clap::FromArgMatches>() -> T {
    let cmd = T::augment_args(clap::Command::new("defaults"));
    let matches = cmd
        .try_get_matches_from(["defaults"])
        .expect("every option of a group has a default or is optional");
    T::from_arg_matches(&matches).expect("the defaults parse")
}

impl From<CpuCommandArgs> for BenchArgs {
    fn from(a: CpuCommandArgs) -> BenchArgs {
        BenchArgs {
            measure: a.measure,
            how_long: a.how_long,
            cpu: a.cpu,
            gpu: defaults(),
            results: a.results,
        }
    }
}

impl From<GpuCommandArgs> for BenchArgs {
    fn from(a: GpuCommandArgs) -> BenchArgs {
        BenchArgs {
            measure: a.measure,
            how_long: a.how_long,
            cpu: defaults(),
            gpu: a.gpu,
            results: a.results,
        }
    }
}

/// Largest batch accepted, whatever the memory.
pub const MAX_BATCH: usize = crate::core::batching::MAX_BATCH;
/// Largest number of runs accepted.
pub const MAX_RUNS: usize = 100_000;
/// Largest message accepted, bytes (64 MiB).
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// What `--alg` takes, for messages.
const VALID_ALGS: &str = "ML-KEM-512/768/1024, ML-DSA-44/65/87, or a group: all, mlkem, mldsa";

/// Refuses an empty item in a list (`--alg ""`, `--op ,`): leaving the
/// option out means "all", an empty value is a mistake.
fn no_empty_item(value: &str, valid: &str) -> Result<(), String> {
    if value.split(',').any(|p| p.trim().is_empty()) {
        return Err(format!(
            "an empty name; valid: {valid} (leave the option out for all)"
        ));
    }
    Ok(())
}

/// `--alg`: names and groups, each known.
pub fn algorithm_list(s: &str) -> Result<String, String> {
    no_empty_item(s, VALID_ALGS)?;
    parse_algorithms(&[s.to_string()])?;
    Ok(s.to_string())
}

/// `--op`: operation names, each known.
fn operation_list(s: &str) -> Result<String, String> {
    no_empty_item(s, "keygen, encaps, decaps, sign, verify")?;
    for part in s.split(',') {
        part.trim().parse::<Operation>()?;
    }
    Ok(s.to_string())
}

/// `--backend`: backend names and plugins, each known.
fn backend_list(s: &str) -> Result<String, String> {
    no_empty_item(s, &format!("{}, plugin:PATH", BACKEND_NAMES.join(", ")))?;
    parse_backends(&[s.to_string()]).map_err(|e| format!("{e:#}"))?;
    Ok(s.to_string())
}

/// `--batch`: one count or a list, each from 1 to [`MAX_BATCH`].
fn batch_list(s: &str) -> Result<String, String> {
    for part in s.split(',') {
        parse_count(part).map_err(|why| {
            format!("{why}; use whole numbers from 1 to {MAX_BATCH}, optionally with k (thousand) or M (million), e.g. 1,32,1k,32k,1M")
        })?;
    }
    Ok(s.to_string())
}

/// `--batch-sweep`'s top: a count, or `fit`.
fn sweep_top(s: &str) -> Result<String, String> {
    crate::core::batching::parse_sweep_top(s).map_err(|e| format!("{e:#}"))?;
    Ok(s.to_string())
}

/// `--runs`: a count from 1 to [`MAX_RUNS`], or `auto`.
fn run_count(s: &str) -> Result<String, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok("auto".into());
    }
    bounded::whole(s, 1, MAX_RUNS as u64, "a number of runs")
        .map(|_| s.trim().to_string())
        .map_err(|e| format!("{e}, or auto"))
}

/// `--max-noise`: a percentage from 0.01 to 50.
fn noise_pct(s: &str) -> Result<f64, String> {
    bounded::number(s, 0.01, 50.0, "a percentage")
}

/// `--max-runs`: from [`AUTO_MIN_RUNS`] to [`MAX_RUNS`].
fn most_runs(s: &str) -> Result<usize, String> {
    bounded::whole(
        s,
        AUTO_MIN_RUNS as u64,
        MAX_RUNS as u64,
        "the most runs (--runs auto makes at least 5)",
    )
    .map(|v| v as usize)
}

/// `--warmup`: from 0 to 1000 runs.
fn warmup_runs(s: &str) -> Result<usize, String> {
    bounded::whole(s, 0, 1000, "a number of warm-up runs").map(|v| v as usize)
}

/// `--message-size`: from 0 to [`MAX_MESSAGE_BYTES`].
pub fn message_bytes(s: &str) -> Result<usize, String> {
    bounded::whole(s, 0, MAX_MESSAGE_BYTES, "bytes (64 MiB at most)").map(|v| v as usize)
}

/// `--context`: hex, at most 255 bytes (FIPS 204).
fn context_hex(s: &str) -> Result<String, String> {
    let bytes = parse_hex(s)?;
    if bytes.len() > 255 {
        return Err(format!(
            "{} bytes, at most 255 allowed (FIPS 204)",
            bytes.len()
        ));
    }
    Ok(s.to_string())
}

/// `--sample-period-ms`: from 0.1 to 10000 ms.
fn sample_period(s: &str) -> Result<f64, String> {
    bounded::number(s, 0.1, 10_000.0, "milliseconds")
}

/// `--launch-target-ms`: from 0.1 ms to a minute.
fn launch_ms(s: &str) -> Result<f64, String> {
    bounded::number(s, 0.1, 60_000.0, "milliseconds")
}

/// `--threads`: counts from 1 to 4096 or `all`, comma-separated.
fn thread_list(s: &str) -> Result<String, String> {
    parse_threads(s, available_cores()).map_err(|e| format!("{e:#}"))?;
    Ok(s.to_string())
}

/// `--device`: an ordinal, a list or `all`.
fn device_list(s: &str) -> Result<String, String> {
    parse_devices(s).map_err(|e| format!("{e:#}"))?;
    Ok(s.to_string())
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
            bail!("'{part}' is not a GPU ordinal; use an ordinal (0), a list (0,2,3) or `all`");
        };
        if list.contains(&n) {
            bail!("GPU {n} is listed twice; each device runs once");
        }
        list.push(n);
    }
    Ok(match list.as_slice() {
        [one] => DeviceSelection::One(*one),
        _ => DeviceSelection::List(list),
    })
}

/// The bytes of a hex string, or why it is not one.
fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    if let Some(c) = s.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("'{c}' is not a hex digit; give the context as hex, two digits (0-9, a-f) per byte, e.g. 0a1b"));
    }
    if s.len() % 2 != 0 {
        return Err("an odd number of hex digits; give two per byte, e.g. 0a1b".to_string());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

impl BenchArgs {
    /// The options the command runs with: the values that must fit
    /// together checked (each alone was checked where it was parsed), and
    /// any that do not named with what to do, as a usage error (exit 2).
    pub fn validate(&self) -> anyhow::Result<BenchOptions> {
        self.options().map_err(|e| Usage(format!("{e:#}")).into())
    }

    /// [`Self::validate`]'s checks, in order: the operations against the
    /// algorithms, the batches against --latency, the run count against
    /// its auto options, the context against the algorithms, plugins
    /// against --fresh-process, then the CPU thread counts against the
    /// batch (the first misfit is the one reported).
    fn options(&self) -> anyhow::Result<BenchOptions> {
        let (m, h) = (&self.measure, &self.how_long);
        let algorithms = parse_algorithms(&m.algorithms).map_err(anyhow::Error::msg)?;
        let operations = parse_operations(&m.operations, &algorithms)?;
        let batch = self.batch_request()?;
        let (runs, until_noise) = self.run_count()?;
        let context = parse_hex(&m.context).map_err(anyhow::Error::msg)?;
        let devices = parse_devices(self.gpu.device.as_deref().unwrap_or("0"))?;
        self.check_context(&context, &algorithms)?;
        let backends = parse_backends(&m.backends)?;
        if h.fresh_process
            && backends
                .iter()
                .any(|b| b.starts_with(crate::backend::plugin::PREFIX))
        {
            bail!("--fresh-process with a plugin backend: a plugin already runs in a worker process of its own (docs/plugins.md); leave --fresh-process out or measure the plugin in a run of its own");
        }
        let threads = self.cpu_threads(&batch)?;
        Ok(BenchOptions {
            algorithms,
            operations,
            backends,
            batch,
            runs,
            until_noise,
            warmup: h.warmup,
            threads,
            message_size: m.message_size,
            context,
            device: match &devices {
                DeviceSelection::One(n) => *n,
                DeviceSelection::List(l) => l[0],
                DeviceSelection::All => 0,
            },
            devices,
            sample_period_ms: m.sample_period_ms,
            latency: m.latency,
            cold_cache: self.gpu.cache == "cold",
            kernel: self
                .gpu
                .kernel
                .as_deref()
                .and_then(crate::backend::native_gpu::sizing::Variant::parse),
            max_seconds: h.max_seconds,
            deadline_s: h.deadline,
            launch_target_s: self.gpu.launch_target_ms / 1000.0,
            out: self.results.out.clone(),
            started: std::time::Instant::now(),
            context_hex: m.context.clone(),
            fresh_process: h.fresh_process,
            fresh_child: h.fresh_child,
            gate: crate::backend::gate::GateSettings::new(m.gate),
        })
    }

    /// The batches asked for: `--batch`, `--batch-sweep` or the default;
    /// batch 1 with `--latency`, which refuses either option.
    fn batch_request(&self) -> anyhow::Result<crate::core::batching::BatchRequest> {
        use crate::core::batching::{parse_batch_list, parse_sweep_top, BatchRequest};
        let m = &self.measure;
        if m.latency {
            if let Some(given) = &m.batch {
                bail!("--batch {given} with --latency: latency mode times single operations (batch 1); leave --batch out");
            }
            if let Some(given) = &m.batch_sweep {
                bail!("--batch-sweep {given} with --latency: latency mode times single operations (batch 1); leave --batch-sweep out");
            }
        }
        Ok(match (&m.batch, &m.batch_sweep) {
            _ if m.latency => BatchRequest::List(vec![1]),
            (Some(list), _) => BatchRequest::List(parse_batch_list(list)?),
            (None, Some(top)) => BatchRequest::Sweep(parse_sweep_top(top)?),
            (None, None) => BatchRequest::Default,
        })
    }

    /// `--runs` (a count, or `auto` with `--max-noise` and `--max-runs`):
    /// the most timed runs, and the noise target that may stop them sooner.
    fn run_count(&self) -> anyhow::Result<(usize, Option<f64>)> {
        use crate::measure::budget::{DEFAULT_MAX_NOISE_PCT, DEFAULT_MAX_RUNS};
        let h = &self.how_long;
        let given = h.runs.trim();
        if !given.eq_ignore_ascii_case("auto") {
            let n: usize = given.parse()?;
            for (flag, set) in [
                ("--max-noise", h.max_noise.map(|v| v.to_string())),
                ("--max-runs", h.max_runs.map(|v| v.to_string())),
            ] {
                if let Some(v) = set {
                    bail!("{flag} {v} with --runs {n}: it applies to --runs auto only; add --runs auto or leave {flag} out");
                }
            }
            return Ok((n, None));
        }
        if h.fresh_process || h.fresh_child {
            bail!("--runs auto with --fresh-process: each fresh-process run is a new process, and the count is fixed before they start; give --runs N");
        }
        let noise = h.max_noise.unwrap_or(DEFAULT_MAX_NOISE_PCT);
        let most = h.max_runs.unwrap_or(DEFAULT_MAX_RUNS);
        Ok((most, Some(noise / 100.0)))
    }

    /// The context only with ML-DSA among the algorithms (a warning when
    /// others run beside it).
    fn check_context(&self, context: &[u8], algorithms: &[Algorithm]) -> anyhow::Result<()> {
        if !context.is_empty() {
            let dsa = algorithms
                .iter()
                .any(|a| a.family() == crate::core::catalog::Family::MlDsa);
            if !dsa {
                bail!(
                    "--context {}: only ML-DSA takes a context, and none of the algorithms chosen is ML-DSA",
                    self.measure.context
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
        let given = &self.cpu.threads;
        let mut threads = parse_threads(given, cores)?;
        if !self.measure.latency {
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
            let explicit = given
                .split(',')
                .filter_map(|p| p.trim().parse::<usize>().ok());
            if !matches!(batch, BatchRequest::Sweep(_)) {
                if let Some(t) = explicit.filter(|&t| t > smallest).max() {
                    bail!(
                        "--threads {t}: more threads than operations per CPU batch ({smallest}); use at most {smallest}, or a larger --batch"
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
        let names: Vec<&str> = operations.iter().map(|o| o.cli_name()).collect();
        let theirs: Vec<String> = algorithms
            .iter()
            .map(|a| {
                let ops: Vec<&str> = a.operations().iter().map(|o| o.cli_name()).collect();
                format!("{} {}", a.name(), ops.join("/"))
            })
            .collect();
        bail!(
            "--op {}: no such operation belongs to the algorithms chosen ({})",
            names.join(","),
            theirs.join(", ")
        );
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
        bail!("'{b}': plugin: takes the plugin library's path (plugin:./libmykem.so)");
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

    /// `pqcprof bench`'s arguments alone.
    #[derive(Parser)]
    struct Bench {
        #[command(flatten)]
        args: BenchArgs,
    }

    /// The arguments, or clap's message for a value it refused.
    fn parsed(extra: &[&str]) -> Result<BenchArgs, String> {
        let mut v = vec!["bench"];
        v.extend_from_slice(extra);
        Bench::try_parse_from(v)
            .map(|b| b.args)
            .map_err(|e| e.to_string())
    }

    fn args(extra: &[&str]) -> BenchArgs {
        parsed(extra).unwrap()
    }

    /// Why `extra` is refused, where it is parsed or where its values are
    /// checked together; a usage error either way.
    fn refused(extra: &[&str]) -> String {
        match parsed(extra) {
            Err(e) => e,
            Ok(a) => {
                let e = a.validate().unwrap_err();
                assert!(e.downcast_ref::<Usage>().is_some(), "{e:#}");
                format!("{e:#}")
            }
        }
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
        let e = refused;
        assert!(e(&["--batch", "0"]).contains("'0' for '--batch"));
        assert!(e(&["--batch", "999999999"]).contains("50000000"));
        assert!(e(&["--runs", "0"]).contains("'0' for '--runs"));
        assert!(e(&["--runs", "often"]).contains("'often' for '--runs"));
        assert!(e(&["--runs", "auto", "--max-noise", "0"]).contains("'0' for '--max-noise"));
        assert!(e(&["--runs", "auto", "--max-noise", "nan"]).contains("'nan' for '--max-noise"));
        // A tiny number is echoed as typed, not as 300 zeros.
        let tiny = e(&["--runs", "auto", "--max-noise", "1e-300"]);
        assert!(tiny.contains("1e-300") && !tiny.contains("0000"), "{tiny}");
        assert!(e(&["--runs", "auto", "--max-runs", "4"]).contains("'4' for '--max-runs"));
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
        let none = e(&["--alg", "mlkem", "--op", "sign"]);
        assert!(
            none.contains("--op sign") && none.contains("ML-KEM-768 keygen/encaps/decaps"),
            "{none}"
        );
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
        assert!(refused(&["--device", "1,1"]).contains("listed twice"));
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
        let e = refused(&["--latency", "--batch", "50"]);
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
        let e = refused;
        assert!(e(&["--batch", "0,5"]).contains("'0,5' for '--batch"));
        assert!(e(&["--batch", "1e99"]).contains("'1e99'"));
        assert!(e(&["--batch-sweep", "1e99"]).contains("--batch-sweep 1e99"));
        // Both at once is a usage error (clap).
        let mut v = vec!["bench", "--batch", "5", "--batch-sweep"];
        assert!(Bench::try_parse_from(&v).is_err());
        v.truncate(3);
        assert!(Bench::try_parse_from(&v).is_ok());
    }
}
