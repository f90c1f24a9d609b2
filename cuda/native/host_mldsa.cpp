// host_mldsa.cpp: the host (CPU) build of cuda/native/mldsa.cuh, compiled by
// build.rs with the cc crate (C++14). The same source runs on the GPU through
// mldsa_kernels.cuh; this file only adds C entry points for Rust.
#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "common.cuh"
#include "keccak.cuh"
#include "mldsa.cuh"

#define PQCPROF_MLDSA_PURE 0
#define PQCPROF_MLDSA_INTERNAL 1
#define PQCPROF_MLDSA_MU 2

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

// Signing and verification in one of three forms (PQCPROF_MLDSA_*): msg is
// M with a context (Alg 2, 3), the formatted message M' (Alg 7, 8), or the
// 64-byte mu itself (Alg 7, 8 from line 6 on: "external mu").
template <int LEVEL>
int sign_ext_level(int form, uint8_t *sig, const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                   const uint8_t *sk, const uint8_t *rnd) {
    std::vector<pqc_i32> ws(mldsa_sign_layout<LEVEL>::WORDS);
    pqc_u8 mu[64];
    if (form == PQCPROF_MLDSA_PURE) {
        if (ctxlen > 255) return PQC_ERR_CONTEXT;
        mldsa_sign_message_mu(mu, sk, msg, (pqc_size)msglen, ctx, (pqc_size)ctxlen);
    } else if (form == PQCPROF_MLDSA_INTERNAL) {
        mldsa_mu(mu, sk + 64, msg, (pqc_size)msglen, msg, 0, msg, 0);
    } else {
        for (int i = 0; i < 64; ++i) mu[i] = msg[i];
    }
    return mldsa_sign_mu<LEVEL>(sig, sk, mu, rnd, ws.data(), 1, NULL);
}

template <int LEVEL>
int verify_ext_level(int form, const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                     const uint8_t *sig, const uint8_t *pk) {
    typedef mldsa_params<LEVEL> P;
    if (form == PQCPROF_MLDSA_PURE) return mldsa_verify<LEVEL>(pk, msg, (pqc_size)msglen, ctx, (pqc_size)ctxlen, sig);
    if (form == PQCPROF_MLDSA_INTERNAL) return mldsa_verify_internal<LEVEL>(pk, msg, (pqc_size)msglen, sig);
    (void)sizeof(P);
    return mldsa_verify_mu<LEVEL>(pk, msg, sig);
}

// Sizes of (pk, sk, sig) for a level; 0 for an unknown one.
void sizes(int level, size_t *pk, size_t *sk, size_t *sig) {
    switch (level) {
    case 44: *pk = mldsa_params<44>::PK_BYTES; *sk = mldsa_params<44>::SK_BYTES; *sig = mldsa_params<44>::SIG_BYTES; break;
    case 65: *pk = mldsa_params<65>::PK_BYTES; *sk = mldsa_params<65>::SK_BYTES; *sig = mldsa_params<65>::SIG_BYTES; break;
    case 87: *pk = mldsa_params<87>::PK_BYTES; *sk = mldsa_params<87>::SK_BYTES; *sig = mldsa_params<87>::SIG_BYTES; break;
    default: *pk = *sk = *sig = 0;
    }
}

} // namespace

extern "C" {

// Sign in form PQCPROF_MLDSA_PURE (M and ctx), _INTERNAL (M' in msg, no
// ctx) or _MU (mu in msg, 64 bytes). Every buffer comes with its length:
// PQC_ERR_LENGTH when sig, sk, rnd (32) or an external mu (64) has another
// length than the level takes; PQC_ERR_KEY for a secret key out of range.
int pqcprof_mldsa_sign_ext(int level, int form, uint8_t *sig, size_t siglen, const uint8_t *msg, size_t msglen,
                           const uint8_t *ctx, size_t ctxlen, const uint8_t *sk, size_t sklen, const uint8_t *rnd,
                           size_t rndlen) {
    size_t pkb, skb, sigb;
    sizes(level, &pkb, &skb, &sigb);
    if (skb == 0) return PQC_ERR_PARAM;
    if (form < PQCPROF_MLDSA_PURE || form > PQCPROF_MLDSA_MU) return PQC_ERR_PARAM;
    if (siglen != sigb || sklen != skb || rndlen != 32 || (form == PQCPROF_MLDSA_MU && msglen != 64))
        return PQC_ERR_LENGTH;
    if (sig == NULL || sk == NULL || rnd == NULL || (msg == NULL && msglen != 0) || (ctx == NULL && ctxlen != 0))
        return PQC_ERR_INPUT;
    switch (level) {
    case 44: return sign_ext_level<44>(form, sig, msg, msglen, ctx, ctxlen, sk, rnd);
    case 65: return sign_ext_level<65>(form, sig, msg, msglen, ctx, ctxlen, sk, rnd);
    default: return sign_ext_level<87>(form, sig, msg, msglen, ctx, ctxlen, sk, rnd);
    }
}

// Verify in one of the forms of pqcprof_mldsa_sign_ext: 1 valid, 0 invalid
// (a signature or public key of another length, or a context longer than
// 255 bytes, is invalid); PQC_ERR_LENGTH for an external mu that is not 64
// bytes.
int pqcprof_mldsa_verify_ext(int level, int form, const uint8_t *msg, size_t msglen, const uint8_t *ctx,
                             size_t ctxlen, const uint8_t *sig, size_t siglen, const uint8_t *pk, size_t pklen) {
    size_t pkb, skb, sigb;
    sizes(level, &pkb, &skb, &sigb);
    if (skb == 0) return PQC_ERR_PARAM;
    if (form < PQCPROF_MLDSA_PURE || form > PQCPROF_MLDSA_MU) return PQC_ERR_PARAM;
    if (form == PQCPROF_MLDSA_MU && msglen != 64) return PQC_ERR_LENGTH;
    if ((msg == NULL && msglen != 0) || (ctx == NULL && ctxlen != 0)) return PQC_ERR_INPUT;
    if (sig == NULL || pk == NULL || siglen != sigb || pklen != pkb || ctxlen > 255) return 0;
    switch (level) {
    case 44: return verify_ext_level<44>(form, msg, msglen, ctx, ctxlen, sig, pk);
    case 65: return verify_ext_level<65>(form, msg, msglen, ctx, ctxlen, sig, pk);
    default: return verify_ext_level<87>(form, msg, msglen, ctx, ctxlen, sig, pk);
    }
}

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
