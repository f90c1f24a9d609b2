// mldsa_block.cuh: ML-DSA with one block of threads per operation (the
// `block` variant; blocks of up to 128 threads, mldsa_kernels.cuh).
//
// The same FIPS 204 arithmetic as mldsa.cuh, shared between the threads of
// a block, with the operation's polynomials in shared memory and no array
// in a thread's local memory:
//   * every SHAKE stream of an operation (the k*l entries of A, s1, s2, the
//     l polynomials of y) runs on a thread of its own, its Keccak state in
//     shared memory, its output read byte by byte from that state;
//   * KeyGen and Verify never store A: the thread of entry A[r][s] adds
//     each coefficient's product A[r][s][j] * s^[j] into row r of the sum
//     with a shared-memory atomicAdd (the sums are exact in 32 bits, so the
//     order of the additions does not change the result);
//   * Sign keeps A^, NTT(s1), NTT(s2) and NTT(t0) of the signature it works
//     on in a global workspace of its block (mldsa_sign_block_layout),
//     written once per signature and read coalesced by every attempt; y,
//     w, c and the products are in shared memory;
//   * each NTT layer spreads its 128 butterflies (of every polynomial
//     transformed at once) over the threads; products, checks and bit
//     packing go coefficient by coefficient or by groups of 8, so
//     consecutive threads touch consecutive words and bytes;
//   * SHA3/SHAKE of a single stream (mu, tr, c~, SampleInBall) run on one
//     thread.
// Every value is computed by the same expression as in mldsa.cuh, so keys
// and signatures are byte-identical to the thread variant and the host
// build. Every __syncthreads is reached by every thread of the block: all
// branches around them depend on values the whole block reads from shared
// memory after a barrier.
#ifndef PQCPROF_MLDSA_BLOCK_CUH
#define PQCPROF_MLDSA_BLOCK_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)

#include "common.cuh"
#include "keccak.cuh"
#include "mldsa.cuh"

// for (i = threadIdx.x; i < count; i += blockDim.x)
#define MLDSA_BLK_FOR(i, count) for (int i = (int)threadIdx.x; i < (int)(count); i += (int)blockDim.x)

// NTT (as mldsa_ntt) of npoly consecutive polynomials at f, each layer's
// butterflies over the threads; zeta of group g of the layer with
// half-length len is zetas[128 / len + g].
__device__ __forceinline__ void mldsa_blk_ntt(pqc_i32 *f, int npoly) {
    for (int len = 128; len >= 1; len >>= 1) {
        MLDSA_BLK_FOR(b, 128 * npoly) {
            pqc_i32 *p = f + (b >> 7) * MLDSA_N;
            const int bb = b & 127;
            const int group = bb / len;
            const int j = group * 2 * len + (bb & (len - 1));
            const pqc_i64 z = mldsa_zetas[128 / len + group];
            const pqc_i32 t = mldsa_mont_reduce(z * p[j + len]);
            p[j + len] = p[j] - t;
            p[j] = p[j] + t;
        }
        __syncthreads();
    }
}

// NTT^-1 (as mldsa_invntt) of npoly consecutive polynomials; zeta of group
// g of the layer with half-length len is zetas[256 / len - 1 - g].
__device__ __forceinline__ void mldsa_blk_invntt(pqc_i32 *f, int npoly) {
    for (int len = 1; len < MLDSA_N; len <<= 1) {
        MLDSA_BLK_FOR(b, 128 * npoly) {
            pqc_i32 *p = f + (b >> 7) * MLDSA_N;
            const int bb = b & 127;
            const int group = bb / len;
            const int j = group * 2 * len + (bb & (len - 1));
            const pqc_i64 z = -(pqc_i64)mldsa_zetas[256 / len - 1 - group];
            const pqc_i32 t = p[j];
            p[j] = mldsa_reduce32(t + p[j + len]);
            p[j + len] = mldsa_mont_reduce(z * (t - p[j + len]));
        }
        __syncthreads();
    }
    MLDSA_BLK_FOR(c, MLDSA_N * npoly) f[c] = mldsa_mont_reduce((pqc_i64)MLDSA_INV_F * f[c]);
    __syncthreads();
}

// Group g of 8 coefficients of mldsa_pack / mldsa_unpack: `bits` bytes at
// out + g * bits (8 coefficients are a whole number of bytes).
__device__ __forceinline__ void mldsa_blk_pack8(pqc_u8 *out, const pqc_i32 *a, int bits, pqc_i32 base,
                                                pqc_i32 mul) {
    const pqc_u32 mask = (1u << bits) - 1u;
    pqc_u64 acc = 0;
    int nacc = 0;
    for (int i = 0; i < 8; ++i) {
        acc |= (pqc_u64)((pqc_u32)(base + mul * a[i]) & mask) << nacc;
        nacc += bits;
        while (nacc >= 8) {
            *out++ = (pqc_u8)acc;
            acc >>= 8;
            nacc -= 8;
        }
    }
}

__device__ __forceinline__ void mldsa_blk_unpack8(pqc_i32 *a, const pqc_u8 *in, int bits, pqc_i32 base,
                                                  pqc_i32 mul) {
    const pqc_u32 mask = (1u << bits) - 1u;
    pqc_u64 acc = 0;
    int nacc = 0;
    for (int i = 0; i < 8; ++i) {
        while (nacc < bits) {
            acc |= (pqc_u64)(*in++) << nacc;
            nacc += 8;
        }
        a[i] = base + mul * (pqc_i32)((pqc_u32)acc & mask);
        acc >>= bits;
        nacc -= bits;
    }
}

// RejNTTPoly(rho || s || r) in the state st (the stream of
// mldsa_rej_ntt_poly). acc == 0: coefficient j goes to out[j]; else
// mont(A[j] * acc[j]) is added to out[j] with atomicAdd.
__device__ __forceinline__ void mldsa_blk_rej_ntt(pqc_keccak *st, pqc_i32 *out, const pqc_i32 *acc, const pqc_u8 *rho,
                                              int s, int r) {
    pqc_shake128_init(st);
    pqc_shake128_absorb(st, rho, 32);
    pqc_keccak_absorb_byte(st, (pqc_u8)s);
    pqc_keccak_absorb_byte(st, (pqc_u8)r);
    pqc_shake128_finalize(st);
    int j = 0;
    while (j < MLDSA_N) {
        const pqc_u32 b0 = pqc_keccak_squeeze_byte(st);
        const pqc_u32 b1 = pqc_keccak_squeeze_byte(st);
        const pqc_u32 b2 = pqc_keccak_squeeze_byte(st);
        const pqc_i32 z = (pqc_i32)(b0 | (b1 << 8) | ((b2 & 0x7F) << 16));
        if (z < MLDSA_Q) {
            if (acc)
                atomicAdd(&out[j], mldsa_mont_reduce((pqc_i64)z * acc[j]));
            else
                out[j] = z;
            ++j;
        }
    }
}

// RejBoundedPoly(rho' || nonce) in the state st (mldsa_rej_bounded_poly).
template <int ETA>
__device__ __noinline__ void mldsa_blk_rej_bounded(pqc_keccak *st, pqc_i32 *a, const pqc_u8 *rhop, int nonce) {
    pqc_shake256_init(st);
    pqc_shake256_absorb(st, rhop, 64);
    pqc_keccak_absorb_byte(st, (pqc_u8)nonce);
    pqc_keccak_absorb_byte(st, (pqc_u8)(nonce >> 8));
    pqc_shake256_finalize(st);
    int j = 0;
    while (j < MLDSA_N) {
        const pqc_u32 byte = pqc_keccak_squeeze_byte(st);
        for (int h = 0; h < 2 && j < MLDSA_N; ++h) {
            const pqc_i32 b = (pqc_i32)(h ? byte >> 4 : byte & 15);
            if (ETA == 2) {
                if (b < 15) a[j++] = 2 - (b % 5);
            } else {
                if (b < 9) a[j++] = 4 - b;
            }
        }
    }
}

// One polynomial of ExpandMask in the state st (mldsa_expand_mask_poly).
template <int LEVEL>
__device__ __noinline__ void mldsa_blk_expand_mask(pqc_keccak *st, pqc_i32 *a, const pqc_u8 *rhopp, int nonce) {
    typedef mldsa_params<LEVEL> P;
    pqc_shake256_init(st);
    pqc_shake256_absorb(st, rhopp, 64);
    pqc_keccak_absorb_byte(st, (pqc_u8)nonce);
    pqc_keccak_absorb_byte(st, (pqc_u8)(nonce >> 8));
    pqc_shake256_finalize(st);
    const pqc_u32 mask = (1u << P::Z_BITS) - 1u;
    pqc_u64 acc = 0;
    int nacc = 0;
    for (int i = 0; i < MLDSA_N; ++i) {
        while (nacc < P::Z_BITS) {
            acc |= (pqc_u64)pqc_keccak_squeeze_byte(st) << nacc;
            nacc += 8;
        }
        a[i] = P::GAMMA1 - (pqc_i32)((pqc_u32)acc & mask);
        acc >>= P::Z_BITS;
        nacc -= P::Z_BITS;
    }
}

// SampleInBall(c~) in the state st (mldsa_sample_in_ball), on one thread.
template <int LEVEL>
__device__ __noinline__ void mldsa_blk_sample_in_ball(pqc_keccak *st, pqc_i32 *c, const pqc_u8 *ct) {
    typedef mldsa_params<LEVEL> P;
    pqc_shake256_init(st);
    pqc_shake256_absorb(st, ct, P::CT_BYTES);
    pqc_shake256_finalize(st);
    pqc_u64 signs = 0;
    for (int i = 0; i < 8; ++i) signs |= (pqc_u64)pqc_keccak_squeeze_byte(st) << (8 * i);
    for (int i = 0; i < MLDSA_N; ++i) c[i] = 0;
    for (int i = MLDSA_N - P::TAU; i < MLDSA_N; ++i) {
        int j;
        do {
            j = (int)pqc_keccak_squeeze_byte(st);
        } while (j > i);
        c[i] = c[j];
        c[j] = 1 - 2 * (pqc_i32)(signs & 1);
        signs >>= 1;
    }
}

// mu = H(tr || 0 || |ctx| || ctx || msg, 64) in the state st, on one thread.
__device__ __noinline__ void mldsa_blk_mu(pqc_keccak *st, pqc_u8 *mu, const pqc_u8 *tr, const pqc_u8 *ctx,
                                         pqc_u32 ctx_len, const pqc_u8 *msg, pqc_u32 msg_len) {
    pqc_shake256_init(st);
    pqc_shake256_absorb(st, tr, 64);
    pqc_keccak_absorb_byte(st, 0);
    pqc_keccak_absorb_byte(st, (pqc_u8)ctx_len);
    pqc_shake256_absorb(st, ctx, ctx_len);
    pqc_shake256_absorb(st, msg, msg_len);
    pqc_shake256_finalize(st);
    pqc_shake256_squeeze(st, mu, 64);
}

// ---------------------------------------------------------------------------
// KeyGen (Alg 6)
// ---------------------------------------------------------------------------
template <int LEVEL> struct mldsa_blk_keygen_smem {
    typedef mldsa_params<LEVEL> P;
    pqc_keccak st[P::K * P::L];
    pqc_i32 s1[P::L][MLDSA_N]; // s1, then NTT(s1)
    pqc_i32 t[P::K][MLDSA_N];  // A^ o NTT(s1), then t, then t1
    pqc_i32 s2[P::K][MLDSA_N]; // s2, then t0
    pqc_u8 seeds[128];         // rho || rho' || K
};

template <int LEVEL>
__device__ __forceinline__ void mldsa_keygen_block(pqc_u8 *pk_all, pqc_u8 *sk_all, const pqc_u8 *xi_all,
                                                   pqc_u32 n) {
    typedef mldsa_params<LEVEL> P;
    __shared__ mldsa_blk_keygen_smem<LEVEL> sm;
    const pqc_u32 op = blockIdx.x;
    if (op >= n) return;
    pqc_u8 *pk = pk_all + (pqc_size)op * P::PK_BYTES;
    pqc_u8 *sk = sk_all + (pqc_size)op * P::SK_BYTES;
    const pqc_u8 *xi = xi_all + (pqc_size)op * 32;
    if (threadIdx.x == 0) {
        pqc_keccak *st = &sm.st[0];
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, xi, 32);
        pqc_keccak_absorb_byte(st, (pqc_u8)P::K);
        pqc_keccak_absorb_byte(st, (pqc_u8)P::L);
        pqc_shake256_finalize(st);
        pqc_shake256_squeeze(st, sm.seeds, 128);
    }
    __syncthreads();
    const pqc_u8 *rho = sm.seeds;
    const pqc_u8 *rhop = sm.seeds + 32;
    MLDSA_BLK_FOR(i, 32) {
        pk[i] = rho[i];
        sk[i] = rho[i];
        sk[32 + i] = sm.seeds[96 + i];
    }
    // s1 (nonces 0..l-1) and s2 (nonces l..l+k-1), one stream per thread.
    MLDSA_BLK_FOR(e, P::L + P::K) {
        if (e < P::L)
            mldsa_blk_rej_bounded<P::ETA>(&sm.st[e], sm.s1[e], rhop, e);
        else
            mldsa_blk_rej_bounded<P::ETA>(&sm.st[e], sm.s2[e - P::L], rhop, e);
    }
    __syncthreads();
    MLDSA_BLK_FOR(g, (P::L + P::K) * 32) {
        const int poly = g >> 5, q = g & 31;
        const pqc_i32 *a = poly < P::L ? &sm.s1[poly][8 * q] : &sm.s2[poly - P::L][8 * q];
        mldsa_blk_pack8(sk + P::SK_S1 + poly * P::POLY_ETA + q * P::ETA_BITS, a, P::ETA_BITS, P::ETA, -1);
    }
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) sm.t[c >> 8][c & 255] = 0;
    __syncthreads();
    mldsa_blk_ntt(&sm.s1[0][0], P::L);
    // t^ = A^ o NTT(s1): the thread of A[r][s] adds its products into row r.
    MLDSA_BLK_FOR(e, P::K * P::L) {
        const int r = e / P::L, s = e % P::L;
        mldsa_blk_rej_ntt(&sm.st[e], sm.t[r], sm.s1[s], rho, s, r);
    }
    __syncthreads();
    mldsa_blk_invntt(&sm.t[0][0], P::K);
    // Power2Round (Alg 35) of t = NTT^-1(t^) + s2.
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) {
        const int r = c >> 8, j = c & 255;
        const pqc_i32 v = mldsa_modq(sm.t[r][j] + sm.s2[r][j]);
        const pqc_i32 t1 = (v + (1 << (MLDSA_D - 1)) - 1) >> MLDSA_D;
        sm.t[r][j] = t1;
        sm.s2[r][j] = v - (t1 << MLDSA_D);
    }
    __syncthreads();
    MLDSA_BLK_FOR(g, P::K * 32) {
        const int r = g >> 5, q = g & 31;
        mldsa_blk_pack8(pk + 32 + r * P::POLY_T1 + q * 10, &sm.t[r][8 * q], 10, 0, 1);
        mldsa_blk_pack8(sk + P::SK_T0 + r * P::POLY_T0 + q * 13, &sm.s2[r][8 * q], 13, 1 << (MLDSA_D - 1), -1);
    }
    // The barrier orders the block's writes of pk before thread 0 reads it.
    __syncthreads();
    if (threadIdx.x == 0) {
        pqc_keccak *st = &sm.st[0];
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, pk, P::PK_BYTES);
        pqc_shake256_finalize(st);
        pqc_shake256_squeeze(st, sk + 64, 64); // tr = H(pk, 64)
    }
}

// ---------------------------------------------------------------------------
// Sign (Alg 2 and 7): blocks take messages from a queue (as the thread
// variant's threads do), one signature at a time per block.
// ---------------------------------------------------------------------------
template <int LEVEL> struct mldsa_blk_sign_smem {
    typedef mldsa_params<LEVEL> P;
    union {
        pqc_keccak st[P::K * P::L];               // set-up: the streams of A^
        pqc_i32 p[P::L + 2 * P::K][MLDSA_N];      // set-up: s1, s2, t0; attempts: see below
    } u;
    pqc_keccak hs[P::L + 1]; // attempts: y's streams; hs[L]: mu, rho'', c~, SampleInBall
    pqc_i32 c[MLDSA_N];      // SampleInBall(c~), then NTT(c)
    pqc_u8 mu[64];
    pqc_u8 rhopp[64];
    pqc_u8 ct[64];
    pqc_u8 w1[P::K * P::POLY_W1];
    pqc_u32 op;
    pqc_u32 bad; // set-up: 1 when the key's s1 or s2 is out of range
    pqc_u32 hints[P::K];
};

// In an attempt, u.p holds y (polynomials 0..l-1), NTT(y) then the
// products <<c s1>>, <<c s2>>, <<c t0>> (l..l+k-1; l <= k) and w
// (l+k..l+2k-1).
template <int LEVEL>
__device__ __forceinline__ int mldsa_sign_attempt_block(mldsa_blk_sign_smem<LEVEL> &sm, pqc_u8 *sig,
                                                        const pqc_i32 *ws, int kappa) {
    typedef mldsa_params<LEVEL> P;
    typedef mldsa_sign_block_layout<LEVEL> W;
    pqc_i32(*y)[MLDSA_N] = sm.u.p;
    pqc_i32(*tmp)[MLDSA_N] = sm.u.p + P::L;
    pqc_i32(*w)[MLDSA_N] = sm.u.p + P::L + P::K;
    MLDSA_BLK_FOR(s, P::L) mldsa_blk_expand_mask<LEVEL>(&sm.hs[s], y[s], sm.rhopp, (kappa + s) & 0xFFFF);
    __syncthreads();
    // No barrier between the copy and the NTT: with blockDim.x dividing 128
    // (the launch gives 128 threads; 32 and 64 hold too), the thread that
    // copies coefficients j and j + 128 of a polynomial is the one whose
    // first butterfly (len 128) reads them, and the NTT's barrier after that
    // layer orders everything later.
    MLDSA_BLK_FOR(c, P::L * MLDSA_N) tmp[c >> 8][c & 255] = y[c >> 8][c & 255];
    mldsa_blk_ntt(&tmp[0][0], P::L);
    // w = NTT^-1(A^ o NTT(y)), reduced to [0, q).
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) {
        const int r = c >> 8, j = c & 255;
        pqc_i32 acc = 0;
        for (int s = 0; s < P::L; ++s)
            acc += mldsa_mont_reduce((pqc_i64)ws[W::A + (r * P::L + s) * MLDSA_N + j] * tmp[s][j]);
        w[r][j] = acc;
    }
    __syncthreads();
    mldsa_blk_invntt(&w[0][0], P::K);
    // w1Encode(HighBits(w)), 8 coefficients per thread.
    MLDSA_BLK_FOR(g, P::K * 32) {
        const int r = g >> 5, q = g & 31;
        pqc_i32 hb[8];
        for (int i = 0; i < 8; ++i) {
            const pqc_i32 v = mldsa_modq(w[r][8 * q + i]);
            w[r][8 * q + i] = v;
            hb[i] = mldsa_highbits<P::GAMMA2>(v);
        }
        mldsa_blk_pack8(sm.w1 + r * P::POLY_W1 + q * P::W1_BITS, hb, P::W1_BITS, 0, 1);
    }
    __syncthreads();
    // c~ = H(mu || w1Encode(w1), lambda/4); c = SampleInBall(c~).
    if (threadIdx.x == 0) {
        pqc_keccak *st = &sm.hs[P::L];
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, sm.mu, 64);
        pqc_shake256_absorb(st, sm.w1, P::K * P::POLY_W1);
        pqc_shake256_finalize(st);
        pqc_shake256_squeeze(st, sm.ct, P::CT_BYTES);
        mldsa_blk_sample_in_ball<LEVEL>(st, sm.c, sm.ct);
    }
    __syncthreads();
    MLDSA_BLK_FOR(i, P::CT_BYTES) sig[i] = sm.ct[i];
    mldsa_blk_ntt(sm.c, 1);
    // z = y + <<c s1>>; reject if ||z|| >= gamma1 - beta. Each rejection
    // test is a thread's own flag, OR-ed by the barrier that follows it
    // (__syncthreads_or): no two threads store to one shared word.
    MLDSA_BLK_FOR(c, P::L * MLDSA_N) {
        const int s = c >> 8, j = c & 255;
        tmp[s][j] = mldsa_mont_reduce((pqc_i64)sm.c[j] * ws[W::S1 + s * MLDSA_N + j]);
    }
    __syncthreads();
    mldsa_blk_invntt(&tmp[0][0], P::L);
    int reject = 0;
    MLDSA_BLK_FOR(c, P::L * MLDSA_N) {
        const int s = c >> 8, j = c & 255;
        const pqc_i32 z = mldsa_centre(mldsa_modq(y[s][j] + tmp[s][j]));
        reject |= mldsa_abs(z) >= P::GAMMA1 - P::BETA;
        tmp[s][j] = z;
    }
    if (__syncthreads_or(reject)) return 0;
    MLDSA_BLK_FOR(g, P::L * 32) {
        const int s = g >> 5, q = g & 31;
        mldsa_blk_pack8(sig + P::SIG_Z + s * P::POLY_Z + q * P::Z_BITS, &tmp[s][8 * q], P::Z_BITS, P::GAMMA1, -1);
    }
    MLDSA_BLK_FOR(i, P::OMEGA + P::K) sig[P::SIG_H + i] = 0;
    __syncthreads();
    // r0 = LowBits(w - <<c s2>>); w becomes w - <<c s2>>.
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) {
        const int r = c >> 8, j = c & 255;
        tmp[r][j] = mldsa_mont_reduce((pqc_i64)sm.c[j] * ws[W::S2 + r * MLDSA_N + j]);
    }
    __syncthreads();
    mldsa_blk_invntt(&tmp[0][0], P::K);
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) {
        const int r = c >> 8, j = c & 255;
        const pqc_i32 v = mldsa_modq(w[r][j] - tmp[r][j]);
        pqc_i32 r1, r0;
        mldsa_decompose<P::GAMMA2>(v, &r1, &r0);
        reject |= mldsa_abs(r0) >= P::GAMMA2 - P::BETA;
        w[r][j] = v;
    }
    if (__syncthreads_or(reject)) return 0;
    // h = MakeHint(-<<c t0>>, w - <<c s2>> + <<c t0>>): tmp holds the flags.
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) {
        const int r = c >> 8, j = c & 255;
        tmp[r][j] = mldsa_mont_reduce((pqc_i64)sm.c[j] * ws[W::T0 + r * MLDSA_N + j]);
    }
    __syncthreads();
    mldsa_blk_invntt(&tmp[0][0], P::K);
    MLDSA_BLK_FOR(c, P::K * MLDSA_N) {
        const int r = c >> 8, j = c & 255;
        const pqc_i32 ct0 = mldsa_modq(tmp[r][j]);
        reject |= mldsa_abs(mldsa_centre(ct0)) >= P::GAMMA2;
        const pqc_i32 v = w[r][j];
        tmp[r][j] = mldsa_highbits<P::GAMMA2>(mldsa_modq(v + ct0)) != mldsa_highbits<P::GAMMA2>(v);
    }
    if (__syncthreads_or(reject)) return 0;
    MLDSA_BLK_FOR(r, P::K) {
        pqc_u32 count = 0;
        for (int j = 0; j < MLDSA_N; ++j) count += (pqc_u32)tmp[r][j];
        sm.hints[r] = count;
    }
    __syncthreads();
    pqc_u32 total = 0;
    for (int r = 0; r < P::K; ++r) total += sm.hints[r];
    if (total > (pqc_u32)P::OMEGA) return 0;
    // HintBitPack (Alg 20): row r's positions after those of rows 0..r-1.
    MLDSA_BLK_FOR(r, P::K) {
        pqc_u32 at = 0;
        for (int i = 0; i < r; ++i) at += sm.hints[i];
        for (int j = 0; j < MLDSA_N; ++j)
            if (tmp[r][j]) sig[P::SIG_H + at++] = (pqc_u8)j;
        sig[P::SIG_H + P::OMEGA + r] = (pqc_u8)at;
    }
    return 1;
}

// Prepares message `op` in the block's workspace: mu, rho'', A^ and
// NTT(s1), NTT(s2), NTT(t0) (mldsa_sign_setup's work, spread over the block).
// sm.bad: 1 when a coefficient of s1 or s2 lies outside [-eta, eta]
// (mldsa_sk_in_range's check, each thread on a stride of the unpacked
// coefficients, OR-ed by a barrier), else 0.
template <int LEVEL>
__device__ __forceinline__ void mldsa_sign_setup_block(mldsa_blk_sign_smem<LEVEL> &sm, pqc_i32 *ws,
                                                       const pqc_u8 *sk, const pqc_u8 *msg, pqc_u32 msg_len,
                                                       const pqc_u8 *ctx, pqc_u32 ctx_len, const pqc_u8 *rnd) {
    typedef mldsa_params<LEVEL> P;
    typedef mldsa_sign_block_layout<LEVEL> W;
    if (threadIdx.x == 0) {
        pqc_keccak *st = &sm.hs[P::L];
        mldsa_blk_mu(st, sm.mu, sk + 64, ctx, ctx_len, msg, msg_len);
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, sk + 32, 32); // K
        pqc_shake256_absorb(st, rnd, 32);
        pqc_shake256_absorb(st, sm.mu, 64);
        pqc_shake256_finalize(st);
        pqc_shake256_squeeze(st, sm.rhopp, 64);
    }
    // A^[r][s], one stream per thread, from thread 32 on (thread 0 hashes).
    {
        int e = (int)threadIdx.x - 32;
        if (e < 0) e += (int)blockDim.x;
        for (; e < P::K * P::L; e += (int)blockDim.x)
            mldsa_blk_rej_ntt(&sm.u.st[e], ws + W::A + e * MLDSA_N, 0, sk, e % P::L, e / P::L);
    }
    __syncthreads();
    // s1, s2, t0 unpacked into u.p (over the streams' states), transformed
    // and stored after A^: S1, S2, T0 follow each other as in u.p.
    MLDSA_BLK_FOR(g, (P::L + 2 * P::K) * 32) {
        const int poly = g >> 5, q = g & 31;
        pqc_i32 *a = &sm.u.p[poly][8 * q];
        if (poly < P::L + P::K)
            mldsa_blk_unpack8(a, sk + P::SK_S1 + poly * P::POLY_ETA + q * P::ETA_BITS, P::ETA_BITS, P::ETA, -1);
        else
            mldsa_blk_unpack8(a, sk + P::SK_T0 + (poly - P::L - P::K) * P::POLY_T0 + q * 13, 13,
                              1 << (MLDSA_D - 1), -1);
    }
    __syncthreads();
    // s1 and s2 unpacked are eta - packed: below -eta where packed > 2 eta.
    int bad = 0;
    MLDSA_BLK_FOR(c, (P::L + P::K) * MLDSA_N) bad |= sm.u.p[c >> 8][c & 255] < -P::ETA;
    bad = __syncthreads_or(bad);
    if (threadIdx.x == 0) sm.bad = (pqc_u32)bad;
    mldsa_blk_ntt(&sm.u.p[0][0], P::L + 2 * P::K);
    MLDSA_BLK_FOR(c, (P::L + 2 * P::K) * MLDSA_N) ws[W::S1 + c] = sm.u.p[c >> 8][c & 255];
    __syncthreads();
}

template <int LEVEL>
__device__ __forceinline__ void mldsa_sign_block(pqc_u8 *sig_all, pqc_u32 sig_stride, const pqc_u8 *msg_all,
                                                 pqc_u32 msg_len, const pqc_u8 *ctx, pqc_u32 ctx_len,
                                                 const pqc_u8 *sk_all, const pqc_u8 *rnd_all, pqc_i32 *scratch,
                                                 pqc_u32 *queue, pqc_u32 n) {
    typedef mldsa_params<LEVEL> P;
    __shared__ mldsa_blk_sign_smem<LEVEL> sm;
    if (ctx_len > 255) {
        for (pqc_u32 i = blockIdx.x; i < n; i += gridDim.x)
            MLDSA_BLK_FOR(j, P::SIG_BYTES) sig_all[(pqc_size)i * sig_stride + j] = 0;
        return;
    }
    pqc_i32 *ws = scratch + (pqc_size)blockIdx.x * mldsa_sign_block_layout<LEVEL>::WORDS;
    for (;;) {
        if (threadIdx.x == 0) sm.op = atomicAdd(&queue[0], 1u);
        __syncthreads();
        const pqc_u32 op = sm.op;
        if (op >= n) return;
        pqc_u8 *sig = sig_all + (pqc_size)op * sig_stride;
        const pqc_u8 *sk = sk_all + (pqc_size)op * P::SK_BYTES;
        mldsa_sign_setup_block<LEVEL>(sm, ws, sk, msg_all + (pqc_size)op * msg_len, msg_len, ctx, ctx_len,
                                      rnd_all + (pqc_size)op * 32);
        // A key out of range (sm.bad, set before the set-up's last barrier)
        // makes no attempt and gets an all-zero signature, as one that
        // reaches the attempt limit does.
        int iter = sm.bad ? MLDSA_SIGN_MAX_ITER : 0;
        while (iter < MLDSA_SIGN_MAX_ITER && !mldsa_sign_attempt_block<LEVEL>(sm, sig, ws, iter * P::L)) ++iter;
        if (iter == MLDSA_SIGN_MAX_ITER) MLDSA_BLK_FOR(j, P::SIG_BYTES) sig[j] = 0;
        // No barrier here: every thread read sm.op right after the barrier
        // above, before the attempts' barriers, so thread 0 cannot store the
        // next one before all have read this one; and the barrier above
        // orders this signature's last reads of shared memory before the
        // next signature's set-up writes it.
    }
}

// ---------------------------------------------------------------------------
// Verify (Alg 3 and 8)
// ---------------------------------------------------------------------------
template <int LEVEL> struct mldsa_blk_verify_smem {
    typedef mldsa_params<LEVEL> P;
    pqc_keccak st[P::K * P::L];
    // NTT(z) (0..l-1), the sums (l..l+k-1), c (l+k): transformed together.
    pqc_i32 p[P::L + P::K + 1][MLDSA_N];
    pqc_u32 hbits[P::K][MLDSA_N / 32];
    pqc_u8 tr[64];
    pqc_u8 mu[64];
    pqc_u8 ct[64];
    pqc_u8 w1[P::K * P::POLY_W1];
};

template <int LEVEL>
__device__ __forceinline__ void mldsa_verify_block(pqc_i32 *ok_all, const pqc_u8 *msg_all, pqc_u32 msg_len,
                                                   const pqc_u8 *ctx, pqc_u32 ctx_len, const pqc_u8 *sig_all,
                                                   pqc_u32 sig_stride, const pqc_u8 *pk_all, pqc_u32 n) {
    typedef mldsa_params<LEVEL> P;
    __shared__ mldsa_blk_verify_smem<LEVEL> sm;
    const pqc_u32 op = blockIdx.x;
    if (op >= n) return;
    const pqc_u8 *sig = sig_all + (pqc_size)op * sig_stride;
    const pqc_u8 *pk = pk_all + (pqc_size)op * P::PK_BYTES;
    const pqc_u8 *msg = msg_all + (pqc_size)op * msg_len;
    const pqc_u8 *hint = sig + P::SIG_H;
    pqc_i32(*z)[MLDSA_N] = sm.p;
    pqc_i32(*acc)[MLDSA_N] = sm.p + P::L;
    pqc_i32 *c = sm.p[P::L + P::K];
    if (ctx_len > 255) {
        if (threadIdx.x == 0) ok_all[op] = 0;
        return;
    }
    // Each thread's own verdict, OR-ed by a barrier (__syncthreads_or): no
    // two threads store to one shared word.
    int bad = 0;
    if (threadIdx.x == 0) {
        bad = !mldsa_hint_valid<LEVEL>(hint);
        pqc_keccak *st = &sm.st[0];
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, pk, P::PK_BYTES);
        pqc_shake256_finalize(st);
        pqc_shake256_squeeze(st, sm.tr, 64);
        mldsa_blk_mu(st, sm.mu, sm.tr, ctx, ctx_len, msg, msg_len);
    }
    if (threadIdx.x == (blockDim.x > 32 ? 32u : 0u)) {
        for (int i = 0; i < P::CT_BYTES; ++i) sm.ct[i] = sig[i];
        mldsa_blk_sample_in_ball<LEVEL>(&sm.st[1], c, sig);
    }
    // No barrier here: the loop below neither reads nor writes what
    // threads 0 and 32 write above (tr, mu, ct, c, their Keccak states),
    // and its __syncthreads_or orders those writes before c is read.
    // z, checked against gamma1 - beta; t1 * 2^d into the sums.
    MLDSA_BLK_FOR(g, (P::L + P::K) * 32) {
        const int poly = g >> 5, q = g & 31;
        pqc_i32 *a = &sm.p[poly][8 * q];
        if (poly < P::L) {
            mldsa_blk_unpack8(a, sig + P::SIG_Z + poly * P::POLY_Z + q * P::Z_BITS, P::Z_BITS, P::GAMMA1, -1);
            for (int i = 0; i < 8; ++i)
                bad |= mldsa_abs(a[i]) >= P::GAMMA1 - P::BETA;
        } else {
            mldsa_blk_unpack8(a, pk + 32 + (poly - P::L) * P::POLY_T1 + q * 10, 10, 0, 1);
            for (int i = 0; i < 8; ++i) a[i] <<= MLDSA_D;
        }
    }
    if (__syncthreads_or(bad)) {
        if (threadIdx.x == 0) ok_all[op] = 0;
        return;
    }
    mldsa_blk_ntt(&sm.p[0][0], P::L + P::K + 1);
    // The sums start at -NTT(c) o NTT(t1 * 2^d); the hint bits of row r.
    MLDSA_BLK_FOR(i, P::K * MLDSA_N) {
        const int r = i >> 8, j = i & 255;
        acc[r][j] = -mldsa_mont_reduce((pqc_i64)c[j] * acc[r][j]);
    }
    MLDSA_BLK_FOR(r, P::K) {
        for (int i = 0; i < MLDSA_N / 32; ++i) sm.hbits[r][i] = 0;
        for (int i = r == 0 ? 0 : hint[P::OMEGA + r - 1]; i < hint[P::OMEGA + r]; ++i)
            sm.hbits[r][hint[i] >> 5] |= 1u << (hint[i] & 31);
    }
    __syncthreads();
    // + A^ o NTT(z): the thread of A[r][s] adds its products into row r.
    MLDSA_BLK_FOR(e, P::K * P::L) {
        const int r = e / P::L, s = e % P::L;
        mldsa_blk_rej_ntt(&sm.st[e], acc[r], z[s], pk, s, r);
    }
    __syncthreads();
    mldsa_blk_invntt(&acc[0][0], P::K);
    // w1' = UseHint(h, w'_approx) (Alg 40), encoded 8 coefficients at a time.
    MLDSA_BLK_FOR(g, P::K * 32) {
        const int r = g >> 5, q = g & 31;
        pqc_i32 w1[8];
        for (int i = 0; i < 8; ++i) {
            const int j = 8 * q + i;
            pqc_i32 r1, r0;
            mldsa_decompose<P::GAMMA2>(mldsa_modq(acc[r][j]), &r1, &r0);
            if ((sm.hbits[r][j >> 5] >> (j & 31)) & 1) {
                if (r0 > 0)
                    r1 = (r1 + 1 == P::W1_MOD) ? 0 : r1 + 1;
                else
                    r1 = (r1 == 0) ? P::W1_MOD - 1 : r1 - 1;
            }
            w1[i] = r1;
        }
        mldsa_blk_pack8(sm.w1 + r * P::POLY_W1 + q * P::W1_BITS, w1, P::W1_BITS, 0, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        pqc_keccak *st = &sm.st[0];
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, sm.mu, 64);
        pqc_shake256_absorb(st, sm.w1, P::K * P::POLY_W1);
        pqc_shake256_finalize(st);
        pqc_u32 diff = 0;
        for (int i = 0; i < P::CT_BYTES; ++i) diff |= pqc_keccak_squeeze_byte(st) ^ sm.ct[i];
        ok_all[op] = diff == 0;
    }
}

#endif // __CUDACC__ || __CUDACC_RTC__ || PQCPROF_CUDA_EMULATION
#endif // PQCPROF_MLDSA_BLOCK_CUH
