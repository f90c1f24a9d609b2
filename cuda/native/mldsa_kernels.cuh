// mldsa_kernels.cuh: ML-DSA batch kernels: mldsaS_OP, one thread per
// operation at a time; mldsaS_OP_block, one block of up to 128 threads per
// operation (mldsa_block.cuh). The parameters of both are the same:
//
// For S in 44, 65, 87:
//   mldsaS_keygen(pk, sk, xi, n)      xi n x 32, pk n x PK, sk n x SK
//   mldsaS_sign(sig, sig_stride, msg, msg_len, ctx, ctx_len, sk, rnd, scratch, queue, n)
//       message i at msg + i*msg_len, signature i at sig + i*sig_stride,
//       sk n x SK, rnd n x 32 (zeros: deterministic), one ctx for the batch.
//       A ctx longer than 255 bytes yields all-zero signatures, and so
//       does a secret key that fails mldsa_sk_in_range.
//       scratch: one signing workspace per thread of the grid, interleaved
//       (gridDim.x * blockDim.x * mldsa_sign_layout<S>::WORDS words);
//       queue: one pqc_u32, zeroed by the host before every launch.
//       The block variant's scratch is one mldsa_sign_block_layout<S>
//       workspace per block of the grid (gridDim.x * WORDS words), and its
//       blocks, not threads, take messages from the queue.
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
#include "mldsa_block.cuh"

// Signing as a queue: the grid has as many threads as the device holds at
// once (or fewer for a small batch), each with its own workspace. A thread
// takes the next unsigned message from queue[0], prepares it once
// (mldsa_sign_setup) and then runs one rejection-loop attempt per turn of
// its loop; when its signature is done it takes the next message at once.
// So a thread is never idle while messages remain, whatever the attempts of
// its neighbours, and the lanes of a warp run the same attempt code in step.
// The next message from the queue whose secret key passes
// mldsa_sk_in_range; the signature of each one that fails is all zero.
template <int LEVEL>
__device__ __forceinline__ pqc_u32 mldsa_next_in_range(pqc_u8 *sig, pqc_u32 sig_stride, const pqc_u8 *sk,
                                                       pqc_u32 *queue, pqc_u32 n) {
    typedef mldsa_params<LEVEL> P;
    pqc_u32 op = atomicAdd(&queue[0], 1u);
    while (op < n && !mldsa_sk_in_range<LEVEL>(sk + (pqc_size)op * P::SK_BYTES)) {
        for (int j = 0; j < P::SIG_BYTES; ++j) sig[(pqc_size)op * sig_stride + j] = 0;
        op = atomicAdd(&queue[0], 1u);
    }
    return op;
}

template <int LEVEL>
__device__ __forceinline__ void mldsa_sign_thread(pqc_u8 *sig, pqc_u32 sig_stride, const pqc_u8 *msg,
                                                  pqc_u32 msg_len, const pqc_u8 *ctx, pqc_u32 ctx_len,
                                                  const pqc_u8 *sk, const pqc_u8 *rnd, pqc_i32 *scratch,
                                                  pqc_u32 *queue, pqc_u32 n) {
    typedef mldsa_params<LEVEL> P;
    const pqc_u32 slot = blockIdx.x * blockDim.x + threadIdx.x;
    const pqc_u32 slots = gridDim.x * blockDim.x;
    if (ctx_len > 255) {
        for (pqc_u32 i = slot; i < n; i += slots)
            for (int j = 0; j < P::SIG_BYTES; ++j) sig[(pqc_size)i * sig_stride + j] = 0;
        return;
    }
    pqc_i32 *ws = scratch + slot;
    pqc_u8 mu[64], rhopp[64];
    int iter = 0;
    pqc_u32 op = mldsa_next_in_range<LEVEL>(sig, sig_stride, sk, queue, n);
    if (op < n) {
        mldsa_sign_message_mu(mu, sk + (pqc_size)op * P::SK_BYTES, msg + (pqc_size)op * msg_len, msg_len, ctx,
                              ctx_len);
        mldsa_sign_setup<LEVEL>(ws, slots, rhopp, sk + (pqc_size)op * P::SK_BYTES, mu, rnd + (pqc_size)op * 32);
    }
    while (op < n) {
        pqc_u8 *out = sig + (pqc_size)op * sig_stride;
        int done = mldsa_sign_attempt<LEVEL>(out, ws, slots, mu, rhopp, iter * P::L);
        if (!done && ++iter == MLDSA_SIGN_MAX_ITER) {
            for (int j = 0; j < P::SIG_BYTES; ++j) out[j] = 0;
            done = 1;
        }
        if (done) {
            iter = 0;
            op = mldsa_next_in_range<LEVEL>(sig, sig_stride, sk, queue, n);
            if (op < n) {
                mldsa_sign_message_mu(mu, sk + (pqc_size)op * P::SK_BYTES, msg + (pqc_size)op * msg_len, msg_len,
                                      ctx, ctx_len);
                mldsa_sign_setup<LEVEL>(ws, slots, rhopp, sk + (pqc_size)op * P::SK_BYTES, mu,
                                        rnd + (pqc_size)op * 32);
            }
        }
    }
}

// ML-DSA-65's one-thread signing kernel is bound to 3 blocks of 128 a
// multiprocessor: on sm_90 ptxas gives it 166 registers and no spills that
// way, where unbounded it took 170 and fitted only 2 blocks. The others take
// no bound: any bound costs 144 stack bytes a thread on sm_90, and ML-DSA-44's
// and -87's signing (166 and 154 registers) fit 3 blocks without one; keygen
// fits 4, and verification (130-136 registers, 3 blocks) would spill at 4.
#define PQC_MLDSA_SIGN_BOUNDS_44
#define PQC_MLDSA_SIGN_BOUNDS_65 __launch_bounds__(128, 3)
#define PQC_MLDSA_SIGN_BOUNDS_87
#define PQC_MLDSA_KERNELS(S)                                                                                   \
    extern "C" __global__ void mldsa##S##_keygen(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *xi, pqc_u32 n) {       \
        const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                               \
        if (i >= n) return;                                                                                    \
        typedef mldsa_params<S> P;                                                                             \
        mldsa_keygen_internal<S>(pk + (pqc_size)i * P::PK_BYTES, sk + (pqc_size)i * P::SK_BYTES,              \
                                 xi + (pqc_size)i * 32);                                                       \
    }                                                                                                          \
    extern "C" __global__ void PQC_MLDSA_SIGN_BOUNDS_##S                                                       \
        mldsa##S##_sign(pqc_u8 *sig, pqc_u32 sig_stride, const pqc_u8 *msg, pqc_u32 msg_len,                   \
                        const pqc_u8 *ctx, pqc_u32 ctx_len, const pqc_u8 *sk, const pqc_u8 *rnd,               \
                        pqc_i32 *scratch, pqc_u32 *queue, pqc_u32 n) {                                         \
        mldsa_sign_thread<S>(sig, sig_stride, msg, msg_len, ctx, ctx_len, sk, rnd, scratch, queue, n);        \
    }                                                                                                          \
    extern "C" __global__ void mldsa##S##_verify(pqc_i32 *ok, const pqc_u8 *msg, pqc_u32 msg_len,             \
                                                 const pqc_u8 *ctx, pqc_u32 ctx_len, const pqc_u8 *sig,        \
                                                 pqc_u32 sig_stride, const pqc_u8 *pk, pqc_u32 n) {            \
        const pqc_u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                               \
        if (i >= n) return;                                                                                    \
        typedef mldsa_params<S> P;                                                                             \
        ok[i] = mldsa_verify<S>(pk + (pqc_size)i * P::PK_BYTES, msg + (pqc_size)i * msg_len, msg_len, ctx,    \
                                ctx_len, sig + (pqc_size)i * sig_stride);                                      \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(128)                                                          \
        mldsa##S##_keygen_block(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *xi, pqc_u32 n) {                         \
        mldsa_keygen_block<S>(pk, sk, xi, n);                                                                  \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(128)                                                          \
        mldsa##S##_sign_block(pqc_u8 *sig, pqc_u32 sig_stride, const pqc_u8 *msg, pqc_u32 msg_len,             \
                              const pqc_u8 *ctx, pqc_u32 ctx_len, const pqc_u8 *sk, const pqc_u8 *rnd,         \
                              pqc_i32 *scratch, pqc_u32 *queue, pqc_u32 n) {                                   \
        mldsa_sign_block<S>(sig, sig_stride, msg, msg_len, ctx, ctx_len, sk, rnd, scratch, queue, n);          \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(128)                                                          \
        mldsa##S##_verify_block(pqc_i32 *ok, const pqc_u8 *msg, pqc_u32 msg_len, const pqc_u8 *ctx,            \
                                pqc_u32 ctx_len, const pqc_u8 *sig, pqc_u32 sig_stride, const pqc_u8 *pk,      \
                                pqc_u32 n) {                                                                   \
        mldsa_verify_block<S>(ok, msg, msg_len, ctx, ctx_len, sig, sig_stride, pk, n);                         \
    }

PQC_MLDSA_KERNELS(44)
PQC_MLDSA_KERNELS(65)
PQC_MLDSA_KERNELS(87)

#undef PQC_MLDSA_KERNELS

#endif // __CUDACC__ || __CUDACC_RTC__
#endif
