//! What this machine offers: system metadata, the CUDA driver, NVML and
//! NVRTC, and which Slurm rank this process is. Probes load GPU libraries
//! dynamically and report what is missing; they never measure.

pub mod gpu;
pub mod libraries;
pub mod nvrtc_choice;
pub mod slurm;
pub mod system;
pub mod tsc;
