//! Backends execute batches of one (algorithm, operation). One runner serves
//! them all, so CPU and GPU results share one schema, one statistics path
//! and one report.

use crate::schema::device::Device;
use crate::schema::device::DeviceKind;
use crate::schema::device::GateReport;
pub mod cupqc;
pub mod gate;
pub mod liboqs;
#[cfg(test)]
pub mod mock;
pub mod native_gpu;
pub mod null;
pub mod parallel;
pub mod plugin;

use crate::core::catalog::{Algorithm, Operation};
use std::time::Duration;

/// Per-batch settings every backend honours.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchConfig {
    /// Operations in one timed batch.
    pub batch: usize,
    /// Threads a CPU backend spreads the batch over (GPU backends ignore it).
    pub threads: usize,
    /// Message signed and verified: this many bytes of 0xAB.
    pub message_size: usize,
    /// ML-DSA context string (empty by default, as cuPQC_benchmark).
    pub context: Vec<u8>,
    /// What the correctness gate checks of each run, and its seed.
    pub gate: gate::GateSettings,
}

impl BatchConfig {
    /// The message every signature operation uses.
    pub fn message(&self) -> Vec<u8> {
        vec![0xAB; self.message_size]
    }
}

/// What the device-side hold before one timed GPU window did: how long it
/// was asked to wait and waited, and whether it was still waiting when the
/// host had queued the window's work (else the window holds host time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HoldRun {
    /// The wait asked for.
    pub requested: Duration,
    /// The wait as the device's events saw it: from an event queued before
    /// the hold to the window's start event.
    pub measured: Duration,
    /// The window's start event was still pending once its end event was
    /// queued: the device reached the window after the host was done.
    pub covered: bool,
}

pub use gate::Checkpoint;

/// One (algorithm, operation, batch) made ready: inputs exist, buffers are
/// allocated, nothing of that is timed.
///
/// The runner calls `arm` before every run whose outputs it will check and
/// `check` after it, both outside the timed window: the correctness gate
/// ([`gate`]) around every run.
pub trait Prepared {
    /// Makes the next run ready, untimed: inputs made afresh where the
    /// operation allows it, every output filled with the run's poison byte
    /// (the gate's), so that an output the run does not write is found.
    fn arm(&mut self) -> anyhow::Result<()>;
    /// Runs the whole batch once and returns the timed window.
    fn run(&mut self) -> anyhow::Result<Duration>;
    /// Checks the outputs of the most recent `run` (armed before it): the
    /// correctness gate. An `Err` carries the reason the batch must not be
    /// reported as fine.
    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport>;
    /// Threads (CPU) that execute the batch; 1 for a GPU launch.
    fn threads(&self) -> usize;
    /// What the timed window covers, said in the record.
    fn timed_window(&self) -> &'static str;
    /// Where the last run's worker threads ran (CPU backends with several
    /// threads), said in the record; `None` where nothing is pinned.
    fn pinning(&self) -> Option<String> {
        None
    }
    /// The GPU kernel timed, its launch and resources; `None` on a CPU or
    /// where the kernel is not ours to inspect.
    fn kernel(&self) -> Option<crate::schema::device::KernelInfo> {
        None
    }
    /// Runs the batch end to end (inputs to the device, the work, outputs
    /// back) and returns that window; `None` where there is nothing to copy
    /// (a CPU).
    fn run_end_to_end(&mut self) -> Option<anyhow::Result<Duration>> {
        None
    }
    /// Runs the batch once as a caller serving requests would, nothing
    /// timed and nothing added: on a GPU the inputs' copies in, the work
    /// and the outputs' copies back, waited for; by default one `run`.
    fn serve(&mut self) -> anyhow::Result<()> {
        self.run().map(drop)
    }
    /// Makes whatever `serve` needs beyond `prepare` (on a GPU the pinned
    /// staging and the host copy of the inputs), so that no served batch
    /// pays for it; by default nothing.
    fn prepare_serving(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Runs `launches` batches back to back, untimed per batch (the energy
    /// window); by default one `run` after another.
    fn run_back_to_back(&mut self, launches: usize) -> anyhow::Result<()> {
        for _ in 0..launches {
            self.run()?;
        }
        Ok(())
    }
    /// One timed window around no work, measured by the same machinery
    /// as `run` (the timer, and on a CPU the threads' release and join):
    /// the floor under every window `run` returns. `None` where the
    /// backend has no way to time an empty window.
    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        None
    }
    /// How many empty launches per second the device takes back to back
    /// (a GPU: the empty kernel); `None` where there is no launch.
    fn empty_launch_rate(&mut self) -> Option<anyhow::Result<f64>> {
        None
    }
    /// GPU batches: `warm` (what the last run left in L2 stays there) or
    /// `cold` (L2 flushed before each timed run); `None` on a CPU.
    fn cache(&self) -> Option<&'static str> {
        None
    }
    /// What `empty_window` times, said in the run file.
    fn empty_window_method(&self) -> &'static str {
        ""
    }
    /// What the end-to-end window covers, said in the record; empty where
    /// there is none (`run_end_to_end` gives `None`).
    fn end_to_end_window(&self) -> &'static str {
        ""
    }
    /// How a single operation is timed in latency mode, said in the
    /// record; by default the timed window itself.
    fn latency_method(&self) -> &'static str {
        self.timed_window()
    }
    /// The hold before the last `run`'s window, where the window is queued
    /// behind one (our GPU kernels); `None` elsewhere.
    fn last_hold(&self) -> Option<HoldRun> {
        None
    }
}

/// A source of batches: liboqs on the CPU, our kernels or cuPQC on a GPU.
pub trait Backend {
    /// Stable name used on the command line and in files (`liboqs-cpu`).
    fn name(&self) -> &str;
    /// The library or implementation behind it (`liboqs`, `pqcprof-native`).
    fn provider(&self) -> &str;
    /// Whether this backend's records are emulated: a GPU backend running
    /// on pqcprof's CPU stand-in CUDA driver (a test fixture) says so in
    /// every record, which then never reaches a speed claim.
    fn emulated(&self) -> bool {
        self.device().kind == DeviceKind::Gpu && crate::probe::gpu::standin_driver().is_some()
    }
    /// The device it runs on.
    fn device(&self) -> Device;
    /// The plugin behind it (`--backend plugin:PATH`), said in every
    /// record; `None` for the built-in backends.
    fn plugin(&self) -> Option<crate::schema::plugin::PluginInfo> {
        None
    }
    /// A plugin's known-answer vectors of `algs`, run where it is measured
    /// (its worker process): every case, or the first `sample` of each
    /// group, only the `groups` given (indices in the vector runner's list)
    /// when any are; the vector runner's report as JSON. `None` for the
    /// built-in backends, whose vectors the run starts itself.
    fn plugin_vectors(
        &self,
        _algs: &[Algorithm],
        _sample: Option<usize>,
        _groups: &[usize],
    ) -> Option<anyhow::Result<serde_json::Value>> {
        None
    }
    /// Whether it implements `op` of `alg`; by default, every operation
    /// the algorithm has.
    fn supports(&self, alg: Algorithm, op: Operation) -> bool {
        alg.has_operation(op)
    }
    /// The batch to measure when the user names none, given the command's
    /// default in `cfg.batch`: a GPU rounds it up to whole waves of its own
    /// occupancy.
    fn default_batch(&mut self, _alg: Algorithm, _op: Operation, cfg: &BatchConfig) -> usize {
        cfg.batch
    }
    /// Whether `calibrated_batch` chooses the default batch by time here
    /// (said in the run file's settings before any record runs).
    fn calibrates_default_batch(&self) -> bool {
        false
    }
    /// The default batch chosen by time, where the backend can calibrate
    /// (a GPU): a calibration launch, then the largest whole-wave batch
    /// whose launch is expected to take at most `target`, with how it was
    /// chosen. `None`: no calibration here, `default_batch` applies.
    fn calibrated_batch(
        &mut self,
        _alg: Algorithm,
        _op: Operation,
        _cfg: &BatchConfig,
        _target: std::time::Duration,
    ) -> Option<anyhow::Result<(usize, crate::schema::record::BatchBasis)>> {
        None
    }
    /// The largest batch of `op` that fits in the device's memory now, when
    /// the backend knows (a sweep without a named top goes up to it).
    fn max_batch(&mut self, _alg: Algorithm, _op: Operation, _cfg: &BatchConfig) -> Option<usize> {
        None
    }
    /// Makes inputs and buffers for one batch, untimed.
    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>>;
}

/// What records and the NVML sampler know of the GPU behind `ctx`: its
/// description (name, memory) and its PCI bus id (`00000000:01:00.0`, as
/// NVML takes it).
pub fn gpu_identity(ctx: &cudarc::driver::CudaContext, ordinal: usize) -> (Device, String) {
    use cudarc::driver::sys::CUdevice_attribute as A;
    let attr = |a| ctx.attribute(a).map(|v| v as usize).unwrap_or(0);
    let pci_bus_id = format!(
        "{:08x}:{:02x}:{:02x}.0",
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
    );
    let device = Device {
        kind: DeviceKind::Gpu,
        name: ctx.name().unwrap_or_else(|_| format!("GPU {ordinal}")),
        memory_total_mb: (ctx.total_mem().unwrap_or(0) / (1024 * 1024)) as u64,
    };
    (device, pci_bus_id)
}
