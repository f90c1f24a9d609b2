// harness.cpp: runs one of pqcprof's native kernels under GPGPU-Sim and checks
// every item of the batch against the host build of the same source
// (cuda/native/host_*.cpp). scripts/sim-kernels builds and runs it.
//
//   harness KERNEL N BLOCK GRID SEED
//
// KERNEL is an entry point of cuda/native/*_kernels.cuh (mlkem768_decaps_warp,
// mldsa44_sign, ...), N the items, BLOCK threads a block, GRID blocks (a
// signing kernel's threads or blocks take messages from a queue, so its grid
// may be smaller than the batch). SEED draws the inputs (splitmix64).
//
// Inputs are made as pqcprof's correctness gate makes them
// (src/backend/native_gpu/inputs.rs), with the host build in place of the
// kernels before the one measured: encaps gets keys from keygen, decaps
// ciphertexts from encaps with one tampered (byte 5 ^ 0x20: implicit
// rejection), sign keys from keygen and 1024 bytes of 0xAB with an empty
// context, verify signatures from sign with one corrupted (byte 17 ^ 0x04: it
// must be refused). Every item's output is compared byte for byte with the
// host build's output for the same inputs.
//
// No nvcc builds this file: the kernel is registered by name with
// GPGPU-Sim's CUDA runtime, which takes the unit's PTX from the cuobjdump
// in scripts/gpgpu-sim/ ($PQCPROF_SIM_PTX).
//
// Prints `HARNESS ...` lines: the launch, then per failed item a
// `HARNESS MISMATCH` line (the first few), then `HARNESS RESULT`. Exit codes:
// 0 every item matches; 3 some item differs; 2 a CUDA call failed; 1 usage.
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <string>
#include <vector>

extern "C" {
void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream);
// cuda/native/host_mlkem.cpp and host_mldsa.cpp
int pqcprof_mlkem_keygen(int k, uint8_t *pk, uint8_t *sk, const uint8_t *d, const uint8_t *z);
int pqcprof_mlkem_encaps(int k, uint8_t *ct, uint8_t *ss, const uint8_t *pk, const uint8_t *m);
int pqcprof_mlkem_decaps(int k, uint8_t *ss, const uint8_t *ct, const uint8_t *sk);
int pqcprof_mldsa_keygen(int level, uint8_t *pk, uint8_t *sk, const uint8_t *xi);
int pqcprof_mldsa_sign(int level, uint8_t *sig, const uint8_t *msg, size_t msglen, const uint8_t *ctx,
                       size_t ctxlen, const uint8_t *sk, const uint8_t *rnd);
int pqcprof_mldsa_verify(int level, const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                         const uint8_t *sig, size_t siglen, const uint8_t *pk, size_t pklen);
size_t pqcprof_mldsa_sign_workspace_bytes(int level);
size_t pqcprof_mldsa_sign_block_workspace_bytes(int level);
}

namespace {

typedef std::vector<uint8_t> bytes;

// The host address the kernel is registered under; any unique one serves.
char kernel_token;

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        printf("HARNESS ERROR %s failed: %s (%d)\n", what, cudaGetErrorString(e), (int)e);
        exit(2);
    }
}

struct Rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    bytes draw(size_t n) {
        bytes v(n);
        for (size_t i = 0; i < n; ++i) v[i] = (uint8_t)(next() >> 56);
        return v;
    }
};

// A device buffer holding `host`, or `n` bytes of 0xAA (so that an item the
// kernel never wrote cannot match).
struct Dev {
    void *p = nullptr;
    size_t n = 0;
};
Dev upload(const bytes &host) {
    Dev d;
    d.n = host.size() ? host.size() : 1;
    check(cudaMalloc(&d.p, d.n), "cudaMalloc");
    if (!host.empty()) check(cudaMemcpy(d.p, host.data(), host.size(), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    return d;
}
Dev filled(size_t n, int value) {
    Dev d;
    d.n = n ? n : 1;
    check(cudaMalloc(&d.p, d.n), "cudaMalloc");
    check(cudaMemset(d.p, value, d.n), "cudaMemset");
    return d;
}
bytes download(const Dev &d, size_t n) {
    bytes v(n);
    check(cudaMemcpy(v.data(), d.p, n, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
    return v;
}

// First differing byte of two n-byte spans, or n.
size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n) {
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

struct Tally {
    unsigned bad = 0;
    void item(unsigned i, const char *what, const uint8_t *got, const uint8_t *want, size_t n) {
        const size_t at = first_diff(got, want, n);
        if (at == n) return;
        if (bad < 5)
            printf("HARNESS MISMATCH item %u: %s differs from the host build at byte %zu of %zu (kernel %02x, host %02x)\n",
                   i, what, at, n, got[at], want[at]);
        ++bad;
    }
};

}  // namespace

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s KERNEL N BLOCK GRID SEED\n", argv[0]);
        return 1;
    }
    const std::string kernel = argv[1];
    const unsigned n = (unsigned)strtoul(argv[2], nullptr, 10);
    const unsigned block = (unsigned)strtoul(argv[3], nullptr, 10);
    const unsigned grid = (unsigned)strtoul(argv[4], nullptr, 10);
    Rng rng{strtoull(argv[5], nullptr, 10)};
    // mlkem768_decaps_warp -> family mlkem, set 768, operation decaps
    const bool kem = kernel.rfind("mlkem", 0) == 0, dsa = kernel.rfind("mldsa", 0) == 0;
    const size_t us = kernel.find('_');
    const int set = atoi(kernel.c_str() + 5);
    std::string op = us == std::string::npos ? "" : kernel.substr(us + 1);
    const bool block_variant = op.size() > 6 && op.compare(op.size() - 6, 6, "_block") == 0;
    if (op.find('_') != std::string::npos) op = op.substr(0, op.find('_'));
    const bool op_ok = kem ? (op == "keygen" || op == "encaps" || op == "decaps")
                           : (op == "keygen" || op == "sign" || op == "verify");
    const bool set_ok = kem ? (set == 512 || set == 768 || set == 1024) : (set == 44 || set == 65 || set == 87);
    if (!(kem || dsa) || !op_ok || !set_ok || n == 0 || block == 0 || grid == 0) {
        fprintf(stderr, "harness: %s %s %s %s: not a kernel of cuda/native with N, BLOCK, GRID above 0\n", argv[1],
                argv[2], argv[3], argv[4]);
        return 1;
    }
    // The item the gate tampers with (its second sampled slot); none for one item.
    const long tampered = n > 1 ? (long)(n / 2) : -1;
    printf("HARNESS kernel=%s n=%u grid=%u block=%u tampered=%ld\n", kernel.c_str(), n, grid, block, tampered);

    void **handle = __cudaRegisterFatBinary(nullptr);
    __cudaRegisterFunction(handle, &kernel_token, (char *)kernel.c_str(), kernel.c_str(), -1, nullptr, nullptr,
                           nullptr, nullptr);
    __cudaRegisterFatBinaryEnd(handle);
    unsigned items = n;
    std::vector<void *> args;
    auto launch = [&]() {
        args.push_back(&items);
        const auto t0 = std::chrono::steady_clock::now();
        // GPGPU-Sim's cudaLaunchKernel takes its shape from the configuration
        // nvcc's launch code pushes first.
        __cudaPushCallConfiguration(dim3(grid), dim3(block), 0, nullptr);
        check(cudaLaunchKernel((const void *)&kernel_token, dim3(grid), dim3(block), args.data(), 0, 0),
              "cudaLaunchKernel");
        check(cudaDeviceSynchronize(), "the kernel");
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        printf("HARNESS simulated in %.1f s of wall time\n", s);
    };
    Tally t;
    const char *what = "";

    if (kem) {
        const int k = set == 512 ? 2 : set == 768 ? 3 : 4;
        const size_t PK = 384 * k + 32, SK = 768 * k + 96, CT = set == 1024 ? 1568 : 32 * (10 * k + 4);
        bytes d = rng.draw(32 * (size_t)n), z = rng.draw(32 * (size_t)n), m = rng.draw(32 * (size_t)n);
        bytes pk(PK * n), sk(SK * n), ct(CT * n), ss(32 * (size_t)n);
        for (unsigned i = 0; i < n; ++i)
            pqcprof_mlkem_keygen(k, &pk[PK * i], &sk[SK * i], &d[32 * i], &z[32 * i]);
        if (op == "keygen") {
            Dev dpk = filled(PK * n, 0xAA), dsk = filled(SK * n, 0xAA), dd = upload(d), dz = upload(z);
            args = {&dpk.p, &dsk.p, &dd.p, &dz.p};
            launch();
            const bytes gpk = download(dpk, PK * n), gsk = download(dsk, SK * n);
            for (unsigned i = 0; i < n; ++i) {
                t.item(i, "pk", &gpk[PK * i], &pk[PK * i], PK);
                t.item(i, "sk", &gsk[SK * i], &sk[SK * i], SK);
            }
            what = "pk and sk";
        } else {
            for (unsigned i = 0; i < n; ++i)
                if (pqcprof_mlkem_encaps(k, &ct[CT * i], &ss[32 * i], &pk[PK * i], &m[32 * i]) != 0) {
                    printf("HARNESS ERROR the host build refused its own key %u\n", i);
                    return 2;
                }
            if (op == "encaps") {
                Dev dct = filled(CT * n, 0xAA), dss = filled(32 * (size_t)n, 0xAA), dpk = upload(pk), dm = upload(m);
                args = {&dct.p, &dss.p, &dpk.p, &dm.p};
                launch();
                const bytes gct = download(dct, CT * n), gss = download(dss, 32 * (size_t)n);
                for (unsigned i = 0; i < n; ++i) {
                    t.item(i, "ct", &gct[CT * i], &ct[CT * i], CT);
                    t.item(i, "ss", &gss[32 * i], &ss[32 * i], 32);
                }
                what = "ct and ss";
            } else {
                if (tampered >= 0) ct[CT * tampered + 5] ^= 0x20;
                bytes want(32 * (size_t)n);
                for (unsigned i = 0; i < n; ++i) {
                    pqcprof_mlkem_decaps(k, &want[32 * i], &ct[CT * i], &sk[SK * i]);
                    // The host build itself: the shared secret of encaps, or
                    // implicit rejection's for the tampered ciphertext.
                    const bool same = memcmp(&want[32 * i], &ss[32 * i], 32) == 0;
                    if (same != ((long)i != tampered)) {
                        printf("HARNESS ERROR the host build's decaps of item %u is not what encaps made\n", i);
                        return 2;
                    }
                }
                Dev dss = filled(32 * (size_t)n, 0xAA), dct = upload(ct), dsk = upload(sk);
                args = {&dss.p, &dct.p, &dsk.p};
                launch();
                const bytes gss = download(dss, 32 * (size_t)n);
                for (unsigned i = 0; i < n; ++i) t.item(i, "ss", &gss[32 * i], &want[32 * i], 32);
                what = "ss (one ciphertext tampered)";
            }
        }
    } else {
        const int K = set == 44 ? 4 : set == 65 ? 6 : 8, L = set == 44 ? 4 : set == 65 ? 5 : 7;
        const int eta_bytes = set == 65 ? 128 : 96, lambda = set == 44 ? 128 : set == 65 ? 192 : 256;
        const int z_bytes = set == 44 ? 576 : 640, omega = set == 44 ? 80 : set == 65 ? 55 : 75;
        const size_t PK = 32 + 320 * K, SK = 128 + (K + L) * eta_bytes + 416 * K;
        const size_t SIG = lambda / 4 + L * z_bytes + omega + K, STRIDE = (SIG + 7) / 8 * 8;
        const size_t MSG = 1024;
        const bytes msg(MSG * n, 0xAB);
        uint32_t msg_len = (uint32_t)MSG, ctx_len = 0, stride = (uint32_t)STRIDE;
        bytes xi = rng.draw(32 * (size_t)n), rnd = rng.draw(32 * (size_t)n);
        bytes pk(PK * n), sk(SK * n), sig(STRIDE * n, 0);
        for (unsigned i = 0; i < n; ++i) pqcprof_mldsa_keygen(set, &pk[PK * i], &sk[SK * i], &xi[32 * i]);
        if (op == "keygen") {
            Dev dpk = filled(PK * n, 0xAA), dsk = filled(SK * n, 0xAA), dxi = upload(xi);
            args = {&dpk.p, &dsk.p, &dxi.p};
            launch();
            const bytes gpk = download(dpk, PK * n), gsk = download(dsk, SK * n);
            for (unsigned i = 0; i < n; ++i) {
                t.item(i, "pk", &gpk[PK * i], &pk[PK * i], PK);
                t.item(i, "sk", &gsk[SK * i], &sk[SK * i], SK);
            }
            what = "pk and sk";
        } else {
            for (unsigned i = 0; i < n; ++i)
                if (pqcprof_mldsa_sign(set, &sig[STRIDE * i], &msg[MSG * i], MSG, nullptr, 0, &sk[SK * i],
                                       &rnd[32 * i]) != 0) {
                    printf("HARNESS ERROR the host build could not sign item %u\n", i);
                    return 2;
                }
            Dev dmsg = upload(msg), dctx = filled(1, 0);
            if (op == "sign") {
                const size_t ws = block_variant ? pqcprof_mldsa_sign_block_workspace_bytes(set) * grid
                                                : pqcprof_mldsa_sign_workspace_bytes(set) * grid * block;
                Dev dsig = filled(STRIDE * n, 0xAA), dsk = upload(sk), drnd = upload(rnd);
                Dev scratch = filled(ws, 0), queue = filled(4, 0);
                args = {&dsig.p, &stride, &dmsg.p, &msg_len, &dctx.p, &ctx_len, &dsk.p, &drnd.p, &scratch.p, &queue.p};
                launch();
                const bytes gsig = download(dsig, STRIDE * n);
                for (unsigned i = 0; i < n; ++i) t.item(i, "signature", &gsig[STRIDE * i], &sig[STRIDE * i], SIG);
                what = "signature";
            } else {
                if (tampered >= 0) sig[STRIDE * tampered + 17] ^= 0x04;
                std::vector<int32_t> want(n);
                for (unsigned i = 0; i < n; ++i) {
                    want[i] = pqcprof_mldsa_verify(set, &msg[MSG * i], MSG, nullptr, 0, &sig[STRIDE * i], SIG,
                                                   &pk[PK * i], PK);
                    if (want[i] != ((long)i != tampered ? 1 : 0)) {
                        printf("HARNESS ERROR the host build's verify of item %u gives %d\n", i, want[i]);
                        return 2;
                    }
                }
                Dev dok = filled(4 * (size_t)n, 0xAA), dsig = upload(sig), dpk = upload(pk);
                args = {&dok.p, &dmsg.p, &msg_len, &dctx.p, &ctx_len, &dsig.p, &stride, &dpk.p};
                launch();
                const bytes gok = download(dok, 4 * (size_t)n);
                for (unsigned i = 0; i < n; ++i)
                    t.item(i, "verdict", &gok[4 * i], (const uint8_t *)&want[i], 4);
                what = "verdict (one signature corrupted)";
            }
        }
    }
    printf("HARNESS RESULT kernel=%s items=%u match=%u checked=%s\n", kernel.c_str(), n, n - t.bad, what);
    return t.bad ? 3 : 0;
}
