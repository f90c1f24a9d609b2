//! Metadata about the machine and the software measured, stored in every
//! run file so that a number can be traced to where it came from: the
//! host, its GPUs as the driver reported them, the libraries and tools, and
//! the Slurm rank a process was. [`crate::probe`] fills it in.

use serde::{Deserialize, Serialize};

/// The machine and the software a run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// Start of the run, UTC, RFC 3339.
    pub date: String,
    /// Host name.
    pub hostname: String,
    /// CPU model.
    pub cpu: String,
    /// Logical cores.
    pub cores_logical: usize,
    /// Physical cores, when known.
    pub cores_physical: Option<usize>,
    /// Total RAM, MiB.
    pub memory_total_mb: u64,
    /// OS name and version.
    pub os: String,
    /// Kernel version.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// liboqs version linked in.
    pub liboqs_version: String,
    /// OpenSSL version linked in.
    pub openssl_version: String,
    /// pqcprof version.
    pub pqcprof_version: String,
    /// Git commit pqcprof was built from (with `-dirty` for local changes).
    pub git_commit: String,
    /// rustc that built pqcprof.
    pub rustc: String,
    /// Build profile.
    pub profile: String,
    /// CUDA driver API version, when a driver is present.
    pub cuda_driver: Option<String>,
    /// NVIDIA driver version (from NVML), when present.
    pub nvidia_driver: Option<String>,
    /// GPUs the driver lists.
    pub gpus: Vec<GpuInfo>,
    /// The Slurm task that made the run, when one did (a cluster rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmRank>,
    /// C compiler of the build (the vendored liboqs and OpenSSL, our host
    /// code): path and first line of `--version`.
    #[serde(default)]
    pub c_compiler: String,
    /// OpenSSL providers active when the metadata was collected.
    #[serde(default)]
    pub openssl_providers: Vec<String>,
    /// The clock CPU timings are read from.
    #[serde(default)]
    pub timer: String,
    /// How busy the machine was while the run measured (other processes'
    /// CPU time, load average); absent in files written before it was
    /// recorded and where `/proc` cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_load: Option<MachineLoad>,
    /// The invariant time-stamp counter's rate in MHz, measured against
    /// `timer` (`crate::probe::tsc`): what CPU records' `cycles_per_op`
    /// count in. Absent without an invariant TSC (and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tsc_mhz: Option<f64>,
}

/// How busy the machine was over a run, from `/proc` (Linux).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineLoad {
    /// Seconds from the start of the run to the last update of this figure.
    pub seconds: f64,
    /// CPU time every other process used over those seconds, percent of
    /// the whole machine's CPU time (all cores): `/proc/stat` busy time
    /// less this process's own and its children's, live ones included
    /// (plugin workers, `--fresh-process` runs: `/proc/*/stat`).
    pub other_processes_cpu_pct: Option<f64>,
    /// One-minute load average at the start, from `/proc/loadavg`.
    pub load_average_start: Option<f64>,
    /// One-minute load average at the last update.
    pub load_average_end: Option<f64>,
    /// Logical cores the load is set against.
    pub cores: usize,
}

/// Other processes' share of the machine above which a run counts as made
/// on a busy machine: a tenth of all cores' time.
pub const BUSY_OTHER_CPU_PCT: f64 = 10.0;

impl MachineLoad {
    /// Why the run counts as made on a busy machine, or `None` when it
    /// was not busy: other processes over `BUSY_OTHER_CPU_PCT`, or a load
    /// average above the core count.
    pub fn busy(&self) -> Option<String> {
        let other = self
            .other_processes_cpu_pct
            .filter(|p| *p > BUSY_OTHER_CPU_PCT);
        let load = [self.load_average_start, self.load_average_end]
            .into_iter()
            .flatten()
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            .filter(|l| *l > self.cores as f64);
        if other.is_none() && load.is_none() {
            return None;
        }
        let mut said = vec![];
        if let Some(p) = other {
            said.push(format!(
                "other processes used {p:.0}% of the machine's CPU time"
            ));
        }
        if let Some(l) = load {
            said.push(format!("load average {l:.1} on {} cores", self.cores));
        }
        Some(said.join(", "))
    }
}

/// Oldest compute capability our kernels and cuPQC support (Turing).
pub const MIN_COMPUTE_CAPABILITY: (u32, u32) = (7, 5);

/// One GPU as the driver reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// CUDA device ordinal.
    pub ordinal: usize,
    /// Name from cuDeviceGetName.
    pub name: String,
    /// Compute capability (major, minor) from device attributes.
    pub compute_capability: (u32, u32),
    /// Total device memory, MiB.
    pub memory_total_mb: u64,
}

impl GpuInfo {
    /// Whether our kernels and cuPQC can run on it.
    pub fn supported(&self) -> bool {
        self.compute_capability >= MIN_COMPUTE_CAPABILITY
    }
}

/// A task of a Slurm job step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlurmRank {
    /// SLURM_JOB_ID.
    pub job_id: String,
    /// SLURM_STEP_ID, when in a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The batch script's name for the step (`gpu`, `cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// SLURM_PROCID: the rank within the step.
    pub procid: usize,
    /// Tasks in the step (SLURM_STEP_NUM_TASKS, else SLURM_NTASKS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntasks: Option<usize>,
    /// SLURM_LOCALID: the rank within its node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_id: Option<usize>,
    /// SLURM_NODEID: the node's index in the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<usize>,
    /// SLURMD_NODENAME: the node's name in Slurm.
    pub node: String,
    /// CUDA_VISIBLE_DEVICES as Slurm set it: the GPU it gave this task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_visible_devices: Option<String>,
}
