// vendor.h - the few device-side differences between CUDA, HIP and MUSA.
// Kernel sources include only this header; each compiler sees its own block.
#pragma once

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define TERNION_VENDOR_HIP 1
#if defined(__GFX9__) || defined(__gfx900__) || defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx942__)
#define TERNION_WARP_SIZE 64
#else
#define TERNION_WARP_SIZE 32
#endif
// HIP shuffles take no mask.
#define TERNION_SHFL_XOR(v, m) __shfl_xor((v), (m), TERNION_WARP_SIZE)
#elif defined(__MUSACC__)
#define TERNION_VENDOR_MUSA 1
#define TERNION_WARP_SIZE 32
#define TERNION_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 32)
#else
// CUDA (nvcc or NVRTC). NVRTC has no standard headers: use builtin types only.
#define TERNION_VENDOR_CUDA 1
#define TERNION_WARP_SIZE 32
#define TERNION_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 32)
#endif

#include "abi.h"

// Global linear thread index and total thread count of a 1D launch.
#define TERNION_TID() ((ternion_i64)blockIdx.x * blockDim.x + threadIdx.x)
#define TERNION_NTHREADS() ((ternion_i64)gridDim.x * blockDim.x)

// ternion_ptr turns a generated entry point's void * parameter into the typed
// pointer its kernel body declares (const float *, unsigned short *, ...).
struct ternion_ptr {
    void * p;
    template <typename T> __device__ __forceinline__ operator T *() const { return (T *)p; }
};

// n / f.d for n < 2^31 (ggml's fastdiv).
static __device__ __forceinline__ ternion_u32 ternion_fastdiv_div(ternion_u32 n, ternion_fastdiv f) {
    return (__umulhi(n, f.mp) + n) >> f.l;
}

// n % f.d for n < 2^31 (ggml's fastmodulo).
static __device__ __forceinline__ ternion_u32 ternion_fastdiv_mod(ternion_u32 n, ternion_fastdiv f) {
    return n - ternion_fastdiv_div(n, f) * f.d;
}
