//! Samplers that run beside the timed batches and record what the device
//! used: peak memory and utilisation, and on GPUs power and energy.

pub mod energy;
pub mod host;
pub mod nvml;
pub mod process;

use serde::{Deserialize, Serialize};

/// What a sampler saw during one timed run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunUsage {
    /// Peak memory in use during the run, MiB (process RSS on a CPU, device
    /// memory in use on a GPU).
    pub peak_mem_mb: Option<f64>,
    /// Peak utilisation during the run, percent (all cores of the host, or
    /// the GPU's own utilisation counter).
    pub peak_util_pct: Option<f64>,
    /// Mean utilisation over the run, percent.
    pub mean_util_pct: Option<f64>,
    /// Mean board power over the run, watts (GPU only).
    pub mean_power_w: Option<f64>,
    /// Energy the device used over the run, joules (GPU only).
    pub energy_j: Option<f64>,
    /// Peak SM clock, MHz (GPU only).
    pub peak_sm_clock_mhz: Option<f64>,
    /// Lowest SM clock sampled during the run, MHz (GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_sm_clock_mhz: Option<f64>,
    /// NVML clock throttle reasons seen in any sample of the run, by name
    /// (`sw_power_cap`, `hw_thermal_slowdown`, ...; GPU only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle_reasons: Vec<String>,
    /// Number of samples taken.
    pub samples: usize,
    /// Where `energy_j` came from (`energy counter`, `integrated power
    /// samples`), or `unavailable`; absent where the sampler has no energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_source: Option<String>,
    /// What the sampler could not measure in this run, one line each: a
    /// field the device refused, samples that failed part way (NVML gone),
    /// a call that never returned. A figure a gap names is absent or
    /// covers only the samples that answered; it is never a zero.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
}

/// Something that samples a device while a run is timed.
pub trait Sampler {
    /// Starts sampling in the background.
    fn start(&mut self) -> anyhow::Result<()>;
    /// Stops sampling and returns what it saw since `start`.
    fn stop(&mut self) -> anyhow::Result<RunUsage>;
    /// What is measured, or why some fields stay empty.
    fn describe(&self) -> String;
    /// The device's cumulative energy counter, millijoules, where it has
    /// one (NVML on Volta and newer): read around an energy window.
    fn energy_counter_mj(&mut self) -> Option<u64> {
        None
    }
    /// Whether `stop` can give energy integrated from power samples, where
    /// there is no counter (an energy window is then sampled instead).
    fn measures_power(&self) -> bool {
        false
    }
}
