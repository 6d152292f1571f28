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

// fattn_prefill is what a block of the prefill kernels (fattn_mma, fattn90;
// block (x, y, z) = queries bq·x.. of q head y, batch z) derives from its
// arguments: its head, batch and first query, its rows (nrows of bq), the
// scale of Q (log2 units without a softcap), the softcap and ALiBi slope in
// log2 units, and its kv head's K and V and its first query's mask row
// (nullptr without a mask).
struct fattn_prefill {
    ternion_u32 h, iq3;
    ternion_i64 nkv, q0;
    int nrows;
    float qs, sc2, slope;
    const char *kb, *vb, *mb;
    __device__ __forceinline__ fattn_prefill(const ternion_tensor & q, const ternion_tensor & k, const ternion_tensor & v,
                                             const ternion_tensor & mask, float scale, float softcap, float max_bias, float m0,
                                             float m1, ternion_u32 n_head_log2, ternion_u32 gqa, ternion_u32 r3, int bq) {
        h = blockIdx.y;
        iq3 = blockIdx.z;
        const ternion_u32 ik2 = h / gqa, ik3 = iq3 / r3;
        nkv = k.ne[1];
        q0 = (ternion_i64)blockIdx.x * bq;
        nrows = (int)(q.ne[1] - q0 < bq ? q.ne[1] - q0 : bq);
        qs = softcap == 0.0f ? scale * FATTN_LOG2E : scale;
        sc2 = softcap * FATTN_LOG2E;
        slope = fattn_slope(max_bias, m0, m1, n_head_log2, h) * FATTN_LOG2E;
        kb = (const char *)k.data + ik2 * k.nb[2] + ik3 * k.nb[3];
        vb = (const char *)v.data + ik2 * v.nb[2] + ik3 * v.nb[3];
        mb = nullptr;
        if (mask.data != nullptr) {
            mb = (const char *)mask.data + (h % (ternion_u32)mask.ne[2]) * mask.nb[2] + (iq3 % (ternion_u32)mask.ne[3]) * mask.nb[3] +
                 q0 * mask.nb[1];
        }
    }

    // finish adds the sink of head h to the two rows a thread holds (block
    // rows r and r + 8; maxima mr, its shares of the sums lr, reduced over
    // its quad here), normalises them and stores the D accumulators of each
    // (o: row r at o[4n], o[4n + 1], row r + 8 at o[4n + 2], o[4n + 3], columns
    // 8n + 2t, +1) to dst's rows (dst [D, heads, queries]), rows past nrows not.
    template <int D>
    __device__ __forceinline__ void finish(const ternion_tensor & dst, const float * sinks, int r, int t, const float * o,
                                           const float * mr, const float * lr) const {
#pragma unroll
        for (int e = 0; e < 2; e++) {
            float l = lr[e];
            l += TERNION_SHFL_XOR(l, 1);
            l += TERNION_SHFL_XOR(l, 2);
            float fs = 1.0f;
            if (sinks != nullptr) {
                const float sink = sinks[h] * FATTN_LOG2E, mn = fmaxf(mr[e], sink);
                fs = fattn_exp2(mr[e] - mn);
                l = l * fs + fattn_exp2(sink - mn);
            }
            const float inv = l == 0.0f ? 0.0f : fs / l;
            if (r + 8 * e < nrows) {
                float * orow = (float *)((char *)dst.data + h * dst.nb[1] + (q0 + r + 8 * e) * dst.nb[2] + iq3 * dst.nb[3]);
#pragma unroll
                for (int n = 0; n < D / 8; n++) {
                    *(float2 *)(orow + n * 8 + 2 * t) = make_float2(o[4 * n + 2 * e] * inv, o[4 * n + 2 * e + 1] * inv);
                }
            }
        }
    }
};

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
