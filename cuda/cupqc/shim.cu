// pqcprof's launch shim over NVIDIA cuPQC's device API. Compiled by build.rs
// with nvcc (-std=c++17, LTO for each architecture in PQCPROF_CUDA_ARCHS)
// only when the SDK and nvcc are found. See shim.h for the C interface.
//
// Written against the signatures of NVIDIA's headers (descriptor
// composition, the Op constants, the execute forms with const inputs,
// Op::BlockDim as a dim3, make_workspace/destroy_workspace). Sizes are
// always read from the composed types, never retyped here. No C++
// exception leaves an extern "C" function (guard.hpp).

#include "shim.h"
#include "guard.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <new>
#include <type_traits>

#if defined(PQCPROF_CUPQC_LEGACY_HEADER)
#include <cupqc.hpp> // SDK 0.2
#else
#include <pk.hpp> // SDK 0.4 and later
#endif

#ifndef PQCPROF_CUPQC_NAMESPACE
#define PQCPROF_CUPQC_NAMESPACE cupqc
#endif
#ifndef PQCPROF_CUPQC_BLOCK_DIM
#define PQCPROF_CUPQC_BLOCK_DIM 128
#endif

namespace {

namespace sdk = PQCPROF_CUPQC_NAMESPACE;

// One composed operation type, as the documentation composes them.
#define PQ_OP(ALG, FN)                                                                             \
    decltype(sdk::ALG() + sdk::Function<sdk::function::FN>() + sdk::Block() +                      \
             sdk::BlockDim<PQCPROF_CUPQC_BLOCK_DIM>())

// A constant of Op, or 0 where Op has none (a KEM has no signature_size).
#define PQ_CONSTANT_OR_ZERO(NAME)                                                                  \
    template <class T, class = void> struct get_##NAME {                                           \
        static constexpr uint64_t value = 0;                                                       \
    };                                                                                             \
    template <class T> struct get_##NAME<T, std::void_t<decltype(T::NAME)>> {                      \
        static constexpr uint64_t value = T::NAME;                                                 \
    };
PQ_CONSTANT_OR_ZERO(public_key_size)
PQ_CONSTANT_OR_ZERO(secret_key_size)
PQ_CONSTANT_OR_ZERO(ciphertext_size)
PQ_CONSTANT_OR_ZERO(shared_secret_size)
PQ_CONSTANT_OR_ZERO(signature_size)
PQ_CONSTANT_OR_ZERO(entropy_size)
PQ_CONSTANT_OR_ZERO(workspace_size)
PQ_CONSTANT_OR_ZERO(shared_memory_size)

constexpr size_t align8(size_t x) { return (x + 7) / 8 * 8; }

enum Kind { KEM_KEYGEN, KEM_ENCAPS, KEM_DECAPS, DSA_KEYGEN, DSA_SIGN, DSA_VERIFY };
constexpr int kRoles = 8;

template <class Op> struct Layout {
    static constexpr size_t pk = get_public_key_size<Op>::value;
    static constexpr size_t sk = get_secret_key_size<Op>::value;
    static constexpr size_t ct = get_ciphertext_size<Op>::value;
    static constexpr size_t ss = get_shared_secret_size<Op>::value;
    // Signatures are strided at ((signature_size + 7) / 8) * 8 bytes.
    static constexpr size_t sig = align8(get_signature_size<Op>::value);
    static constexpr size_t entropy = align8(get_entropy_size<Op>::value);
    static constexpr size_t workspace = get_workspace_size<Op>::value;
    static constexpr size_t smem = get_shared_memory_size<Op>::value;
    static_assert(pk % 8 == 0 && sk % 8 == 0 && ct % 8 == 0,
                  "key and ciphertext slots must stay 8-byte aligned");
};

} // namespace

struct pqcprof_cupqc_batch {
    int device = 0;
    int kind = 0;
    uint32_t n = 0;
    uint32_t msg_len = 0;
    size_t len[kRoles] = {};
    size_t stride[kRoles] = {};
    uint8_t *buf[kRoles] = {};
    uint8_t *workspace = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    int (*launch)(pqcprof_cupqc_batch &) = nullptr;
    // Pinned host copies of the buffers, for serving (pqcprof_cupqc_stage).
    uint8_t *host[kRoles] = {};
};

namespace {

// Shared memory as documented: __shared__ uint8_t smem[Op::shared_memory_size].
#define PQ_SMEM(Op)                                                                                \
    __shared__ alignas(16) uint8_t smem[Layout<Op>::smem > 0 ? Layout<Op>::smem : 1]

// One thread block per operation, indexed by blockIdx.x. Key generation has
// the same form for ML-KEM and ML-DSA.
template <class Op>
__global__ void keygen(uint8_t *pk, uint8_t *sk, uint8_t *entropy, uint8_t *ws) {
    PQ_SMEM(Op);
    const size_t i = blockIdx.x;
    using L = Layout<Op>;
    Op().execute(pk + i * L::pk, sk + i * L::sk, entropy + i * L::entropy, ws + i * L::workspace,
                 smem);
}

template <class Op>
__global__ void kem_encaps(uint8_t *ct, uint8_t *ss, const uint8_t *pk, uint8_t *entropy,
                           uint8_t *ws) {
    PQ_SMEM(Op);
    const size_t i = blockIdx.x;
    using L = Layout<Op>;
    Op().execute(ct + i * L::ct, ss + i * L::ss, pk + i * L::pk, entropy + i * L::entropy,
                 ws + i * L::workspace, smem);
}

template <class Op>
__global__ void kem_decaps(uint8_t *ss, const uint8_t *ct, const uint8_t *sk, uint8_t *ws) {
    PQ_SMEM(Op);
    const size_t i = blockIdx.x;
    using L = Layout<Op>;
    Op().execute(ss + i * L::ss, ct + i * L::ct, sk + i * L::sk, ws + i * L::workspace, smem);
}

template <class Op>
__global__ void dsa_sign(uint8_t *sig, const uint8_t *msg, size_t msg_len, size_t msg_stride,
                         const uint8_t *sk, uint8_t *entropy, uint8_t *ws) {
    PQ_SMEM(Op);
    const size_t i = blockIdx.x;
    using L = Layout<Op>;
    Op().execute(sig + i * L::sig, msg + i * msg_stride, msg_len, sk + i * L::sk,
                 entropy + i * L::entropy, ws + i * L::workspace, smem);
}

template <class Op>
__global__ void dsa_verify(int32_t *ok, const uint8_t *msg, size_t msg_len, size_t msg_stride,
                           const uint8_t *sig, const uint8_t *pk, uint8_t *ws) {
    PQ_SMEM(Op);
    const size_t i = blockIdx.x;
    using L = Layout<Op>;
    const bool valid = Op().execute(msg + i * msg_stride, msg_len, sig + i * L::sig,
                                    pk + i * L::pk, ws + i * L::workspace, smem);
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) ok[i] = valid ? 1 : 0;
}

// Op::BlockDim is a dim3 in NVIDIA's headers (commondx BlockDim<X>::value).
template <class Op> dim3 block_of() {
    const dim3 d = Op::BlockDim;
    return d;
}

template <class Op, int K> int launch(pqcprof_cupqc_batch &b) {
    uint8_t **p = b.buf;
    const dim3 grid(b.n), block = block_of<Op>();
    const size_t ms = b.stride[PQCPROF_CUPQC_MSG];
    if constexpr (K == KEM_KEYGEN || K == DSA_KEYGEN) {
        keygen<Op><<<grid, block, 0, b.stream>>>(p[PQCPROF_CUPQC_PK], p[PQCPROF_CUPQC_SK],
                                                 p[PQCPROF_CUPQC_ENTROPY], b.workspace);
    } else if constexpr (K == KEM_ENCAPS) {
        kem_encaps<Op><<<grid, block, 0, b.stream>>>(p[PQCPROF_CUPQC_CT], p[PQCPROF_CUPQC_SS],
                                                     p[PQCPROF_CUPQC_PK], p[PQCPROF_CUPQC_ENTROPY],
                                                     b.workspace);
    } else if constexpr (K == KEM_DECAPS) {
        kem_decaps<Op><<<grid, block, 0, b.stream>>>(p[PQCPROF_CUPQC_SS], p[PQCPROF_CUPQC_CT],
                                                     p[PQCPROF_CUPQC_SK], b.workspace);
    } else if constexpr (K == DSA_SIGN) {
        dsa_sign<Op><<<grid, block, 0, b.stream>>>(p[PQCPROF_CUPQC_SIG], p[PQCPROF_CUPQC_MSG],
                                                   b.msg_len, ms, p[PQCPROF_CUPQC_SK],
                                                   p[PQCPROF_CUPQC_ENTROPY], b.workspace);
    } else {
        dsa_verify<Op><<<grid, block, 0, b.stream>>>(
            reinterpret_cast<int32_t *>(p[PQCPROF_CUPQC_OK]), p[PQCPROF_CUPQC_MSG], b.msg_len, ms,
            p[PQCPROF_CUPQC_SIG], p[PQCPROF_CUPQC_PK], b.workspace);
    }
    return static_cast<int>(cudaGetLastError());
}

// Sizes every buffer of kind K for n operations.
template <class Op, int K> void layout(pqcprof_cupqc_batch &b) {
    using L = Layout<Op>;
    auto set = [&](int role, size_t stride) {
        b.stride[role] = stride;
        b.len[role] = stride * b.n;
    };
    switch (K) {
    case KEM_KEYGEN:
    case DSA_KEYGEN:
        set(PQCPROF_CUPQC_PK, L::pk);
        set(PQCPROF_CUPQC_SK, L::sk);
        set(PQCPROF_CUPQC_ENTROPY, L::entropy);
        break;
    case KEM_ENCAPS:
        set(PQCPROF_CUPQC_CT, L::ct);
        set(PQCPROF_CUPQC_SS, L::ss);
        set(PQCPROF_CUPQC_PK, L::pk);
        set(PQCPROF_CUPQC_ENTROPY, L::entropy);
        break;
    case KEM_DECAPS:
        set(PQCPROF_CUPQC_SS, L::ss);
        set(PQCPROF_CUPQC_CT, L::ct);
        set(PQCPROF_CUPQC_SK, L::sk);
        break;
    case DSA_SIGN:
        set(PQCPROF_CUPQC_SIG, L::sig);
        set(PQCPROF_CUPQC_MSG, align8(b.msg_len > 0 ? b.msg_len : 1));
        set(PQCPROF_CUPQC_SK, L::sk);
        set(PQCPROF_CUPQC_ENTROPY, L::entropy);
        break;
    default:
        set(PQCPROF_CUPQC_OK, sizeof(int32_t));
        set(PQCPROF_CUPQC_MSG, align8(b.msg_len > 0 ? b.msg_len : 1));
        set(PQCPROF_CUPQC_SIG, L::sig);
        set(PQCPROF_CUPQC_PK, L::pk);
        break;
    }
}

template <class Op> void info(pqcprof_cupqc_op_info *o) {
    o->public_key_size = uint32_t(get_public_key_size<Op>::value);
    o->secret_key_size = uint32_t(get_secret_key_size<Op>::value);
    o->ciphertext_size = uint32_t(get_ciphertext_size<Op>::value);
    o->shared_secret_size = uint32_t(get_shared_secret_size<Op>::value);
    o->signature_size = uint32_t(get_signature_size<Op>::value);
    o->entropy_size = uint32_t(get_entropy_size<Op>::value);
    o->workspace_size = uint32_t(get_workspace_size<Op>::value);
    o->shared_memory_size = uint32_t(get_shared_memory_size<Op>::value);
    const dim3 d = block_of<Op>();
    o->block_threads = d.x * d.y * d.z;
}

// cuPQC's make_workspace throws std::runtime_error when cudaMallocAsync
// fails; prepare() runs this inside guarded(..., PQCPROF_CUPQC_E_WORKSPACE).
template <class Op> uint8_t *workspace(uint32_t n, cudaStream_t s) {
    if (Layout<Op>::workspace == 0) return nullptr;
    return reinterpret_cast<uint8_t *>(sdk::make_workspace<Op>(n, s));
}

// The kernel whose image stands for all of them (all are built alike).
void *probe_kernel() {
    return reinterpret_cast<void *>(&keygen<PQ_OP(ML_KEM_512, Keygen)>);
}

// Everything the extern "C" functions need for one (algorithm, operation).
struct Entry {
    void (*info)(pqcprof_cupqc_op_info *);
    void (*layout)(pqcprof_cupqc_batch &);
    int (*launch)(pqcprof_cupqc_batch &);
    uint8_t *(*workspace)(uint32_t, cudaStream_t);
    bool needs_workspace;
    int kind;
};

template <class Op, int K> Entry entry() {
    return {&info<Op>, &layout<Op, K>, &launch<Op, K>, &workspace<Op>, Layout<Op>::workspace > 0,
            K};
}

bool lookup(int alg, int op, Entry *e) {
#define PQ_KEM(ID, ALG)                                                                            \
    case ID:                                                                                       \
        switch (op) {                                                                              \
        case PQCPROF_CUPQC_KEYGEN: *e = entry<PQ_OP(ALG, Keygen), KEM_KEYGEN>(); return true;      \
        case PQCPROF_CUPQC_ENCAPS: *e = entry<PQ_OP(ALG, Encaps), KEM_ENCAPS>(); return true;      \
        case PQCPROF_CUPQC_DECAPS: *e = entry<PQ_OP(ALG, Decaps), KEM_DECAPS>(); return true;      \
        default: return false;                                                                     \
        }
#define PQ_DSA(ID, ALG)                                                                            \
    case ID:                                                                                       \
        switch (op) {                                                                              \
        case PQCPROF_CUPQC_KEYGEN: *e = entry<PQ_OP(ALG, Keygen), DSA_KEYGEN>(); return true;      \
        case PQCPROF_CUPQC_SIGN: *e = entry<PQ_OP(ALG, Sign), DSA_SIGN>(); return true;            \
        case PQCPROF_CUPQC_VERIFY: *e = entry<PQ_OP(ALG, Verify), DSA_VERIFY>(); return true;      \
        default: return false;                                                                     \
        }
    switch (alg) {
        PQ_KEM(PQCPROF_CUPQC_ML_KEM_512, ML_KEM_512)
        PQ_KEM(PQCPROF_CUPQC_ML_KEM_768, ML_KEM_768)
        PQ_KEM(PQCPROF_CUPQC_ML_KEM_1024, ML_KEM_1024)
        PQ_DSA(PQCPROF_CUPQC_ML_DSA_44, ML_DSA_44)
        PQ_DSA(PQCPROF_CUPQC_ML_DSA_65, ML_DSA_65)
        PQ_DSA(PQCPROF_CUPQC_ML_DSA_87, ML_DSA_87)
    default:
        return false;
    }
#undef PQ_KEM
#undef PQ_DSA
}

// Whether `role` is written by the operation of `kind` (the roles listed
// first in shim.h's table) rather than read by it.
bool is_output(int kind, int role) {
    switch (kind) {
    case KEM_KEYGEN:
    case DSA_KEYGEN:
        return role == PQCPROF_CUPQC_PK || role == PQCPROF_CUPQC_SK;
    case KEM_ENCAPS:
        return role == PQCPROF_CUPQC_CT || role == PQCPROF_CUPQC_SS;
    case KEM_DECAPS:
        return role == PQCPROF_CUPQC_SS;
    case DSA_SIGN:
        return role == PQCPROF_CUPQC_SIG;
    default:
        return role == PQCPROF_CUPQC_OK;
    }
}

bool role_ok(const pqcprof_cupqc_batch *b, int role) {
    return b && role >= 0 && role < kRoles && b->buf[role] != nullptr;
}

} // namespace

extern "C" {

using pqcprof_shim::guarded;

int pqcprof_cupqc_is_standin(void) {
#ifdef PQCPROF_STANDIN
    return 1;
#else
    return 0;
#endif
}

int pqcprof_cupqc_runtime_version(void) { return CUDART_VERSION; }

int pqcprof_cupqc_get_op_info(int alg, int op, pqcprof_cupqc_op_info *out) {
    return guarded("get_op_info", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        Entry e;
        if (!out) return PQCPROF_CUPQC_E_ARGUMENT;
        if (!lookup(alg, op, &e)) return PQCPROF_CUPQC_E_UNSUPPORTED;
        e.info(out);
        return 0;
    });
}

void pqcprof_cupqc_release(pqcprof_cupqc_batch *b) {
    (void)guarded("release", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!b) return 0;
        cudaSetDevice(b->device);
        if (b->stream) cudaStreamSynchronize(b->stream);
        if (b->workspace) {
            sdk::destroy_workspace(b->workspace, b->stream);
            if (b->stream) cudaStreamSynchronize(b->stream);
        }
        for (uint8_t *p : b->buf)
            if (p) cudaFree(p);
        for (uint8_t *p : b->host)
            if (p) cudaFreeHost(p);
        if (b->start) cudaEventDestroy(b->start);
        if (b->stop) cudaEventDestroy(b->stop);
        if (b->stream) cudaStreamDestroy(b->stream);
        delete b;
        return 0;
    });
}

int pqcprof_cupqc_prepare(int device, int alg, int op, uint32_t n, uint32_t msg_len,
                          pqcprof_cupqc_batch **out) {
    return guarded("prepare", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!out || n == 0 || n > 0x7fffffffu) return PQCPROF_CUPQC_E_ARGUMENT;
        *out = nullptr;
        Entry e;
        if (!lookup(alg, op, &e)) return PQCPROF_CUPQC_E_UNSUPPORTED;
        cudaError_t err = cudaSetDevice(device);
        if (err != cudaSuccess) return static_cast<int>(err);
        auto *b = new (std::nothrow) pqcprof_cupqc_batch();
        if (!b) return PQCPROF_CUPQC_E_HOST_MEMORY;
        b->device = device;
        b->kind = e.kind;
        b->n = n;
        b->msg_len = msg_len;
        b->launch = e.launch;
        e.layout(*b);
        auto fail = [&](int status) {
            pqcprof_cupqc_release(b);
            return status;
        };
        if ((err = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) != cudaSuccess ||
            (err = cudaEventCreate(&b->start)) != cudaSuccess ||
            (err = cudaEventCreate(&b->stop)) != cudaSuccess)
            return fail(static_cast<int>(err));
        for (int r = 0; r < kRoles; ++r) {
            if (b->len[r] == 0) continue;
            if ((err = cudaMalloc(reinterpret_cast<void **>(&b->buf[r]), b->len[r])) !=
                    cudaSuccess ||
                (err = cudaMemsetAsync(b->buf[r], 0, b->len[r], b->stream)) != cudaSuccess)
                return fail(static_cast<int>(err));
        }
        if (e.needs_workspace) {
            const int made = guarded("make_workspace", PQCPROF_CUPQC_E_WORKSPACE, [&] {
                b->workspace = e.workspace(n, b->stream);
                return 0;
            });
            if (made != 0) return fail(made);
            if ((err = cudaStreamSynchronize(b->stream)) != cudaSuccess ||
                (err = cudaGetLastError()) != cudaSuccess)
                return fail(static_cast<int>(err));
            if (!b->workspace) {
                pqcprof_shim::set_last_error("make_workspace", "returned no memory");
                return fail(PQCPROF_CUPQC_E_WORKSPACE);
            }
        }
        if ((err = cudaStreamSynchronize(b->stream)) != cudaSuccess)
            return fail(static_cast<int>(err));
        *out = b;
        return 0;
    });
}

int pqcprof_cupqc_buffer(const pqcprof_cupqc_batch *b, int role, size_t *len, size_t *stride) {
    if (!len || !stride) return PQCPROF_CUPQC_E_ARGUMENT;
    if (!role_ok(b, role)) return PQCPROF_CUPQC_E_ROLE;
    *len = b->len[role];
    *stride = b->stride[role];
    return 0;
}

int pqcprof_cupqc_upload(pqcprof_cupqc_batch *b, int role, const uint8_t *src, size_t len) {
    return guarded("upload", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!role_ok(b, role)) return PQCPROF_CUPQC_E_ROLE;
        if (!src || len != b->len[role]) return PQCPROF_CUPQC_E_ARGUMENT;
        cudaError_t err = cudaSetDevice(b->device);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(b->buf[role], src, len, cudaMemcpyHostToDevice, b->stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(b->stream);
        return static_cast<int>(err);
    });
}

int pqcprof_cupqc_download(const pqcprof_cupqc_batch *b, int role, uint8_t *dst, size_t len) {
    return guarded("download", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!role_ok(b, role)) return PQCPROF_CUPQC_E_ROLE;
        if (!dst || len != b->len[role]) return PQCPROF_CUPQC_E_ARGUMENT;
        cudaError_t err = cudaSetDevice(b->device);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(dst, b->buf[role], len, cudaMemcpyDeviceToHost, b->stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(b->stream);
        return static_cast<int>(err);
    });
}

int pqcprof_cupqc_launch(pqcprof_cupqc_batch *b, float *ms) {
    return guarded("launch", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!b || !b->launch) return PQCPROF_CUPQC_E_ARGUMENT;
        cudaError_t err = cudaSetDevice(b->device);
        if (err != cudaSuccess) return static_cast<int>(err);
        // Clear any earlier non-sticky error so the status below is this launch's.
        (void)cudaGetLastError();
        if (ms && (err = cudaEventRecord(b->start, b->stream)) != cudaSuccess)
            return static_cast<int>(err);
        const int launched = b->launch(*b);
        if (launched != 0) return launched;
        if (ms) {
            if ((err = cudaEventRecord(b->stop, b->stream)) != cudaSuccess ||
                (err = cudaEventSynchronize(b->stop)) != cudaSuccess ||
                (err = cudaEventElapsedTime(ms, b->start, b->stop)) != cudaSuccess)
                return static_cast<int>(err);
        }
        return static_cast<int>(cudaStreamSynchronize(b->stream));
    });
}

int pqcprof_cupqc_stage(pqcprof_cupqc_batch *b) {
    return guarded("stage", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!b) return PQCPROF_CUPQC_E_ARGUMENT;
        cudaError_t err = cudaSetDevice(b->device);
        for (int r = 0; r < kRoles && err == cudaSuccess; ++r) {
            if (b->len[r] == 0 || b->host[r]) continue;
            err = cudaMallocHost(reinterpret_cast<void **>(&b->host[r]), b->len[r]);
            if (err == cudaSuccess)
                err = cudaMemcpyAsync(b->host[r], b->buf[r], b->len[r], cudaMemcpyDeviceToHost,
                                      b->stream);
        }
        if (err == cudaSuccess) err = cudaStreamSynchronize(b->stream);
        return static_cast<int>(err);
    });
}

int pqcprof_cupqc_serve(pqcprof_cupqc_batch *b) {
    return guarded("serve", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!b || !b->launch) return PQCPROF_CUPQC_E_ARGUMENT;
        for (int r = 0; r < kRoles; ++r)
            if (b->len[r] != 0 && !b->host[r]) return PQCPROF_CUPQC_E_ARGUMENT;
        cudaError_t err = cudaSetDevice(b->device);
        (void)cudaGetLastError();
        for (int r = 0; r < kRoles && err == cudaSuccess; ++r)
            if (b->len[r] != 0 && !is_output(b->kind, r))
                err = cudaMemcpyAsync(b->buf[r], b->host[r], b->len[r], cudaMemcpyHostToDevice,
                                      b->stream);
        if (err != cudaSuccess) return static_cast<int>(err);
        const int launched = b->launch(*b);
        if (launched != 0) return launched;
        for (int r = 0; r < kRoles && err == cudaSuccess; ++r)
            if (b->len[r] != 0 && is_output(b->kind, r))
                err = cudaMemcpyAsync(b->host[r], b->buf[r], b->len[r], cudaMemcpyDeviceToHost,
                                      b->stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(b->stream);
        return static_cast<int>(err);
    });
}

int pqcprof_cupqc_image(int device, int *binary_version, int *ptx_version) {
    return guarded("image", PQCPROF_CUPQC_E_EXCEPTION, [&] {
        if (!binary_version || !ptx_version) return PQCPROF_CUPQC_E_ARGUMENT;
        cudaError_t err = cudaSetDevice(device);
        cudaFuncAttributes a{};
        if (err == cudaSuccess) err = cudaFuncGetAttributes(&a, probe_kernel());
        if (err != cudaSuccess) return static_cast<int>(err);
        *binary_version = a.binaryVersion;
        *ptx_version = a.ptxVersion;
        return 0;
    });
}

const char *pqcprof_cupqc_last_error(void) { return pqcprof_shim::last_error; }

const char *pqcprof_cupqc_status_string(int status) {
    switch (status) {
    case 0: return "success";
    case PQCPROF_CUPQC_E_UNSUPPORTED: return "no such (algorithm, operation) in the shim";
    case PQCPROF_CUPQC_E_ARGUMENT: return "invalid argument (null pointer, zero batch or wrong length)";
    case PQCPROF_CUPQC_E_ROLE: return "this operation has no such buffer";
    case PQCPROF_CUPQC_E_WORKSPACE: return "cuPQC's make_workspace failed";
    case PQCPROF_CUPQC_E_EXCEPTION: return "the cuPQC SDK threw a C++ exception";
    case PQCPROF_CUPQC_E_HOST_MEMORY: return "a host memory allocation failed";
    default:
        return status > 0 ? cudaGetErrorString(static_cast<cudaError_t>(status))
                          : "unknown shim status";
    }
}

} // extern "C"
