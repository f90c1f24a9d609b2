// common.cuh: what every pqcprof native source shares.
//
// Written once for the host and the device. NVRTC compiles these files with
// no include path and no system headers, so fixed-width types are typedefs
// here, and tables go through PQC_TABLE so that the device reads them from
// constant memory while the host build (g++, via build.rs) sees plain
// static arrays. PQCPROF_CUDA_EMULATION is the CPU stand-in driver's build
// of the kernels (tests/fixtures/cuda-standin/), which defines the CUDA
// keywords itself; NVRTC and the host build never define it.
#ifndef PQCPROF_COMMON_CUH
#define PQCPROF_COMMON_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)
#define PQC_HD __host__ __device__ __forceinline__
#define PQC_HD_NOINLINE __host__ __device__ __noinline__
#define PQC_TABLE __constant__ const
#else
#define PQC_HD static inline
#define PQC_HD_NOINLINE static
#define PQC_TABLE static const
#endif

typedef unsigned char pqc_u8;
typedef unsigned short pqc_u16;
typedef unsigned int pqc_u32;
typedef unsigned long long pqc_u64;
typedef signed short pqc_i16;
typedef signed int pqc_i32;
typedef signed long long pqc_i64;
typedef unsigned long long pqc_size;

// Stores w at p, least significant byte first: one 8-byte store in the
// kernel builds where p is 8-byte aligned (the GPU and the stand-in's hosts
// are little-endian), else byte by byte (the host build, any alignment).
PQC_HD void pqc_store_u64le(pqc_u8 *p, pqc_u64 w) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)
    if (((pqc_size)p & 7) == 0) {
        *(pqc_u64 *)p = w;
        return;
    }
#endif
    for (int k = 0; k < 8; ++k) p[k] = (pqc_u8)(w >> (8 * k));
}

// The 8 bytes at p, least significant first: one 8-byte load in the
// kernel builds where p is 8-byte aligned, else byte by byte.
PQC_HD pqc_u64 pqc_load_u64le(const pqc_u8 *p) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(PQCPROF_CUDA_EMULATION)
    if (((pqc_size)p & 7) == 0) return *(const pqc_u64 *)p;
#endif
    pqc_u64 w = 0;
    for (int k = 0; k < 8; ++k) w |= (pqc_u64)p[k] << (8 * k);
    return w;
}

// Return codes shared by every host entry point (cuda/native/host_*.cpp).
#define PQC_OK 0
#define PQC_ERR_PARAM (-1)   // unknown parameter set
#define PQC_ERR_INPUT (-2)   // input failed a FIPS 203/204 input check
#define PQC_ERR_CONTEXT (-3) // context string longer than 255 bytes
#define PQC_ERR_KEY (-4)     // ML-DSA secret key with s1 or s2 out of [-eta, eta]
#define PQC_ERR_LENGTH (-5)  // an input of the wrong length (host entry points only)

#endif
