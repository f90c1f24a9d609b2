/*
 * pqcprof_plugin.h: the plugin ABI through which pqcprof gates, times and
 * reports a batched ML-KEM (FIPS 203) or ML-DSA (FIPS 204) implementation
 * that is not built into it.
 *
 * A plugin is a shared library (.so) that exports one C symbol,
 * `pqcprof_plugin_v1`, a function returning a pointer to a constant
 * `pqcprof_plugin_descriptor`. Any language that can export a C function and
 * lay out a C struct can implement it (C, C++ with extern "C", Rust with
 * #[no_mangle] extern "C" and #[repr(C)], Zig, ...).
 *
 * pqcprof reads the descriptor once, checks it (ABI version, algorithm
 * names, the sizes each algorithm declares against FIPS 203/204) and refuses
 * the plugin with a message naming what disagrees. It then calls the batched
 * functions with buffers it allocated, each passed with its length in bytes
 * (the whole batch), which pqcprof has checked against the standard's size
 * times the batch. A plugin never allocates the buffers it is handed.
 *
 * Randomness is an input: key generation gets its seeds, encapsulation its
 * m, signing its rnd. So every output is a function of the inputs, and
 * pqcprof compares it byte for byte with its reference implementation.
 *
 * ABI 1.1 adds one exception, stated in the descriptor: an implementation
 * whose API has no derandomised entry point (it draws its seeds, m or rnd
 * itself) lists the operations it draws its own randomness for in
 * `own_randomness` (the PQCPROF_OWN_* bits). pqcprof still passes the same
 * buffers (fresh random bytes), which such an operation ignores, and judges
 * its outputs by round trips instead of byte equality: an ML-KEM key pair
 * by another implementation encapsulating to ek and dk decapsulating; a
 * ciphertext by the reference decapsulating it to K under the key pair's
 * dk, and not after a flipped bit; a signature by the reference verifying
 * it, and rejecting it after a flipped bit. Decapsulation and verification
 * have no randomness and stay exact. See docs/plugins.md ("ABI 1.1").
 *
 * What every call must do, since pqcprof checks it after every call, timed
 * or not: write every byte of every output item (each output is filled with
 * a poison byte before the call, and an item left with it, wholly or in
 * part, fails the record); leave the inputs as they were (they are `const`;
 * pqcprof compares them with a copy taken before the call); write nothing
 * outside the buffers (guard bytes lie before and after each). Every item
 * of a batch has inputs of its own, made afresh for every call where the
 * operation allows it, so there is nothing to keep from one call or item
 * for another.
 *
 * Every function returns 0 on success. Any other value is a failure: pqcprof
 * fails the record (it is never timed as a success) and shows the
 * NUL-terminated message the plugin may write into `call->error` (at most
 * `call->error_capacity` bytes, terminator included).
 *
 * Where it runs: pqcprof loads a plugin in a worker process of its own (a
 * session of its own), never in the measuring process. Its standard input
 * is /dev/null and its standard output goes to standard error; pqcprof's
 * requests travel on a descriptor above 2 that the plugin must leave open
 * (closing it fails the record in progress). Every process left in the
 * session is killed when the worker ends, fails or hangs; a worker whose
 * resident memory passes its bound (half the memory available when it
 * starts, or PQCPROF_PLUGIN_MEMORY_MB) is killed. Control characters in
 * the plugin's version and error messages are shown escaped.
 *
 * Layout: every struct below is laid out as a C compiler lays it out on the
 * platform (no packing). Sizes are `size_t`; bytes are `uint8_t`.
 */
#ifndef PQCPROF_PLUGIN_H
#define PQCPROF_PLUGIN_H

#include <stddef.h> /* size_t */
#include <stdint.h> /* uint8_t, uint32_t */

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes: major version 1 (the low 16 bits of
 * `abi_version`), minor version 1 (the high 16 bits).
 *
 * ABI 1.0: `abi_version` is PQCPROF_PLUGIN_ABI_VERSION (1, minor 0); the
 * descriptor ends at `mldsa_verify` and pqcprof reads nothing after it, so
 * a plugin built against the ABI 1.0 header loads unchanged.
 *
 * ABI 1.1: `abi_version` is PQCPROF_PLUGIN_ABI_VERSION_1_1 (0x00010001); the
 * descriptor has the fields after `mldsa_verify` too (`own_randomness`),
 * which pqcprof reads only then. A pqcprof that speaks only 1.0 refuses such
 * a plugin (it reads the whole value) rather than compare byte for byte the
 * outputs of an implementation that draws its own randomness.
 *
 * pqcprof refuses any other major version, and a minor version above 1. */
#define PQCPROF_PLUGIN_ABI_VERSION 1
#define PQCPROF_PLUGIN_ABI_MINOR 1
#define PQCPROF_PLUGIN_ABI_VERSION_1_1 ((uint32_t)((PQCPROF_PLUGIN_ABI_MINOR << 16) | PQCPROF_PLUGIN_ABI_VERSION))

/* The name of the one symbol pqcprof looks up (the entry point). */
#define PQCPROF_PLUGIN_ENTRY "pqcprof_plugin_v1"

/* Where the buffers a plugin is handed live.
 *
 * Host: every pointer is ordinary host memory; the call returns when its
 * work is done; `stream` is NULL and `device` -1.
 *
 * Device: pqcprof opens `device`'s primary context (it is current on the
 * calling thread during every call), allocates every buffer there and
 * passes each as a CUdeviceptr cast to a pointer: the inputs, the outputs,
 * the messages and the context too (a 0-byte buffer may be NULL). The
 * plugin queues its work on `stream` and may return before it ends; pqcprof
 * records a CUDA event on `stream` before the call and another after it,
 * then synchronises the stream, so the timed window is from the first
 * event to the second. A plugin that loads modules may do so on its first
 * call: pqcprof warms every batch up untimed before it times it. */
#define PQCPROF_MEMORY_HOST 0   /* ordinary host memory; `stream` is NULL */
#define PQCPROF_MEMORY_DEVICE 1 /* CUDA device memory on `device`; work goes on `stream` */

/* Operation bits for `pqcprof_algorithm.operations`. */
#define PQCPROF_OP_KEYGEN (1u << 0) /* ML-KEM.KeyGen_internal / ML-DSA.KeyGen_internal */
#define PQCPROF_OP_ENCAPS (1u << 1) /* ML-KEM.Encaps_internal (m given) */
#define PQCPROF_OP_DECAPS (1u << 2) /* ML-KEM.Decaps (implicit rejection included) */
#define PQCPROF_OP_SIGN (1u << 3)   /* ML-DSA.Sign, pure, with a context and rnd given */
#define PQCPROF_OP_VERIFY (1u << 4) /* ML-DSA.Verify, pure, with a context */

/* ABI 1.1: bits for `pqcprof_plugin_descriptor.own_randomness`, the
 * operations whose randomness the implementation draws itself. Such an
 * operation still gets its randomness buffer (seeds, xi, m or rnd: fresh
 * random bytes, of the usual size) and may ignore it; pqcprof judges its
 * outputs by round trip (see the top of this file). No other bit is valid:
 * decapsulation and verification take no randomness. */
#define PQCPROF_OWN_MLKEM_KEYGEN (1u << 0) /* ML-KEM keygen ignores `seeds` (d, z drawn inside) */
#define PQCPROF_OWN_MLKEM_ENCAPS (1u << 1) /* ML-KEM encaps ignores `m` (m drawn inside) */
#define PQCPROF_OWN_MLDSA_KEYGEN (1u << 2) /* ML-DSA keygen ignores `xi` (xi drawn inside) */
#define PQCPROF_OWN_MLDSA_SIGN (1u << 3)   /* ML-DSA signing ignores `rnd` (hedged, rnd drawn inside) */

/* What every batched call gets besides its buffers. */
typedef struct pqcprof_call {
    /* The parameter set: 512, 768 or 1024 for ML-KEM; 44, 65 or 87 for
     * ML-DSA. Only sets the descriptor lists are asked for. */
    uint32_t parameter_set;
    /* Device plugins: the CUstream (as void*) to queue the work on; the call
     * may return before the work ends, pqcprof synchronises the stream.
     * Host plugins: NULL. */
    void *stream;
    /* Device plugins: the CUDA device ordinal the buffers live on.
     * Host plugins: -1. */
    int device;
    /* Where the plugin may write a NUL-terminated message when it fails. */
    char *error;
    /* The bytes `error` holds, terminator included (0: write nothing). */
    size_t error_capacity;
} pqcprof_call;

/* ML-KEM key generation: for each of `batch` items, (ek, dk) from the 64-byte
 * seed d || z (FIPS 203 Algorithm 16, ML-KEM.KeyGen_internal).
 *   seeds: batch * 64 bytes (d then z, per item), seeds_len its length
 *   ek:    batch * ek bytes (800, 1184 or 1568 per item), written
 *   dk:    batch * dk bytes (1632, 2400 or 3168 per item), written */
typedef int (*pqcprof_mlkem_keygen_fn)(const pqcprof_call *call, size_t batch,
                                       const uint8_t *seeds, size_t seeds_len,
                                       uint8_t *ek, size_t ek_len,
                                       uint8_t *dk, size_t dk_len);

/* ML-KEM encapsulation: for each item, (c, K) from ek and the 32-byte m
 * (FIPS 203 Algorithm 17, ML-KEM.Encaps_internal). An ek that fails the
 * input check of FIPS 203 section 7.2 (the modulus check) is refused: the
 * call returns non-zero, or (a kernel that cannot stop its batch) writes
 * that item's c and K all zero.
 *   ek: batch * ek bytes, read
 *   m:  batch * 32 bytes, read
 *   c:  batch * c bytes (768, 1088 or 1568 per item), written
 *   k:  batch * 32 bytes, written */
typedef int (*pqcprof_mlkem_encaps_fn)(const pqcprof_call *call, size_t batch,
                                       const uint8_t *ek, size_t ek_len,
                                       const uint8_t *m, size_t m_len,
                                       uint8_t *c, size_t c_len,
                                       uint8_t *k, size_t k_len);

/* ML-KEM decapsulation: for each item, K from dk and c (FIPS 203
 * Algorithm 18); a ciphertext that does not re-encrypt gives the
 * implicit-rejection key J(z || c), never an error. A dk that fails the
 * input check of FIPS 203 section 7.3 (its hash check) is refused: the call
 * returns non-zero, or writes that item's K all zero.
 *   dk: batch * dk bytes, read
 *   c:  batch * c bytes, read
 *   k:  batch * 32 bytes, written */
typedef int (*pqcprof_mlkem_decaps_fn)(const pqcprof_call *call, size_t batch,
                                       const uint8_t *dk, size_t dk_len,
                                       const uint8_t *c, size_t c_len,
                                       uint8_t *k, size_t k_len);

/* ML-DSA key generation: for each item, (pk, sk) from the 32-byte seed xi
 * (FIPS 204 Algorithm 6, ML-DSA.KeyGen_internal).
 *   xi: batch * 32 bytes, read
 *   pk: batch * pk bytes (1312, 1952 or 2592 per item), written
 *   sk: batch * sk bytes (2560, 4032 or 4896 per item), written */
typedef int (*pqcprof_mldsa_keygen_fn)(const pqcprof_call *call, size_t batch,
                                       const uint8_t *xi, size_t xi_len,
                                       uint8_t *pk, size_t pk_len,
                                       uint8_t *sk, size_t sk_len);

/* ML-DSA signing, pure form (FIPS 204 Algorithm 2 with its randomness given):
 * for each item, the signature of message i under sk i with the shared
 * context and the 32-byte rnd i (all zero: the deterministic variant).
 *   sk:      batch * sk bytes, read
 *   msg:     batch * msg_item bytes (item i at i * msg_item), read
 *   msg_item: the bytes of each message (may be 0)
 *   ctx:     the context, ctx_len bytes (0 to 255), the same for every item
 *   rnd:     batch * 32 bytes, read
 *   sig:     batch * sig bytes (2420, 3309 or 4627 per item), written */
typedef int (*pqcprof_mldsa_sign_fn)(const pqcprof_call *call, size_t batch,
                                     const uint8_t *sk, size_t sk_len,
                                     const uint8_t *msg, size_t msg_len, size_t msg_item,
                                     const uint8_t *ctx, size_t ctx_len,
                                     const uint8_t *rnd, size_t rnd_len,
                                     uint8_t *sig, size_t sig_len);

/* ML-DSA verification, pure form (FIPS 204 Algorithm 3): for each item,
 * whether sig i is a valid signature of message i under pk i and the context.
 *   pk:  batch * pk bytes, read
 *   msg, msg_item, ctx: as for signing
 *   sig: batch * sig bytes, read
 *   ok:  batch bytes, written: 1 accepted, 0 rejected (a rejection is not an
 *        error; return non-zero only when the call itself failed) */
typedef int (*pqcprof_mldsa_verify_fn)(const pqcprof_call *call, size_t batch,
                                       const uint8_t *pk, size_t pk_len,
                                       const uint8_t *msg, size_t msg_len, size_t msg_item,
                                       const uint8_t *ctx, size_t ctx_len,
                                       const uint8_t *sig, size_t sig_len,
                                       uint8_t *ok, size_t ok_len);

/* One parameter set the plugin implements, with the sizes it uses. pqcprof
 * checks every size against FIPS 203/204 and refuses the plugin on the first
 * that differs; sizes that do not apply (a ciphertext for ML-DSA) are 0. */
typedef struct pqcprof_algorithm {
    /* "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65" or
     * "ML-DSA-87", exactly as written here. */
    const char *name;
    /* PQCPROF_OP_* bits: the operations implemented for this set. */
    uint32_t operations;
    /* Bytes of one public (encapsulation) key. */
    size_t public_key_bytes;
    /* Bytes of one secret (decapsulation) key. */
    size_t secret_key_bytes;
    /* ML-KEM: bytes of one ciphertext; ML-DSA: 0. */
    size_t ciphertext_bytes;
    /* ML-KEM: bytes of one shared secret (32); ML-DSA: 0. */
    size_t shared_secret_bytes;
    /* ML-DSA: bytes of one signature; ML-KEM: 0. */
    size_t signature_bytes;
} pqcprof_algorithm;

/* What `pqcprof_plugin_v1` returns. It must stay valid, unchanged, while the
 * library is loaded (a `static const` object is the usual way). */
typedef struct pqcprof_plugin_descriptor {
    /* PQCPROF_PLUGIN_ABI_VERSION (ABI 1.0: pqcprof reads the descriptor up
     * to `mldsa_verify` only) or PQCPROF_PLUGIN_ABI_VERSION_1_1 (ABI 1.1:
     * the fields after `mldsa_verify` are read too). */
    uint32_t abi_version;
    /* Name shown in records and reports ("rustcrypto", "my-gpu-kem");
     * letters, digits, '-', '_' and '.', at most 64 bytes. */
    const char *name;
    /* The implementation's own version string ("1.2.0"). */
    const char *version;
    /* PQCPROF_MEMORY_HOST or PQCPROF_MEMORY_DEVICE. */
    uint32_t memory;
    /* Host plugins: 1 when the functions may run on several threads at once
     * (on disjoint parts of a batch), so pqcprof also times it at every
     * thread count asked for; 0: one thread only. */
    uint32_t thread_safe;
    /* The parameter sets implemented: `algorithm_count` entries. */
    const pqcprof_algorithm *algorithms;
    size_t algorithm_count;
    /* The batched functions; NULL for an operation the plugin does not
     * implement (then no listed set may have its bit). */
    pqcprof_mlkem_keygen_fn mlkem_keygen;
    pqcprof_mlkem_encaps_fn mlkem_encaps;
    pqcprof_mlkem_decaps_fn mlkem_decaps;
    pqcprof_mldsa_keygen_fn mldsa_keygen;
    pqcprof_mldsa_sign_fn mldsa_sign;
    pqcprof_mldsa_verify_fn mldsa_verify;
    /* ABI 1.1 (read only when `abi_version` is PQCPROF_PLUGIN_ABI_VERSION_1_1;
     * a 1.0 descriptor may end before it): PQCPROF_OWN_* bits, the
     * operations that draw their own randomness; 0: every operation takes
     * its randomness as input, as in ABI 1.0. A bit must name an operation
     * some listed set implements. An ABI 1.0 descriptor that lists every
     * field in order gives it 0 (compilers warn of a missing initializer
     * with -Wmissing-field-initializers). */
    uint32_t own_randomness;
} pqcprof_plugin_descriptor;

/* The entry point every plugin exports, by this name. */
const pqcprof_plugin_descriptor *pqcprof_plugin_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* PQCPROF_PLUGIN_H */
