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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// How many operations of the batch were checked.
    pub checked_ops: usize,
    /// One line per kind of check made.
    pub checks: Vec<String>,
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
