//! Metadata about the machine and the software measured, stored in every
//! run file so that a number can be traced to where it came from.

use crate::gpu::probe::GpuInfo;
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
    pub slurm: Option<crate::cluster::rank::SlurmRank>,
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
}

/// The clock every CPU timing uses (`std::time::Instant`); GPU records
/// time kernels with CUDA events and say so in their `timed_window`.
pub const TIMER: &str = "std::time::Instant (CLOCK_MONOTONIC on Linux); GPU kernels: CUDA events";

/// Host facts without GPU probing (cheap).
pub struct Host {
    /// CPU model.
    pub cpu: String,
    /// Logical cores.
    pub cores_logical: usize,
    /// Physical cores.
    pub cores_physical: Option<usize>,
    /// RAM in MiB.
    pub memory_total_mb: u64,
}

/// Reads CPU and memory facts.
pub fn host() -> Host {
    use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
    let sys = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    let cpu = sys
        .cpus()
        .first()
        .map(|c| c.brand().trim().to_string())
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "unknown CPU".into());
    Host {
        cpu,
        cores_logical: crate::backend::parallel::available_cores(),
        cores_physical: System::physical_core_count(),
        memory_total_mb: sys.total_memory() / (1024 * 1024),
    }
}

/// Collects the metadata; `gpu` is the result of a GPU probe if one was made.
pub fn collect(gpu: Option<&crate::gpu::probe::GpuProbe>) -> Metadata {
    let h = host();
    let nvidia_driver = gpu
        .filter(|g| g.nvml.present)
        .map(|g| g.nvml.detail.trim_start_matches("driver ").to_string());
    let hostname = sysinfo::System::host_name().unwrap_or_else(|| "unknown".into());
    Metadata {
        slurm: crate::cluster::rank::current(&hostname),
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        hostname,
        cpu: h.cpu,
        cores_logical: h.cores_logical,
        cores_physical: h.cores_physical,
        memory_total_mb: h.memory_total_mb,
        os: sysinfo::System::long_os_version().unwrap_or_else(|| std::env::consts::OS.into()),
        kernel: sysinfo::System::kernel_version().unwrap_or_else(|| "unknown".into()),
        arch: std::env::consts::ARCH.into(),
        liboqs_version: crate::backend::liboqs::version(),
        openssl_version: openssl::version::version().to_string(),
        pqcprof_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("PQCPROF_GIT_COMMIT").into(),
        rustc: env!("PQCPROF_RUSTC").into(),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .into(),
        cuda_driver: gpu
            .filter(|g| g.driver.present)
            .map(|g| g.driver.detail.clone()),
        nvidia_driver,
        gpus: gpu.map(|g| g.gpus.clone()).unwrap_or_default(),
        c_compiler: env!("PQCPROF_CC").into(),
        openssl_providers: crate::sweep::openssl::providers(),
        timer: TIMER.into(),
    }
}
