//! GPU support: probing the driver, NVML and NVRTC, the native kernels, and
//! the cuPQC shim when the build includes it.

pub mod cupqc;
pub mod gate;
pub mod kernels;
pub mod probe;
pub mod resources;
pub mod waves;
