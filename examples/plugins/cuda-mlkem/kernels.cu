// kernels.cu: the device code of the cuda-mlkem example plugin. plugin.cpp
// launches these kernels on the stream pqcprof hands it; the build script
// compiles this file to PTX with nvcc and embeds the PTX in the plugin.
//
// A plugin author brings their own kernels. This example has none of its
// own worth measuring: to have something correct to launch, it borrows the
// project's ML-KEM device code (cuda/native/mlkem.cuh, FIPS 203
// Algorithms 16-18) and wraps it in kernels of the plugin ABI's shape.
//
// One thread per batch item, item i at
//   blockIdx.x * blockDim.x + threadIdx.x, threads with i >= n do nothing.
// Buffers are as include/pqcprof_plugin.h lays them out, item after item:
//   keygen: seeds (64 bytes d || z) -> ek, dk
//   encaps: ek, m (32 bytes)        -> c, k (32 bytes)
//   decaps: dk, c                   -> k (implicit rejection: J(z || c))
// Encaps of a key that fails the FIPS 203 section 7.2 modulus check and
// decaps of a key that fails the section 7.3 hash check write zeros for
// that item, as the project's own kernels do (pqcprof only hands valid keys).
//
// Only templates and the headers' own functions are used here, and the
// entry points are written out one by one (not made by a macro): the CPU
// stand-in driver reads their names from this file
// (tests/fixtures/cuda-standin/build --kernels).
#include "common.cuh"
#include "keccak.cuh"
#include "mlkem.cuh"

__device__ __forceinline__ pqc_u64 example_item() {
    return (pqc_u64)blockIdx.x * blockDim.x + threadIdx.x;
}

template <int K>
__device__ __forceinline__ void example_keygen(const pqc_u8 *seeds, pqc_u8 *ek, pqc_u8 *dk, pqc_u64 n) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u64 i = example_item();
    if (i >= n) return;
    const pqc_u8 *seed = seeds + i * 64;
    pqc_mlkem_keygen_internal<K>(ek + i * P::PK_BYTES, dk + i * P::SK_BYTES, seed, seed + 32);
}

template <int K>
__device__ __forceinline__ void example_encaps(const pqc_u8 *ek, const pqc_u8 *m, pqc_u8 *c, pqc_u8 *k,
                                               pqc_u64 n) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u64 i = example_item();
    if (i >= n) return;
    pqc_u8 *ci = c + i * P::CT_BYTES;
    pqc_u8 *ki = k + i * 32;
    if (pqc_mlkem_encaps_internal<K>(ci, ki, ek + i * P::PK_BYTES, m + i * 32) != PQC_OK) {
        for (int j = 0; j < P::CT_BYTES; ++j) ci[j] = 0;
        for (int j = 0; j < 32; ++j) ki[j] = 0;
    }
}

template <int K>
__device__ __forceinline__ void example_decaps(const pqc_u8 *dk, const pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u64 i = example_item();
    if (i >= n) return;
    pqc_u8 *ki = k + i * 32;
    if (pqc_mlkem_decaps_internal<K>(ki, c + i * P::CT_BYTES, dk + i * P::SK_BYTES) != PQC_OK) {
        for (int j = 0; j < 32; ++j) ki[j] = 0;
    }
}

extern "C" __global__ void __launch_bounds__(128)
    example_mlkem512_keygen(const pqc_u8 *seeds, pqc_u8 *ek, pqc_u8 *dk, pqc_u64 n) {
    example_keygen<2>(seeds, ek, dk, n);
}
extern "C" __global__ void __launch_bounds__(128)
    example_mlkem512_encaps(const pqc_u8 *ek, const pqc_u8 *m, pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    example_encaps<2>(ek, m, c, k, n);
}
extern "C" __global__ void __launch_bounds__(128)
    example_mlkem512_decaps(const pqc_u8 *dk, const pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    example_decaps<2>(dk, c, k, n);
}

extern "C" __global__ void __launch_bounds__(128)
    example_mlkem768_keygen(const pqc_u8 *seeds, pqc_u8 *ek, pqc_u8 *dk, pqc_u64 n) {
    example_keygen<3>(seeds, ek, dk, n);
}
extern "C" __global__ void __launch_bounds__(128)
    example_mlkem768_encaps(const pqc_u8 *ek, const pqc_u8 *m, pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    example_encaps<3>(ek, m, c, k, n);
}
extern "C" __global__ void __launch_bounds__(128)
    example_mlkem768_decaps(const pqc_u8 *dk, const pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    example_decaps<3>(dk, c, k, n);
}

extern "C" __global__ void __launch_bounds__(128)
    example_mlkem1024_keygen(const pqc_u8 *seeds, pqc_u8 *ek, pqc_u8 *dk, pqc_u64 n) {
    example_keygen<4>(seeds, ek, dk, n);
}
extern "C" __global__ void __launch_bounds__(128)
    example_mlkem1024_encaps(const pqc_u8 *ek, const pqc_u8 *m, pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    example_encaps<4>(ek, m, c, k, n);
}
extern "C" __global__ void __launch_bounds__(128)
    example_mlkem1024_decaps(const pqc_u8 *dk, const pqc_u8 *c, pqc_u8 *k, pqc_u64 n) {
    example_decaps<4>(dk, c, k, n);
}
