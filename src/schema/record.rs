//! The run file: everything a later stage (exporters, `report`, `compare`)
//! needs, so they work on files from other machines without re-running.
//! These structs are the JSON schema; `SCHEMA_VERSION` changes whenever a
//! field changes meaning or goes away.

use crate::core::catalog::{Algorithm, Kind, Operation, Sizes};
use crate::core::stats::Summary;
use crate::monitor::RunUsage;
use crate::schema::device::KernelInfo;
use crate::schema::device::{Device, GateReport};
use serde::{Deserialize, Serialize};

/// Version of the run-file schema written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// How a record ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Passed its correctness gate before and after timing, and was timed.
    Ok,
    /// Preparation, a run or the correctness gate failed: never timed as fine.
    Failed,
    /// Not attempted, with the reason (backend not ready, not supported).
    Skipped,
}

/// Throughput of batches, or latency of single operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `runs` timed batches of `batch` operations.
    Throughput,
    /// `runs` timed single operations (batch 1).
    Latency,
}

/// A timed window must be at least this many times its floor (the empty
/// window) before the report takes it as the operations' time.
pub const FLOOR_MULTIPLE: f64 = 100.0;

/// The median of many empty timed windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmptyWindow {
    /// Median empty window, seconds.
    pub seconds: f64,
    /// Empty windows timed.
    pub samples: usize,
    /// GPU: empty kernels launched per second back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches_per_s: Option<f64>,
    /// What the empty window holds.
    pub method: String,
}

/// The device-side hold each timed GPU window is queued behind (so the
/// host's launch call is outside the window), as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldCheck {
    /// The wait asked of the hold, milliseconds.
    pub requested_ms: f64,
    /// The wait of each timed run as the device's events saw it (an event
    /// queued before the hold to the window's start event), milliseconds,
    /// in run order.
    pub measured_ms: Vec<f64>,
    /// The median of `measured_ms`.
    pub measured_ms_median: f64,
    /// Timed runs whose hold was still running once the host had queued
    /// the window's work and end event: their windows hold no host time.
    pub covered_runs: usize,
    /// Timed runs whose hold had ended before that: the device waited on
    /// the host inside the window.
    pub uncovered_runs: usize,
    /// Latency records: the windows of the uncovered runs, seconds, left
    /// out of `run_seconds` and every figure (a record with no covered run
    /// is failed, its latency refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_run_seconds: Vec<f64>,
}

impl HoldCheck {
    /// Why a latency record is refused: no timed run's hold outlasted the
    /// host's queueing, so every window holds host time.
    pub fn refusal(&self, mode: Mode) -> Option<String> {
        (mode == Mode::Latency && self.covered_runs == 0 && self.uncovered_runs > 0).then(|| {
            format!(
                "latency refused: the {} ms device-side hold (pqcprof_hold) ended before the kernel was queued in {} of {} timed runs: every window includes host time",
                self.requested_ms, self.uncovered_runs, self.uncovered_runs
            )
        })
    }
}

/// Which condition ended the timed runs of a `--runs auto` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoppedBy {
    /// The median's relative interval half-width fell below `--max-noise`.
    Noise,
    /// `--max-seconds`, the record's share of `--deadline` or the deadline
    /// itself left no time for another run.
    Time,
    /// `--max-runs` runs were made before the noise target was met.
    MaxRuns,
}

impl StoppedBy {
    /// The name in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            StoppedBy::Noise => "noise",
            StoppedBy::Time => "time",
            StoppedBy::MaxRuns => "max_runs",
        }
    }
}

/// One (backend, threads, algorithm, operation, mode) measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Backend name (`liboqs-cpu`, `native-gpu`, `cupqc`).
    pub backend: String,
    /// Device the backend ran on.
    pub device: Device,
    /// Threads the batch was spread over (1 for a GPU launch).
    pub threads: usize,
    /// Algorithm, e.g. `ML-KEM-768`, `Falcon-512`, `ECDSA-P256`.
    pub algorithm: String,
    /// Family, e.g. `ML-KEM`, `ML-DSA`, `Falcon`, `ECDSA`.
    pub family: String,
    /// KEM (key exchange included) or signature.
    pub kind: Kind,
    /// Library or implementation behind the backend: `liboqs`, `openssl`,
    /// `pqcprof-native`, `cupqc`, `composite`.
    pub provider: String,
    /// Claimed NIST security category; for classical algorithms the
    /// category of equivalent strength; absent where none applies.
    pub nist_level: Option<u8>,
    /// Operation measured.
    pub operation: Operation,
    /// Throughput or latency.
    pub mode: Mode,
    /// ok, failed or skipped.
    pub status: Status,
    /// Why a record failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Operations per timed batch (window timing at several threads: all
    /// threads' operations in one shared round).
    pub batch: usize,
    /// Timed runs requested.
    pub runs: usize,
    /// Untimed warm-up runs before the first correctness gate, as run (at
    /// least one: the gate checks the last warm-up's outputs); for window
    /// timing (the sweep), warm-up operations of all threads together.
    pub warmup_runs: usize,
    /// Timed runs asked for (the same as `runs`), beside `runs_completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_requested: Option<usize>,
    /// Timed runs finished: fewer than `runs_requested` when a time budget
    /// (`--max-seconds`, `--deadline`) or a signal cut the record short;
    /// its statistics are over these runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_completed: Option<usize>,
    /// Why the record has fewer runs than requested (or no end-to-end or
    /// energy figure): which budget or signal cut it, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// `--runs auto`: the timed runs made before a stopping condition held
    /// (`runs_requested` is then the ceiling, `--max-runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_used: Option<usize>,
    /// `--runs auto`: which condition ended the timed runs; absent for a
    /// fixed number of runs and for a record a signal stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StoppedBy>,
    /// `--runs auto`: the noise target, the median's relative 95% interval
    /// half-width as a fraction (`--max-noise` / 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_noise: Option<f64>,
    /// `--runs auto`: the half-width of the distribution-free 95% interval
    /// of the median throughput over all the runs made, relative to that
    /// median, when timing stopped; absent below six runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_reached: Option<f64>,
    /// GPU records: `warm` (inputs and state left in L2 by the previous
    /// run) or `cold` (`--cache cold`: L2 flushed before each timed run,
    /// outside its window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// The floor under this batch's timed window: the same window around
    /// no work, timed by the same machinery (see `RunFile::floor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<EmptyWindow>,
    /// The median timed window over `floor.seconds`: under
    /// [`FLOOR_MULTIPLE`] the window is too close to the timer's own cost
    /// to be the operations' time alone, and the report marks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_over_floor: Option<f64>,
    /// GPU records timed behind the device-side hold: whether it outlasted
    /// the host's queueing in each timed run, and how long it waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldCheck>,
    /// How the batch was chosen: asked for, or calibrated to a launch time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_basis: Option<BatchBasis>,
    /// GPU records: the SM clock range and NVML throttle reasons seen over
    /// the timed runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<ClockReport>,
    /// Message length signed and verified, bytes (signatures only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<usize>,
    /// What the timed window covers.
    pub timed_window: String,
    /// The GPU kernel timed (our own kernels only): launch and resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelInfo>,
    /// The plugin that made the record (`--backend plugin:PATH`): name,
    /// version, ABI version, the library's SHA-256, memory kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<crate::schema::plugin::PluginInfo>,
    /// The correctness gate after warm-up (and again after the last run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateReport>,
    /// Operations executed in total over the timed window, for
    /// window-based timing (the sweep); absent for batch timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    /// Wall time of each timed run, seconds, in order.
    pub run_seconds: Vec<f64>,
    /// Throughput of each run (batch / run time), IQR-filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ops_per_sec: Option<Summary>,
    /// Operations per second: for batch timing (bench, gpu) the median of
    /// the kept runs' throughputs; for window timing (the sweep) all
    /// operations over the whole window, as pqc-sig-bench-c reports it (the
    /// per-batch median is then in `throughput_ops_per_sec.median`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_sec: Option<f64>,
    /// Milliseconds per operation, 1000 / `ops_per_sec` (wall clock,
    /// amortised over all threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_per_op: Option<f64>,
    /// CPU throughput records: TSC cycles one core spends per operation,
    /// the counter's rate (`metadata.tsc_mhz`) times `threads` over the
    /// median of the per-run throughputs (`throughput_ops_per_sec.median`),
    /// as eBACS and liboqs's speed tools count on x86-64
    /// (`crate::probe::tsc`). Absent on GPUs and without an invariant TSC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_op: Option<f64>,
    /// Latency mode: microseconds per single operation, IQR-filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<Summary>,
    /// Latency mode: 50th percentile of all runs, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p50_us: Option<f64>,
    /// Latency mode: 99th percentile of all runs, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p99_us: Option<f64>,
    /// What the sampler saw in each timed run.
    pub usage: Vec<RunUsage>,
    /// Peak memory per run, MiB, IQR-filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_mem_mb: Option<Summary>,
    /// Peak utilisation per run, percent, IQR-filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_util_pct: Option<Summary>,
    /// Mean power per run, watts (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_power_w: Option<Summary>,
    /// Energy per operation per run, microjoules (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_per_op_uj: Option<Summary>,
    /// What the sampler measured, or why its fields are empty.
    pub sampler: String,
    /// Sizes of keys, ciphertexts, secrets and signatures, bytes.
    pub sizes: Sizes,
    /// Median wall time of one timed batch, milliseconds: what a request
    /// waits when it is batched with `batch - 1` others (for GPU records,
    /// the kernel alone; `end_to_end.batch_ms` adds the copies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_ms: Option<f64>,
    /// GPU batches: inputs host to device, kernel, outputs device to host,
    /// from pinned host memory, timed the same way, beside the kernel-only
    /// figures above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_to_end: Option<EndToEnd>,
    /// Energy per operation over back-to-back launches of at least one
    /// second, with the method named (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::monitor::energy::EnergyFigure>,
    /// Latency mode: how a single operation was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_method: Option<String>,
    /// CUDA ordinal of the GPU, in a run over several GPUs of one node
    /// (`--device all` or a list); absent for one device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_ordinal: Option<usize>,
    /// Start and end of each timed run, seconds since the Unix epoch (host
    /// clock): what tells which runs of several devices or ranks overlapped
    /// in time. Absent where not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_windows_unix_s: Option<Vec<[f64; 2]>>,
    /// In a merged cluster run file: index of the rank in
    /// `cluster.ranks` that measured this record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// Stateful signatures (XMSS, LMS): the measured key's signature budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_budget: Option<SignatureBudget>,
    /// How the timed runs were made: `in-process` (warm-up, gate, then the
    /// runs in one process: the default) or `fresh-process` (`--fresh-process`:
    /// each run in a new process with no warm-up, as cuPQC_benchmark does),
    /// with the details.
    #[serde(default = "in_process")]
    pub process: String,
    /// Made on pqcprof's CPU stand-in CUDA driver (a test fixture), not on
    /// a GPU: its gate proves correctness and the launch path; its timings
    /// mean nothing, so it never reaches the cuPQC-shaped files or a speed
    /// comparison. Absent (false) everywhere else.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// A window shared by several threads (the sweep at more than one
    /// thread): what each thread did inside it. The record's own figures
    /// are over the shared window: all threads' operations from the first
    /// thread's start to the last thread's end. Empty for one thread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_thread: Vec<ThreadShare>,
    /// Where the worker threads ran: the CPUs they were pinned to within
    /// the process's allowed set (`sched_getaffinity`), or why they were
    /// not pinned. Absent where the backend does not pin (GPU, one thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinning: Option<String>,
}

/// One thread's part of a window shared by several threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadShare {
    /// Operations this thread completed in the shared window.
    pub operations: u64,
    /// Time this thread spent in its timed batches, seconds.
    pub busy_seconds: f64,
    /// `operations / busy_seconds`: this thread alone, not the whole.
    pub ops_per_sec: f64,
    /// Operations this thread ran in its warm-up (untimed).
    pub warmup_operations: u64,
}

/// How a record's batch was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchBasis {
    /// `requested` (`--batch`, a list or a sweep), `calibrated` (a GPU's
    /// default: the largest whole-wave batch whose launch fits the target
    /// time) or `default` (the backend's fixed default, e.g. on a CPU).
    pub method: String,
    /// Calibration: the batch of the calibration launch (whole waves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_batch: Option<usize>,
    /// Calibration: that launch's kernel time, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_seconds: Option<f64>,
    /// Calibration: the launch time aimed at, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_seconds: Option<f64>,
    /// Calibration: operations in one full wave of the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_wave: Option<u64>,
    /// What set the batch, in words (the target time, the device's memory,
    /// the one-wave floor).
    pub detail: String,
}

impl BatchBasis {
    /// A batch the user named.
    pub fn requested(detail: impl Into<String>) -> Self {
        BatchBasis {
            method: "requested".into(),
            calibration_batch: None,
            calibration_seconds: None,
            target_seconds: None,
            ops_per_wave: None,
            detail: detail.into(),
        }
    }
}

/// SM clocks and throttling over a GPU record's timed runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockReport {
    /// Lowest SM clock sampled, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_min_mhz: Option<f64>,
    /// Highest SM clock sampled, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_max_mhz: Option<f64>,
    /// Every NVML throttle reason seen in any run.
    pub throttle_reasons: Vec<String>,
    /// Whether a power or thermal reason held the clocks down in some run.
    pub throttled: bool,
}

/// End-to-end timing of a GPU batch: copies in, kernel, copies out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndToEnd {
    /// What the timed window covers.
    pub timed_window: String,
    /// Wall time of each end-to-end run, seconds.
    pub run_seconds: Vec<f64>,
    /// Throughput of each run, IQR-filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ops_per_sec: Option<Summary>,
    /// Median operations per second end to end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_sec: Option<f64>,
    /// Median time of one batch end to end, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_ms: Option<f64>,
    /// Why it was not measured (e.g. pinned memory refused); the
    /// kernel-only figures stand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
}

/// How many signatures a stateful key (XMSS, LMS) had around one measured
/// operation, as liboqs counts them (`OQS_SIG_STFL_sigs_remaining` and
/// `_sigs_total`); with several threads, the first thread's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureBudget {
    /// Signatures one key allows in all.
    pub total: u64,
    /// Signatures the key had left before the operation was measured.
    pub remaining_before: u64,
    /// Signatures left after the last measured operation (signing spends
    /// one each; key generation starts a new key with all of them).
    pub remaining_after: u64,
}

/// What records written before `process` existed did: everything in one
/// process.
fn in_process() -> String {
    IN_PROCESS.into()
}

/// `Record::process` of the default method.
pub const IN_PROCESS: &str = "in-process";
/// The start of `Record::process` for `--fresh-process`.
pub const FRESH_PROCESS: &str = "fresh-process";

impl Record {
    /// A `skipped` record of `operation` of `algorithm` on `backend`,
    /// nothing measured yet: one thread, throughput mode, no batch, no
    /// sizes. Callers set what they know with struct update syntax, so a
    /// field added to `Record` is defaulted here once.
    pub fn unmeasured(
        backend: String,
        device: Device,
        provider: String,
        algorithm: String,
        family: String,
        kind: Kind,
        operation: Operation,
    ) -> Record {
        Record {
            backend,
            device,
            threads: 1,
            algorithm,
            family,
            kind,
            provider,
            nist_level: None,
            operation,
            mode: Mode::Throughput,
            status: Status::Skipped,
            reason: None,
            batch: 0,
            runs: 0,
            warmup_runs: 0,
            runs_requested: None,
            runs_completed: None,
            cut: None,
            runs_used: None,
            stopped_by: None,
            max_noise: None,
            noise_reached: None,
            cache: None,
            floor: None,
            window_over_floor: None,
            hold: None,
            batch_basis: None,
            clocks: None,
            message_bytes: None,
            timed_window: String::new(),
            kernel: None,
            plugin: None,
            gate: None,
            iterations: None,
            run_seconds: vec![],
            throughput_ops_per_sec: None,
            ops_per_sec: None,
            ms_per_op: None,
            cycles_per_op: None,
            latency_us: None,
            latency_p50_us: None,
            latency_p99_us: None,
            usage: vec![],
            peak_mem_mb: None,
            peak_util_pct: None,
            mean_power_w: None,
            energy_per_op_uj: None,
            sampler: String::new(),
            sizes: Sizes::default(),
            batch_ms: None,
            end_to_end: None,
            energy: None,
            latency_method: None,
            gpu_ordinal: None,
            run_windows_unix_s: None,
            rank: None,
            signature_budget: None,
            emulated: false,
            process: IN_PROCESS.into(),
            per_thread: vec![],
            pinning: None,
        }
    }
}

/// The settings a run was made with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The command line, as typed.
    pub command_line: Vec<String>,
    /// Timed runs per record; with `--runs auto`, the ceiling (`--max-runs`;
    /// each record says its target and how many runs it used).
    pub runs: usize,
    /// Untimed warm-up runs per record.
    pub warmup_runs: usize,
    /// Operations per batch.
    pub batch: usize,
    /// Thread counts measured on CPU backends.
    pub threads: Vec<usize>,
    /// Message length for signatures, bytes of 0xAB.
    pub message_bytes: usize,
    /// ML-DSA context string, hex.
    pub context_hex: String,
    /// Sampler period, milliseconds.
    pub sample_period_ms: f64,
    /// Where inputs' randomness comes from.
    pub randomness: String,
    /// Backends asked for.
    pub backends: Vec<String>,
    /// Algorithms asked for.
    pub algorithms: Vec<Algorithm>,
    /// Operations asked for (empty: all).
    pub operations: Vec<Operation>,
    /// What each backend actually used: its batches and sampler period
    /// (`batch` and `sample_period_ms` above are the CPU's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_backend: Vec<BackendSettings>,
    /// True for a batch sweep (`--batch-sweep`): its cuPQC-shaped headline
    /// files hold each record's largest batch, and never replace the ones
    /// a benchmark run wrote in the same folder.
    #[serde(default)]
    pub batch_sweep: bool,
}

#[cfg(test)]
impl RunConfig {
    /// Settings for tests' run files: 3 runs of batch 10, nothing asked for.
    pub(crate) fn for_tests() -> RunConfig {
        RunConfig {
            command_line: vec!["test".into()],
            runs: 3,
            warmup_runs: 0,
            batch: 10,
            threads: vec![1],
            message_bytes: 0,
            context_hex: String::new(),
            sample_period_ms: 1.0,
            randomness: "test only".into(),
            backends: vec![],
            algorithms: vec![],
            operations: vec![],
            per_backend: vec![],
            batch_sweep: false,
        }
    }
}

/// The settings one backend ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendSettings {
    /// Backend name.
    pub backend: String,
    /// Batches measured, or how they were chosen (`default: whole waves`).
    pub batches: String,
    /// Sampler period, milliseconds.
    pub sample_period_ms: f64,
}

/// `SOME_FAILED`, saying how many, when a record failed (its gate or a
/// run); else `OK`. The last word of every measuring command.
pub fn exit_for_failures(records: &[Record]) -> i32 {
    let failed = records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .count();
    if failed > 0 {
        log::error!("{failed} record(s) failed; reasons are in the run file and above");
        return crate::core::exit::SOME_FAILED;
    }
    crate::core::exit::OK
}
