/* pqcprof's C interface over NVIDIA cuPQC (cuda/cupqc/shim.cu).
 *
 * Plain C so bindgen can read it. One "batch" is one (algorithm, operation)
 * for n operations on one GPU: its device buffers, workspace (made with
 * cuPQC's make_workspace), CUDA stream and two timing events. Inputs are
 * uploaded by the caller (entropy included: the host generates it), a launch
 * runs one kernel over the whole batch, outputs are downloaded afterwards.
 *
 * Every function returning int returns a status: 0 success, a positive
 * cudaError_t from the CUDA runtime, or a negative PQCPROF_CUPQC_E_* code.
 * pqcprof_cupqc_status_string() describes any of them.
 */
#ifndef PQCPROF_CUPQC_SHIM_H
#define PQCPROF_CUPQC_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Algorithms (parameter sets). */
#define PQCPROF_CUPQC_ML_KEM_512 0
#define PQCPROF_CUPQC_ML_KEM_768 1
#define PQCPROF_CUPQC_ML_KEM_1024 2
#define PQCPROF_CUPQC_ML_DSA_44 3
#define PQCPROF_CUPQC_ML_DSA_65 4
#define PQCPROF_CUPQC_ML_DSA_87 5

/* Operations. */
#define PQCPROF_CUPQC_KEYGEN 0
#define PQCPROF_CUPQC_ENCAPS 1
#define PQCPROF_CUPQC_DECAPS 2
#define PQCPROF_CUPQC_SIGN 3
#define PQCPROF_CUPQC_VERIFY 4

/* Buffer roles of a batch. Which ones an operation has:
 *   ML-KEM keygen  PK SK ENTROPY        ML-DSA keygen  PK SK ENTROPY
 *   ML-KEM encaps  CT SS PK ENTROPY     ML-DSA sign    SIG MSG SK ENTROPY
 *   ML-KEM decaps  SS CT SK             ML-DSA verify  OK MSG SIG PK
 * OK holds one int32 per operation: 1 accepted, 0 rejected. */
#define PQCPROF_CUPQC_PK 0
#define PQCPROF_CUPQC_SK 1
#define PQCPROF_CUPQC_CT 2
#define PQCPROF_CUPQC_SS 3
#define PQCPROF_CUPQC_SIG 4
#define PQCPROF_CUPQC_MSG 5
#define PQCPROF_CUPQC_ENTROPY 6
#define PQCPROF_CUPQC_OK 7

/* Negative statuses. */
#define PQCPROF_CUPQC_E_UNSUPPORTED (-1) /* no such (algorithm, operation) */
#define PQCPROF_CUPQC_E_ARGUMENT (-2)    /* null pointer, zero batch, wrong length */
#define PQCPROF_CUPQC_E_ROLE (-3)        /* the operation has no such buffer */
#define PQCPROF_CUPQC_E_WORKSPACE (-4)   /* make_workspace threw or returned nothing */
#define PQCPROF_CUPQC_E_EXCEPTION (-5)   /* the SDK threw a C++ exception */
#define PQCPROF_CUPQC_E_HOST_MEMORY (-6) /* a host allocation failed (std::bad_alloc) */

/* No C++ exception crosses these functions: each one thrown inside becomes
 * one of the statuses above, and its message is kept (per thread) for
 * pqcprof_cupqc_last_error(). */

/* The constants of one composed cuPQC operation type, read from the
 * descriptor itself (0 where the type has no such constant). */
typedef struct pqcprof_cupqc_op_info {
    uint32_t public_key_size;
    uint32_t secret_key_size;
    uint32_t ciphertext_size;
    uint32_t shared_secret_size;
    uint32_t signature_size;
    uint32_t entropy_size;
    uint32_t workspace_size;
    uint32_t shared_memory_size;
    /* Threads per block: Op::BlockDim, x * y * z. */
    uint32_t block_threads;
} pqcprof_cupqc_op_info;

/* One prepared batch (opaque). */
typedef struct pqcprof_cupqc_batch pqcprof_cupqc_batch;

/* 1 when built against pqcprof's stand-in SDK (tests only), else 0. */
int pqcprof_cupqc_is_standin(void);

/* The CUDA runtime version the shim was linked with (e.g. 13000). */
int pqcprof_cupqc_runtime_version(void);

/* Fills *out with the constants of (alg, op). */
int pqcprof_cupqc_get_op_info(int alg, int op, pqcprof_cupqc_op_info *out);

/* Allocates a batch of n operations on GPU `device`: every buffer of the
 * operation (zeroed), the workspace, a stream and two timing events.
 * msg_len is the message length of ML-DSA sign/verify (0 otherwise). */
int pqcprof_cupqc_prepare(int device, int alg, int op, uint32_t n, uint32_t msg_len,
                          pqcprof_cupqc_batch **out);

/* Byte length of the whole buffer `role` and the distance between two
 * operations' slots in it (slots are 8-byte aligned). */
int pqcprof_cupqc_buffer(const pqcprof_cupqc_batch *b, int role, size_t *len, size_t *stride);

/* Copies len bytes (the whole buffer) from the host into `role`. */
int pqcprof_cupqc_upload(pqcprof_cupqc_batch *b, int role, const uint8_t *src, size_t len);

/* Copies the whole buffer `role` (len bytes) to the host. */
int pqcprof_cupqc_download(const pqcprof_cupqc_batch *b, int role, uint8_t *dst, size_t len);

/* One kernel launch over the whole batch (grid = n, block = Op::BlockDim)
 * on the batch's stream, then waits for it. When ms is not null, the launch
 * sits between two CUDA events and *ms receives the time between them: the
 * kernel only. The status includes the launch error (cudaGetLastError) and
 * any fault the kernel raised. */
int pqcprof_cupqc_launch(pqcprof_cupqc_batch *b, float *ms);

/* Serving: gives the batch pinned host copies of every buffer, filled with
 * what the device buffers hold now (the inputs as prepared). Once only;
 * pqcprof_cupqc_serve needs it. */
int pqcprof_cupqc_stage(pqcprof_cupqc_batch *b);

/* One batch served as a caller would: the operation's inputs copied from
 * the pinned copies to the device, one launch, its outputs copied back to
 * the pinned copies, all queued on the batch's stream, then waits for the
 * stream. No event is recorded. Batches on other streams may run at the
 * same time, the copies of one beside the kernel of another. */
int pqcprof_cupqc_serve(pqcprof_cupqc_batch *b);

/* Frees everything the batch holds (destroy_workspace included). */
void pqcprof_cupqc_release(pqcprof_cupqc_batch *b);

/* A static description of a status. */
const char *pqcprof_cupqc_status_string(int status);

/* The message of the last exception caught on this thread ("" if none),
 * e.g. "make_workspace: out of memory". */
const char *pqcprof_cupqc_last_error(void);

/* The image of the shim's kernels the CUDA runtime picks on GPU `device`:
 * *binary_version is the architecture of the machine code that runs (e.g.
 * 90), *ptx_version the PTX it came from when the driver compiled PTX
 * (else the PTX version the image was built from). The status is
 * cudaErrorNoKernelImageForDevice when the build has no code for it. */
int pqcprof_cupqc_image(int device, int *binary_version, int *ptx_version);

#ifdef __cplusplus
}
#endif

#endif
