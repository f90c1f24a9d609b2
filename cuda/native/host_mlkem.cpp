// host_mlkem.cpp: host entry points for ML-KEM and the Keccak functions.
//
// Compiled by build.rs (cc crate, C++14) from the same headers that NVRTC
// compiles for the device, so CPU results prove the GPU source byte for byte.
#include <stddef.h>
#include <stdint.h>

#include "common.cuh"
#include "keccak.cuh"
#include "mlkem.cuh"

#if defined(PQCPROF_COUNT_KECCAK)
thread_local pqc_u64 pqc_keccak_permutations = 0;
#endif

extern "C" {

// Keccak-f1600 permutations this OS thread has run in the host build so far
// (counted under PQCPROF_COUNT_KECCAK, which build.rs defines); -1 when the
// build does not count them.
long long pqcprof_keccak_permutations(void) {
#if defined(PQCPROF_COUNT_KECCAK)
    return (long long)pqc_keccak_permutations;
#else
    return -1;
#endif
}

int pqcprof_mlkem_keygen(int k, uint8_t *pk, uint8_t *sk, const uint8_t *d, const uint8_t *z) {
    switch (k) {
    case 2: pqc_mlkem_keygen_internal<2>(pk, sk, d, z); return PQC_OK;
    case 3: pqc_mlkem_keygen_internal<3>(pk, sk, d, z); return PQC_OK;
    case 4: pqc_mlkem_keygen_internal<4>(pk, sk, d, z); return PQC_OK;
    default: return PQC_ERR_PARAM;
    }
}

int pqcprof_mlkem_encaps(int k, uint8_t *ct, uint8_t *ss, const uint8_t *pk, const uint8_t *m) {
    switch (k) {
    case 2: return pqc_mlkem_encaps_internal<2>(ct, ss, pk, m);
    case 3: return pqc_mlkem_encaps_internal<3>(ct, ss, pk, m);
    case 4: return pqc_mlkem_encaps_internal<4>(ct, ss, pk, m);
    default: return PQC_ERR_PARAM;
    }
}

int pqcprof_mlkem_decaps(int k, uint8_t *ss, const uint8_t *ct, const uint8_t *sk) {
    switch (k) {
    case 2: return pqc_mlkem_decaps_internal<2>(ss, ct, sk);
    case 3: return pqc_mlkem_decaps_internal<3>(ss, ct, sk);
    case 4: return pqc_mlkem_decaps_internal<4>(ss, ct, sk);
    default: return PQC_ERR_PARAM;
    }
}

// Sizes of (ek, dk, ct) for module rank k; 0 for another k.
static void mlkem_sizes(int k, size_t *ek, size_t *dk, size_t *ct) {
    switch (k) {
    case 2: *ek = pqc_mlkem_params<2>::PK_BYTES; *dk = pqc_mlkem_params<2>::SK_BYTES; *ct = pqc_mlkem_params<2>::CT_BYTES; break;
    case 3: *ek = pqc_mlkem_params<3>::PK_BYTES; *dk = pqc_mlkem_params<3>::SK_BYTES; *ct = pqc_mlkem_params<3>::CT_BYTES; break;
    case 4: *ek = pqc_mlkem_params<4>::PK_BYTES; *dk = pqc_mlkem_params<4>::SK_BYTES; *ct = pqc_mlkem_params<4>::CT_BYTES; break;
    default: *ek = *dk = *ct = 0;
    }
}

// pqcprof_mlkem_encaps with every length given: PQC_ERR_LENGTH when ek or m
// (32 bytes) has another length than rank k takes, or ct the ciphertext's.
int pqcprof_mlkem_encaps_ext(int k, uint8_t *ct, size_t ctlen, uint8_t *ss, const uint8_t *pk, size_t pklen,
                             const uint8_t *m, size_t mlen) {
    size_t ekb, dkb, ctb;
    mlkem_sizes(k, &ekb, &dkb, &ctb);
    if (ekb == 0) return PQC_ERR_PARAM;
    if (ctlen != ctb || pklen != ekb || mlen != 32) return PQC_ERR_LENGTH;
    return pqcprof_mlkem_encaps(k, ct, ss, pk, m);
}

// pqcprof_mlkem_decaps with every length given: PQC_ERR_LENGTH for a
// ciphertext or decapsulation key of another length than rank k takes.
int pqcprof_mlkem_decaps_ext(int k, uint8_t *ss, const uint8_t *ct, size_t ctlen, const uint8_t *sk, size_t sklen) {
    size_t ekb, dkb, ctb;
    mlkem_sizes(k, &ekb, &dkb, &ctb);
    if (ekb == 0) return PQC_ERR_PARAM;
    if (ctlen != ctb || sklen != dkb) return PQC_ERR_LENGTH;
    return pqcprof_mlkem_decaps(k, ss, ct, sk);
}

int pqcprof_sha3_256(uint8_t *out, const uint8_t *in, size_t len) {
    pqc_sha3_256(out, in, (pqc_size)len);
    return PQC_OK;
}

int pqcprof_sha3_512(uint8_t *out, const uint8_t *in, size_t len) {
    pqc_sha3_512(out, in, (pqc_size)len);
    return PQC_OK;
}

int pqcprof_shake128(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen) {
    pqc_shake128(out, (pqc_size)outlen, in, (pqc_size)inlen);
    return PQC_OK;
}

int pqcprof_shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen) {
    pqc_shake256(out, (pqc_size)outlen, in, (pqc_size)inlen);
    return PQC_OK;
}

}  // extern "C"
