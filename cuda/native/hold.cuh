// hold.cuh: pqcprof_hold, one thread that waits `ns` nanoseconds on the
// device's global timer. The timed window of a GPU batch is queued behind it
// (`timed` in src/backend/native_gpu/launch.rs), so while the device waits
// the host finishes issuing the start event, the launch and the end event:
// the window then holds the kernel alone, not the host's cuLaunchKernel call
// (which matters at small batches). Asked to wait 0 ns it is the empty
// kernel the floor of a GPU window is timed with.
#pragma once
#include "common.cuh"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
extern "C" __global__ void pqcprof_hold(pqc_u64 ns) {
    // A wait of zero returns at once: the empty kernel whose launch and
    // event pair are the floor of every timed window.
    if (ns == 0) return;
    pqc_u64 start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
#elif defined(PQCPROF_CUDA_EMULATION)
// The CPU stand-in driver waits `ns` in its queue itself when it reaches
// this kernel (or not, with PQCPROF_STANDIN_HOLD=ignore), so the body has
// nothing to do: the entry point exists so the launch path is the same as
// on a GPU.
extern "C" __global__ void pqcprof_hold(pqc_u64 ns) { (void)ns; }
#endif
