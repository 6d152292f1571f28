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

typedef long long ternion_i64;
typedef unsigned int ternion_u32;

// Global linear thread index and total thread count of a 1D launch.
#define TERNION_TID() ((ternion_i64)blockIdx.x * blockDim.x + threadIdx.x)
#define TERNION_NTHREADS() ((ternion_i64)gridDim.x * blockDim.x)
