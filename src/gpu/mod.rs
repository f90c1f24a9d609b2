//! GPU support: probing the driver, NVML and NVRTC, and the native kernels.

pub mod gate;
pub mod kernels;
pub mod probe;
