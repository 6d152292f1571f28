// wgmma.h - what the kernels on Hopper's warpgroup tensor cores (sm_90a:
// gemm90.cu, fattn90.cu) share: the shared-memory descriptor of wgmma's
// 128-byte-swizzled layout, the pin that keeps ptxas from copying the
// accumulators across an asynchronous stage, and the operand lists of the
// wgmma statements (N accumulators d[0..N-1] as "+f" operands %0..%N-1).
#pragma once
#include "vendor.h"

// The operand text and constraints of N f32 accumulators d[0..N-1].
#define TERNION_WG_F8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define TERNION_WG_F32 TERNION_WG_F8(0), TERNION_WG_F8(8), TERNION_WG_F8(16), TERNION_WG_F8(24)
#define TERNION_WG_F64 TERNION_WG_F32, TERNION_WG_F8(32), TERNION_WG_F8(40), TERNION_WG_F8(48), TERNION_WG_F8(56)
#define TERNION_WG_F128 \
    TERNION_WG_F64, TERNION_WG_F8(64), TERNION_WG_F8(72), TERNION_WG_F8(80), TERNION_WG_F8(88), TERNION_WG_F8(96), TERNION_WG_F8(104), \
        TERNION_WG_F8(112), TERNION_WG_F8(120)
#define TERNION_WG_R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define TERNION_WG_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define TERNION_WG_R128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"

#if defined(TERNION_VENDOR_CUDA)
// The descriptor of a 128-byte-swizzled operand at shared address a (rows
// of 64 f16, 128 bytes; 8-row groups 1024 bytes apart, SBO); lbo: the
// distance of the next 64 values along M/N of an MN-major operand (16 for a
// K-major one, which does not use it).
static __device__ __forceinline__ unsigned long long ternion_wg_desc(ternion_u32 a, ternion_u32 lbo) {
    return (unsigned long long)((a & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
           ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// Pins N accumulators across a wgmma stage, as CUTLASS's
// warpgroup_fence_operand: no copy of them may be made between the stage's
// start and end, where ptxas would serialize the wgmmas.
template <int N> static __device__ __forceinline__ void ternion_wg_pin(float * d) {
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}
#endif
