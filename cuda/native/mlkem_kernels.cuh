// mlkem_kernels.cuh: batch ML-KEM kernels: mlkemS_OP, one thread per
// operation (blocks of up to 128); mlkemS_OP_warp, one warp per operation
// (blocks of 32 threads, block i computes operation i; mlkem_warp.cuh). The
// parameters of both are the same.
//
// Device only (the host build never sees this file; the CPU stand-in driver
// compiles it under PQCPROF_CUDA_EMULATION). Buffers are contiguous
// per operation: operation i reads/writes bytes [i*LEN, (i+1)*LEN) of each
// array. Sizes (bytes):        PK    SK    CT   ss  d/z/m
//   ML-KEM-512  (k = 2)       800  1632   768   32   32
//   ML-KEM-768  (k = 3)      1184  2400  1088   32   32
//   ML-KEM-1024 (k = 4)      1568  3168  1568   32   32
// Encaps on a key that fails the FIPS 203 section 7.2 modulus check, and
// Decaps on a key that fails the section 7.3 hash check, write all-zero
// outputs for that operation (ct and ss, or ss).
#ifndef PQCPROF_MLKEM_KERNELS_CUH
#define PQCPROF_MLKEM_KERNELS_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)

#include "common.cuh"
#include "keccak.cuh"
#include "mlkem.cuh"
#include "mlkem_warp.cuh"

template <int K>
__device__ __forceinline__ void pqc_mlkem_keygen_thread(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *d,
                                                        const pqc_u8 *z, pqc_u32 n) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pqc_mlkem_keygen_internal<K>(pk + (pqc_size)i * P::PK_BYTES, sk + (pqc_size)i * P::SK_BYTES,
                                 d + (pqc_size)i * 32, z + (pqc_size)i * 32);
}

template <int K>
__device__ __forceinline__ void pqc_mlkem_encaps_thread(pqc_u8 *ct, pqc_u8 *ss, const pqc_u8 *pk,
                                                        const pqc_u8 *m, pqc_u32 n) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pqc_u8 *c = ct + (pqc_size)i * P::CT_BYTES;
    pqc_u8 *s = ss + (pqc_size)i * 32;
    if (pqc_mlkem_encaps_internal<K>(c, s, pk + (pqc_size)i * P::PK_BYTES,
                                     m + (pqc_size)i * 32) != PQC_OK) {
        for (int j = 0; j < P::CT_BYTES; ++j) c[j] = 0;
        for (int j = 0; j < 32; ++j) s[j] = 0;
    }
}

template <int K>
__device__ __forceinline__ void pqc_mlkem_decaps_thread(pqc_u8 *ss, const pqc_u8 *ct,
                                                        const pqc_u8 *sk, pqc_u32 n) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pqc_u8 *s = ss + (pqc_size)i * 32;
    if (pqc_mlkem_decaps_internal<K>(s, ct + (pqc_size)i * P::CT_BYTES,
                                     sk + (pqc_size)i * P::SK_BYTES) != PQC_OK) {
        for (int j = 0; j < 32; ++j) s[j] = 0;
    }
}

// The one-thread kernels are bounded to blocks of 128 threads and a number
// of blocks a multiprocessor, so that ptxas fits them in a 64 K register
// file that many times: keygen 5 (96 registers, 108-110 unbounded on
// sm_90), encaps and decaps 4 (at most 128; 128-136 unbounded, so 3 blocks
// for some). sm_90's ptxas spills nothing at these bounds, their frames
// being local arrays already; keygen at 6 blocks (80 registers) spills, and
// encaps and decaps spill in their encryption at 5. `pqcprof kernels` shows
// the registers and blocks a multiprocessor; docs/kernel-costs.md the
// simulated effect.
#define PQC_MLKEM_KERNELS(S, K)                                                                  \
    extern "C" __global__ void __launch_bounds__(128, 5)                                        \
        mlkem##S##_keygen(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *d, const pqc_u8 *z, pqc_u32 n) { \
        pqc_mlkem_keygen_thread<K>(pk, sk, d, z, n);                                            \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(128, 4)                                        \
        mlkem##S##_encaps(pqc_u8 *ct, pqc_u8 *ss, const pqc_u8 *pk, const pqc_u8 *m, pqc_u32 n) { \
        pqc_mlkem_encaps_thread<K>(ct, ss, pk, m, n);                                           \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(128, 4)                                        \
        mlkem##S##_decaps(pqc_u8 *ss, const pqc_u8 *ct, const pqc_u8 *sk, pqc_u32 n) {          \
        pqc_mlkem_decaps_thread<K>(ss, ct, sk, n);                                              \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(32)                                            \
        mlkem##S##_keygen_warp(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *d, const pqc_u8 *z,        \
                               pqc_u32 n) {                                                     \
        pqc_mlkem_keygen_warp<K>(pk, sk, d, z, n);                                              \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(32)                                            \
        mlkem##S##_encaps_warp(pqc_u8 *ct, pqc_u8 *ss, const pqc_u8 *pk, const pqc_u8 *m,       \
                               pqc_u32 n) {                                                     \
        pqc_mlkem_encaps_warp<K>(ct, ss, pk, m, n);                                             \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(32)                                            \
        mlkem##S##_decaps_warp(pqc_u8 *ss, const pqc_u8 *ct, const pqc_u8 *sk, pqc_u32 n) {     \
        pqc_mlkem_decaps_warp<K>(ss, ct, sk, n);                                                \
    }

PQC_MLKEM_KERNELS(512, 2)
PQC_MLKEM_KERNELS(768, 3)
PQC_MLKEM_KERNELS(1024, 4)

#undef PQC_MLKEM_KERNELS

#endif  // __CUDACC__ || __CUDACC_RTC__
#endif  // PQCPROF_MLKEM_KERNELS_CUH
