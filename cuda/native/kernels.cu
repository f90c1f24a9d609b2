// kernels.cu: every native kernel in one file, for nvcc (e.g. `nvcc -cubin
// -arch=sm_90 -Icuda/native cuda/native/kernels.cu`).
//
// NVRTC compiles two translation units instead, which the Rust side
// (src/backend/native_gpu/kernels.rs) assembles by concatenation with the
// quoted #include lines dropped, so NVRTC needs no include path and no
// system header: ML-KEM's (common.cuh, keccak.cuh, mlkem.cuh,
// mlkem_warp.cuh, mlkem_kernels.cuh, hold.cuh) and ML-DSA's (common.cuh,
// keccak.cuh, mldsa.cuh, mldsa_block.cuh, mldsa_kernels.cuh, hold.cuh).
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

