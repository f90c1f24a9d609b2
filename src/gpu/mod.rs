//! GPU support: probing the driver, NVML and NVRTC, and the native kernels.

pub mod kernels;
pub mod probe;
