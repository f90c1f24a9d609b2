// keccak.cuh: Keccak-f[1600], SHA3-256, SHA3-512, SHAKE128, SHAKE256 (FIPS 202).
//
// Written once for host and device (see common.cuh). No system headers.
//
// API (all functions PQC_HD, i.e. __host__ __device__ under CUDA/NVRTC):
//   struct pqc_keccak { pqc_u64 s[25]; pqc_u32 pos; pqc_u32 rate; };
//     s: the 1600-bit state as 25 lanes, lane index x + 5*y, byte i of the
//        state is byte (i % 8) (little-endian) of lane i / 8.
//     pos: bytes of the current block absorbed (absorb phase) or already
//        squeezed (squeeze phase); rate: block size in bytes.
//   pqc_keccak_f1600(s)                   the permutation, 24 rounds.
//   pqc_keccak_init(st, rate)             zero state; rate = 168 (SHAKE128),
//                                         136 (SHAKE256, SHA3-256), 72 (SHA3-512).
//   pqc_keccak_absorb(st, in, len)        may be called any number of times.
//   pqc_keccak_finalize(st, domain_pad)   domain bits + first pad bit:
//                                         PQC_KECCAK_SHA3 (0x06) or
//                                         PQC_KECCAK_SHAKE (0x1F); pad10*1 end.
//   pqc_keccak_squeeze(st, out, len)      may be called any number of times;
//                                         the output is one continuous stream.
//   pqc_keccak_squeeze_u64(st)            next 8 output bytes as a little-endian
//                                         lane; only when every squeeze so far
//                                         was a whole number of lanes (pos % 8 == 0).
//   pqc_keccak_squeeze_byte(st)           next output byte.
//   pqc_keccak_absorb_u64(st, w)          absorbs the 8 bytes of the lane w;
//                                         only while pos % 8 == 0.
//   pqc_shake128_init/absorb/finalize/squeeze(st, ...)  rate 168, pad 0x1F
//   pqc_shake256_init/absorb/finalize/squeeze(st, ...)  rate 136, pad 0x1F
//   pqc_sha3_256(out[32], in, len)   pqc_sha3_512(out[64], in, len)
//   pqc_shake128(out, outlen, in, inlen)   pqc_shake256(out, outlen, in, inlen)
// Absorbing after finalize, or squeezing before it, is not supported.
#ifndef PQCPROF_KECCAK_CUH
#define PQCPROF_KECCAK_CUH

#include "common.cuh"

#define PQC_KECCAK_SHA3 0x06
#define PQC_KECCAK_SHAKE 0x1F
#define PQC_SHAKE128_RATE 168
#define PQC_SHAKE256_RATE 136
#define PQC_SHA3_256_RATE 136
#define PQC_SHA3_512_RATE 72

#define PQC_ROL64(v, n) (((v) << (n)) | ((v) >> (64 - (n))))

struct pqc_keccak {
    pqc_u64 s[25];
    pqc_u32 pos;
    pqc_u32 rate;
};

// Round constants RC[ir] of the iota step (FIPS 202, 3.2.5).
PQC_TABLE pqc_u64 pqc_keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL,
    0x8000000080008000ULL, 0x000000000000808BULL, 0x0000000080000001ULL,
    0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008AULL,
    0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
    0x000000000000800AULL, 0x800000008000000AULL, 0x8000000080008081ULL,
    0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

// PQCPROF_COUNT_KECCAK (defined by build.rs for the host build only, never
// for NVRTC or the stand-in) counts the permutations this OS thread has run,
// so tests can state the Keccak work of an operation (host_mlkem.cpp defines
// the counter, pqcprof_keccak_permutations reads it).
#if defined(PQCPROF_COUNT_KECCAK)
extern thread_local pqc_u64 pqc_keccak_permutations;
#define PQC_COUNT_PERMUTATION() (++pqc_keccak_permutations)
#else
#define PQC_COUNT_PERMUTATION() ((void)0)
#endif

// Keccak-p[1600, 24] on the state s (FIPS 202, 3.3). The lanes are held in
// scalars so that the device keeps them in registers during the rounds.
PQC_HD_NOINLINE void pqc_keccak_f1600(pqc_u64 *s) {
    PQC_COUNT_PERMUTATION();
    pqc_u64 a00 = s[0], a01 = s[1], a02 = s[2], a03 = s[3], a04 = s[4];
    pqc_u64 a05 = s[5], a06 = s[6], a07 = s[7], a08 = s[8], a09 = s[9];
    pqc_u64 a10 = s[10], a11 = s[11], a12 = s[12], a13 = s[13], a14 = s[14];
    pqc_u64 a15 = s[15], a16 = s[16], a17 = s[17], a18 = s[18], a19 = s[19];
    pqc_u64 a20 = s[20], a21 = s[21], a22 = s[22], a23 = s[23], a24 = s[24];
    pqc_u64 b00, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16, b17, b18, b19, b20, b21, b22, b23, b24;
    pqc_u64 c0, c1, c2, c3, c4, d0, d1, d2, d3, d4;
    for (int round = 0; round < 24; ++round) {
        /* theta */
        c0 = a00 ^ a05 ^ a10 ^ a15 ^ a20;
        c1 = a01 ^ a06 ^ a11 ^ a16 ^ a21;
        c2 = a02 ^ a07 ^ a12 ^ a17 ^ a22;
        c3 = a03 ^ a08 ^ a13 ^ a18 ^ a23;
        c4 = a04 ^ a09 ^ a14 ^ a19 ^ a24;
        d0 = c4 ^ PQC_ROL64(c1, 1);
        d1 = c0 ^ PQC_ROL64(c2, 1);
        d2 = c1 ^ PQC_ROL64(c3, 1);
        d3 = c2 ^ PQC_ROL64(c4, 1);
        d4 = c3 ^ PQC_ROL64(c0, 1);
        /* rho and pi: B[y, 2x+3y] = rot(A[x,y], r[x,y]) (after theta) */
        b00 = (a00 ^ d0);
        b10 = PQC_ROL64((a01 ^ d1), 1);
        b20 = PQC_ROL64((a02 ^ d2), 62);
        b05 = PQC_ROL64((a03 ^ d3), 28);
        b15 = PQC_ROL64((a04 ^ d4), 27);
        b16 = PQC_ROL64((a05 ^ d0), 36);
        b01 = PQC_ROL64((a06 ^ d1), 44);
        b11 = PQC_ROL64((a07 ^ d2), 6);
        b21 = PQC_ROL64((a08 ^ d3), 55);
        b06 = PQC_ROL64((a09 ^ d4), 20);
        b07 = PQC_ROL64((a10 ^ d0), 3);
        b17 = PQC_ROL64((a11 ^ d1), 10);
        b02 = PQC_ROL64((a12 ^ d2), 43);
        b12 = PQC_ROL64((a13 ^ d3), 25);
        b22 = PQC_ROL64((a14 ^ d4), 39);
        b23 = PQC_ROL64((a15 ^ d0), 41);
        b08 = PQC_ROL64((a16 ^ d1), 45);
        b18 = PQC_ROL64((a17 ^ d2), 15);
        b03 = PQC_ROL64((a18 ^ d3), 21);
        b13 = PQC_ROL64((a19 ^ d4), 8);
        b14 = PQC_ROL64((a20 ^ d0), 18);
        b24 = PQC_ROL64((a21 ^ d1), 2);
        b09 = PQC_ROL64((a22 ^ d2), 61);
        b19 = PQC_ROL64((a23 ^ d3), 56);
        b04 = PQC_ROL64((a24 ^ d4), 14);
        /* chi */
        a00 = b00 ^ (~b01 & b02);
        a01 = b01 ^ (~b02 & b03);
        a02 = b02 ^ (~b03 & b04);
        a03 = b03 ^ (~b04 & b00);
        a04 = b04 ^ (~b00 & b01);
        a05 = b05 ^ (~b06 & b07);
        a06 = b06 ^ (~b07 & b08);
        a07 = b07 ^ (~b08 & b09);
        a08 = b08 ^ (~b09 & b05);
        a09 = b09 ^ (~b05 & b06);
        a10 = b10 ^ (~b11 & b12);
        a11 = b11 ^ (~b12 & b13);
        a12 = b12 ^ (~b13 & b14);
        a13 = b13 ^ (~b14 & b10);
        a14 = b14 ^ (~b10 & b11);
        a15 = b15 ^ (~b16 & b17);
        a16 = b16 ^ (~b17 & b18);
        a17 = b17 ^ (~b18 & b19);
        a18 = b18 ^ (~b19 & b15);
        a19 = b19 ^ (~b15 & b16);
        a20 = b20 ^ (~b21 & b22);
        a21 = b21 ^ (~b22 & b23);
        a22 = b22 ^ (~b23 & b24);
        a23 = b23 ^ (~b24 & b20);
        a24 = b24 ^ (~b20 & b21);
        /* iota */
        a00 ^= pqc_keccak_rc[round];
    }
    s[0] = a00; s[1] = a01; s[2] = a02; s[3] = a03; s[4] = a04;
    s[5] = a05; s[6] = a06; s[7] = a07; s[8] = a08; s[9] = a09;
    s[10] = a10; s[11] = a11; s[12] = a12; s[13] = a13; s[14] = a14;
    s[15] = a15; s[16] = a16; s[17] = a17; s[18] = a18; s[19] = a19;
    s[20] = a20; s[21] = a21; s[22] = a22; s[23] = a23; s[24] = a24;
}

PQC_HD void pqc_keccak_init(pqc_keccak *st, pqc_u32 rate) {
    for (int i = 0; i < 25; ++i) st->s[i] = 0;
    st->pos = 0;
    st->rate = rate;
}

PQC_HD void pqc_keccak_absorb(pqc_keccak *st, const pqc_u8 *in, pqc_size len) {
    pqc_u32 pos = st->pos;
    const pqc_u32 rate = st->rate;
    while (len > 0) {
        if ((pos & 7) == 0 && len >= 8 && pos + 8 <= rate) {
            // Whole lane: assemble 8 bytes little-endian (input may be unaligned).
            pqc_u64 w = 0;
            for (int j = 0; j < 8; ++j) w |= (pqc_u64)in[j] << (8 * j);
            st->s[pos >> 3] ^= w;
            pos += 8;
            in += 8;
            len -= 8;
        } else {
            st->s[pos >> 3] ^= (pqc_u64)(*in) << (8 * (pos & 7));
            ++pos;
            ++in;
            --len;
        }
        if (pos == rate) {
            pqc_keccak_f1600(st->s);
            pos = 0;
        }
    }
    st->pos = pos;
}

// Absorbs one byte (as pqc_keccak_absorb(st, &b, 1) does, without taking an
// address, so the caller's byte stays in a register).
PQC_HD void pqc_keccak_absorb_byte(pqc_keccak *st, pqc_u8 b) {
    st->s[st->pos >> 3] ^= (pqc_u64)b << (8 * (st->pos & 7));
    if (++st->pos == st->rate) {
        pqc_keccak_f1600(st->s);
        st->pos = 0;
    }
}

// Absorbs the 8 bytes of the little-endian lane w (as pqc_keccak_absorb of
// those bytes); requires st->pos % 8 == 0 (every absorption so far a whole
// number of lanes).
PQC_HD void pqc_keccak_absorb_u64(pqc_keccak *st, pqc_u64 w) {
    st->s[st->pos >> 3] ^= w;
    st->pos += 8;
    if (st->pos == st->rate) {
        pqc_keccak_f1600(st->s);
        st->pos = 0;
    }
}

// Appends the domain bits and pad10*1 (the domain byte carries the first 1 of
// the padding), permutes, and enters the squeeze phase.
PQC_HD void pqc_keccak_finalize(pqc_keccak *st, pqc_u8 domain_pad) {
    const pqc_u32 pos = st->pos;
    st->s[pos >> 3] ^= (pqc_u64)domain_pad << (8 * (pos & 7));
    st->s[(st->rate - 1) >> 3] ^= (pqc_u64)0x80 << (8 * ((st->rate - 1) & 7));
    pqc_keccak_f1600(st->s);
    st->pos = 0;
}

PQC_HD void pqc_keccak_squeeze(pqc_keccak *st, pqc_u8 *out, pqc_size len) {
    pqc_u32 pos = st->pos;
    const pqc_u32 rate = st->rate;
    while (len > 0) {
        if (pos == rate) {
            pqc_keccak_f1600(st->s);
            pos = 0;
        }
        if ((pos & 7) == 0 && len >= 8 && pos + 8 <= rate) {
            const pqc_u64 w = st->s[pos >> 3];
            for (int j = 0; j < 8; ++j) out[j] = (pqc_u8)(w >> (8 * j));
            pos += 8;
            out += 8;
            len -= 8;
        } else {
            *out = (pqc_u8)(st->s[pos >> 3] >> (8 * (pos & 7)));
            ++pos;
            ++out;
            --len;
        }
    }
    st->pos = pos;
}

// Next 8 squeezed bytes, little-endian, as one lane. Requires st->pos % 8 == 0
// (all rates here are multiples of 8, so mixing with pqc_keccak_squeeze is fine
// while the squeezed lengths stay multiples of 8).
PQC_HD pqc_u64 pqc_keccak_squeeze_u64(pqc_keccak *st) {
    if (st->pos == st->rate) {
        pqc_keccak_f1600(st->s);
        st->pos = 0;
    }
    const pqc_u64 w = st->s[st->pos >> 3];
    st->pos += 8;
    return w;
}

// Next squeezed byte (the stream pqc_keccak_squeeze gives, one byte at a
// time, read straight from the state: no output buffer).
PQC_HD pqc_u32 pqc_keccak_squeeze_byte(pqc_keccak *st) {
    if (st->pos == st->rate) {
        pqc_keccak_f1600(st->s);
        st->pos = 0;
    }
    const pqc_u32 p = st->pos++;
    return (pqc_u32)(st->s[p >> 3] >> (8 * (p & 7))) & 0xFFu;
}

PQC_HD void pqc_shake128_init(pqc_keccak *st) { pqc_keccak_init(st, PQC_SHAKE128_RATE); }
PQC_HD void pqc_shake128_absorb(pqc_keccak *st, const pqc_u8 *in, pqc_size len) {
    pqc_keccak_absorb(st, in, len);
}
PQC_HD void pqc_shake128_finalize(pqc_keccak *st) { pqc_keccak_finalize(st, PQC_KECCAK_SHAKE); }
PQC_HD void pqc_shake128_squeeze(pqc_keccak *st, pqc_u8 *out, pqc_size len) {
    pqc_keccak_squeeze(st, out, len);
}

PQC_HD void pqc_shake256_init(pqc_keccak *st) { pqc_keccak_init(st, PQC_SHAKE256_RATE); }
PQC_HD void pqc_shake256_absorb(pqc_keccak *st, const pqc_u8 *in, pqc_size len) {
    pqc_keccak_absorb(st, in, len);
}
PQC_HD void pqc_shake256_finalize(pqc_keccak *st) { pqc_keccak_finalize(st, PQC_KECCAK_SHAKE); }
PQC_HD void pqc_shake256_squeeze(pqc_keccak *st, pqc_u8 *out, pqc_size len) {
    pqc_keccak_squeeze(st, out, len);
}

// SHA3-256 and SHA3-512 in the state st (wherever the caller keeps it: a
// cooperative kernel keeps it in shared memory).
PQC_HD void pqc_sha3_256_in(pqc_keccak *st, pqc_u8 *out, const pqc_u8 *in, pqc_size len) {
    pqc_keccak_init(st, PQC_SHA3_256_RATE);
    pqc_keccak_absorb(st, in, len);
    pqc_keccak_finalize(st, PQC_KECCAK_SHA3);
    pqc_keccak_squeeze(st, out, 32);
}

PQC_HD void pqc_sha3_512_in(pqc_keccak *st, pqc_u8 *out, const pqc_u8 *in, pqc_size len) {
    pqc_keccak_init(st, PQC_SHA3_512_RATE);
    pqc_keccak_absorb(st, in, len);
    pqc_keccak_finalize(st, PQC_KECCAK_SHA3);
    pqc_keccak_squeeze(st, out, 64);
}

PQC_HD void pqc_sha3_256(pqc_u8 *out, const pqc_u8 *in, pqc_size len) {
    pqc_keccak st;
    pqc_sha3_256_in(&st, out, in, len);
}

PQC_HD void pqc_sha3_512(pqc_u8 *out, const pqc_u8 *in, pqc_size len) {
    pqc_keccak st;
    pqc_sha3_512_in(&st, out, in, len);
}

PQC_HD void pqc_shake128(pqc_u8 *out, pqc_size outlen, const pqc_u8 *in, pqc_size inlen) {
    pqc_keccak st;
    pqc_shake128_init(&st);
    pqc_keccak_absorb(&st, in, inlen);
    pqc_shake128_finalize(&st);
    pqc_keccak_squeeze(&st, out, outlen);
}

PQC_HD void pqc_shake256(pqc_u8 *out, pqc_size outlen, const pqc_u8 *in, pqc_size inlen) {
    pqc_keccak st;
    pqc_shake256_init(&st);
    pqc_keccak_absorb(&st, in, inlen);
    pqc_shake256_finalize(&st);
    pqc_keccak_squeeze(&st, out, outlen);
}

#endif
