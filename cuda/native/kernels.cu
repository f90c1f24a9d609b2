// kernels.cu: the translation unit NVRTC compiles for the GPU.
//
// The Rust side (src/gpu/kernels.rs) concatenates common.cuh, keccak.cuh,
// mlkem.cuh, mldsa.cuh, mlkem_warp.cuh, mldsa_block.cuh, mlkem_kernels.cuh, mldsa_kernels.cuh, hold.cuh and
// this file,
// dropping the quoted #include lines, so NVRTC needs no include path and no
// system header. With nvcc, the includes below do the same job.
#include "common.cuh"
#include "keccak.cuh"
#include "mlkem.cuh"
#include "mldsa.cuh"
#include "mlkem_warp.cuh"
#include "mldsa_block.cuh"
#include "mlkem_kernels.cuh"
#include "mldsa_kernels.cuh"
#include "hold.cuh"

// Every extern "C" __global__ entry point lives in mlkem_kernels.cuh and
// mldsa_kernels.cuh (one thread computes one operation of the batch), and
// hold.cuh holds the device-side wait timed launches are queued behind.

