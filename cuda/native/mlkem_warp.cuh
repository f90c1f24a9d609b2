// mlkem_warp.cuh: ML-KEM with one warp per operation (the `warp` variant).
//
// The same FIPS 203 arithmetic as mlkem.cuh, shared between the 32 lanes of
// a warp, with the operation's polynomials in shared memory:
//   * the k^2 SampleNTT streams of A^ and the CBD PRF streams run one per
//     lane, in one phase (keygen: k^2 + 2k streams, encaps: k^2 + 2k + 1);
//   * each layer of an NTT or inverse NTT spreads its 128 butterflies (of
//     every polynomial transformed at once) over the lanes;
//   * products, encodings and compressions go by coefficient pairs or
//     groups of 8, lane by lane, so consecutive lanes read and write
//     consecutive bytes of keys and ciphertexts;
//   * SHA3/SHAKE of a single stream (G, H, J) run on lane 0.
// Every value is computed by the same expression as in mlkem.cuh, in the
// same order where order matters (i16 sums), so results are byte-identical
// to the thread variant and the host build. Kernels (mlkem_kernels.cuh)
// launch blocks of one warp: blockIdx.x is the operation.
#ifndef PQCPROF_MLKEM_WARP_CUH
#define PQCPROF_MLKEM_WARP_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)

#include "common.cuh"
#include "keccak.cuh"
#include "mlkem.cuh"

#define PQC_WARP_ALL 0xffffffffu

// The streams of one operation's sampling phase: k^2 + 2k + 1 at most.
template <int K> struct pqc_mlkem_warp_streams {
    enum { N = K * K + 2 * K + 1 };
};

// Shared memory of one operation: the polynomials, and one Keccak state per
// stream so that no lane keeps a state in local memory (bytes:
// 720 * (k^2 + 2k + 1) + 132, i.e. 6,612 / 11,652 / 18,132 for k = 2, 3, 4).
template <int K> struct pqc_mlkem_warp_smem {
    pqc_keccak st[pqc_mlkem_warp_streams<K>::N]; // lane t's stream; lane 0's hashes in st[0]
    pqc_i16 a[K * K][256]; // A^ (keygen) or A^T (encrypt); decrypt: u
    pqc_i16 s[K][256];     // keygen s, encrypt y, decrypt s
    pqc_i16 e[K + 1][256]; // keygen e, encrypt e1 and e2, decrypt the product
    pqc_u8 seed[64];       // keygen (rho, sigma), encaps/decaps (K, r)
    pqc_u8 msg[64];        // hash inputs: d || k, m || H(ek), m' || h; K-bar
    pqc_u32 flag;
};

// NTT (Algorithm 9) of npoly polynomials f, f + stride, ...: each layer's
// butterflies over the lanes. Same butterflies and final reduction as
// pqc_mlkem_ntt; zeta of group g of the layer with half-length len is
// zetas[128 / len + g].
__device__ __forceinline__ void pqc_mlkem_warp_ntt(pqc_i16 *f, int npoly, int stride, unsigned lane) {
    for (int len = 128; len >= 2; len >>= 1) {
        for (int b = (int)lane; b < 128 * npoly; b += 32) {
            pqc_i16 *p = f + (b >> 7) * stride;
            const int bb = b & 127;
            const int group = bb / len;
            const int j = group * 2 * len + (bb & (len - 1));
            const pqc_i16 zeta = pqc_mlkem_zetas[128 / len + group];
            const pqc_i16 t = pqc_mlkem_montmul(zeta, p[j + len]);
            p[j + len] = (pqc_i16)(p[j] - t);
            p[j] = (pqc_i16)(p[j] + t);
        }
        __syncwarp();
    }
    for (int c = (int)lane; c < 256 * npoly; c += 32) {
        pqc_i16 *p = f + (c >> 8) * stride;
        p[c & 255] = pqc_mlkem_barrett(p[c & 255]);
    }
    __syncwarp();
}

// NTT^-1 (Algorithm 10) as pqc_mlkem_invntt, over the lanes; zeta of group
// g of the layer with half-length len is zetas[256 / len - 1 - g].
__device__ __forceinline__ void pqc_mlkem_warp_invntt(pqc_i16 *f, int npoly, int stride, unsigned lane) {
    for (int c = (int)lane; c < 256 * npoly; c += 32) {
        pqc_i16 *p = f + (c >> 8) * stride;
        p[c & 255] = pqc_mlkem_barrett(p[c & 255]);
    }
    __syncwarp();
    for (int len = 2; len <= 128; len <<= 1) {
        for (int b = (int)lane; b < 128 * npoly; b += 32) {
            pqc_i16 *p = f + (b >> 7) * stride;
            const int bb = b & 127;
            const int group = bb / len;
            const int j = group * 2 * len + (bb & (len - 1));
            const pqc_i16 zeta = pqc_mlkem_zetas[256 / len - 1 - group];
            const pqc_i16 t = p[j];
            p[j] = pqc_mlkem_barrett((pqc_i32)t + p[j + len]);
            p[j + len] = pqc_mlkem_montmul(zeta, (pqc_i16)(p[j + len] - t));
        }
        __syncwarp();
    }
    for (int c = (int)lane; c < 256 * npoly; c += 32) {
        pqc_i16 *p = f + (c >> 8) * stride;
        p[c & 255] = pqc_mlkem_montmul(p[c & 255], PQC_MLKEM_INVN);
    }
    __syncwarp();
}

// Compress_D of 8 coefficients, packed as ByteEncode_D does (coefficient
// i at bits [D i, D i + D)) into the 128-bit value lo | hi << 64.
template <int D>
__device__ __forceinline__ void pqc_mlkem_compress8(pqc_u64 *lo, pqc_u64 *hi, const pqc_i16 *f) {
    pqc_u64 l = 0, h = 0;
    PQC_MLKEM_UNROLL
    for (int i = 0; i < 8; ++i) {
        const pqc_u32 x = pqc_mlkem_canon(f[i]);
        const pqc_u64 c = ((x << D) + (PQC_MLKEM_Q - 1) / 2) / PQC_MLKEM_Q & ((1u << D) - 1);
        const int b = D * i;
        if (b < 64) {
            l |= c << b;
            if (b + D > 64) h |= c >> (64 - b);
        } else {
            h |= c << (b - 64);
        }
    }
    *lo = l;
    *hi = h;
}

// Decompress_D(ByteDecode_D(.)) of D bytes into 8 coefficients.
template <int D> __device__ __forceinline__ void pqc_mlkem_decompress8(pqc_i16 *f, const pqc_u8 *in) {
    pqc_u64 l = 0, h = 0;
    PQC_MLKEM_UNROLL
    for (int b = 0; b < D; ++b) {
        if (b < 8)
            l |= (pqc_u64)in[b] << (8 * b);
        else
            h |= (pqc_u64)in[b] << (8 * (b - 8));
    }
    PQC_MLKEM_UNROLL
    for (int i = 0; i < 8; ++i) {
        const int b = D * i;
        pqc_u64 v = b < 64 ? l >> b : h >> (b - 64);
        if (b < 64 && b + D > 64) v |= h << (64 - b);
        const pqc_u32 y = (pqc_u32)v & ((1u << D) - 1);
        f[i] = (pqc_i16)((y * PQC_MLKEM_Q + (1u << (D - 1))) >> D);
    }
}

// ByteEncode_D(Compress_D(.)) of 8 coefficients: D bytes written to out,
// or (out == 0) compared with cmp; returns the differences ORed.
template <int D>
__device__ __forceinline__ pqc_u32 pqc_mlkem_warp_emit8(pqc_u8 *out, const pqc_u8 *cmp, const pqc_i16 *f) {
    pqc_u64 lo, hi;
    pqc_mlkem_compress8<D>(&lo, &hi, f);
    pqc_u32 diff = 0;
    PQC_MLKEM_UNROLL
    for (int b = 0; b < D; ++b) {
        const pqc_u8 byte = (pqc_u8)(b < 8 ? lo >> (8 * b) : hi >> (8 * (b - 8)));
        if (out)
            out[b] = byte;
        else
            diff |= (pqc_u32)(cmp[b] ^ byte);
    }
    return diff;
}

__device__ __forceinline__ pqc_u32 pqc_warp_or(pqc_u32 v) {
    for (int off = 16; off > 0; off >>= 1) v |= __shfl_xor_sync(PQC_WARP_ALL, v, off);
    return v;
}

// K-PKE.Encrypt(ek, m, r) (Algorithm 14) by the warp: the ciphertext goes to
// ct (ct != 0) or is compared with cmp; returns the differences (every lane
// gets the same value). m and r may be in global or shared memory.
template <int K>
__device__ __forceinline__ pqc_u32 pqc_mlkem_warp_encrypt(pqc_mlkem_warp_smem<K> &sm, pqc_u8 *ct, const pqc_u8 *cmp,
                                                          const pqc_u8 *ek, const pqc_u8 *m, const pqc_u8 *r,
                                                          unsigned lane) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u8 *rho = ek + 384 * K;
    // A^T[i][j] = SampleNTT(rho || i || j); y (N = i), e1 (N = k + i), e2 (N = 2k).
    for (int t = (int)lane; t < K * K + 2 * K + 1; t += 32) {
        if (t < K * K)
            pqc_mlkem_sample_ntt_in(&sm.st[t], sm.a[t], rho, (pqc_u8)(t / K), (pqc_u8)(t % K));
        else if (t < K * K + K)
            pqc_mlkem_cbd_in<P::ETA1>(&sm.st[t], sm.s[t - K * K], r, (pqc_u8)(t - K * K), 0);
        else
            pqc_mlkem_cbd_in<P::ETA2>(&sm.st[t], sm.e[t - K * K - K], r, (pqc_u8)(t - K * K), 0);
    }
    __syncwarp();
    pqc_mlkem_warp_ntt(&sm.s[0][0], K, 256, lane);
    // u_i = NTT^-1(sum_j A^T[i][j] o y_j), into A^T[i][0] (each pair is
    // read and written by one lane only).
    for (int q = (int)lane; q < 128 * K; q += 32) {
        const int i = q >> 7, p = q & 127;
        pqc_i16 acc[2];
        PQC_MLKEM_UNROLL
        for (int j = 0; j < K; ++j) pqc_mlkem_basemul_pair(acc, sm.a[i * K + j], sm.s[j], p, j == 0);
        sm.a[i * K][2 * p] = acc[0];
        sm.a[i * K][2 * p + 1] = acc[1];
    }
    __syncwarp();
    pqc_mlkem_warp_invntt(&sm.a[0][0], K, 256 * K, lane);
    pqc_u32 diff = 0;
    for (int q = (int)lane; q < 32 * K; q += 32) {
        const int i = q >> 5, g = q & 31;
        pqc_i16 f[8];
        PQC_MLKEM_UNROLL
        for (int c = 0; c < 8; ++c) f[c] = (pqc_i16)(sm.a[i * K][8 * g + c] + sm.e[i][8 * g + c]);
        const int off = 32 * P::DU * i + P::DU * g;
        diff |= pqc_mlkem_warp_emit8<P::DU>(ct ? ct + off : 0, cmp + off, f);
    }
    // v = NTT^-1(t^T o y) + e2 + Decompress_1(m), into A^T[0][1].
    pqc_i16 *v = sm.a[1];
    for (int p = (int)lane; p < 128; p += 32) {
        pqc_i16 acc[2];
        PQC_MLKEM_UNROLL
        for (int j = 0; j < K; ++j) {
            pqc_i16 t[2];
            pqc_mlkem_decode12_pair(t, ek + 384 * j + 3 * p);
            pqc_mlkem_basemul2(acc, t[0], t[1], sm.s[j][2 * p], sm.s[j][2 * p + 1], p, j == 0);
        }
        v[2 * p] = acc[0];
        v[2 * p + 1] = acc[1];
    }
    __syncwarp();
    pqc_mlkem_warp_invntt(v, 1, 256, lane);
    {
        const int g = (int)lane;
        pqc_i16 f[8];
        PQC_MLKEM_UNROLL
        for (int c = 0; c < 8; ++c) {
            const int i = 8 * g + c;
            const pqc_i16 bit = (pqc_i16)((m[i >> 3] >> (i & 7)) & 1);
            f[c] = (pqc_i16)(v[i] + sm.e[K][i]);
            f[c] = (pqc_i16)(f[c] + (bit & 1) * ((PQC_MLKEM_Q + 1) / 2));
        }
        const int off = 32 * P::DU * K + P::DV * g;
        diff |= pqc_mlkem_warp_emit8<P::DV>(ct ? ct + off : 0, cmp + off, f);
    }
    return pqc_warp_or(diff);
}

template <int K>
__device__ __forceinline__ void pqc_mlkem_keygen_warp(pqc_u8 *pk_all, pqc_u8 *sk_all, const pqc_u8 *d_all,
                                                      const pqc_u8 *z_all, pqc_u32 n) {
    typedef pqc_mlkem_params<K> P;
    __shared__ pqc_mlkem_warp_smem<K> sm;
    const unsigned lane = threadIdx.x & 31;
    const pqc_u32 op = blockIdx.x;
    if (op >= n) return;
    pqc_u8 *pk = pk_all + (pqc_size)op * P::PK_BYTES;
    pqc_u8 *sk = sk_all + (pqc_size)op * P::SK_BYTES;
    const pqc_u8 *d = d_all + (pqc_size)op * 32;
    const pqc_u8 *z = z_all + (pqc_size)op * 32;
    // (rho, sigma) = G(d || k)
    if (lane == 0) {
        for (int i = 0; i < 32; ++i) sm.msg[i] = d[i];
        sm.msg[32] = (pqc_u8)K;
        pqc_sha3_512_in(&sm.st[0], sm.seed, sm.msg, 33);
    }
    __syncwarp();
    const pqc_u8 *rho = sm.seed;
    const pqc_u8 *sigma = sm.seed + 32;
    // A^[i][j] = SampleNTT(rho || j || i); s (N = i), e (N = k + i).
    for (int t = (int)lane; t < K * K + 2 * K; t += 32) {
        if (t < K * K)
            pqc_mlkem_sample_ntt_in(&sm.st[t], sm.a[t], rho, (pqc_u8)(t % K), (pqc_u8)(t / K));
        else if (t < K * K + K)
            pqc_mlkem_cbd_in<P::ETA1>(&sm.st[t], sm.s[t - K * K], sigma, (pqc_u8)(t - K * K), 0);
        else
            pqc_mlkem_cbd_in<P::ETA1>(&sm.st[t], sm.e[t - K * K - K], sigma, (pqc_u8)(t - K * K), 0);
    }
    __syncwarp();
    pqc_mlkem_warp_ntt(&sm.s[0][0], K, 256, lane);
    pqc_mlkem_warp_ntt(&sm.e[0][0], K, 256, lane);
    // t = A^ o s + e, encoded into ek; s encoded into dk_PKE.
    for (int q = (int)lane; q < 128 * K; q += 32) {
        const int i = q >> 7, p = q & 127;
        pqc_i16 acc[2];
        PQC_MLKEM_UNROLL
        for (int j = 0; j < K; ++j) pqc_mlkem_basemul_pair(acc, sm.a[i * K + j], sm.s[j], p, j == 0);
        const pqc_i16 t0 = (pqc_i16)(pqc_mlkem_montmul(acc[0], PQC_MLKEM_R2) + sm.e[i][2 * p]);
        const pqc_i16 t1 = (pqc_i16)(pqc_mlkem_montmul(acc[1], PQC_MLKEM_R2) + sm.e[i][2 * p + 1]);
        pqc_mlkem_encode12_pair(pk + 384 * i + 3 * p, t0, t1);
        pqc_mlkem_encode12_pair(sk + 384 * i + 3 * p, sm.s[i][2 * p], sm.s[i][2 * p + 1]);
    }
    pk[384 * K + lane] = rho[lane];
    // __syncwarp orders the lanes' global writes of pk before the reads below.
    __syncwarp();
    // dk = dk_PKE || ek || H(ek) || z
    for (int b = (int)lane; b < 384 * K + 32; b += 32) sk[384 * K + b] = pk[b];
    sk[768 * K + 64 + lane] = z[lane];
    if (lane == 0) pqc_sha3_256_in(&sm.st[0], sk + 768 * K + 32, pk, 384 * K + 32);
}

template <int K>
__device__ __forceinline__ void pqc_mlkem_encaps_warp(pqc_u8 *ct_all, pqc_u8 *ss_all, const pqc_u8 *pk_all,
                                                      const pqc_u8 *m_all, pqc_u32 n) {
    typedef pqc_mlkem_params<K> P;
    __shared__ pqc_mlkem_warp_smem<K> sm;
    const unsigned lane = threadIdx.x & 31;
    const pqc_u32 op = blockIdx.x;
    if (op >= n) return;
    pqc_u8 *ct = ct_all + (pqc_size)op * P::CT_BYTES;
    pqc_u8 *ss = ss_all + (pqc_size)op * 32;
    const pqc_u8 *pk = pk_all + (pqc_size)op * P::PK_BYTES;
    const pqc_u8 *m = m_all + (pqc_size)op * 32;
    // Section 7.2 modulus check, 3 bytes per lane at a time.
    pqc_u32 bad = 0;
    for (int i = 3 * (int)lane; i < 384 * K; i += 96) bad |= (pqc_u32)!pqc_mlkem_check_modulus(pk + i, 3);
    if (__any_sync(PQC_WARP_ALL, bad)) {
        for (int b = (int)lane; b < P::CT_BYTES; b += 32) ct[b] = 0;
        ss[lane] = 0;
        return;
    }
    // (K, r) = G(m || H(ek))
    if (lane == 0) {
        for (int i = 0; i < 32; ++i) sm.msg[i] = m[i];
        pqc_sha3_256_in(&sm.st[0], sm.msg + 32, pk, 384 * K + 32);
        pqc_sha3_512_in(&sm.st[0], sm.seed, sm.msg, 64);
    }
    __syncwarp();
    pqc_mlkem_warp_encrypt<K>(sm, ct, ct, pk, m, sm.seed + 32, lane);
    ss[lane] = sm.seed[lane];
}

template <int K>
__device__ __forceinline__ void pqc_mlkem_decaps_warp(pqc_u8 *ss_all, const pqc_u8 *ct_all, const pqc_u8 *sk_all,
                                                      pqc_u32 n) {
    typedef pqc_mlkem_params<K> P;
    __shared__ pqc_mlkem_warp_smem<K> sm;
    const unsigned lane = threadIdx.x & 31;
    const pqc_u32 op = blockIdx.x;
    if (op >= n) return;
    pqc_u8 *ss = ss_all + (pqc_size)op * 32;
    const pqc_u8 *ct = ct_all + (pqc_size)op * P::CT_BYTES;
    const pqc_u8 *sk = sk_all + (pqc_size)op * P::SK_BYTES;
    const pqc_u8 *ek = sk + 384 * K;
    const pqc_u8 *h = sk + 768 * K + 32;
    const pqc_u8 *z = sk + 768 * K + 64;
    // Section 7.3 hash check.
    if (lane == 0) {
        pqc_sha3_256_in(&sm.st[0], sm.msg, ek, 384 * K + 32);
        pqc_u32 bad = 0;
        for (int i = 0; i < 32; ++i) bad |= (pqc_u32)(sm.msg[i] ^ h[i]);
        sm.flag = bad;
    }
    __syncwarp();
    if (sm.flag) {
        ss[lane] = 0;
        return;
    }
    // K-PKE.Decrypt: u (into A^ rows) and s, w = v - NTT^-1(s^T o NTT(u)).
    for (int q = (int)lane; q < 32 * K; q += 32) {
        const int i = q >> 5, g = q & 31;
        pqc_mlkem_decompress8<P::DU>(&sm.a[i][8 * g], ct + 32 * P::DU * i + P::DU * g);
    }
    for (int q = (int)lane; q < 128 * K; q += 32) {
        const int i = q >> 7, p = q & 127;
        pqc_mlkem_decode12_pair(&sm.s[i][2 * p], sk + 384 * i + 3 * p);
    }
    __syncwarp();
    pqc_mlkem_warp_ntt(&sm.a[0][0], K, 256, lane);
    for (int p = (int)lane; p < 128; p += 32) {
        pqc_i16 acc[2];
        PQC_MLKEM_UNROLL
        for (int i = 0; i < K; ++i) pqc_mlkem_basemul_pair(acc, sm.s[i], sm.a[i], p, i == 0);
        sm.e[0][2 * p] = acc[0];
        sm.e[0][2 * p + 1] = acc[1];
    }
    __syncwarp();
    pqc_mlkem_warp_invntt(sm.e[0], 1, 256, lane);
    {
        const int g = (int)lane;
        pqc_i16 v[8];
        pqc_mlkem_decompress8<P::DV>(v, ct + 32 * P::DU * K + P::DV * g);
        pqc_u32 byte = 0;
        PQC_MLKEM_UNROLL
        for (int c = 0; c < 8; ++c) {
            const pqc_u32 w = pqc_mlkem_canon((pqc_i32)v[c] - sm.e[0][8 * g + c]);
            const pqc_u32 bit = ((w << 1) + (PQC_MLKEM_Q - 1) / 2) / PQC_MLKEM_Q & 1;
            byte |= bit << c;
        }
        sm.msg[g] = (pqc_u8)byte;
        sm.msg[32 + g] = h[g];
    }
    __syncwarp();
    // (K', r') = G(m' || h)
    if (lane == 0) pqc_sha3_512_in(&sm.st[0], sm.seed, sm.msg, 64);
    __syncwarp();
    const pqc_u32 diff = pqc_mlkem_warp_encrypt<K>(sm, 0, ct, ek, sm.msg, sm.seed + 32, lane);
    // K-bar = J(z || c); the shared secret is K' when c = c', else K-bar.
    if (lane == 0) {
        pqc_keccak *st = &sm.st[0];
        pqc_shake256_init(st);
        pqc_shake256_absorb(st, z, 32);
        pqc_shake256_absorb(st, ct, P::CT_BYTES);
        pqc_shake256_finalize(st);
        pqc_u8 *kbar = sm.msg; // m' is no longer needed
        pqc_shake256_squeeze(st, kbar, 32);
        const pqc_u8 mask = (pqc_u8)(0u - ((diff | (0u - diff)) >> 31));
        for (int i = 0; i < 32; ++i) ss[i] = (pqc_u8)((sm.seed[i] & ~mask) | (kbar[i] & mask));
    }
}

#endif // __CUDACC__ || __CUDACC_RTC__ || PQCPROF_CUDA_EMULATION
#endif // PQCPROF_MLKEM_WARP_CUH
