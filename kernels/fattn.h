// fattn.h - what FLASH_ATTN_EXT's kernels share (kernels/fattn.cu, and the
// sm_90a prefill of kernels/fattn90.cu): the constants of the log2-unit
// online softmax, ggml's ALiBi slope and the fast 2^x.
#pragma once
#include "vendor.h"

#define FATTN_NEG_INF (-__int_as_float(0x7f800000))
#define FATTN_LOG2E 1.4426950408889634f
// The row maximum before any score: finite, so that exp2(max - new) never
// computes inf - inf.
#define FATTN_DEC_EMPTY (-1e30f)

// ALiBi slope of head h (1 without ALiBi), as ggml computes it.
static __device__ __forceinline__ float fattn_slope(float max_bias, float m0, float m1, ternion_u32 n_head_log2, ternion_u32 h) {
    if (max_bias <= 0.0f) {
        return 1.0f;
    }
    return h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_head_log2) + 1));
}

// 2^x for the softmax terms (x <= 0): one ex2.approx on NVIDIA (results
// below 2^-126 flush to zero, nothing next to the row's maximum term), exp2f
// elsewhere.
static __device__ __forceinline__ float fattn_exp2(float x) {
#if defined(TERNION_VENDOR_CUDA)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return exp2f(x);
#endif
}
