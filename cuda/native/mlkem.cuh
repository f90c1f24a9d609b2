// mlkem.cuh: ML-KEM-512/768/1024 (FIPS 203), written once for host and device.
//
// Written from FIPS 203 (Algorithms 3-18); hashing from keccak.cuh (FIPS 202).
// No system headers (NVRTC). Everything is templated on k, the module rank:
//   k = 2: ML-KEM-512, k = 3: ML-KEM-768, k = 4: ML-KEM-1024.
//
// API (k as template argument; byte sizes in pqc_mlkem_params<k>):
//   void pqc_mlkem_keygen_internal<k>(pk[PK], sk[SK], d[32], z[32])
//        ML-KEM.KeyGen_internal (Algorithm 16); pk = ek, sk = dk.
//   int  pqc_mlkem_encaps_internal<k>(ct[CT], ss[32], pk[PK], m[32])
//        ML-KEM.Encaps_internal (Algorithm 17) after the encapsulation key
//        modulus check of section 7.2; returns PQC_OK, or PQC_ERR_INPUT (and
//        writes nothing) when a coefficient of ek is not below q.
//   int  pqc_mlkem_decaps_internal<k>(ss[32], ct[CT], sk[SK])
//        ML-KEM.Decaps_internal (Algorithm 18) with implicit rejection, after
//        the hash check of section 7.3; returns PQC_OK, or PQC_ERR_INPUT
//        (ss untouched) when H(ek) stored in dk does not match.
//   Lengths are the caller's business (the section 7.2/7.3 type checks).
//
// Arithmetic: coefficients are pqc_i16; products use Montgomery reduction
// with R = 2^16 and sums are brought back with Barrett reduction. The NTT
// tables hold zeta^BitRev7(i) * R mod q (centred), the base-case table holds
// zeta^(2*BitRev7(i)+1) * R mod q. Per-thread state stays small: the matrix
// A-hat is never stored; each entry is sampled from SHAKE128 when it is
// needed (one polynomial buffer), and re-encryption in Decaps compares the
// ciphertext as it is produced instead of storing c'. (mlkem_warp.cuh, the
// one-warp-per-operation variant, keeps A-hat in shared memory instead and
// uses the per-pair helpers and the *_in samplers below.)
#ifndef PQCPROF_MLKEM_CUH
#define PQCPROF_MLKEM_CUH

#include "common.cuh"
#include "keccak.cuh"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define PQC_MLKEM_UNROLL _Pragma("unroll")
#else
#define PQC_MLKEM_UNROLL
#endif

#define PQC_MLKEM_N 256
#define PQC_MLKEM_Q 3329
#define PQC_MLKEM_QINV 62209    // q^-1 mod 2^16
#define PQC_MLKEM_BARRETT 20159 // round(2^26 / q)
#define PQC_MLKEM_R2 1353       // 2^32 mod q: montmul by it multiplies by R
#define PQC_MLKEM_INVN 1441     // 128^-1 * R^2 mod q (128^-1 = 3303)

template <int K> struct pqc_mlkem_params;
template <> struct pqc_mlkem_params<2> {
    enum { ETA1 = 3, ETA2 = 2, DU = 10, DV = 4 };
    enum { PK_BYTES = 800, SK_BYTES = 1632, CT_BYTES = 768 };
};
template <> struct pqc_mlkem_params<3> {
    enum { ETA1 = 2, ETA2 = 2, DU = 10, DV = 4 };
    enum { PK_BYTES = 1184, SK_BYTES = 2400, CT_BYTES = 1088 };
};
template <> struct pqc_mlkem_params<4> {
    enum { ETA1 = 2, ETA2 = 2, DU = 11, DV = 5 };
    enum { PK_BYTES = 1568, SK_BYTES = 3168, CT_BYTES = 1568 };
};

// zeta^BitRev7(i) * 2^16 mod q, centred, i = 0..127 (FIPS 203 Algorithms 9, 10).
PQC_TABLE pqc_i16 pqc_mlkem_zetas[128] = {
    -1044, -758, -359, -1517, 1493, 1422, 287, 202, -171, 622, 1577, 182,
    962, -1202, -1474, 1468, 573, -1325, 264, 383, -829, 1458, -1602, -130,
    -681, 1017, 732, 608, -1542, 411, -205, -1571, 1223, 652, -552, 1015,
    -1293, 1491, -282, -1544, 516, -8, -320, -666, -1618, -1162, 126, 1469,
    -853, -90, -271, 830, 107, -1421, -247, -951, -398, 961, -1508, -725,
    448, -1065, 677, -1275, -1103, 430, 555, 843, -1251, 871, 1550, 105,
    422, 587, 177, -235, -291, -460, 1574, 1653, -246, 778, 1159, -147,
    -777, 1483, -602, 1119, -1590, 644, -872, 349, 418, 329, -156, -75,
    817, 1097, 603, 610, 1322, -1285, -1465, 384, -1215, -136, 1218, -1335,
    -874, 220, -1187, -1659, -1185, -1530, -1278, 794, -1510, -854, -870, 478,
    -108, -308, 996, 991, 958, -1460, 1522, 1628,
};

// zeta^(2*BitRev7(i)+1) * 2^16 mod q, centred, i = 0..127 (FIPS 203 Algorithm 11).
PQC_TABLE pqc_i16 pqc_mlkem_gammas[128] = {
    -1103, 1103, 430, -430, 555, -555, 843, -843, -1251, 1251, 871, -871,
    1550, -1550, 105, -105, 422, -422, 587, -587, 177, -177, -235, 235,
    -291, 291, -460, 460, 1574, -1574, 1653, -1653, -246, 246, 778, -778,
    1159, -1159, -147, 147, -777, 777, 1483, -1483, -602, 602, 1119, -1119,
    -1590, 1590, 644, -644, -872, 872, 349, -349, 418, -418, 329, -329,
    -156, 156, -75, 75, 817, -817, 1097, -1097, 603, -603, 610, -610,
    1322, -1322, -1285, 1285, -1465, 1465, 384, -384, -1215, 1215, -136, 136,
    1218, -1218, -1335, 1335, -874, 874, 220, -220, -1187, 1187, -1659, 1659,
    -1185, 1185, -1530, 1530, -1278, 1278, 794, -794, -1510, 1510, -854, 854,
    -870, 870, 478, -478, -108, 108, -308, 308, 996, -996, 991, -991,
    958, -958, -1460, 1460, 1522, -1522, 1628, -1628,
};

// ---------------------------------------------------------------------------
// Modular arithmetic

// a * 2^-16 mod q for |a| < 2^15 * q; result in (-q, q).
PQC_HD pqc_i16 pqc_mlkem_montred(pqc_i32 a) {
    const pqc_i16 t = (pqc_i16)(pqc_u16)((pqc_u32)a * PQC_MLKEM_QINV);
    return (pqc_i16)((a - (pqc_i32)t * PQC_MLKEM_Q) >> 16);
}

PQC_HD pqc_i16 pqc_mlkem_montmul(pqc_i16 a, pqc_i16 b) {
    return pqc_mlkem_montred((pqc_i32)a * b);
}

// a mod q into about [-q/2, q/2] for |a| < 2^16.
PQC_HD pqc_i16 pqc_mlkem_barrett(pqc_i32 a) {
    const pqc_i32 t = (PQC_MLKEM_BARRETT * a + (1 << 25)) >> 26;
    return (pqc_i16)(a - t * PQC_MLKEM_Q);
}

// a mod q into [0, q).
PQC_HD pqc_u16 pqc_mlkem_canon(pqc_i32 a) {
    pqc_i16 r = pqc_mlkem_barrett(a);
    r = (pqc_i16)(r + ((r >> 15) & PQC_MLKEM_Q));
    r = (pqc_i16)(r - PQC_MLKEM_Q);
    r = (pqc_i16)(r + ((r >> 15) & PQC_MLKEM_Q));
    return (pqc_u16)r;
}

// ---------------------------------------------------------------------------
// NTT (Algorithm 9) and inverse (Algorithm 10)

// Both transforms go three layers at a time: eight coefficients f[b + s m]
// (m = 0..7) are loaded, put through layers of half-length 4s, 2s and s (the
// butterflies that join them), and stored, so each coefficient is read and
// written three times instead of once a layer. Every butterfly is the same
// operation on the same values as layer by layer (butterflies of one layer
// touch disjoint pairs), so the results are bit for bit those of Algorithms
// 9 and 10 computed layer by layer. The zeta of the group starting at
// `start` of the layer with half-length len is zetas[128 / len + start /
// (2 len)] in the NTT and zetas[256 / len - 1 - start / (2 len)] in the
// inverse.

PQC_HD void pqc_mlkem_ntt_bfly(pqc_i16 *x, int a, int b, pqc_i16 zeta) {
    const pqc_i16 t = pqc_mlkem_montmul(zeta, x[b]);
    x[b] = (pqc_i16)(x[a] - t);
    x[a] = (pqc_i16)(x[a] + t);
}

PQC_HD void pqc_mlkem_invntt_bfly(pqc_i16 *x, int a, int b, pqc_i16 zeta) {
    const pqc_i16 t = x[a];
    x[a] = pqc_mlkem_barrett((pqc_i32)t + x[b]);
    x[b] = pqc_mlkem_montmul(zeta, (pqc_i16)(x[b] - t));
}

// NTT layers of half-length 4s, 2s, s on f[b + s m], m = 0..7, where b lies
// in the group of 8s coefficients starting at g (so the zetas of the three
// layers are those of groups g / 8s, g / 4s, g / 2s).
PQC_HD void pqc_mlkem_ntt3(pqc_i16 *f, int b, int s, int g) {
    pqc_i16 x[8];
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 8; ++m) x[m] = f[b + s * m];
    const int i1 = 128 / (4 * s) + g / (8 * s), i2 = 128 / (2 * s) + g / (4 * s), i3 = 128 / s + g / (2 * s);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 4; ++m) pqc_mlkem_ntt_bfly(x, m, m + 4, pqc_mlkem_zetas[i1]);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 4; ++m) pqc_mlkem_ntt_bfly(x, m + (m & 2), m + (m & 2) + 2, pqc_mlkem_zetas[i2 + (m >> 1)]);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 4; ++m) pqc_mlkem_ntt_bfly(x, 2 * m, 2 * m + 1, pqc_mlkem_zetas[i3 + m]);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 8; ++m) f[b + s * m] = x[m];
}

// Inverse NTT layers of half-length s, 2s, 4s on f[b + s m], m = 0..7, b in
// the group of 8s coefficients starting at g.
PQC_HD void pqc_mlkem_invntt3(pqc_i16 *f, int b, int s, int g, int reduce_first) {
    pqc_i16 x[8];
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 8; ++m) {
        x[m] = f[b + s * m];
        if (reduce_first) x[m] = pqc_mlkem_barrett(x[m]);
    }
    const int i1 = 256 / s - 1 - g / (2 * s), i2 = 256 / (2 * s) - 1 - g / (4 * s), i3 = 256 / (4 * s) - 1 - g / (8 * s);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 4; ++m) pqc_mlkem_invntt_bfly(x, 2 * m, 2 * m + 1, pqc_mlkem_zetas[i1 - m]);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 4; ++m) pqc_mlkem_invntt_bfly(x, m + (m & 2), m + (m & 2) + 2, pqc_mlkem_zetas[i2 - (m >> 1)]);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 4; ++m) pqc_mlkem_invntt_bfly(x, m, m + 4, pqc_mlkem_zetas[i3]);
    PQC_MLKEM_UNROLL
    for (int m = 0; m < 8; ++m) f[b + s * m] = x[m];
}

// In place; input |f| < q. The output is reduced to about [-q/2, q/2], or,
// with to_mont, multiplied by 2^-16 (a Montgomery reduction, |f| < q): the
// form of a product of pqc_mlkem_basemul_acc, to which it can be added.
PQC_HD_NOINLINE void pqc_mlkem_ntt_to(pqc_i16 *f, int to_mont) {
    // Layers 128, 64, 32; then 16, 8, 4 in each group of 32.
    for (int j = 0; j < 32; ++j) pqc_mlkem_ntt3(f, j, 32, 0);
    for (int g = 0; g < 256; g += 32)
        for (int j = 0; j < 4; ++j) pqc_mlkem_ntt3(f, g + j, 4, g);
    // Layer 2 and the final reduction, four coefficients (one group) at a time.
    for (int g = 0; g < 256; g += 4) {
        pqc_i16 x[4] = {f[g], f[g + 1], f[g + 2], f[g + 3]};
        const pqc_i16 zeta = pqc_mlkem_zetas[64 + g / 4];
        pqc_mlkem_ntt_bfly(x, 0, 2, zeta);
        pqc_mlkem_ntt_bfly(x, 1, 3, zeta);
        PQC_MLKEM_UNROLL
        for (int m = 0; m < 4; ++m) f[g + m] = to_mont ? pqc_mlkem_montred(x[m]) : pqc_mlkem_barrett(x[m]);
    }
}

PQC_HD void pqc_mlkem_ntt(pqc_i16 *f) { pqc_mlkem_ntt_to(f, 0); }

// In place on a product that carries a factor 2^-16 (the output of
// pqc_mlkem_basemul_acc); the final scaling removes it. Input |f| < 2^15,
// output |f| < q.
PQC_HD_NOINLINE void pqc_mlkem_invntt(pqc_i16 *f) {
    // The first reduction with layers 2, 4, 8 in each group of 16; then 16,
    // 32, 64 in each half.
    for (int g = 0; g < 256; g += 16)
        for (int j = 0; j < 2; ++j) pqc_mlkem_invntt3(f, g + j, 2, g, 1);
    for (int g = 0; g < 256; g += 128)
        for (int j = 0; j < 16; ++j) pqc_mlkem_invntt3(f, g + j, 16, g, 0);
    // Layer 128 and the final scaling.
    const pqc_i16 zeta = pqc_mlkem_zetas[1];
    for (int j = 0; j < 128; ++j) {
        pqc_i16 x[2] = {f[j], f[j + 128]};
        pqc_mlkem_invntt_bfly(x, 0, 1, zeta);
        f[j] = pqc_mlkem_montmul(x[0], PQC_MLKEM_INVN);
        f[j + 128] = pqc_mlkem_montmul(x[1], PQC_MLKEM_INVN);
    }
}

// acc (+)= a o b in T_q (Algorithms 11, 12), times 2^-16; basemul_pair (and
// basemul2, on the values) does the pair i (coefficients 2i, 2i+1) into
// acc[0], acc[1]. Inputs |a|, |b| < q; each call adds less than q to |acc|.
//
// The sums are reduced once: c0 = (a0 b0 + (a1 b1 2^-16) gamma) 2^-16 and
// c1 = (a0 b1 + a1 b0) 2^-16, the same residues as the sums of Montgomery
// products of Algorithm 12 (each term's input stays below 2^15 q), each
// below q in absolute value.
PQC_HD void pqc_mlkem_basemul2(pqc_i16 *acc, pqc_i16 a0, pqc_i16 a1, pqc_i16 b0, pqc_i16 b1, int i,
                               int first) {
    const pqc_i16 g = pqc_mlkem_gammas[i];
    pqc_i16 c0 = pqc_mlkem_montred((pqc_i32)a0 * b0 + (pqc_i32)pqc_mlkem_montmul(a1, b1) * g);
    pqc_i16 c1 = pqc_mlkem_montred((pqc_i32)a0 * b1 + (pqc_i32)a1 * b0);
    if (!first) {
        c0 = (pqc_i16)(c0 + acc[0]);
        c1 = (pqc_i16)(c1 + acc[1]);
    }
    acc[0] = c0;
    acc[1] = c1;
}

PQC_HD void pqc_mlkem_basemul_pair(pqc_i16 *acc, const pqc_i16 *a, const pqc_i16 *b, int i, int first) {
    pqc_mlkem_basemul2(acc, a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1], i, first);
}

PQC_HD_NOINLINE void pqc_mlkem_basemul_acc(pqc_i16 *acc, const pqc_i16 *a, const pqc_i16 *b,
                                           int first) {
    for (int i = 0; i < 128; ++i) pqc_mlkem_basemul_pair(acc + 2 * i, a, b, i, first);
}

// ---------------------------------------------------------------------------
// Sampling

// nbits (<= 12) bits at bit offset off of the 192-bit little-endian value
// w0 | w1 << 64 | w2 << 128.
PQC_HD pqc_u32 pqc_mlkem_bits192(pqc_u64 w0, pqc_u64 w1, pqc_u64 w2, int off, int nbits) {
    const pqc_u64 lo = off < 64 ? w0 : (off < 128 ? w1 : w2);
    const pqc_u64 hi = off < 64 ? w1 : w2;
    const int sh = off & 63;
    pqc_u64 v = lo >> sh;
    if (sh + nbits > 64) v |= hi << (64 - sh);
    return (pqc_u32)(v & ((1u << nbits) - 1));
}

// The 24 bits at bit offset off (a multiple of 8) of w0 | w1 << 64 | w2 << 128.
PQC_HD pqc_u32 pqc_mlkem_bits24(pqc_u64 w0, pqc_u64 w1, pqc_u64 w2, int off) {
    const pqc_u64 lo = off < 64 ? w0 : (off < 128 ? w1 : w2);
    const pqc_u64 hi = off < 64 ? w1 : w2;
    const int sh = off & 63;
    pqc_u64 v = lo >> sh;
    if (sh > 40) v |= hi << (64 - sh);
    return (pqc_u32)(v & 0xFFFFFFu);
}

// SampleNTT(rho || x || y) (Algorithm 7) into a, coefficients in [0, q).
// Each 3-byte group C gives d1 = C0 + 256 (C1 mod 16) and d2 = C1 / 16 + 16 C2,
// i.e. the squeezed stream read as consecutive 12-bit little-endian fields;
// 24 bytes (three lanes) give 16 candidates and 168 = 7 * 24, so the lanes
// never straddle a block.
// The state st is the caller's (pqc_mlkem_sample_ntt keeps it on the thread).
PQC_HD_NOINLINE void pqc_mlkem_sample_ntt_in(pqc_keccak *st, pqc_i16 *a, const pqc_u8 *rho, pqc_u8 x,
                                             pqc_u8 y) {
    pqc_shake128_init(st);
    pqc_shake128_absorb(st, rho, 32);
    pqc_keccak_absorb_byte(st, x);
    pqc_keccak_absorb_byte(st, y);
    pqc_shake128_finalize(st);
    int j = 0;
    while (j < 256) {
        const pqc_u64 w0 = pqc_keccak_squeeze_u64(st);
        const pqc_u64 w1 = pqc_keccak_squeeze_u64(st);
        const pqc_u64 w2 = pqc_keccak_squeeze_u64(st);
        PQC_MLKEM_UNROLL
        for (int t = 0; t < 16; ++t) {
            const pqc_u32 d = pqc_mlkem_bits192(w0, w1, w2, 12 * t, 12);
            if (d < PQC_MLKEM_Q && j < 256) a[j++] = (pqc_i16)d;
        }
    }
}

PQC_HD_NOINLINE void pqc_mlkem_sample_ntt(pqc_i16 *a, const pqc_u8 *rho, pqc_u8 x, pqc_u8 y) {
    pqc_keccak st;
    pqc_mlkem_sample_ntt_in(&st, a, rho, x, y);
}

// SamplePolyCBD_eta(PRF_eta(s, b)) (Algorithms 8 and PRF of 4.1): PRF is
// SHAKE256(s || b) to 64 eta bytes. If add, adds the sample to f (f += e),
// else sets f = e. Coefficients in [-eta, eta].
// Coefficient i takes bits [2 eta i, 2 eta (i + 1)) of the stream
// (BytesToBits order): x, the sum of its first eta bits, minus y, the sum of
// the last eta. The sums are taken for a whole word at once: adding the word
// shifted by 0..eta-1 under a mask that keeps every eta-th bit leaves each
// group's sum in its lowest eta bits.
template <int ETA>
PQC_HD_NOINLINE void pqc_mlkem_cbd_in(pqc_keccak *st, pqc_i16 *f, const pqc_u8 *s, pqc_u8 b, int add) {
    pqc_shake256_init(st);
    pqc_shake256_absorb(st, s, 32);
    pqc_keccak_absorb_byte(st, b);
    pqc_shake256_finalize(st);
    if (ETA == 2) {
        // One lane gives 16 coefficients (16 lanes = 128 bytes).
        for (int base = 0; base < 256; base += 16) {
            const pqc_u64 w = pqc_keccak_squeeze_u64(st);
            const pqc_u64 d = (w & 0x5555555555555555ULL) + ((w >> 1) & 0x5555555555555555ULL);
            PQC_MLKEM_UNROLL
            for (int t = 0; t < 16; ++t) {
                const pqc_i16 e = (pqc_i16)((pqc_i32)((d >> (4 * t)) & 3) - (pqc_i32)((d >> (4 * t + 2)) & 3));
                f[base + t] = add ? (pqc_i16)(f[base + t] + e) : e;
            }
        }
    } else {
        // Three lanes give 32 coefficients (24 lanes = 192 bytes), as eight
        // 24-bit groups of four.
        for (int base = 0; base < 256; base += 32) {
            const pqc_u64 w0 = pqc_keccak_squeeze_u64(st);
            const pqc_u64 w1 = pqc_keccak_squeeze_u64(st);
            const pqc_u64 w2 = pqc_keccak_squeeze_u64(st);
            PQC_MLKEM_UNROLL
            for (int g = 0; g < 8; ++g) {
                const pqc_u32 v = pqc_mlkem_bits24(w0, w1, w2, 24 * g);
                const pqc_u32 d = (v & 0x249249u) + ((v >> 1) & 0x249249u) + ((v >> 2) & 0x249249u);
                PQC_MLKEM_UNROLL
                for (int t = 0; t < 4; ++t) {
                    const pqc_i16 e = (pqc_i16)((pqc_i32)((d >> (6 * t)) & 7) - (pqc_i32)((d >> (6 * t + 3)) & 7));
                    const int c = base + 4 * g + t;
                    f[c] = add ? (pqc_i16)(f[c] + e) : e;
                }
            }
        }
    }
}

template <int ETA>
PQC_HD_NOINLINE void pqc_mlkem_cbd(pqc_i16 *f, const pqc_u8 *s, pqc_u8 b, int add) {
    pqc_keccak st;
    pqc_mlkem_cbd_in<ETA>(&st, f, s, b, add);
}

// ---------------------------------------------------------------------------
// Encoding (Algorithms 5, 6) and compression (4.2.1)

// ByteEncode_12 of f (any representative; reduced to [0, q) here).
PQC_HD void pqc_mlkem_encode12_pair(pqc_u8 *out, pqc_i16 f0, pqc_i16 f1) {
    const pqc_u32 a = pqc_mlkem_canon(f0);
    const pqc_u32 b = pqc_mlkem_canon(f1);
    out[0] = (pqc_u8)a;
    out[1] = (pqc_u8)((a >> 8) | (b << 4));
    out[2] = (pqc_u8)(b >> 4);
}

// The whole polynomial: 16 coefficients are 24 bytes, three 8-byte words
// (pqc_store_u64le: one store each where out is aligned).
PQC_HD void pqc_mlkem_encode12(pqc_u8 *out, const pqc_i16 *f) {
    for (int g = 0; g < 16; ++g) {
        pqc_u64 w0 = 0, w1 = 0, w2 = 0;
        PQC_MLKEM_UNROLL
        for (int j = 0; j < 16; ++j) {
            const pqc_u64 v = pqc_mlkem_canon(f[16 * g + j]);
            const int at = 12 * j;
            // Bit 60 (j = 5) and bit 120 (j = 10) straddle two words.
            if (at < 64) w0 |= v << at;
            else if (at < 128) w1 |= v << (at - 64);
            else w2 |= v << (at - 128);
            if (at == 60) w1 |= v >> 4;
            if (at == 120) w2 |= v >> 8;
        }
        pqc_store_u64le(out + 24 * g, w0);
        pqc_store_u64le(out + 24 * g + 8, w1);
        pqc_store_u64le(out + 24 * g + 16, w2);
    }
}

// ByteDecode_12 (values taken mod q, as the standard's m = q for d = 12);
// decode12_pair does the bytes 3i..3i+2 into f[2i], f[2i+1].
PQC_HD void pqc_mlkem_decode12_pair(pqc_i16 *f, const pqc_u8 *in) {
    const pqc_u32 b0 = in[0], b1 = in[1], b2 = in[2];
    pqc_i32 a = (pqc_i32)(b0 | ((b1 & 15) << 8));
    pqc_i32 b = (pqc_i32)((b1 >> 4) | (b2 << 4));
    a -= PQC_MLKEM_Q & -(pqc_i32)(a >= PQC_MLKEM_Q);
    b -= PQC_MLKEM_Q & -(pqc_i32)(b >= PQC_MLKEM_Q);
    f[0] = (pqc_i16)a;
    f[1] = (pqc_i16)b;
}

PQC_HD void pqc_mlkem_decode12(pqc_i16 *f, const pqc_u8 *in) {
    for (int i = 0; i < 128; ++i) pqc_mlkem_decode12_pair(f + 2 * i, in + 3 * i);
}

// Section 7.2 modulus check: 1 when every 12-bit value of the 384 k bytes is
// below q, i.e. ByteEncode_12(ByteDecode_12(ek)) == ek.
PQC_HD int pqc_mlkem_check_modulus(const pqc_u8 *in, int nbytes) {
    pqc_u32 bad = 0;
    for (int i = 0; i < nbytes; i += 3) {
        const pqc_u32 b0 = in[i], b1 = in[i + 1], b2 = in[i + 2];
        const pqc_u32 a = b0 | ((b1 & 15) << 8);
        const pqc_u32 b = (b1 >> 4) | (b2 << 4);
        bad |= (pqc_u32)(a >= PQC_MLKEM_Q) | (pqc_u32)(b >= PQC_MLKEM_Q);
    }
    return bad == 0;
}

// Where encoded ciphertext bytes go: written to out, or (out == 0) compared
// with cmp, differences ORed into diff.
struct pqc_mlkem_sink {
    pqc_u8 *out;
    const pqc_u8 *cmp;
    pqc_u32 diff;
};

// 8 bytes, least significant first (pqc_store_u64le and pqc_load_u64le:
// one store or load where the ciphertext is aligned).
PQC_HD void pqc_mlkem_emit_u64(pqc_mlkem_sink *s, pqc_u64 w) {
    if (s->out) {
        pqc_store_u64le(s->out, w);
        s->out += 8;
    } else {
        const pqc_u64 x = pqc_load_u64le(s->cmp) ^ w;
        s->diff |= (pqc_u32)x | (pqc_u32)(x >> 32);
        s->cmp += 8;
    }
}

// ByteEncode_D(Compress_D(f)) into the sink; f any representative.
// Compress_D(x) = round(2^D x / q) mod 2^D = floor((2^D x + (q-1)/2) / q)
// mod 2^D for x in [0, q) (q odd, so no ties).
// The 32 D bytes leave 8 at a time (32 D is a multiple of 8 for every D).
template <int D>
PQC_HD void pqc_mlkem_compress_encode(pqc_mlkem_sink *s, const pqc_i16 *f) {
    pqc_u64 acc = 0;
    int nbits = 0;
    for (int i = 0; i < 256; ++i) {
        const pqc_u32 x = pqc_mlkem_canon(f[i]);
        const pqc_u32 c = ((x << D) + (PQC_MLKEM_Q - 1) / 2) / PQC_MLKEM_Q & ((1u << D) - 1);
        acc |= (pqc_u64)c << nbits;
        nbits += D;
        if (nbits >= 64) {
            pqc_mlkem_emit_u64(s, acc);
            nbits -= 64;
            acc = nbits ? (pqc_u64)c >> (D - nbits) : 0;
        }
    }
}

// Decompress_D(ByteDecode_D(in)) into f, values in [0, q).
// Decompress_D(y) = round(q y / 2^D) = floor((q y + 2^(D-1)) / 2^D).
template <int D>
PQC_HD void pqc_mlkem_decode_decompress(pqc_i16 *f, const pqc_u8 *in) {
    pqc_u32 acc = 0;
    int nbits = 0;
    for (int i = 0; i < 256; ++i) {
        while (nbits < D) {
            acc |= (pqc_u32)(*in++) << nbits;
            nbits += 8;
        }
        const pqc_u32 y = acc & ((1u << D) - 1);
        acc >>= D;
        nbits -= D;
        f[i] = (pqc_i16)((y * PQC_MLKEM_Q + (1u << (D - 1))) >> D);
    }
}

// ---------------------------------------------------------------------------
// K-PKE (Algorithms 13-15)

// K-PKE.Encrypt(ek, m, r) (Algorithm 14): ciphertext bytes go to the sink.
// ek is only read (decoded mod q).
template <int K>
PQC_HD_NOINLINE void pqc_mlkem_pke_encrypt(pqc_mlkem_sink *sink, const pqc_u8 *ek,
                                           const pqc_u8 *m, const pqc_u8 *r) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u8 *rho = ek + 384 * K;
    pqc_i16 y[K][256];
    pqc_i16 a[256];
    pqc_i16 acc[256];
    for (int i = 0; i < K; ++i) {
        pqc_mlkem_cbd<P::ETA1>(y[i], r, (pqc_u8)i, 0);
        pqc_mlkem_ntt(y[i]);
    }
    // u = NTT^-1(A^T o y) + e1, where A^T[i][j] = A[j][i] = SampleNTT(rho || i || j).
    for (int i = 0; i < K; ++i) {
        for (int j = 0; j < K; ++j) {
            pqc_mlkem_sample_ntt(a, rho, (pqc_u8)i, (pqc_u8)j);
            pqc_mlkem_basemul_acc(acc, a, y[j], j == 0);
        }
        pqc_mlkem_invntt(acc);
        pqc_mlkem_cbd<P::ETA2>(acc, r, (pqc_u8)(K + i), 1);
        pqc_mlkem_compress_encode<P::DU>(sink, acc);
    }
    // v = NTT^-1(t^T o y) + e2 + Decompress_1(m).
    for (int j = 0; j < K; ++j) {
        pqc_mlkem_decode12(a, ek + 384 * j);
        pqc_mlkem_basemul_acc(acc, a, y[j], j == 0);
    }
    pqc_mlkem_invntt(acc);
    pqc_mlkem_cbd<P::ETA2>(acc, r, (pqc_u8)(2 * K), 1);
    for (int i = 0; i < 256; ++i) {
        const pqc_i16 bit = (pqc_i16)((m[i >> 3] >> (i & 7)) & 1);
        acc[i] = (pqc_i16)(acc[i] + (bit & 1) * ((PQC_MLKEM_Q + 1) / 2));
    }
    pqc_mlkem_compress_encode<P::DV>(sink, acc);
}

// K-PKE.Decrypt(dk, c) (Algorithm 15) into m[32].
template <int K>
PQC_HD_NOINLINE void pqc_mlkem_pke_decrypt(pqc_u8 *m, const pqc_u8 *dk, const pqc_u8 *c) {
    typedef pqc_mlkem_params<K> P;
    pqc_i16 u[256];
    pqc_i16 s[256];
    pqc_i16 acc[256];
    for (int i = 0; i < K; ++i) {
        pqc_mlkem_decode_decompress<P::DU>(u, c + 32 * P::DU * i);
        pqc_mlkem_ntt(u);
        pqc_mlkem_decode12(s, dk + 384 * i);
        pqc_mlkem_basemul_acc(acc, s, u, i == 0);
    }
    pqc_mlkem_invntt(acc);
    // w = v' - NTT^-1(s^T o NTT(u')); m = ByteEncode_1(Compress_1(w)).
    pqc_mlkem_decode_decompress<P::DV>(u, c + 32 * P::DU * K);
    for (int i = 0; i < 32; ++i) m[i] = 0;
    for (int i = 0; i < 256; ++i) {
        const pqc_u32 w = pqc_mlkem_canon((pqc_i32)u[i] - acc[i]);
        const pqc_u32 bit = ((w << 1) + (PQC_MLKEM_Q - 1) / 2) / PQC_MLKEM_Q & 1;
        m[i >> 3] = (pqc_u8)(m[i >> 3] | (bit << (i & 7)));
    }
}

// ---------------------------------------------------------------------------
// ML-KEM internal algorithms (Algorithms 16-18)

// The last product of row i of t = A o s + e, and the row's output: acc
// holds NTT(e_i) * 2^-16 plus the products of the row's other entries, a the
// last entry, b its s. Each pair of t_i = (acc + a o b) * 2^16 is reduced,
// ByteEncode_12'd into ek and into ek's copy in dk, and absorbed into h (the
// state of H(ek)), 8 pairs (24 bytes, 3 lanes) at a time, so that ek is never
// read back.
PQC_HD_NOINLINE void pqc_mlkem_keygen_row_out(pqc_u8 *ek, pqc_u8 *ek_copy, pqc_keccak *h, const pqc_i16 *acc,
                                              const pqc_i16 *a, const pqc_i16 *b) {
    // The encoding's bits not yet written, little-endian (at most 64 + 24).
    pqc_u64 bits = 0;
    int nbits = 0;
    for (int i = 0; i < 128; ++i) {
        pqc_i16 c[2] = {acc[2 * i], acc[2 * i + 1]};
        pqc_mlkem_basemul_pair(c, a, b, i, 0);
        const pqc_u32 v = pqc_mlkem_canon(pqc_mlkem_montmul(c[0], PQC_MLKEM_R2)) |
                          pqc_mlkem_canon(pqc_mlkem_montmul(c[1], PQC_MLKEM_R2)) << 12;
        bits |= (pqc_u64)v << nbits;
        nbits += 24;
        if (nbits >= 64) {
            // A whole lane: 8 bytes of ek (3 i / 8 lanes so far).
            const int at = 8 * ((3 * i) / 8);
            pqc_store_u64le(ek + at, bits);
            pqc_store_u64le(ek_copy + at, bits);
            pqc_keccak_absorb_u64(h, bits);
            nbits -= 64;
            bits = nbits ? (pqc_u64)v >> (24 - nbits) : 0;
        }
    }
}

// ML-KEM.KeyGen_internal(d, z) (Algorithm 16, with K-PKE.KeyGen, Algorithm 13).
// Row i of t starts as NTT(e_i) in the products' Montgomery form, gathers the
// products A[i][j] o s_j one SampleNTT at a time, and leaves with its last
// product straight into ek, dk's copy of ek and H(ek) (keygen_row_out): the
// same t = A o s + e, reduced mod q, as Algorithm 13 computes.
template <int K>
PQC_HD_NOINLINE void pqc_mlkem_keygen_internal(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *d,
                                               const pqc_u8 *z) {
    typedef pqc_mlkem_params<K> P;
    // (rho, sigma) = G(d || k)
    pqc_u8 buf[33];
    for (int i = 0; i < 32; ++i) buf[i] = d[i];
    buf[32] = (pqc_u8)K;
    pqc_u8 rs[64];
    pqc_sha3_512(rs, buf, 33);
    const pqc_u8 *rho = rs;
    const pqc_u8 *sigma = rs + 32;

    pqc_i16 s[K][256];
    pqc_i16 a[256];
    pqc_i16 acc[256];
    for (int i = 0; i < K; ++i) {
        pqc_mlkem_cbd<P::ETA1>(s[i], sigma, (pqc_u8)i, 0);
        pqc_mlkem_ntt(s[i]);
    }
    // dk = dk_PKE || ek || H(ek) || z; ek = ByteEncode_12(t) || rho.
    pqc_u8 *ek_copy = sk + 384 * K;
    pqc_keccak h;
    pqc_keccak_init(&h, PQC_SHA3_256_RATE);
    // t = A o s + e, A[i][j] = SampleNTT(rho || j || i); e[i] uses N = k + i.
    for (int i = 0; i < K; ++i) {
        pqc_mlkem_cbd<P::ETA1>(acc, sigma, (pqc_u8)(K + i), 0);
        pqc_mlkem_ntt_to(acc, 1);
        for (int j = 0; j < K; ++j) {
            pqc_mlkem_sample_ntt(a, rho, (pqc_u8)j, (pqc_u8)i);
            if (j + 1 < K)
                pqc_mlkem_basemul_acc(acc, a, s[j], 0);
            else
                pqc_mlkem_keygen_row_out(pk + 384 * i, ek_copy + 384 * i, &h, acc, a, s[j]);
        }
    }
    for (int l = 0; l < 4; ++l) {
        pqc_u64 w = 0;
        for (int k = 0; k < 8; ++k) w |= (pqc_u64)rho[8 * l + k] << (8 * k);
        pqc_store_u64le(pk + 384 * K + 8 * l, w);
        pqc_store_u64le(ek_copy + 384 * K + 8 * l, w);
        pqc_keccak_absorb_u64(&h, w);
    }
    pqc_keccak_finalize(&h, PQC_KECCAK_SHA3);
    pqc_keccak_squeeze(&h, sk + 768 * K + 32, 32);
    for (int i = 0; i < K; ++i) pqc_mlkem_encode12(sk + 384 * i, s[i]);
    for (int i = 0; i < 32; ++i) sk[768 * K + 64 + i] = z[i];
}

// ML-KEM.Encaps_internal(ek, m) (Algorithm 17) after the section 7.2
// modulus check.
template <int K>
PQC_HD_NOINLINE int pqc_mlkem_encaps_internal(pqc_u8 *ct, pqc_u8 *ss, const pqc_u8 *pk,
                                              const pqc_u8 *m) {
    if (!pqc_mlkem_check_modulus(pk, 384 * K)) return PQC_ERR_INPUT;
    // (K, r) = G(m || H(ek))
    pqc_u8 buf[64];
    for (int i = 0; i < 32; ++i) buf[i] = m[i];
    pqc_sha3_256(buf + 32, pk, 384 * K + 32);
    pqc_u8 kr[64];
    pqc_sha3_512(kr, buf, 64);
    pqc_mlkem_sink sink;
    sink.out = ct;
    sink.cmp = 0;
    sink.diff = 0;
    pqc_mlkem_pke_encrypt<K>(&sink, pk, m, kr + 32);
    for (int i = 0; i < 32; ++i) ss[i] = kr[i];
    return PQC_OK;
}

// ML-KEM.Decaps_internal(dk, c) (Algorithm 18) after the section 7.3 hash
// check; implicit rejection returns J(z || c) when re-encryption differs.
template <int K>
PQC_HD_NOINLINE int pqc_mlkem_decaps_internal(pqc_u8 *ss, const pqc_u8 *ct, const pqc_u8 *sk) {
    typedef pqc_mlkem_params<K> P;
    const pqc_u8 *dk_pke = sk;
    const pqc_u8 *ek = sk + 384 * K;
    const pqc_u8 *h = sk + 768 * K + 32;
    const pqc_u8 *z = sk + 768 * K + 64;
    pqc_u8 buf[64];
    pqc_sha3_256(buf, ek, 384 * K + 32);
    pqc_u32 bad = 0;
    for (int i = 0; i < 32; ++i) bad |= (pqc_u32)(buf[i] ^ h[i]);
    if (bad) return PQC_ERR_INPUT;

    pqc_mlkem_pke_decrypt<K>(buf, dk_pke, ct);  // m' in buf[0..32)
    for (int i = 0; i < 32; ++i) buf[32 + i] = h[i];
    pqc_u8 kr[64];
    pqc_sha3_512(kr, buf, 64);  // (K', r') = G(m' || h)
    pqc_mlkem_sink sink;
    sink.out = 0;
    sink.cmp = ct;
    sink.diff = 0;
    pqc_mlkem_pke_encrypt<K>(&sink, ek, buf, kr + 32);
    // K-bar = J(z || c) = SHAKE256(z || c, 32)
    pqc_keccak st;
    pqc_shake256_init(&st);
    pqc_shake256_absorb(&st, z, 32);
    pqc_shake256_absorb(&st, ct, P::CT_BYTES);
    pqc_shake256_finalize(&st);
    pqc_u8 kbar[32];
    pqc_shake256_squeeze(&st, kbar, 32);
    // mask = 0xFF when c != c'
    const pqc_u8 mask = (pqc_u8)(0u - ((sink.diff | (0u - sink.diff)) >> 31));
    for (int i = 0; i < 32; ++i) ss[i] = (pqc_u8)((kr[i] & ~mask) | (kbar[i] & mask));
    return PQC_OK;
}

#endif
