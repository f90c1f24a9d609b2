//! Metadata about the machine and the software measured, stored in every
//! run file so that a number can be traced to where it came from.

use crate::schema::metadata::Metadata;

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
        cores_logical: available_cores(),
        cores_physical: System::physical_core_count(),
        memory_total_mb: sys.total_memory() / (1024 * 1024),
    }
}

/// Collects the metadata; `gpu` is the result of a GPU probe if one was made.
pub fn collect(gpu: Option<&crate::probe::gpu::GpuProbe>) -> Metadata {
    let h = host();
    let nvidia_driver = gpu
        .filter(|g| g.nvml.present)
        .map(|g| g.nvml.detail.trim_start_matches("driver ").to_string());
    let hostname = sysinfo::System::host_name().unwrap_or_else(|| "unknown".into());
    Metadata {
        slurm: crate::probe::slurm::current(&hostname),
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        hostname,
        cpu: h.cpu,
        cores_logical: h.cores_logical,
        cores_physical: h.cores_physical,
        memory_total_mb: h.memory_total_mb,
        os: sysinfo::System::long_os_version().unwrap_or_else(|| std::env::consts::OS.into()),
        kernel: sysinfo::System::kernel_version().unwrap_or_else(|| "unknown".into()),
        arch: std::env::consts::ARCH.into(),
        liboqs_version: crate::probe::libraries::liboqs_version(),
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
        openssl_providers: crate::probe::libraries::openssl_providers(),
        timer: TIMER.into(),
    }
}

/// Number of logical cores, at least one.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
