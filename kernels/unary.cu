// unary.cu - element-wise ops of one tensor: ggml's SCALE on 16-byte
// vectors, ggml's UNARY ops (ABS ... TRUNC), SQR, SQRT, SIN, COS, LOG,
// CLAMP and LEAKY_RELU, and the gated GLU ops (REGLU, GEGLU, SWIGLU, ...).
// Every op is a functor unary_<name>::apply(x, p0, p1) computed in float
// (p0, p1 are the op's float parameters: LEAKY_RELU's slope, CLAMP's bounds);
// the entry points are generated from the catalog's templates:
//   unary_{op}_{t}    contiguous src and dst, 16-byte aligned: 16-byte
//                     vectors, four in flight per thread, a scalar tail;
//   unarys_{op}_{t}   any strides (views, in-place ops on views);
//   glu_{op}_{t}      dst = act(x)·g with x, g rows packed, any row strides;
//   gluv_{op}_{t}     the same with 16-byte vectors (rows 16-byte aligned).
#include "index.h"

// The logistic function's exp and division use the fast intrinsics (as
// ggml-cuda's -use_fast_math build does): full-precision expf and IEEE
// division made SILU 30 % slower than GELU on the H200; the intrinsics' error
// (about 2 ulp) is far below the ops' NMSE threshold. __fdividef(x, y) is
// exact enough for |y| < 2^126, which 1 + exp(-x) exceeds only where the
// result is 0 anyway.
struct unary_abs {
    static __device__ __forceinline__ float apply(float x, float, float) { return fabsf(x); }
};
struct unary_sgn {
    static __device__ __forceinline__ float apply(float x, float, float) { return (float)(x > 0.0f) - (float)(x < 0.0f); }
};
struct unary_neg {
    static __device__ __forceinline__ float apply(float x, float, float) { return -x; }
};
struct unary_step {
    static __device__ __forceinline__ float apply(float x, float, float) { return x > 0.0f ? 1.0f : 0.0f; }
};
struct unary_tanh {
    static __device__ __forceinline__ float apply(float x, float, float) { return tanhf(x); }
};
struct unary_elu {
    static __device__ __forceinline__ float apply(float x, float, float) { return x > 0.0f ? x : expm1f(x); }
};
struct unary_relu {
    static __device__ __forceinline__ float apply(float x, float, float) { return fmaxf(x, 0.0f); }
};
struct unary_sigmoid {
    static __device__ __forceinline__ float apply(float x, float, float) { return __fdividef(1.0f, 1.0f + __expf(-x)); }
};
// gelu with ggml's tanh approximation.
struct unary_gelu {
    static __device__ __forceinline__ float apply(float x, float, float) {
        const float a = 0.044715f, s = 0.79788456080286535587989211986876f; // sqrt(2/pi)
        return 0.5f * x * (1.0f + tanhf(s * x * (1.0f + a * x * x)));
    }
};
struct unary_gelu_quick {
    static __device__ __forceinline__ float apply(float x, float, float) { return __fdividef(x, 1.0f + __expf(-1.702f * x)); }
};
struct unary_silu {
    static __device__ __forceinline__ float apply(float x, float, float) { return __fdividef(x, 1.0f + __expf(-x)); }
};
struct unary_hardswish {
    static __device__ __forceinline__ float apply(float x, float, float) { return x * fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f)); }
};
struct unary_hardsigmoid {
    static __device__ __forceinline__ float apply(float x, float, float) { return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f)); }
};
struct unary_exp {
    static __device__ __forceinline__ float apply(float x, float, float) { return expf(x); }
};
struct unary_expm1 {
    static __device__ __forceinline__ float apply(float x, float, float) { return expm1f(x); }
};
struct unary_softplus {
    static __device__ __forceinline__ float apply(float x, float, float) { return x > 20.0f ? x : log1pf(expf(x)); }
};
struct unary_gelu_erf {
    static __device__ __forceinline__ float apply(float x, float, float) {
        return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440084436210484f));
    }
};
struct unary_floor {
    static __device__ __forceinline__ float apply(float x, float, float) { return floorf(x); }
};
struct unary_ceil {
    static __device__ __forceinline__ float apply(float x, float, float) { return ceilf(x); }
};
struct unary_round {
    static __device__ __forceinline__ float apply(float x, float, float) { return roundf(x); }
};
struct unary_trunc {
    static __device__ __forceinline__ float apply(float x, float, float) { return truncf(x); }
};
// x·slope below zero (p0 = slope).
struct unary_leaky_relu {
    static __device__ __forceinline__ float apply(float x, float slope, float) { return fmaxf(x, 0.0f) + fminf(x, 0.0f) * slope; }
};
struct unary_sqr {
    static __device__ __forceinline__ float apply(float x, float, float) { return x * x; }
};
struct unary_sqrt {
    static __device__ __forceinline__ float apply(float x, float, float) { return sqrtf(x); }
};
struct unary_sin {
    static __device__ __forceinline__ float apply(float x, float, float) { return sinf(x); }
};
struct unary_cos {
    static __device__ __forceinline__ float apply(float x, float, float) { return cosf(x); }
};
struct unary_log {
    static __device__ __forceinline__ float apply(float x, float, float) { return logf(x); }
};
// x clamped to [p0, p1].
struct unary_clamp {
    static __device__ __forceinline__ float apply(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
};

// unary_vec<T> moves one 16-byte vector of T (N elements) between memory
// and floats.
template <typename T> struct unary_vec;
template <> struct unary_vec<float> {
    static constexpr int N = 4;
    static __device__ __forceinline__ void load(const float * p, float * v) {
        const float4 q = *(const float4 *)p;
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    }
    static __device__ __forceinline__ void store(float * p, const float * v) { *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]); }
};
template <> struct unary_vec<ternion_f16> {
    static constexpr int N = 8;
    static __device__ __forceinline__ void load(const ternion_f16 * p, float * v) {
        const uint4 q = *(const uint4 *)p;
        const unsigned int w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            v[2 * k] = ternion_f16_to_f32((ternion_f16)(w[k] & 0xffffu));
            v[2 * k + 1] = ternion_f16_to_f32((ternion_f16)(w[k] >> 16));
        }
    }
    static __device__ __forceinline__ void store(ternion_f16 * p, const float * v) {
        unsigned int w[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            w[k] = (unsigned int)ternion_f32_to_f16(v[2 * k]) | ((unsigned int)ternion_f32_to_f16(v[2 * k + 1]) << 16);
        }
        *(uint4 *)p = make_uint4(w[0], w[1], w[2], w[3]);
    }
};

// dst[i] = Op(src[i]) for i < n, src and dst packed and 16-byte aligned (dst
// may be src): thread g takes vectors g, g + T, g + 2T, ... (T threads in
// the grid), four loaded before any is stored, then element nv·N + g of the
// tail (the n % N elements after the last whole vector).
template <typename Op, typename T>
static __device__ __forceinline__ void unary_contig(T * dst, const T * src, float p0, float p1, ternion_i64 n) {
    constexpr int N = unary_vec<T>::N;
    const ternion_i64 nv = n / N, step = TERNION_NTHREADS();
    for (ternion_i64 i0 = TERNION_TID(); i0 < nv; i0 += 4 * step) {
        float v[4][N];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 i = i0 + u * step;
            if (i < nv) unary_vec<T>::load(src + i * N, v[u]);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 i = i0 + u * step;
            if (i < nv) {
#pragma unroll
                for (int k = 0; k < N; k++) v[u][k] = Op::apply(v[u][k], p0, p1);
                unary_vec<T>::store(dst + i * N, v[u]);
            }
        }
    }
    const ternion_i64 t = nv * N + TERNION_TID();
    if (t < n) ternion_store(dst + t, Op::apply(ternion_load(src + t), p0, p1));
}

// Element i of dst = Op(element i of src) for i < n (n < 2^31), both of one
// shape (ne0, ne1, ne2 divide by its ne[0..2]) with any strides; dst may be
// src (an in-place op).
template <typename Op, typename T>
static __device__ __forceinline__ void unary_strided(ternion_tensor dst, ternion_tensor src, ternion_fastdiv ne0, ternion_fastdiv ne1,
                                                     ternion_fastdiv ne2, float p0, float p1, ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const ternion_u32 r = ternion_fastdiv_div((ternion_u32)i, ne0);
        const ternion_i64 i0 = (ternion_i64)i - (ternion_i64)r * ne0.d;
        ternion_u32 i1, i2, i3;
        ternion_row_index(r, ne1, ne2, i1, i2, i3);
        const T * s = (const T *)((const char *)src.data + i0 * src.nb[0] + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3]);
        T * d = (T *)((char *)dst.data + i0 * dst.nb[0] + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]);
        ternion_store(d, Op::apply(ternion_load(s), p0, p1));
    }
}

// Byte offset of row (i1, i2, i3) in t.
static __device__ __forceinline__ ternion_i64 unary_row_off(const ternion_tensor & t, ternion_u32 i1, ternion_u32 i2, ternion_u32 i3) {
    return i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// GLU: dst[i] = Act(x[i])·g[i] for the n elements of dst (n < 2^31); x and g
// are descriptors in dst's shape (the halves of one tensor, or two tensors)
// whose rows are packed; nc divides by ne[0], ne1 and ne2 by ne[1], ne[2].
template <typename Act, typename T>
static __device__ __forceinline__ void glu_flat(ternion_tensor dst, ternion_tensor x, ternion_tensor g, ternion_fastdiv nc, ternion_fastdiv ne1,
                                                ternion_fastdiv ne2, ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const ternion_u32 r = ternion_fastdiv_div((ternion_u32)i, nc);
        const ternion_i64 i0 = (ternion_i64)i - (ternion_i64)r * nc.d;
        ternion_u32 i1, i2, i3;
        ternion_row_index(r, ne1, ne2, i1, i2, i3);
        const float a = ternion_load((const T *)((const char *)x.data + unary_row_off(x, i1, i2, i3)) + i0);
        const float b = ternion_load((const T *)((const char *)g.data + unary_row_off(g, i1, i2, i3)) + i0);
        ternion_store((T *)((char *)dst.data + unary_row_off(dst, i1, i2, i3)) + i0, Act::apply(a, 0.0f, 0.0f) * b);
    }
}

// glu_flat on 16-byte vectors: rows of dst, x and g 16-byte aligned and a
// whole number of vectors long; ncv divides by the vectors of a row, nv is
// the number of vectors of dst. Four vectors in flight per thread.
template <typename Act, typename T>
static __device__ __forceinline__ void glu_vec(ternion_tensor dst, ternion_tensor x, ternion_tensor g, ternion_fastdiv ncv, ternion_fastdiv ne1,
                                               ternion_fastdiv ne2, ternion_i64 nv) {
    constexpr int N = unary_vec<T>::N;
    const ternion_i64 step = TERNION_NTHREADS();
    for (ternion_i64 j0 = TERNION_TID(); j0 < nv; j0 += 4 * step) {
        float a[4][N], b[4][N];
        T * d[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 j = j0 + u * step;
            if (j < nv) {
                const ternion_u32 r = ternion_fastdiv_div((ternion_u32)j, ncv);
                const ternion_i64 i0 = ((ternion_i64)j - (ternion_i64)r * ncv.d) * N;
                ternion_u32 i1, i2, i3;
                ternion_row_index(r, ne1, ne2, i1, i2, i3);
                unary_vec<T>::load((const T *)((const char *)x.data + unary_row_off(x, i1, i2, i3)) + i0, a[u]);
                unary_vec<T>::load((const T *)((const char *)g.data + unary_row_off(g, i1, i2, i3)) + i0, b[u]);
                d[u] = (T *)((char *)dst.data + unary_row_off(dst, i1, i2, i3)) + i0;
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (j0 + u * step < nv) {
#pragma unroll
                for (int k = 0; k < N; k++) a[u][k] = Act::apply(a[u][k], 0.0f, 0.0f) * b[u][k];
                unary_vec<T>::store(d[u], a[u]);
            }
        }
    }
}

// dst[i] = src[i]*scale + bias over n4 float4 (grid-stride, four in flight
// per thread).
extern "C" __global__ void scale4_f32(float4 * dst, const float4 * src, float scale, float bias, ternion_i64 n4) {
    const ternion_i64 step = TERNION_NTHREADS();
    for (ternion_i64 i0 = TERNION_TID(); i0 < n4; i0 += 4 * step) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 i = i0 + u * step;
            if (i < n4) v[u] = src[i];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 i = i0 + u * step;
            if (i < n4) {
                dst[i] = make_float4(v[u].x * scale + bias, v[u].y * scale + bias, v[u].z * scale + bias, v[u].w * scale + bias);
            }
        }
    }
}
