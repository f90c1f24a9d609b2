//! What a record ran on and what checked it: the device (CPU or GPU), the
//! GPU kernel's launch resources, and what a passed correctness gate
//! checked. Shared by backends, the run file and the report.

use serde::{Deserialize, Serialize};

/// What executes the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// One or more CPU cores.
    Cpu,
    /// One GPU.
    Gpu,
}

/// The device a backend runs on, as named in records and cuPQC-shaped files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// CPU or GPU.
    pub kind: DeviceKind,
    /// Model name as the OS or the driver reports it.
    pub name: String,
    /// Total memory: host RAM for a CPU, device memory for a GPU, in MiB.
    pub memory_total_mb: u64,
}

/// What a correctness gate checked, when it passed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// How many operations of the batch were checked against the
    /// reference in one check (the sample, or every item with `--gate full`).
    pub checked_ops: usize,
    /// One line per kind of check made.
    pub checks: Vec<String>,
    /// How much of every run the gate looked at: the runs it checked, the
    /// items per run, the seed of its samples; absent in files written
    /// before it was kept, and for records whose implementation has no
    /// batch outputs to look at (the sweep's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Box<GateCoverage>>,
}

impl GateReport {
    /// A report of `checked_ops` items and these checks, no coverage.
    pub fn new(checked_ops: usize, checks: Vec<String>) -> Self {
        GateReport {
            checked_ops,
            checks,
            coverage: None,
        }
    }

    /// Adds `other`'s checks and runs to this one (the same batch checked
    /// again, or another part of it): runs and items add up, each line of
    /// `checks` is kept once.
    pub fn absorb(&mut self, other: GateReport) {
        self.checked_ops = self.checked_ops.max(other.checked_ops);
        for c in other.checks {
            if !self.checks.contains(&c) {
                self.checks.push(c);
            }
        }
        self.coverage = match (self.coverage.take(), other.coverage) {
            (Some(mut a), Some(b)) => {
                a.absorb(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
    }
}

/// How much of a batch's runs the gate checked (each figure per record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateCoverage {
    /// `sample` (every item checked written, a fresh seeded sample checked
    /// against the reference each run) or `full` (every item against the
    /// reference each run: `--gate full`).
    pub mode: String,
    /// The seed the samples are drawn from: with a run's number it gives
    /// that run's items again.
    pub seed: u64,
    /// Runs whose outputs were checked: the warm-up's, every timed run's,
    /// the end-to-end and energy windows' last.
    pub runs: usize,
    /// Items whose outputs were checked written (the poison gone) in each
    /// checked run: the batch, or an implementation's output slots where
    /// it cycles through fewer (liboqs's ring).
    pub written_per_run: usize,
    /// Items checked against the reference over all runs, counted once a run.
    pub sampled: usize,
    /// Guard bytes checked on each side of every buffer pqcprof allocates
    /// for the implementation (0: none; a GPU's own allocations).
    pub guard_bytes: usize,
    /// How the inputs were made and refreshed between runs.
    pub inputs: String,
    /// Wall time the gate's work took over the record, seconds: making
    /// each run ready (fresh inputs, poison) and checking it, all outside
    /// the timed windows; 0 in files written before it was kept.
    #[serde(default)]
    pub seconds: f64,
}

impl GateCoverage {
    /// `other`'s runs and items added (another check of the same batch).
    pub fn absorb(&mut self, other: &GateCoverage) {
        self.runs += other.runs;
        self.sampled += other.sampled;
        self.seconds += other.seconds;
        self.written_per_run = self.written_per_run.max(other.written_per_run);
    }
}

/// What a run file without `kernel.variant` ran: the one-thread kernels.
fn thread_variant() -> String {
    "thread".into()
}

/// A GPU kernel's launch and the resources the driver reports for it: what
/// explains its throughput before any profiler is run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// Entry point, e.g. `mlkem768_keygen`.
    pub name: String,
    /// What the driver loaded: machine code for the device's architecture,
    /// or PTX it compiled itself.
    pub image: String,
    /// The kernel variant: `thread` (one thread per operation), `warp` (one
    /// warp per operation) or `block` (one block per operation).
    #[serde(default = "thread_variant")]
    pub variant: String,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Static shared memory per block, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_bytes_per_block: Option<u32>,
    /// Blocks in the launch.
    pub blocks: u32,
    /// Registers per thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers_per_thread: Option<u32>,
    /// Local memory (stack and spills) per thread, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_bytes_per_thread: Option<u32>,
    /// Blocks one multiprocessor holds at once (the driver's occupancy
    /// calculator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_blocks_per_sm: Option<u32>,
    /// Resident threads per multiprocessor over its maximum, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy_pct: Option<f64>,
    /// Multiprocessors of the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiprocessors: Option<u32>,
    /// Waves the launch ran in and how full the last one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waves: Option<crate::core::waves::Waves>,
}
