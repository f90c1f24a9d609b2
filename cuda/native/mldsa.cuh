// mldsa.cuh: ML-DSA-44/65/87 (FIPS 204), written once for host and device.
//
// Written from the FIPS 204 text (August 2024). Algorithm numbers below refer
// to that document. One call = one operation on one thread: nothing here is
// shared between threads and there is no system header (see common.cuh).
//   * KeyGen and Verify never store the matrix A: each entry A[r][s] is
//     sampled from SHAKE128 (RejNTTPoly, Alg 30) when it is multiplied;
//   * Sign samples A^ and transforms s1, s2, t0 once per signature into a
//     workspace the caller provides (mldsa_sign_layout: 40,960 / 64,512 /
//     103,424 bytes for ML-DSA-44/65/87), which every iteration of the
//     rejection loop reads back, and expands y once per iteration;
//   * signatures and keys are written straight into the output buffers.
// Polynomials on the thread itself (1 KiB each): KeyGen l+2, Sign 2 (the
// rest is in the workspace), Verify l+3.
//
// Arithmetic: coefficients are pqc_i32; products are reduced with Montgomery
// reduction (R = 2^32). The NTT twiddles are stored multiplied by R, so a
// Montgomery product with a twiddle is an ordinary product mod q, and the
// inverse NTT's final scaling (256^-1 * R^2) cancels the R^-1 left by the
// Montgomery product of two NTT-domain polynomials.
//
// Public entry points (LEVEL = 44, 65 or 87; sizes in mldsa_params<LEVEL>):
//   mldsa_keygen_internal<LEVEL>(pk, sk, xi)                       Alg 6
//   mldsa_sign_internal<LEVEL>(sig, sk, mp, mplen, rnd, ws, stride) Alg 7
//   mldsa_verify_internal<LEVEL>(pk, mp, mplen, sig) -> 1/0         Alg 8
//   mldsa_sign<LEVEL>(sig, sk, msg, mlen, ctx, ctxlen, rnd, ws, stride, attempts)
//                                                                   Alg 2
//   mldsa_verify<LEVEL>(pk, msg, mlen, ctx, ctxlen, sig) -> 1/0     Alg 3
// mldsa_sign* return PQC_OK, or PQC_ERR_CONTEXT (ctx longer than 255 bytes),
// or PQC_ERR_INPUT if the rejection loop reached MLDSA_SIGN_MAX_ITER (FIPS 204
// Appendix C allows a bound of at least 814; it is reached with probability
// about 2^-256), or PQC_ERR_KEY for a secret key whose s1 or s2 has a
// coefficient outside [-eta, eta] (mldsa_sk_in_range: FIPS 204 does not
// require Sign to check this; these sources refuse such a key, and every
// signing kernel writes an all-zero signature for it). rnd = 32 zero bytes
// gives deterministic ML-DSA.
#ifndef PQCPROF_MLDSA_CUH
#define PQCPROF_MLDSA_CUH

#include "common.cuh"
#include "keccak.cuh"

#define MLDSA_N 256
#define MLDSA_Q 8380417
#define MLDSA_QINV 58728449 /* q^-1 mod 2^32 */
#define MLDSA_D 13
#define MLDSA_INV_F 41978 /* 256^-1 * 2^64 mod q: final scale of NTT^-1 */
#define MLDSA_SIGN_MAX_ITER 1000

// Parameter sets, FIPS 204 Table 1, and the sizes of Table 2 that follow
// from them.
template <int LEVEL> struct mldsa_base;
template <> struct mldsa_base<44> {
    enum { K = 4, L = 4, ETA = 2, TAU = 39, LAMBDA = 128, GAMMA1_LOG = 17, GAMMA2 = (MLDSA_Q - 1) / 88, OMEGA = 80 };
};
template <> struct mldsa_base<65> {
    enum { K = 6, L = 5, ETA = 4, TAU = 49, LAMBDA = 192, GAMMA1_LOG = 19, GAMMA2 = (MLDSA_Q - 1) / 32, OMEGA = 55 };
};
template <> struct mldsa_base<87> {
    enum { K = 8, L = 7, ETA = 2, TAU = 60, LAMBDA = 256, GAMMA1_LOG = 19, GAMMA2 = (MLDSA_Q - 1) / 32, OMEGA = 75 };
};

template <int LEVEL> struct mldsa_params : mldsa_base<LEVEL> {
    typedef mldsa_base<LEVEL> B;
    enum {
        K = B::K,
        L = B::L,
        ETA = B::ETA,
        TAU = B::TAU,
        OMEGA = B::OMEGA,
        GAMMA2 = B::GAMMA2,
        GAMMA1 = 1 << B::GAMMA1_LOG,
        BETA = B::TAU * B::ETA,
        CT_BYTES = B::LAMBDA / 4,                          // c~
        ETA_BITS = (B::ETA == 2) ? 3 : 4,                  // bitlen(2*eta)
        POLY_ETA = 32 * ETA_BITS,                          // BitPack(s, eta, eta)
        POLY_T1 = 320,                                     // SimpleBitPack(t1, 2^10-1)
        POLY_T0 = 416,                                     // BitPack(t0, 2^12-1, 2^12)
        Z_BITS = B::GAMMA1_LOG + 1,                        // bitlen(2*gamma1-1)
        POLY_Z = 32 * Z_BITS,                              // BitPack(z, gamma1-1, gamma1)
        W1_BITS = (B::GAMMA2 == (MLDSA_Q - 1) / 88) ? 6 : 4, // bitlen((q-1)/(2*gamma2)-1)
        POLY_W1 = 32 * W1_BITS,
        W1_MOD = (MLDSA_Q - 1) / (2 * B::GAMMA2),          // m of UseHint
        PK_BYTES = 32 + K * POLY_T1,
        SK_BYTES = 128 + (K + L) * POLY_ETA + K * POLY_T0,
        SIG_BYTES = CT_BYTES + L * POLY_Z + OMEGA + K,
        // Offsets inside the encodings (Alg 22, 24, 26).
        SK_S1 = 128,
        SK_S2 = 128 + L * POLY_ETA,
        SK_T0 = 128 + (K + L) * POLY_ETA,
        SIG_Z = CT_BYTES,
        SIG_H = CT_BYTES + L * POLY_Z
    };
};

// zetas[m] = zeta^BitRev8(m) mod q with zeta = 1753 (FIPS 204 Appendix B),
// times 2^32 mod q, as a centred representative. Entry 0 is not used.
PQC_TABLE pqc_i32 mldsa_zetas[MLDSA_N] = {
    0, 25847, -2608894, -518909, 237124, -777960, -876248, 466468,
    1826347, 2353451, -359251, -2091905, 3119733, -2884855, 3111497, 2680103,
    2725464, 1024112, -1079900, 3585928, -549488, -1119584, 2619752, -2108549,
    -2118186, -3859737, -1399561, -3277672, 1757237, -19422, 4010497, 280005,
    2706023, 95776, 3077325, 3530437, -1661693, -3592148, -2537516, 3915439,
    -3861115, -3043716, 3574422, -2867647, 3539968, -300467, 2348700, -539299,
    -1699267, -1643818, 3505694, -3821735, 3507263, -2140649, -1600420, 3699596,
    811944, 531354, 954230, 3881043, 3900724, -2556880, 2071892, -2797779,
    -3930395, -1528703, -3677745, -3041255, -1452451, 3475950, 2176455, -1585221,
    -1257611, 1939314, -4083598, -1000202, -3190144, -3157330, -3632928, 126922,
    3412210, -983419, 2147896, 2715295, -2967645, -3693493, -411027, -2477047,
    -671102, -1228525, -22981, -1308169, -381987, 1349076, 1852771, -1430430,
    -3343383, 264944, 508951, 3097992, 44288, -1100098, 904516, 3958618,
    -3724342, -8578, 1653064, -3249728, 2389356, -210977, 759969, -1316856,
    189548, -3553272, 3159746, -1851402, -2409325, -177440, 1315589, 1341330,
    1285669, -1584928, -812732, -1439742, -3019102, -3881060, -3628969, 3839961,
    2091667, 3407706, 2316500, 3817976, -3342478, 2244091, -2446433, -3562462,
    266997, 2434439, -1235728, 3513181, -3520352, -3759364, -1197226, -3193378,
    900702, 1859098, 909542, 819034, 495491, -1613174, -43260, -522500,
    -655327, -3122442, 2031748, 3207046, -3556995, -525098, -768622, -3595838,
    342297, 286988, -2437823, 4108315, 3437287, -3342277, 1735879, 203044,
    2842341, 2691481, -2590150, 1265009, 4055324, 1247620, 2486353, 1595974,
    -3767016, 1250494, 2635921, -3548272, -2994039, 1869119, 1903435, -1050970,
    -1333058, 1237275, -3318210, -1430225, -451100, 1312455, 3306115, -1962642,
    -1279661, 1917081, -2546312, -1374803, 1500165, 777191, 2235880, 3406031,
    -542412, -2831860, -1671176, -1846953, -2584293, -3724270, 594136, -3776993,
    -2013608, 2432395, 2454455, -164721, 1957272, 3369112, 185531, -1207385,
    -3183426, 162844, 1616392, 3014001, 810149, 1652634, -3694233, -1799107,
    -3038916, 3523897, 3866901, 269760, 2213111, -975884, 1717735, 472078,
    -426683, 1723600, -1803090, 1910376, -1667432, -1104333, -260646, -3833893,
    -2939036, -2235985, -420899, -2286327, 183443, -976891, 1612842, -3545687,
    -554416, 3919660, -48306, -1362209, 3937738, 1400424, -846154, 1976782,
};

// ---------------------------------------------------------------------------
// Arithmetic modulo q
// ---------------------------------------------------------------------------

// Montgomery reduction: for |a| < 2^31 * q returns r = a * 2^-32 mod q with
// -q < r < q.
PQC_HD pqc_i32 mldsa_mont_reduce(pqc_i64 a) {
    const pqc_i32 t = (pqc_i32)((pqc_u32)(pqc_u64)a * (pqc_u32)MLDSA_QINV);
    return (pqc_i32)((a - (pqc_i64)t * MLDSA_Q) >> 32);
}

// For |a| < 2^31 - 2^22 returns r = a mod q with |r| <= 2^22 + 2^21 < q.
PQC_HD pqc_i32 mldsa_reduce32(pqc_i32 a) {
    const pqc_i32 t = (a + (1 << 22)) >> 23;
    return a - t * MLDSA_Q;
}

// For |a| < 2^31 - 2^22 returns a mod q in [0, q).
PQC_HD pqc_i32 mldsa_modq(pqc_i32 a) {
    pqc_i32 r = mldsa_reduce32(a);
    return r + ((r >> 31) & MLDSA_Q);
}

// r in [0, q) -> r mod+- q in [-(q-1)/2, (q-1)/2].
PQC_HD pqc_i32 mldsa_centre(pqc_i32 r) {
    return r - (MLDSA_Q & -(pqc_i32)(r > (MLDSA_Q - 1) / 2));
}

PQC_HD pqc_i32 mldsa_abs(pqc_i32 a) { return a < 0 ? -a : a; }

// Both transforms go up to three layers at a time: eight coefficients
// a[b + s m] (m = 0..7) are loaded, put through the layers of half-length
// 4s, 2s and s that join them, and stored, so each coefficient is read and
// written three times instead of once a layer. Every butterfly is the same
// operation on the same values as layer by layer (butterflies of one layer
// touch disjoint pairs), so the results are those of Algorithms 41 and 42
// computed layer by layer. The zeta of the group starting at `start` of the
// layer with half-length len is zetas[128 / len + start / (2 len)] in the
// NTT and -zetas[256 / len - 1 - start / (2 len)] in the inverse.

PQC_HD void mldsa_ntt_bfly(pqc_i32 *x, int a, int b, pqc_i64 z) {
    const pqc_i32 t = mldsa_mont_reduce(z * x[b]);
    x[b] = x[a] - t;
    x[a] = x[a] + t;
}

PQC_HD void mldsa_invntt_bfly(pqc_i32 *x, int a, int b, pqc_i64 z) {
    const pqc_i32 t = x[a];
    x[a] = mldsa_reduce32(t + x[b]);
    x[b] = mldsa_mont_reduce(z * (t - x[b]));
}

// NTT (Alg 41). Input |a| < 8q; output |a| < 16q, in bit-reversed order.
PQC_HD_NOINLINE void mldsa_ntt(pqc_i32 *a) {
    // Layers 128, 64, 32 (s = 32), then 16, 8, 4 (s = 4) in each group of 32.
    for (int pass = 0; pass < 2; ++pass) {
        const int s = pass == 0 ? 32 : 4;
        for (int g = 0; g < MLDSA_N; g += 8 * s) {
            for (int j = 0; j < s; ++j) {
                pqc_i32 x[8];
                for (int m = 0; m < 8; ++m) x[m] = a[g + j + s * m];
                const int i1 = 128 / (4 * s) + g / (8 * s), i2 = 128 / (2 * s) + g / (4 * s), i3 = 128 / s + g / (2 * s);
                for (int m = 0; m < 4; ++m) mldsa_ntt_bfly(x, m, m + 4, mldsa_zetas[i1]);
                for (int m = 0; m < 4; ++m) mldsa_ntt_bfly(x, m + (m & 2), m + (m & 2) + 2, mldsa_zetas[i2 + (m >> 1)]);
                for (int m = 0; m < 4; ++m) mldsa_ntt_bfly(x, 2 * m, 2 * m + 1, mldsa_zetas[i3 + m]);
                for (int m = 0; m < 8; ++m) a[g + j + s * m] = x[m];
            }
        }
    }
    // Layers 2 and 1, four coefficients (one group of layer 2) at a time.
    for (int g = 0; g < MLDSA_N; g += 4) {
        pqc_i32 x[4] = {a[g], a[g + 1], a[g + 2], a[g + 3]};
        const pqc_i64 z2 = mldsa_zetas[64 + g / 4];
        mldsa_ntt_bfly(x, 0, 2, z2);
        mldsa_ntt_bfly(x, 1, 3, z2);
        mldsa_ntt_bfly(x, 0, 1, mldsa_zetas[128 + g / 2]);
        mldsa_ntt_bfly(x, 2, 3, mldsa_zetas[128 + g / 2 + 1]);
        for (int m = 0; m < 4; ++m) a[g + m] = x[m];
    }
}

// NTT^-1 (Alg 42) of a product left in Montgomery form by
// mldsa_pointwise*, so the output is the plain result. Input |a| < 64q;
// output -q < a < q.
PQC_HD_NOINLINE void mldsa_invntt(pqc_i32 *a) {
    // Layers 1 and 2, four coefficients at a time.
    for (int g = 0; g < MLDSA_N; g += 4) {
        pqc_i32 x[4] = {a[g], a[g + 1], a[g + 2], a[g + 3]};
        mldsa_invntt_bfly(x, 0, 1, -(pqc_i64)mldsa_zetas[255 - g / 2]);
        mldsa_invntt_bfly(x, 2, 3, -(pqc_i64)mldsa_zetas[254 - g / 2]);
        const pqc_i64 z2 = -(pqc_i64)mldsa_zetas[127 - g / 4];
        mldsa_invntt_bfly(x, 0, 2, z2);
        mldsa_invntt_bfly(x, 1, 3, z2);
        for (int m = 0; m < 4; ++m) a[g + m] = x[m];
    }
    // Layers 4, 8, 16 (s = 4) in each group of 32, then 32, 64, 128 (s = 32)
    // with the final scaling.
    for (int pass = 0; pass < 2; ++pass) {
        const int s = pass == 0 ? 4 : 32;
        for (int g = 0; g < MLDSA_N; g += 8 * s) {
            for (int j = 0; j < s; ++j) {
                pqc_i32 x[8];
                for (int m = 0; m < 8; ++m) x[m] = a[g + j + s * m];
                const int i1 = 256 / s - 1 - g / (2 * s), i2 = 256 / (2 * s) - 1 - g / (4 * s),
                          i3 = 256 / (4 * s) - 1 - g / (8 * s);
                for (int m = 0; m < 4; ++m) mldsa_invntt_bfly(x, 2 * m, 2 * m + 1, -(pqc_i64)mldsa_zetas[i1 - m]);
                for (int m = 0; m < 4; ++m)
                    mldsa_invntt_bfly(x, m + (m & 2), m + (m & 2) + 2, -(pqc_i64)mldsa_zetas[i2 - (m >> 1)]);
                for (int m = 0; m < 4; ++m) mldsa_invntt_bfly(x, m, m + 4, -(pqc_i64)mldsa_zetas[i3]);
                if (pass == 1)
                    for (int m = 0; m < 8; ++m) x[m] = mldsa_mont_reduce((pqc_i64)MLDSA_INV_F * x[m]);
                for (int m = 0; m < 8; ++m) a[g + j + s * m] = x[m];
            }
        }
    }
}

// acc = a o b (times 2^-32), or acc += / -= that (NTT domain, Alg 45).
PQC_HD void mldsa_pointwise(pqc_i32 *acc, const pqc_i32 *a, const pqc_i32 *b) {
    for (int j = 0; j < MLDSA_N; ++j) acc[j] = mldsa_mont_reduce((pqc_i64)a[j] * b[j]);
}
PQC_HD void mldsa_pointwise_acc(pqc_i32 *acc, const pqc_i32 *a, const pqc_i32 *b) {
    for (int j = 0; j < MLDSA_N; ++j) acc[j] += mldsa_mont_reduce((pqc_i64)a[j] * b[j]);
}
PQC_HD void mldsa_pointwise_sub(pqc_i32 *acc, const pqc_i32 *a, const pqc_i32 *b) {
    for (int j = 0; j < MLDSA_N; ++j) acc[j] -= mldsa_mont_reduce((pqc_i64)a[j] * b[j]);
}

// Decompose (Alg 36) of r in [0, q): r = r1 * 2*gamma2 + r0.
template <int GAMMA2>
PQC_HD void mldsa_decompose(pqc_i32 r, pqc_i32 *r1, pqc_i32 *r0) {
    pqc_i32 lo = r % (2 * GAMMA2);
    if (lo > GAMMA2) lo -= 2 * GAMMA2;
    if (r - lo == MLDSA_Q - 1) {
        *r1 = 0;
        *r0 = lo - 1;
    } else {
        *r1 = (r - lo) / (2 * GAMMA2);
        *r0 = lo;
    }
}

// HighBits (Alg 37) of r in [0, q).
template <int GAMMA2>
PQC_HD pqc_i32 mldsa_highbits(pqc_i32 r) {
    pqc_i32 r1, r0;
    mldsa_decompose<GAMMA2>(r, &r1, &r0);
    return r1;
}

// ---------------------------------------------------------------------------
// Bit packing (Alg 16-19): coefficient i occupies bits [i*bits, (i+1)*bits)
// of a little-endian bit string. The packed value is base + mul * a[i], so
// SimpleBitPack is (0, +1) and BitPack(w, a, b) is (b, -1).
// ---------------------------------------------------------------------------

PQC_HD_NOINLINE void mldsa_pack(pqc_u8 *out, const pqc_i32 *a, int bits, pqc_i32 base, pqc_i32 mul) {
    const pqc_u32 mask = (1u << bits) - 1u;
    pqc_u64 acc = 0;
    int nacc = 0;
    for (int i = 0; i < MLDSA_N; ++i) {
        acc |= (pqc_u64)((pqc_u32)(base + mul * a[i]) & mask) << nacc;
        nacc += bits;
        while (nacc >= 8) {
            *out++ = (pqc_u8)acc;
            acc >>= 8;
            nacc -= 8;
        }
    }
}

PQC_HD_NOINLINE void mldsa_unpack(pqc_i32 *a, const pqc_u8 *in, int bits, pqc_i32 base, pqc_i32 mul) {
    const pqc_u32 mask = (1u << bits) - 1u;
    pqc_u64 acc = 0;
    int nacc = 0;
    for (int i = 0; i < MLDSA_N; ++i) {
        while (nacc < bits) {
            acc |= (pqc_u64)(*in++) << nacc;
            nacc += 8;
        }
        a[i] = base + mul * (pqc_i32)((pqc_u32)acc & mask);
        acc >>= bits;
        nacc -= bits;
    }
}

// ---------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------

// RejNTTPoly(rho || s || r) (Alg 30, with CoeffFromThreeBytes, Alg 14):
// the entry A[r][s] of ExpandA (Alg 32), coefficients in [0, q).
PQC_HD_NOINLINE void mldsa_rej_ntt_poly(pqc_i32 *a, const pqc_u8 *rho, int s, int r) {
    pqc_keccak st;
    pqc_u8 buf[PQC_SHAKE128_RATE];
    pqc_u8 idx[2];
    idx[0] = (pqc_u8)s;
    idx[1] = (pqc_u8)r;
    pqc_shake128_init(&st);
    pqc_shake128_absorb(&st, rho, 32);
    pqc_shake128_absorb(&st, idx, 2);
    pqc_shake128_finalize(&st);
    int j = 0;
    while (j < MLDSA_N) {
        pqc_shake128_squeeze(&st, buf, PQC_SHAKE128_RATE);
        for (int p = 0; p < PQC_SHAKE128_RATE && j < MLDSA_N; p += 3) {
            const pqc_i32 z = (pqc_i32)buf[p] | ((pqc_i32)buf[p + 1] << 8) | ((pqc_i32)(buf[p + 2] & 0x7F) << 16);
            if (z < MLDSA_Q) a[j++] = z;
        }
    }
}

// RejBoundedPoly(rho' || IntegerToBytes(nonce, 2)) (Alg 31, with
// CoeffFromHalfByte, Alg 15): coefficients in [-eta, eta].
template <int ETA>
PQC_HD_NOINLINE void mldsa_rej_bounded_poly(pqc_i32 *a, const pqc_u8 *rhop, int nonce) {
    pqc_keccak st;
    pqc_u8 buf[PQC_SHAKE256_RATE];
    pqc_u8 idx[2];
    idx[0] = (pqc_u8)nonce;
    idx[1] = (pqc_u8)(nonce >> 8);
    pqc_shake256_init(&st);
    pqc_shake256_absorb(&st, rhop, 64);
    pqc_shake256_absorb(&st, idx, 2);
    pqc_shake256_finalize(&st);
    int j = 0;
    while (j < MLDSA_N) {
        pqc_shake256_squeeze(&st, buf, PQC_SHAKE256_RATE);
        for (int p = 0; p < PQC_SHAKE256_RATE && j < MLDSA_N; ++p) {
            const pqc_i32 b[2] = {(pqc_i32)(buf[p] & 15), (pqc_i32)(buf[p] >> 4)};
            for (int h = 0; h < 2 && j < MLDSA_N; ++h) {
                if (ETA == 2) {
                    if (b[h] < 15) a[j++] = 2 - (b[h] % 5);
                } else {
                    if (b[h] < 9) a[j++] = 4 - b[h];
                }
            }
        }
    }
}

// One polynomial of ExpandMask (Alg 34): y = BitUnpack(H(rho'' ||
// IntegerToBytes(nonce, 2), 32c), gamma1 - 1, gamma1), c = 1 + bitlen(gamma1-1).
template <int LEVEL>
PQC_HD_NOINLINE void mldsa_expand_mask_poly(pqc_i32 *a, const pqc_u8 *rhopp, int nonce) {
    typedef mldsa_params<LEVEL> P;
    // A chunk of 32 coefficients is a whole number of bytes (4 * Z_BITS).
    enum { CHUNK = 4 * P::Z_BITS };
    pqc_keccak st;
    pqc_u8 buf[CHUNK];
    pqc_u8 idx[2];
    idx[0] = (pqc_u8)nonce;
    idx[1] = (pqc_u8)(nonce >> 8);
    pqc_shake256_init(&st);
    pqc_shake256_absorb(&st, rhopp, 64);
    pqc_shake256_absorb(&st, idx, 2);
    pqc_shake256_finalize(&st);
    const pqc_u32 mask = (1u << P::Z_BITS) - 1u;
    for (int c = 0; c < MLDSA_N; c += 32) {
        pqc_shake256_squeeze(&st, buf, CHUNK);
        pqc_u64 acc = 0;
        int nacc = 0, p = 0;
        for (int i = 0; i < 32; ++i) {
            while (nacc < P::Z_BITS) {
                acc |= (pqc_u64)buf[p++] << nacc;
                nacc += 8;
            }
            a[c + i] = P::GAMMA1 - (pqc_i32)((pqc_u32)acc & mask);
            acc >>= P::Z_BITS;
            nacc -= P::Z_BITS;
        }
    }
}

// SampleInBall(c~) (Alg 29): tau coefficients +-1, the rest 0.
template <int LEVEL>
PQC_HD_NOINLINE void mldsa_sample_in_ball(pqc_i32 *c, const pqc_u8 *ct) {
    typedef mldsa_params<LEVEL> P;
    pqc_keccak st;
    pqc_u8 buf[PQC_SHAKE256_RATE];
    pqc_shake256_init(&st);
    pqc_shake256_absorb(&st, ct, P::CT_BYTES);
    pqc_shake256_finalize(&st);
    pqc_shake256_squeeze(&st, buf, PQC_SHAKE256_RATE);
    pqc_u64 signs = 0;
    for (int i = 0; i < 8; ++i) signs |= (pqc_u64)buf[i] << (8 * i);
    int pos = 8;
    for (int i = 0; i < MLDSA_N; ++i) c[i] = 0;
    for (int i = MLDSA_N - P::TAU; i < MLDSA_N; ++i) {
        int j;
        do {
            if (pos == PQC_SHAKE256_RATE) {
                pqc_shake256_squeeze(&st, buf, PQC_SHAKE256_RATE);
                pos = 0;
            }
            j = buf[pos++];
        } while (j > i);
        c[i] = c[j];
        c[j] = 1 - 2 * (pqc_i32)(signs & 1);
        signs >>= 1;
    }
}

// ---------------------------------------------------------------------------
// Hints (Alg 20, 21)
// ---------------------------------------------------------------------------

// The checks of HintBitUnpack on y = the last omega + k bytes of a signature:
// 1 if y encodes a hint, 0 if HintBitUnpack returns bottom. Row i's
// positions are [first, end), first the previous row's end: each row's end
// in [first, omega], its positions strictly increasing, the unused ones 0.
// Every loop runs a fixed number of times and none returns from inside: in
// a warp whose lanes hold different hints, a lane that left a loop of its
// own length through a branch whose other side returns would rejoin the
// others only at the function's end (that branch's reconvergence point),
// and the whole verification after it would run lane by lane.
template <int LEVEL>
PQC_HD int mldsa_hint_valid(const pqc_u8 *y) {
    typedef mldsa_params<LEVEL> P;
    int bad = 0, first = 0;
    for (int i = 0; i < P::K; ++i) {
        const int end = y[P::OMEGA + i];
        bad |= (end < first) | (end > P::OMEGA);
        for (int p = 1; p < P::OMEGA; ++p) bad |= (p > first) & (p < end) & (y[p - 1] >= y[p]);
        first = end;
    }
    for (int p = 0; p < P::OMEGA; ++p) bad |= (p >= first) & (y[p] != 0);
    return bad == 0;
}

// ---------------------------------------------------------------------------
// mu = H(tr || M', 64) where M' is pre || msg (both may be empty).
// ---------------------------------------------------------------------------
PQC_HD void mldsa_mu(pqc_u8 *mu, const pqc_u8 *tr, const pqc_u8 *pre, pqc_size prelen, const pqc_u8 *pre2,
                     pqc_size pre2len, const pqc_u8 *msg, pqc_size mlen) {
    pqc_keccak st;
    pqc_shake256_init(&st);
    pqc_shake256_absorb(&st, tr, 64);
    pqc_shake256_absorb(&st, pre, prelen);
    pqc_shake256_absorb(&st, pre2, pre2len);
    pqc_shake256_absorb(&st, msg, mlen);
    pqc_shake256_finalize(&st);
    pqc_shake256_squeeze(&st, mu, 64);
}

// ---------------------------------------------------------------------------
// ML-DSA.KeyGen_internal (Alg 6)
// ---------------------------------------------------------------------------
template <int LEVEL>
PQC_HD int mldsa_keygen_internal(pqc_u8 *pk, pqc_u8 *sk, const pqc_u8 *xi) {
    typedef mldsa_params<LEVEL> P;
    pqc_u8 seeds[128]; // rho (32) || rho' (64) || K (32)
    {
        pqc_keccak st;
        pqc_u8 kl[2];
        kl[0] = (pqc_u8)P::K;
        kl[1] = (pqc_u8)P::L;
        pqc_shake256_init(&st);
        pqc_shake256_absorb(&st, xi, 32);
        pqc_shake256_absorb(&st, kl, 2);
        pqc_shake256_finalize(&st);
        pqc_shake256_squeeze(&st, seeds, 128);
    }
    const pqc_u8 *rho = seeds;
    const pqc_u8 *rhop = seeds + 32;
    for (int i = 0; i < 32; ++i) {
        pk[i] = rho[i];
        sk[i] = rho[i];
        sk[32 + i] = seeds[96 + i];
    }

    pqc_i32 s1hat[P::L][MLDSA_N];
    pqc_i32 t[MLDSA_N];
    pqc_i32 tmp[MLDSA_N];
    for (int s = 0; s < P::L; ++s) {
        mldsa_rej_bounded_poly<P::ETA>(s1hat[s], rhop, s);
        mldsa_pack(sk + P::SK_S1 + s * P::POLY_ETA, s1hat[s], P::ETA_BITS, P::ETA, -1);
        mldsa_ntt(s1hat[s]);
    }
    for (int r = 0; r < P::K; ++r) {
        for (int s = 0; s < P::L; ++s) {
            mldsa_rej_ntt_poly(tmp, rho, s, r);
            if (s == 0)
                mldsa_pointwise(t, tmp, s1hat[0]);
            else
                mldsa_pointwise_acc(t, tmp, s1hat[s]);
        }
        mldsa_invntt(t);
        mldsa_rej_bounded_poly<P::ETA>(tmp, rhop, P::L + r);
        mldsa_pack(sk + P::SK_S2 + r * P::POLY_ETA, tmp, P::ETA_BITS, P::ETA, -1);
        // Power2Round (Alg 35): t = t1 * 2^d + t0, t0 in (-2^(d-1), 2^(d-1)].
        for (int j = 0; j < MLDSA_N; ++j) {
            const pqc_i32 v = mldsa_modq(t[j] + tmp[j]);
            const pqc_i32 t1 = (v + (1 << (MLDSA_D - 1)) - 1) >> MLDSA_D;
            t[j] = t1;
            tmp[j] = v - (t1 << MLDSA_D);
        }
        mldsa_pack(pk + 32 + r * P::POLY_T1, t, 10, 0, 1);
        mldsa_pack(sk + P::SK_T0 + r * P::POLY_T0, tmp, 13, 1 << (MLDSA_D - 1), -1);
    }
    pqc_shake256(sk + 64, 64, pk, P::PK_BYTES); // tr = H(pk, 64)
    return PQC_OK;
}

// ---------------------------------------------------------------------------
// ML-DSA.Sign_internal (Alg 7), from mu = H(tr || M', 64), split in two:
//   mldsa_sign_setup    once per signature: rho'', and A^, NTT(s1), NTT(s2),
//                       NTT(t0) into the signature's workspace;
//   mldsa_sign_attempt  one iteration of the rejection loop for counter
//                       kappa, reading them back: y is expanded once, A^ is
//                       never sampled again.
// The workspace is mldsa_sign_layout<LEVEL>::WORDS 32-bit words.
// Word e of a workspace is at ws[e * stride]: the host gives each signature
// its own contiguous workspace (stride 1); a kernel interleaves the
// workspaces of all its threads (stride = threads), so the 32 lanes of a warp
// reading the same word of their own workspaces read 128 consecutive bytes.
// ---------------------------------------------------------------------------
// The key's part of a signing workspace: A^, then NTT(s1), NTT(s2), NTT(t0),
// each polynomial's 256 words consecutive. It is the whole workspace of a
// block that signs with the `block` variant (mldsa_block.cuh; 28,672 /
// 48,128 / 80,896 bytes for ML-DSA-44/65/87), whose y, w and products stay
// in the block's shared memory.
template <int LEVEL> struct mldsa_sign_block_layout {
    typedef mldsa_params<LEVEL> P;
    enum {
        A = 0,                          // A^[r][s] at A + (r * L + s) * 256
        S1 = A + P::K * P::L * MLDSA_N, // NTT(s1)
        S2 = S1 + P::L * MLDSA_N,       // NTT(s2)
        T0 = S2 + P::K * MLDSA_N,       // NTT(t0)
        WORDS = T0 + P::K * MLDSA_N
    };
};

// A one-thread signer's workspace: the key's part (A, S1, S2, T0 inherited),
// then what one attempt of the rejection loop computes.
template <int LEVEL> struct mldsa_sign_layout : mldsa_sign_block_layout<LEVEL> {
    typedef mldsa_params<LEVEL> P;
    enum {
        Y = mldsa_sign_block_layout<LEVEL>::WORDS, // y of the current attempt
        YHAT = Y + P::L * MLDSA_N,                 // NTT(y)
        W = YHAT + P::L * MLDSA_N,                 // w, then w - c s2
        WORDS = W + P::K * MLDSA_N
    };
};

PQC_HD void mldsa_ws_store(pqc_i32 *ws, pqc_size stride, int off, const pqc_i32 *a) {
    for (int j = 0; j < MLDSA_N; ++j) ws[(pqc_size)(off + j) * stride] = a[j];
}

// acc = a o b (times 2^-32), a and b in the workspace; added to acc if `add`.
PQC_HD void mldsa_ws_pointwise(pqc_i32 *acc, const pqc_i32 *ws, pqc_size stride, int a, int b, int add) {
    for (int j = 0; j < MLDSA_N; ++j) {
        const pqc_i32 p = mldsa_mont_reduce((pqc_i64)ws[(pqc_size)(a + j) * stride] * ws[(pqc_size)(b + j) * stride]);
        acc[j] = add ? acc[j] + p : p;
    }
}

// acc = c o b (times 2^-32), b in the workspace.
PQC_HD void mldsa_ws_pointwise_c(pqc_i32 *acc, const pqc_i32 *c, const pqc_i32 *ws, pqc_size stride, int b) {
    for (int j = 0; j < MLDSA_N; ++j) acc[j] = mldsa_mont_reduce((pqc_i64)c[j] * ws[(pqc_size)(b + j) * stride]);
}

template <int LEVEL>
PQC_HD_NOINLINE void mldsa_sign_setup(pqc_i32 *ws, pqc_size stride, pqc_u8 *rhopp, const pqc_u8 *sk, const pqc_u8 *mu,
                             const pqc_u8 *rnd) {
    typedef mldsa_params<LEVEL> P;
    typedef mldsa_sign_layout<LEVEL> W;
    {
        pqc_keccak st;
        pqc_shake256_init(&st);
        pqc_shake256_absorb(&st, sk + 32, 32); // K
        pqc_shake256_absorb(&st, rnd, 32);
        pqc_shake256_absorb(&st, mu, 64);
        pqc_shake256_finalize(&st);
        pqc_shake256_squeeze(&st, rhopp, 64);
    }
    pqc_i32 tmp[MLDSA_N];
    for (int r = 0; r < P::K; ++r)
        for (int s = 0; s < P::L; ++s) {
            mldsa_rej_ntt_poly(tmp, sk, s, r); // rho = sk[0..32)
            mldsa_ws_store(ws, stride, W::A + (r * P::L + s) * MLDSA_N, tmp);
        }
    for (int s = 0; s < P::L; ++s) {
        mldsa_unpack(tmp, sk + P::SK_S1 + s * P::POLY_ETA, P::ETA_BITS, P::ETA, -1);
        mldsa_ntt(tmp);
        mldsa_ws_store(ws, stride, W::S1 + s * MLDSA_N, tmp);
    }
    for (int r = 0; r < P::K; ++r) {
        mldsa_unpack(tmp, sk + P::SK_S2 + r * P::POLY_ETA, P::ETA_BITS, P::ETA, -1);
        mldsa_ntt(tmp);
        mldsa_ws_store(ws, stride, W::S2 + r * MLDSA_N, tmp);
        mldsa_unpack(tmp, sk + P::SK_T0 + r * P::POLY_T0, 13, 1 << (MLDSA_D - 1), -1);
        mldsa_ntt(tmp);
        mldsa_ws_store(ws, stride, W::T0 + r * MLDSA_N, tmp);
    }
}

// One iteration of Alg 7's loop with counter kappa: 1 when the signature in
// `sig` is complete, 0 when it was rejected (sig then holds garbage that the
// next attempt overwrites).
template <int LEVEL>
PQC_HD_NOINLINE int mldsa_sign_attempt(pqc_u8 *sig, pqc_i32 *ws, pqc_size stride, const pqc_u8 *mu, const pqc_u8 *rhopp,
                              int kappa) {
    typedef mldsa_params<LEVEL> P;
    typedef mldsa_sign_layout<LEVEL> W;
    pqc_i32 tmp[MLDSA_N];
    pqc_i32 ch[MLDSA_N];
    pqc_u8 w1buf[P::POLY_W1];

    // y = ExpandMask(rho'', kappa), kept with NTT(y).
    for (int s = 0; s < P::L; ++s) {
        mldsa_expand_mask_poly<LEVEL>(tmp, rhopp, (kappa + s) & 0xFFFF);
        mldsa_ws_store(ws, stride, W::Y + s * MLDSA_N, tmp);
        mldsa_ntt(tmp);
        mldsa_ws_store(ws, stride, W::YHAT + s * MLDSA_N, tmp);
    }
    // w = NTT^-1(A^ o NTT(y)); c~ = H(mu || w1Encode(w1), lambda/4), written
    // into the signature.
    {
        pqc_keccak st;
        pqc_shake256_init(&st);
        pqc_shake256_absorb(&st, mu, 64);
        for (int r = 0; r < P::K; ++r) {
            for (int s = 0; s < P::L; ++s)
                mldsa_ws_pointwise(tmp, ws, stride, W::A + (r * P::L + s) * MLDSA_N, W::YHAT + s * MLDSA_N, s > 0);
            mldsa_invntt(tmp);
            // w mod q into the workspace and w1 = HighBits(w) in tmp, one pass.
            for (int j = 0; j < MLDSA_N; ++j) {
                const pqc_i32 w = mldsa_modq(tmp[j]);
                ws[(pqc_size)(W::W + r * MLDSA_N + j) * stride] = w;
                tmp[j] = mldsa_highbits<P::GAMMA2>(w);
            }
            mldsa_pack(w1buf, tmp, P::W1_BITS, 0, 1);
            pqc_shake256_absorb(&st, w1buf, P::POLY_W1);
        }
        pqc_shake256_finalize(&st);
        pqc_shake256_squeeze(&st, sig, P::CT_BYTES);
    }
    mldsa_sample_in_ball<LEVEL>(ch, sig);
    mldsa_ntt(ch);

    // z = y + <<c s1>>; reject if ||z|| >= gamma1 - beta.
    for (int s = 0; s < P::L; ++s) {
        mldsa_ws_pointwise_c(tmp, ch, ws, stride, W::S1 + s * MLDSA_N);
        mldsa_invntt(tmp);
        int reject = 0;
        for (int j = 0; j < MLDSA_N; ++j) {
            const pqc_i32 y = ws[(pqc_size)(W::Y + s * MLDSA_N + j) * stride];
            const pqc_i32 z = mldsa_centre(mldsa_modq(y + tmp[j]));
            if (mldsa_abs(z) >= P::GAMMA1 - P::BETA) reject = 1;
            tmp[j] = z;
        }
        if (reject) return 0;
        mldsa_pack(sig + P::SIG_Z + s * P::POLY_Z, tmp, P::Z_BITS, P::GAMMA1, -1);
    }

    // r0 = LowBits(w - <<c s2>>); h = MakeHint(-<<c t0>>, w - <<c s2>> + <<c t0>>).
    pqc_u8 *hint = sig + P::SIG_H;
    for (int i = 0; i < P::OMEGA + P::K; ++i) hint[i] = 0;
    int count = 0;
    for (int r = 0; r < P::K; ++r) {
        const int wr = W::W + r * MLDSA_N;
        mldsa_ws_pointwise_c(tmp, ch, ws, stride, W::S2 + r * MLDSA_N);
        mldsa_invntt(tmp);
        int reject = 0;
        for (int j = 0; j < MLDSA_N; ++j) {
            pqc_i32 *w = &ws[(pqc_size)(wr + j) * stride];
            const pqc_i32 v = mldsa_modq(*w - tmp[j]);
            pqc_i32 r1, r0;
            mldsa_decompose<P::GAMMA2>(v, &r1, &r0);
            if (mldsa_abs(r0) >= P::GAMMA2 - P::BETA) reject = 1;
            *w = v;
        }
        if (reject) return 0;
        mldsa_ws_pointwise_c(tmp, ch, ws, stride, W::T0 + r * MLDSA_N);
        mldsa_invntt(tmp);
        // No return inside this loop: lanes whose hints differ would not
        // rejoin until the attempt's end (see mldsa_hint_valid). Past omega
        // hints the count goes on, nothing more is written, and the
        // attempt is rejected after the row, as it is for a large c t0.
        for (int j = 0; j < MLDSA_N; ++j) {
            const pqc_i32 ct0 = mldsa_modq(tmp[j]);
            reject |= mldsa_abs(mldsa_centre(ct0)) >= P::GAMMA2;
            const pqc_i32 v = ws[(pqc_size)(wr + j) * stride];
            const pqc_i32 h1 = mldsa_highbits<P::GAMMA2>(mldsa_modq(v + ct0));
            const int bit = h1 != mldsa_highbits<P::GAMMA2>(v);
            if (bit & (count < P::OMEGA)) hint[count] = (pqc_u8)j;
            count += bit;
        }
        if (reject | (count > P::OMEGA)) return 0;
        hint[P::OMEGA + r] = (pqc_u8)count;
    }
    return 1;
}

// 1 when every packed coefficient of s1 and s2 in sk (eta - s, ETA_BITS bits
// each) is at most 2 eta, so that s1, s2 lie in [-eta, eta] as KeyGen makes
// them; 0 otherwise.
template <int LEVEL>
PQC_HD int mldsa_sk_in_range(const pqc_u8 *sk) {
    typedef mldsa_params<LEVEL> P;
    const pqc_u8 *p = sk + P::SK_S1;
    const int count = (P::K + P::L) * MLDSA_N;
    const pqc_u32 mask = (1u << P::ETA_BITS) - 1;
    pqc_u32 bad = 0;
    for (int i = 0; i < count; ++i) {
        const int bit = i * P::ETA_BITS;
        const int byte = bit >> 3;
        pqc_u32 w = p[byte];
        if (byte + 1 < (P::K + P::L) * P::POLY_ETA) w |= (pqc_u32)p[byte + 1] << 8;
        bad |= (((w >> (bit & 7)) & mask) > (pqc_u32)(2 * P::ETA));
    }
    return bad == 0;
}

// The whole of Alg 7 from mu on one thread: the attempts made go to
// *attempts when it is not null.
template <int LEVEL>
PQC_HD int mldsa_sign_mu(pqc_u8 *sig, const pqc_u8 *sk, const pqc_u8 *mu, const pqc_u8 *rnd, pqc_i32 *ws,
                         pqc_size stride, int *attempts) {
    typedef mldsa_params<LEVEL> P;
    if (!mldsa_sk_in_range<LEVEL>(sk)) {
        if (attempts) *attempts = 0;
        for (int i = 0; i < P::SIG_BYTES; ++i) sig[i] = 0;
        return PQC_ERR_KEY;
    }
    pqc_u8 rhopp[64];
    mldsa_sign_setup<LEVEL>(ws, stride, rhopp, sk, mu, rnd);
    for (int iter = 0; iter < MLDSA_SIGN_MAX_ITER; ++iter) {
        if (mldsa_sign_attempt<LEVEL>(sig, ws, stride, mu, rhopp, iter * P::L)) {
            if (attempts) *attempts = iter + 1;
            return PQC_OK;
        }
    }
    if (attempts) *attempts = MLDSA_SIGN_MAX_ITER;
    for (int i = 0; i < P::SIG_BYTES; ++i) sig[i] = 0;
    return PQC_ERR_INPUT;
}

// ---------------------------------------------------------------------------
// ML-DSA.Verify_internal (Alg 8), from mu = H(tr || M', 64).
// ---------------------------------------------------------------------------
template <int LEVEL>
PQC_HD int mldsa_verify_mu(const pqc_u8 *pk, const pqc_u8 *mu, const pqc_u8 *sig) {
    typedef mldsa_params<LEVEL> P;
    const pqc_u8 *hint = sig + P::SIG_H;
    if (!mldsa_hint_valid<LEVEL>(hint)) return 0;

    pqc_i32 zhat[P::L][MLDSA_N];
    pqc_i32 ch[MLDSA_N];
    pqc_i32 acc[MLDSA_N];
    pqc_i32 tmp[MLDSA_N];
    pqc_u8 w1buf[P::POLY_W1];

    for (int s = 0; s < P::L; ++s) {
        mldsa_unpack(zhat[s], sig + P::SIG_Z + s * P::POLY_Z, P::Z_BITS, P::GAMMA1, -1);
        for (int j = 0; j < MLDSA_N; ++j)
            if (mldsa_abs(zhat[s][j]) >= P::GAMMA1 - P::BETA) return 0;
        mldsa_ntt(zhat[s]);
    }
    mldsa_sample_in_ball<LEVEL>(ch, sig);
    mldsa_ntt(ch);

    pqc_keccak st;
    pqc_shake256_init(&st);
    pqc_shake256_absorb(&st, mu, 64);
    int hstart = 0;
    for (int r = 0; r < P::K; ++r) {
        // w'_approx = NTT^-1(A o NTT(z) - NTT(c) o NTT(t1 * 2^d)).
        for (int s = 0; s < P::L; ++s) {
            mldsa_rej_ntt_poly(tmp, pk, s, r);
            if (s == 0)
                mldsa_pointwise(acc, tmp, zhat[0]);
            else
                mldsa_pointwise_acc(acc, tmp, zhat[s]);
        }
        mldsa_unpack(tmp, pk + 32 + r * P::POLY_T1, 10, 0, 1);
        for (int j = 0; j < MLDSA_N; ++j) tmp[j] <<= MLDSA_D;
        mldsa_ntt(tmp);
        mldsa_pointwise_sub(acc, ch, tmp);
        mldsa_invntt(acc);
        // w1' = UseHint(h, w'_approx) (Alg 40).
        pqc_u32 hbits[MLDSA_N / 32];
        for (int i = 0; i < MLDSA_N / 32; ++i) hbits[i] = 0;
        const int hend = hint[P::OMEGA + r];
        for (int i = hstart; i < hend; ++i) hbits[hint[i] >> 5] |= 1u << (hint[i] & 31);
        hstart = hend;
        for (int j = 0; j < MLDSA_N; ++j) {
            pqc_i32 r1, r0;
            mldsa_decompose<P::GAMMA2>(mldsa_modq(acc[j]), &r1, &r0);
            if ((hbits[j >> 5] >> (j & 31)) & 1) {
                if (r0 > 0)
                    r1 = (r1 + 1 == P::W1_MOD) ? 0 : r1 + 1;
                else
                    r1 = (r1 == 0) ? P::W1_MOD - 1 : r1 - 1;
            }
            tmp[j] = r1;
        }
        mldsa_pack(w1buf, tmp, P::W1_BITS, 0, 1);
        pqc_shake256_absorb(&st, w1buf, P::POLY_W1);
    }
    pqc_shake256_finalize(&st);
    pqc_u8 ct2[P::CT_BYTES];
    pqc_shake256_squeeze(&st, ct2, P::CT_BYTES);
    pqc_u8 diff = 0;
    for (int i = 0; i < P::CT_BYTES; ++i) diff |= (pqc_u8)(ct2[i] ^ sig[i]);
    return diff == 0;
}

// ---------------------------------------------------------------------------
// Internal and pure (Alg 2, 3) interfaces.
// ---------------------------------------------------------------------------

// Sign_internal(sk, M', rnd) for a formatted message M'.
template <int LEVEL>
PQC_HD int mldsa_sign_internal(pqc_u8 *sig, const pqc_u8 *sk, const pqc_u8 *mp, pqc_size mplen, const pqc_u8 *rnd,
                               pqc_i32 *ws, pqc_size stride) {
    pqc_u8 mu[64];
    mldsa_mu(mu, sk + 64, mp, mplen, mp, 0, mp, 0);
    return mldsa_sign_mu<LEVEL>(sig, sk, mu, rnd, ws, stride, 0);
}

// Verify_internal(pk, M', sigma) for a formatted message M'; the signature
// is SIG_BYTES long.
template <int LEVEL>
PQC_HD int mldsa_verify_internal(const pqc_u8 *pk, const pqc_u8 *mp, pqc_size mplen, const pqc_u8 *sig) {
    typedef mldsa_params<LEVEL> P;
    pqc_u8 tr[64], mu[64];
    pqc_shake256(tr, 64, pk, P::PK_BYTES);
    mldsa_mu(mu, tr, mp, mplen, mp, 0, mp, 0);
    return mldsa_verify_mu<LEVEL>(pk, mu, sig);
}

// mu = H(tr || M') of ML-DSA.Sign (Alg 2): M' = 0 || |ctx| || ctx || M,
// absorbed piecewise; ctxlen <= 255.
PQC_HD void mldsa_sign_message_mu(pqc_u8 *mu, const pqc_u8 *sk, const pqc_u8 *msg, pqc_size mlen, const pqc_u8 *ctx,
                                  pqc_size ctxlen) {
    pqc_u8 hdr[2];
    hdr[0] = 0;
    hdr[1] = (pqc_u8)ctxlen;
    mldsa_mu(mu, sk + 64, hdr, 2, ctx, ctxlen, msg, mlen);
}

// ML-DSA.Sign (Alg 2) with the randomness given, in workspace ws (see
// mldsa_sign_layout); the attempts made go to *attempts when not null.
template <int LEVEL>
PQC_HD int mldsa_sign(pqc_u8 *sig, const pqc_u8 *sk, const pqc_u8 *msg, pqc_size mlen, const pqc_u8 *ctx,
                      pqc_size ctxlen, const pqc_u8 *rnd, pqc_i32 *ws, pqc_size stride, int *attempts) {
    if (ctxlen > 255) return PQC_ERR_CONTEXT;
    pqc_u8 mu[64];
    mldsa_sign_message_mu(mu, sk, msg, mlen, ctx, ctxlen);
    return mldsa_sign_mu<LEVEL>(sig, sk, mu, rnd, ws, stride, attempts);
}

// ML-DSA.Verify (Alg 3): 1 valid, 0 invalid (a context longer than 255
// bytes is invalid). The signature is SIG_BYTES long and pk PK_BYTES long.
template <int LEVEL>
PQC_HD int mldsa_verify(const pqc_u8 *pk, const pqc_u8 *msg, pqc_size mlen, const pqc_u8 *ctx, pqc_size ctxlen,
                        const pqc_u8 *sig) {
    typedef mldsa_params<LEVEL> P;
    if (ctxlen > 255) return 0;
    pqc_u8 tr[64], hdr[2], mu[64];
    pqc_shake256(tr, 64, pk, P::PK_BYTES);
    hdr[0] = 0;
    hdr[1] = (pqc_u8)ctxlen;
    mldsa_mu(mu, tr, hdr, 2, ctx, ctxlen, msg, mlen);
    return mldsa_verify_mu<LEVEL>(pk, mu, sig);
}

#endif
