//! A stand-in for a backend that could not be created (no GPU, no SDK, a
//! device that failed to open): it measures nothing, and the runner fills
//! its records as skipped, with the reason.

use crate::backend::Backend;
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::DeviceKind;

/// Stands in for a backend that could not be created, to fill skipped records.
pub struct NullBackend(pub String);

impl Backend for NullBackend {
    fn name(&self) -> &str {
        &self.0
    }
    fn provider(&self) -> &str {
        match self.0.as_str() {
            crate::backend::liboqs::NAME => "liboqs",
            crate::backend::native_gpu::NAME => "pqcprof-native",
            "cupqc" => "cupqc",
            _ => "unknown",
        }
    }
    fn device(&self) -> crate::schema::device::Device {
        crate::schema::device::Device {
            kind: if self.0.contains("gpu") || self.0.contains("cupqc") {
                DeviceKind::Gpu
            } else {
                DeviceKind::Cpu
            },
            name: "unavailable".into(),
            memory_total_mb: 0,
        }
    }
    fn supports(&self, _: Algorithm, _: Operation) -> bool {
        false
    }
    fn prepare(
        &mut self,
        _: Algorithm,
        _: Operation,
        _: &crate::backend::BatchConfig,
    ) -> anyhow::Result<Box<dyn crate::backend::Prepared>> {
        anyhow::bail!("backend {} is not ready", self.0)
    }
}
