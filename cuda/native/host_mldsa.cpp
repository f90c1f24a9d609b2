// host_mldsa.cpp: the host (CPU) build of cuda/native/mldsa.cuh, compiled by
// build.rs with the cc crate (C++14). The same source runs on the GPU through
// mldsa_kernels.cuh; this file only adds C entry points for Rust.
#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "common.cuh"
#include "keccak.cuh"
#include "mldsa.cuh"

namespace {

template <int LEVEL>
int keygen_level(uint8_t *pk, uint8_t *sk, const uint8_t *xi) {
    return mldsa_keygen_internal<LEVEL>(pk, sk, xi);
}

// One signature in its own contiguous workspace (stride 1).
template <int LEVEL>
int sign_level(uint8_t *sig, const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
               const uint8_t *sk, const uint8_t *rnd, int *attempts) {
    std::vector<pqc_i32> ws(mldsa_sign_layout<LEVEL>::WORDS);
    return mldsa_sign<LEVEL>(sig, sk, msg, (pqc_size)msglen, ctx, (pqc_size)ctxlen, rnd, ws.data(), 1, attempts);
}

template <int LEVEL>
int verify_level(const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen, const uint8_t *sig,
                 size_t siglen, const uint8_t *pk, size_t pklen) {
    typedef mldsa_params<LEVEL> P;
    if (siglen != (size_t)P::SIG_BYTES || pklen != (size_t)P::PK_BYTES) return 0;
    return mldsa_verify<LEVEL>(pk, msg, (pqc_size)msglen, ctx, (pqc_size)ctxlen, sig);
}

} // namespace

extern "C" {

int pqcprof_mldsa_keygen(int level, uint8_t *pk, uint8_t *sk, const uint8_t *xi) {
    if (pk == NULL || sk == NULL || xi == NULL) return PQC_ERR_INPUT;
    switch (level) {
    case 44: return keygen_level<44>(pk, sk, xi);
    case 65: return keygen_level<65>(pk, sk, xi);
    case 87: return keygen_level<87>(pk, sk, xi);
    default: return PQC_ERR_PARAM;
    }
}

// Signs as pqcprof_mldsa_sign does and says how many iterations of the
// rejection loop it took (*attempts, when not null).
int pqcprof_mldsa_sign_attempts(int level, uint8_t *sig, const uint8_t *msg, size_t msglen, const uint8_t *ctx,
                                size_t ctxlen, const uint8_t *sk, const uint8_t *rnd, int *attempts) {
    if (level != 44 && level != 65 && level != 87) return PQC_ERR_PARAM;
    if (ctxlen > 255) return PQC_ERR_CONTEXT;
    if (sig == NULL || sk == NULL || rnd == NULL || (msg == NULL && msglen != 0) || (ctx == NULL && ctxlen != 0))
        return PQC_ERR_INPUT;
    switch (level) {
    case 44: return sign_level<44>(sig, msg, msglen, ctx, ctxlen, sk, rnd, attempts);
    case 65: return sign_level<65>(sig, msg, msglen, ctx, ctxlen, sk, rnd, attempts);
    default: return sign_level<87>(sig, msg, msglen, ctx, ctxlen, sk, rnd, attempts);
    }
}

int pqcprof_mldsa_sign(int level, uint8_t *sig, const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                       const uint8_t *sk, const uint8_t *rnd) {
    return pqcprof_mldsa_sign_attempts(level, sig, msg, msglen, ctx, ctxlen, sk, rnd, NULL);
}

// Bytes of one signature's workspace (mldsa_sign_layout), which a signing
// kernel needs per thread; 0 for an unknown level.
size_t pqcprof_mldsa_sign_workspace_bytes(int level) {
    switch (level) {
    case 44: return sizeof(pqc_i32) * mldsa_sign_layout<44>::WORDS;
    case 65: return sizeof(pqc_i32) * mldsa_sign_layout<65>::WORDS;
    case 87: return sizeof(pqc_i32) * mldsa_sign_layout<87>::WORDS;
    default: return 0;
    }
}

// Bytes of the workspace one block of the `block` signing kernel needs
// (mldsa_sign_block_layout); 0 for an unknown level.
size_t pqcprof_mldsa_sign_block_workspace_bytes(int level) {
    switch (level) {
    case 44: return sizeof(pqc_i32) * mldsa_sign_block_layout<44>::WORDS;
    case 65: return sizeof(pqc_i32) * mldsa_sign_block_layout<65>::WORDS;
    case 87: return sizeof(pqc_i32) * mldsa_sign_block_layout<87>::WORDS;
    default: return 0;
    }
}

int pqcprof_mldsa_verify(int level, const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                         const uint8_t *sig, size_t siglen, const uint8_t *pk, size_t pklen) {
    if (level != 44 && level != 65 && level != 87) return PQC_ERR_PARAM;
    if (ctxlen > 255) return PQC_ERR_CONTEXT;
    if ((msg == NULL && msglen != 0) || (ctx == NULL && ctxlen != 0)) return PQC_ERR_INPUT;
    if (sig == NULL || pk == NULL) return 0;
    switch (level) {
    case 44: return verify_level<44>(msg, msglen, ctx, ctxlen, sig, siglen, pk, pklen);
    case 65: return verify_level<65>(msg, msglen, ctx, ctxlen, sig, siglen, pk, pklen);
    default: return verify_level<87>(msg, msglen, ctx, ctxlen, sig, siglen, pk, pklen);
    }
}

} // extern "C"
