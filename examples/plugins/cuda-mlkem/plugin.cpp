// plugin.cpp: a pqcprof device plugin (include/pqcprof_plugin.h) for
// ML-KEM-512, -768 and -1024: key generation, encapsulation and
// decapsulation, each a kernel of kernels.cu launched on the stream pqcprof
// hands over, one thread per batch item.
//
// pqcprof owns the CUDA context (its device's primary context, current on
// the calling thread), the device buffers and the stream; it records events
// around each call and synchronises the stream itself. So a call here only
// queues work: it loads the module into the current context on first use,
// launches one kernel and returns without waiting for it.
//
// The CUDA driver API is reached through dlopen("libcuda.so.1") and dlsym:
// the plugin builds without a CUDA toolkit's libcuda and uses the driver the
// process has already loaded. The few prototypes it needs are declared
// below at the ABI level (no cuda.h needed).
//
// The PTX of kernels.cu is embedded in the library (the build script makes
// it with nvcc and names it in PQCPROF_EXAMPLE_PTX) and JIT-compiled by the
// driver when the module is loaded.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "pqcprof_plugin.h"

#ifndef PQCPROF_EXAMPLE_PTX
#error "define PQCPROF_EXAMPLE_PTX as the path of the PTX of kernels.cu (the build script does)"
#endif
#ifndef PQCPROF_EXAMPLE_VERSION
#define PQCPROF_EXAMPLE_VERSION "0.1.0"
#endif

// The PTX text, NUL-terminated as cuModuleLoadData wants it.
asm(".section .rodata\n"
    ".globl pqcprof_example_ptx\n"
    ".hidden pqcprof_example_ptx\n"
    ".type pqcprof_example_ptx, @object\n"
    ".balign 16\n"
    "pqcprof_example_ptx:\n"
    ".incbin \"" PQCPROF_EXAMPLE_PTX "\"\n"
    ".byte 0\n"
    ".previous\n");
extern "C" const char pqcprof_example_ptx[];

namespace {

// ---- the driver API, at the ABI level ---------------------------------------

typedef int CUresult; // CUDA_SUCCESS is 0
typedef int CUdevice;
typedef struct CUctx_opaque *CUcontext;
typedef struct CUmod_opaque *CUmodule;
typedef struct CUfunc_opaque *CUfunction;
typedef struct CUstream_opaque *CUstream;

struct Driver {
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_get_device)(CUdevice *);
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
    CUresult (*get_error_name)(CUresult, const char **);
};

// ---- what each call shares ----------------------------------------------------

constexpr unsigned kThreadsPerBlock = 128; // kernels.cu: __launch_bounds__(128)
constexpr size_t kMaxBlocks = 0x7fffffff;  // gridDim.x limit

void fail(const pqcprof_call *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fail(const pqcprof_call *call, const char *fmt, ...) {
    if (!call || !call->error || call->error_capacity == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->error, call->error_capacity, fmt, ap);
    va_end(ap);
}

// The driver's functions, resolved once; null with `why` set when libcuda.so.1
// or one of them is missing.
const Driver *driver(const char **why) {
    static Driver d;
    static const char *missing = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            missing = "cannot open the CUDA driver (libcuda.so.1)";
            return;
        }
        struct {
            void **slot;
            const char *name;
        } syms[] = {
            {(void **)&d.ctx_get_current, "cuCtxGetCurrent"},
            {(void **)&d.ctx_get_device, "cuCtxGetDevice"},
            {(void **)&d.module_load_data, "cuModuleLoadData"},
            {(void **)&d.module_unload, "cuModuleUnload"},
            {(void **)&d.module_get_function, "cuModuleGetFunction"},
            {(void **)&d.launch_kernel, "cuLaunchKernel"},
            {(void **)&d.get_error_name, "cuGetErrorName"},
        };
        for (auto &s : syms) {
            *s.slot = dlsym(h, s.name);
            if (!*s.slot) {
                static char text[96];
                snprintf(text, sizeof text, "the CUDA driver (libcuda.so.1) has no %s", s.name);
                missing = text;
                return;
            }
        }
    });
    *why = missing;
    return missing ? nullptr : &d;
}

const char *error_name(const Driver *d, CUresult r) {
    const char *s = nullptr;
    if (d->get_error_name(r, &s) != 0 || !s) return "an unknown CUresult";
    return s;
}

// ---- the module, per context ----------------------------------------------------

enum Op { KEYGEN, ENCAPS, DECAPS };
const char *const kKernels[3][3] = {
    {"example_mlkem512_keygen", "example_mlkem512_encaps", "example_mlkem512_decaps"},
    {"example_mlkem768_keygen", "example_mlkem768_encaps", "example_mlkem768_decaps"},
    {"example_mlkem1024_keygen", "example_mlkem1024_encaps", "example_mlkem1024_decaps"},
};

struct Loaded {
    CUcontext ctx;
    CUmodule module;
    CUfunction functions[3][3];
};

// Modules loaded so far, one per context the plugin was called in. A module
// belongs to its context, so a call in another context loads its own.
std::mutex loaded_mu;
Loaded loaded[16];
size_t loaded_count;

// The kernel for (set index, op) in the calling thread's current context,
// or null with the reason written into call->error.
CUfunction kernel(const pqcprof_call *call, const Driver *d, int set, Op op) {
    CUcontext ctx = nullptr;
    if (CUresult r = d->ctx_get_current(&ctx)) {
        fail(call, "cuCtxGetCurrent failed: %s", error_name(d, r));
        return nullptr;
    }
    if (!ctx) {
        fail(call, "no CUDA context is current on the calling thread");
        return nullptr;
    }
    CUdevice dev = -1;
    if (CUresult r = d->ctx_get_device(&dev)) {
        fail(call, "cuCtxGetDevice failed: %s", error_name(d, r));
        return nullptr;
    }
    if (dev != call->device) {
        fail(call, "the current CUDA context is on device %d, but the call names device %d", dev, call->device);
        return nullptr;
    }
    std::lock_guard<std::mutex> g(loaded_mu);
    for (size_t i = 0; i < loaded_count; ++i)
        if (loaded[i].ctx == ctx) return loaded[i].functions[set][op];
    if (loaded_count == sizeof loaded / sizeof loaded[0]) {
        fail(call, "called in more than %zu CUDA contexts", sizeof loaded / sizeof loaded[0]);
        return nullptr;
    }
    Loaded l{};
    l.ctx = ctx;
    if (CUresult r = d->module_load_data(&l.module, pqcprof_example_ptx)) {
        fail(call, "cuModuleLoadData (the plugin's PTX) failed: %s", error_name(d, r));
        return nullptr;
    }
    for (int s = 0; s < 3; ++s)
        for (int o = 0; o < 3; ++o)
            if (CUresult r = d->module_get_function(&l.functions[s][o], l.module, kKernels[s][o])) {
                fail(call, "cuModuleGetFunction %s failed: %s", kKernels[s][o], error_name(d, r));
                d->module_unload(l.module);
                return nullptr;
            }
    loaded[loaded_count++] = l;
    return l.functions[set][op];
}

// ---- the sizes (FIPS 203) -----------------------------------------------------------

struct Sizes {
    size_t ek, dk, c;
};
const Sizes kSizes[3] = {{800, 1632, 768}, {1184, 2400, 1088}, {1568, 3168, 1568}};

// The index of call's parameter set in kSizes (0, 1, 2), or -1 with the
// reason written when the call or its device or set is not one to serve.
int begin(const pqcprof_call *call) {
    if (!call) return -1;
    if (call->device < 0) {
        fail(call, "device %d is not a CUDA device ordinal (a device plugin gets one)", call->device);
        return -1;
    }
    switch (call->parameter_set) {
    case 512: return 0;
    case 768: return 1;
    case 1024: return 2;
    default:
        fail(call, "parameter set %u is not ML-KEM-512, -768 or -1024", call->parameter_set);
        return -1;
    }
}

// One buffer of a call: its pointer, its length and the length it must have.
struct Buffer {
    const char *name;
    const void *ptr;
    size_t len;
    size_t item;
};

// Queues `op` of set index `set` for `batch` items on call->stream with
// `args` (the kernel's parameters, the batch count last), once every buffer
// has the length the batch needs. 0, or non-zero with call->error set.
int launch(const pqcprof_call *call, int set, Op op, size_t batch, const Buffer *bufs, size_t nbufs, void **args) {
    for (size_t i = 0; i < nbufs; ++i) {
        const Buffer &b = bufs[i];
        if (b.item != 0 && batch > (size_t)-1 / b.item) {
            fail(call, "batch %zu overflows the size of %s", batch, b.name);
            return 1;
        }
        if (b.len != batch * b.item) {
            fail(call, "%s holds %zu bytes; a batch of %zu needs %zu", b.name, b.len, batch, batch * b.item);
            return 1;
        }
        if (batch > 0 && !b.ptr) {
            fail(call, "%s is NULL", b.name);
            return 1;
        }
    }
    if (batch == 0) return 0;
    const size_t blocks = (batch + kThreadsPerBlock - 1) / kThreadsPerBlock;
    if (blocks > kMaxBlocks) {
        fail(call, "batch %zu needs more than %zu blocks", batch, kMaxBlocks);
        return 1;
    }
    const char *why = nullptr;
    const Driver *d = driver(&why);
    if (!d) {
        fail(call, "%s", why);
        return 1;
    }
    CUfunction f = kernel(call, d, set, op);
    if (!f) return 1;
    if (CUresult r = d->launch_kernel(f, (unsigned)blocks, 1, 1, kThreadsPerBlock, 1, 1, 0, (CUstream)call->stream,
                                      args, nullptr)) {
        fail(call, "cuLaunchKernel %s failed: %s", kKernels[set][op], error_name(d, r));
        return 1;
    }
    return 0;
}

// ---- the batched functions -----------------------------------------------------------

int mlkem_keygen(const pqcprof_call *call, size_t batch, const uint8_t *seeds, size_t seeds_len, uint8_t *ek,
                 size_t ek_len, uint8_t *dk, size_t dk_len) {
    const int set = begin(call);
    if (set < 0) return 1;
    const Sizes &s = kSizes[set];
    const Buffer bufs[] = {{"seeds", seeds, seeds_len, 64}, {"ek", ek, ek_len, s.ek}, {"dk", dk, dk_len, s.dk}};
    unsigned long long n = batch;
    void *args[] = {&seeds, &ek, &dk, &n};
    return launch(call, set, KEYGEN, batch, bufs, 3, args);
}

int mlkem_encaps(const pqcprof_call *call, size_t batch, const uint8_t *ek, size_t ek_len, const uint8_t *m,
                 size_t m_len, uint8_t *c, size_t c_len, uint8_t *k, size_t k_len) {
    const int set = begin(call);
    if (set < 0) return 1;
    const Sizes &s = kSizes[set];
    const Buffer bufs[] = {
        {"ek", ek, ek_len, s.ek}, {"m", m, m_len, 32}, {"c", c, c_len, s.c}, {"k", k, k_len, 32}};
    unsigned long long n = batch;
    void *args[] = {&ek, &m, &c, &k, &n};
    return launch(call, set, ENCAPS, batch, bufs, 4, args);
}

int mlkem_decaps(const pqcprof_call *call, size_t batch, const uint8_t *dk, size_t dk_len, const uint8_t *c,
                 size_t c_len, uint8_t *k, size_t k_len) {
    const int set = begin(call);
    if (set < 0) return 1;
    const Sizes &s = kSizes[set];
    const Buffer bufs[] = {{"dk", dk, dk_len, s.dk}, {"c", c, c_len, s.c}, {"k", k, k_len, 32}};
    unsigned long long n = batch;
    void *args[] = {&dk, &c, &k, &n};
    return launch(call, set, DECAPS, batch, bufs, 3, args);
}

constexpr uint32_t kOps = PQCPROF_OP_KEYGEN | PQCPROF_OP_ENCAPS | PQCPROF_OP_DECAPS;

const pqcprof_algorithm kAlgorithms[] = {
    {"ML-KEM-512", kOps, 800, 1632, 768, 32, 0},
    {"ML-KEM-768", kOps, 1184, 2400, 1088, 32, 0},
    {"ML-KEM-1024", kOps, 1568, 3168, 1568, 32, 0},
};

const pqcprof_plugin_descriptor kDescriptor = {
    PQCPROF_PLUGIN_ABI_VERSION,
    "cuda-mlkem-example",
    PQCPROF_EXAMPLE_VERSION,
    PQCPROF_MEMORY_DEVICE,
    0, // thread_safe: one thread (a device plugin's calls queue on one stream)
    kAlgorithms,
    sizeof kAlgorithms / sizeof kAlgorithms[0],
    mlkem_keygen,
    mlkem_encaps,
    mlkem_decaps,
    nullptr,
    nullptr,
    nullptr,
    0, // own_randomness: read only from an ABI 1.1 descriptor; every operation here takes its randomness as input
};

} // namespace

extern "C" __attribute__((visibility("default"))) const pqcprof_plugin_descriptor *pqcprof_plugin_v1(void) {
    return &kDescriptor;
}
