//! Energy per operation, measured right. NVIDIA's NVML documentation says
//! `nvmlDeviceGetPowerUsage` returns power averaged over one second on
//! Ampere (except GA100) and newer GPUs, so a batch of a few milliseconds
//! would report mostly the second before it; instantaneous power is the
//! field value `NVML_FI_DEV_POWER_INSTANT`, and
//! `nvmlDeviceGetTotalEnergyConsumption` is a millijoule counter (Volta and
//! newer). See the NVML API reference, "Device Queries"
//! (<https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html>).
//! So energy comes from that counter, read before and after back-to-back
//! launches that last at least `MIN_WINDOW_S`, and the record names the
//! method.

use serde::{Deserialize, Serialize};

/// Shortest window of back-to-back launches energy is measured over,
/// seconds: longer than NVML's one-second power average, and many counter
/// increments long.
pub const MIN_WINDOW_S: f64 = 1.0;

/// Most launches one energy window repeats, whatever the batch's time.
pub const MAX_LAUNCHES: usize = 1_000_000;

/// Launches of `run_seconds` each that fill `MIN_WINDOW_S`, at least one.
pub fn launches_for_window(run_seconds: f64) -> usize {
    if !(run_seconds.is_finite() && run_seconds > 0.0) {
        return 1;
    }
    ((MIN_WINDOW_S / run_seconds).ceil() as usize).clamp(1, MAX_LAUNCHES)
}

/// Joules between two readings of the millijoule counter; `None` when the
/// counter did not advance (or went back: a reset or a wrap).
pub fn counter_joules(start_mj: u64, end_mj: u64) -> Option<f64> {
    (end_mj > start_mj).then(|| (end_mj - start_mj) as f64 / 1000.0)
}

/// Energy per operation over one window of back-to-back launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyFigure {
    /// Joules per operation.
    pub joules_per_op: f64,
    /// Operations per joule.
    pub ops_per_joule: f64,
    /// Joules the device used over the window.
    pub joules: f64,
    /// Operations executed in the window.
    pub ops: u64,
    /// Launches (batches) in the window.
    pub launches: usize,
    /// Length of the window, seconds (wall clock).
    pub window_seconds: f64,
    /// How the joules were measured.
    pub method: String,
}

/// The figure for `joules` over `launches` batches of `batch` operations;
/// `None` without energy or operations.
pub fn figure(
    joules: f64,
    batch: usize,
    launches: usize,
    window_seconds: f64,
    method: &str,
) -> Option<EnergyFigure> {
    let ops = (batch as u64).checked_mul(launches as u64)?;
    if ops == 0 || !(joules.is_finite() && joules > 0.0) {
        return None;
    }
    Some(EnergyFigure {
        joules_per_op: joules / ops as f64,
        ops_per_joule: ops as f64 / joules,
        joules,
        ops,
        launches,
        window_seconds,
        method: method.to_string(),
    })
}

/// The method named in a record measured from the counter.
pub fn counter_method(launches: usize, window_seconds: f64) -> String {
    format!(
        "NVML total-energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ) read before and after {launches} back-to-back launches over {window_seconds:.2} s"
    )
}

/// The energy source a sampler names for joules integrated from power
/// samples.
pub const INTEGRATED: &str = "integrated power samples";

/// The method named in a record measured by integrating power samples,
/// where the device has no energy counter or refuses it.
pub fn integrated_method(launches: usize, window_seconds: f64) -> String {
    format!(
        "NVML power samples integrated (trapezoids) over {launches} back-to-back launches over {window_seconds:.2} s (no energy counter)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_last_at_least_a_second() {
        assert_eq!(launches_for_window(0.004), 250);
        assert_eq!(launches_for_window(0.003), 334);
        assert_eq!(launches_for_window(2.5), 1);
        assert_eq!(launches_for_window(1e-12), MAX_LAUNCHES);
        assert_eq!(launches_for_window(0.0), 1);
        assert_eq!(launches_for_window(f64::NAN), 1);
    }

    #[test]
    fn energy_from_counter_readings() {
        // 1,000,000 mJ -> 1,003,500 mJ: 3.5 J.
        let j = counter_joules(1_000_000, 1_003_500).unwrap();
        assert!((j - 3.5).abs() < 1e-12);
        assert_eq!(counter_joules(5, 5), None);
        assert_eq!(counter_joules(9, 5), None);
        // 3.5 J over 250 launches of 100,000: 25,000,000 operations.
        let f = figure(j, 100_000, 250, 1.01, &counter_method(250, 1.01)).unwrap();
        assert_eq!(f.ops, 25_000_000);
        assert!((f.joules_per_op - 1.4e-7).abs() < 1e-18);
        assert!((f.ops_per_joule - 25_000_000.0 / 3.5).abs() < 1e-6);
        assert!(f.method.contains("250 back-to-back launches over 1.01 s"));
        assert_eq!(figure(0.0, 10, 1, 1.0, "x"), None);
        assert_eq!(figure(1.0, 0, 1, 1.0, "x"), None);
    }
}
