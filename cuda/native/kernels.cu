// kernels.cu: the translation unit NVRTC compiles for the GPU.
//
// The Rust side (src/gpu/kernels.rs) concatenates common.cuh, keccak.cuh,
// mlkem.cuh, mldsa.cuh, mlkem_kernels.cuh, mldsa_kernels.cuh and this file,
// dropping the quoted #include lines, so NVRTC needs no include path and no
// system header. With nvcc, the includes below do the same job.
#include "common.cuh"
#include "keccak.cuh"
#include "mlkem.cuh"
#include "mldsa.cuh"
#include "mlkem_kernels.cuh"
#include "mldsa_kernels.cuh"

// Every extern "C" __global__ entry point lives in mlkem_kernels.cuh and
// mldsa_kernels.cuh; one thread computes one operation of the batch.

// pqcprof_hold: one thread that waits `ns` nanoseconds on the device's
// global timer. The timed window of a GPU batch is queued behind it, so
// while the device waits the host has finished issuing the start event, the
// launch and the end event: the window then holds the kernel alone, not the
// host's cuLaunchKernel call (which matters at small batches).
extern "C" __global__ void pqcprof_hold(pqc_u64 ns) {
    pqc_u64 start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
