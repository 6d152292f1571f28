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

#if TERNION_SM80
// fattn_softmax_tile is one 64-position tile of the tensor-core prefill
// kernels' online softmax (fattn_mma, fattn90) for a thread holding in s the
// 32 logits (log2 units; positions past the sequence -inf) of its rows g
// (s[4n], s[4n + 1]) and g + 8 (s[4n + 2], s[4n + 3]) at positions 8n + 2t
// and 8n + 2t + 1 — the accumulator layout of mma.sync's m16n8 tiles and of
// wgmma's — the other positions of its rows in the other lanes of its quad.
// It moves the row maxima mr, updates this thread's share of the row sums
// lr, writes P rounded to f16 as the A fragments of the tile's four k-steps
// of O += P·V (k-step kk: n-chunks 2kk and 2kk + 1), and rescales the NO
// accumulators o (the same layout) when a row's maximum moved.
template <int NO>
static __device__ __forceinline__ void fattn_softmax_tile(const float * s, float * mr, float * lr, ternion_u32 (&pa)[4][4], float * o) {
    typedef ternion_mma_type<ternion_f16> mma;
    float mt[2] = {FATTN_NEG_INF, FATTN_NEG_INF};
#pragma unroll
    for (int i = 0; i < 32; i++) {
        mt[(i >> 1) & 1] = fmaxf(mt[(i >> 1) & 1], s[i]);
    }
    float f[2];
#pragma unroll
    for (int e = 0; e < 2; e++) {
        mt[e] = fmaxf(mt[e], __shfl_xor_sync(0xffffffffu, mt[e], 1));
        mt[e] = fmaxf(mt[e], __shfl_xor_sync(0xffffffffu, mt[e], 2));
        const float mn = fmaxf(mr[e], mt[e]);
        f[e] = fattn_exp2(mr[e] - mn);
        mr[e] = mn;
    }
    float sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int n = 0; n < 8; n++) {
        float p[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            p[e] = fattn_exp2(s[4 * n + e] - mr[e >> 1]);
            sum[e >> 1] += p[e];
        }
        pa[n / 2][(n % 2) * 2] = mma::pack(p[0], p[1]);
        pa[n / 2][(n % 2) * 2 + 1] = mma::pack(p[2], p[3]);
    }
    lr[0] = lr[0] * f[0] + sum[0];
    lr[1] = lr[1] * f[1] + sum[1];
    // Rescale only when some row's maximum moved in this tile.
    if (__any_sync(0xffffffffu, f[0] != 1.0f || f[1] != 1.0f)) {
#pragma unroll
        for (int n = 0; n < NO / 4; n++) {
            o[4 * n + 0] *= f[0];
            o[4 * n + 1] *= f[0];
            o[4 * n + 2] *= f[1];
            o[4 * n + 3] *= f[1];
        }
    }
}
#endif
