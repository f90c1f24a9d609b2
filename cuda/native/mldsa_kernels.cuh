// mldsa_kernels.cuh: ML-DSA batch kernels, one thread per operation.
//
// For S in 44, 65, 87:
//   mldsaS_keygen(pk, sk, xi, n)      xi n x 32, pk n x PK, sk n x SK
//   mldsaS_sign(sig, sig_stride, msg, msg_len, ctx, ctx_len, sk, rnd, n)
//       message i at msg + i*msg_len, signature i at sig + i*sig_stride,
//       sk n x SK, rnd n x 32 (zeros: deterministic), one ctx for the batch.
//       A ctx longer than 255 bytes yields all-zero signatures.
//   mldsaS_verify(ok, msg, msg_len, ctx, ctx_len, sig, sig_stride, pk, n)
//       ok[i] = 1 valid, 0 invalid.
// Device only: the host build never sees this file (the CPU stand-in driver
// compiles it under PQCPROF_CUDA_EMULATION).
#ifndef PQCPROF_MLDSA_KERNELS_CUH
#define PQCPROF_MLDSA_KERNELS_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)

#include "common.cuh"
#include "keccak.cuh"
#include "mldsa.cuh"

#define PQC_MLDSA_KERNELS(S)                                                                                   \
    extern "C" __global__ void mldsa##S##_keygen(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *xi, pqc_u32 n) {       \
        const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                               \
        if (i >= n) return;                                                                                    \
        typedef mldsa_params<S> P;                                                                             \
        mldsa_keygen_internal<S>(pk + (pqc_size)i * P::PK_BYTES, sk + (pqc_size)i * P::SK_BYTES,              \
                                 xi + (pqc_size)i * 32);                                                       \
    }                                                                                                          \
    extern "C" __global__ void mldsa##S##_sign(pqc_u8 *sig, pqc_u32 sig_stride, const pqc_u8 *msg,             \
                                               pqc_u32 msg_len, const pqc_u8 *ctx, pqc_u32 ctx_len,            \
                                               const pqc_u8 *sk, const pqc_u8 *rnd, pqc_u32 n) {               \
        const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                               \
        if (i >= n) return;                                                                                    \
        typedef mldsa_params<S> P;                                                                             \
        pqc_u8 *out = sig + (pqc_size)i * sig_stride;                                                          \
        if (ctx_len > 255) {                                                                                   \
            for (int j = 0; j < P::SIG_BYTES; ++j) out[j] = 0;                                                 \
            return;                                                                                            \
        }                                                                                                      \
        mldsa_sign<S>(out, sk + (pqc_size)i * P::SK_BYTES, msg + (pqc_size)i * msg_len, msg_len, ctx,         \
                      ctx_len, rnd + (pqc_size)i * 32);                                                        \
    }                                                                                                          \
    extern "C" __global__ void mldsa##S##_verify(pqc_i32 *ok, const pqc_u8 *msg, pqc_u32 msg_len,             \
                                                 const pqc_u8 *ctx, pqc_u32 ctx_len, const pqc_u8 *sig,        \
                                                 pqc_u32 sig_stride, const pqc_u8 *pk, pqc_u32 n) {            \
        const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                               \
        if (i >= n) return;                                                                                    \
        typedef mldsa_params<S> P;                                                                             \
        ok[i] = mldsa_verify<S>(pk + (pqc_size)i * P::PK_BYTES, msg + (pqc_size)i * msg_len, msg_len, ctx,    \
                                ctx_len, sig + (pqc_size)i * sig_stride);                                      \
    }

PQC_MLDSA_KERNELS(44)
PQC_MLDSA_KERNELS(65)
PQC_MLDSA_KERNELS(87)

#undef PQC_MLDSA_KERNELS

#endif // __CUDACC__ || __CUDACC_RTC__
#endif
