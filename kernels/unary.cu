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
//   gluv_{op}_{t}     the same with 16-byte vectors over evenly spaced rows
//                     (16-byte aligned).
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
// gelu with ggml's tanh approximation 0.5·x·(1 + tanh(u)), u = sqrt(2/pi)·
// x·(1 + 0.044715·x²), computed as x·sigmoid(2u) (0.5·(1 + tanh(u)) =
// 1/(1 + exp(-2u)) exactly): the logistic's two intrinsics instead of
// tanhf's branches, which left GELU f16 compute bound on the H200.
struct unary_gelu {
    static __device__ __forceinline__ float apply(float x, float, float) {
        const float c1 = -1.5957691216057307117597842397375f; // -2·sqrt(2/pi)
        const float c3 = -0.071354816272600245f;              // -2·sqrt(2/pi)·0.044715
        return __fdividef(x, 1.0f + __expf(x * (c1 + c3 * x * x)));
    }
};
struct unary_gelu_quick {
    static __device__ __forceinline__ float apply(float x, float, float) { return __fdividef(x, 1.0f + __expf(-1.702f * x)); }
};
struct unary_silu {
    static __device__ __forceinline__ float apply(float x, float, float) { return __fdividef(x, 1.0f + __expf(-x)); }
};
// (x + 3)/6 as a product: a division's IEEE slow path cost hardswish f16
// 52 registers; the product is within an ulp of the quotient.
struct unary_hardsigmoid {
    static __device__ __forceinline__ float apply(float x, float, float) { return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) * (1.0f / 6.0f))); }
};
struct unary_hardswish {
    static __device__ __forceinline__ float apply(float x, float, float) { return x * unary_hardsigmoid::apply(x, 0.0f, 0.0f); }
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

// Two f16 of a 32-bit word (low half first) as floats, and two floats
// rounded to f16 and packed into a word: on CUDA one split and two cvt
// instructions, and one cvt.rn.f16x2.f32 (sm_80 and later).
static __device__ __forceinline__ void unary_h2_to_f2(unsigned int w, float & lo, float & hi) {
#if defined(TERNION_VENDOR_CUDA)
    asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}" : "=f"(lo), "=f"(hi) : "r"(w));
#else
    lo = ternion_f16_to_f32((ternion_f16)(w & 0xffffu));
    hi = ternion_f16_to_f32((ternion_f16)(w >> 16));
#endif
}
static __device__ __forceinline__ unsigned int unary_f2_to_h2(float lo, float hi) {
#if TERNION_SM80
    return ternion_mma_type<ternion_f16>::pack(lo, hi);
#else
    return (unsigned int)ternion_f32_to_f16(lo) | ((unsigned int)ternion_f32_to_f16(hi) << 16);
#endif
}

// Op on the two f16 of a word; Act(x)·g on two pairs of f16.
template <typename Op> static __device__ __forceinline__ unsigned int unary_h2(unsigned int w, float p0, float p1) {
    float lo, hi;
    unary_h2_to_f2(w, lo, hi);
    return unary_f2_to_h2(Op::apply(lo, p0, p1), Op::apply(hi, p0, p1));
}
template <typename Act> static __device__ __forceinline__ unsigned int unary_glu_h2(unsigned int x, unsigned int g) {
    float x0, x1, g0, g1;
    unary_h2_to_f2(x, x0, x1);
    unary_h2_to_f2(g, g0, g1);
    return unary_f2_to_h2(Act::apply(x0, 0.0f, 0.0f) * g0, Act::apply(x1, 0.0f, 0.0f) * g1);
}

// unary_vec<T> is one 16-byte vector of T (N elements) as it is held in
// registers between load and store (raw: float4, or uint4 of packed f16);
// the ops convert a pair of elements at a time, so a thread keeps only the
// raw vectors it has in flight. U and UG are the vectors of each operand a
// thread loads before it stores (unary, GLU): 64 and 32 bytes an operand.
template <typename T> struct unary_vec;
template <> struct unary_vec<float> {
    typedef float4 raw;
    static constexpr int N = 4, U = 4, UG = 2;
    template <typename Op> static __device__ __forceinline__ float4 unary(float4 v, float p0, float p1) {
        return make_float4(Op::apply(v.x, p0, p1), Op::apply(v.y, p0, p1), Op::apply(v.z, p0, p1), Op::apply(v.w, p0, p1));
    }
    template <typename Act> static __device__ __forceinline__ float4 glu(float4 x, float4 g) {
        return make_float4(Act::apply(x.x, 0.0f, 0.0f) * g.x, Act::apply(x.y, 0.0f, 0.0f) * g.y, Act::apply(x.z, 0.0f, 0.0f) * g.z,
                           Act::apply(x.w, 0.0f, 0.0f) * g.w);
    }
};
template <> struct unary_vec<ternion_f16> {
    typedef uint4 raw;
    static constexpr int N = 8, U = 4, UG = 2;
    template <typename Op> static __device__ __forceinline__ uint4 unary(uint4 v, float p0, float p1) {
        return make_uint4(unary_h2<Op>(v.x, p0, p1), unary_h2<Op>(v.y, p0, p1), unary_h2<Op>(v.z, p0, p1), unary_h2<Op>(v.w, p0, p1));
    }
    template <typename Act> static __device__ __forceinline__ uint4 glu(uint4 x, uint4 g) {
        return make_uint4(unary_glu_h2<Act>(x.x, g.x), unary_glu_h2<Act>(x.y, g.y), unary_glu_h2<Act>(x.z, g.z), unary_glu_h2<Act>(x.w, g.w));
    }
};

// dst[i] = Op(src[i]) for i < n, src and dst packed and 16-byte aligned (dst
// may be src), fewer than 2^31 whole vectors (the host splits larger
// tensors; 32-bit indices keep the kernel at 32 registers): thread g takes
// vectors g, g + T, g + 2T, ... (T threads in the grid), U loaded
// (streaming: read once) before any is stored, then element nv·N + g of the
// tail (the n % N elements after the last whole vector).
template <typename Op, typename T>
static __device__ __forceinline__ void unary_contig(T * dst, const T * src, float p0, float p1, ternion_i64 n) {
    typedef unary_vec<T> V;
    typedef typename V::raw R;
    constexpr int U = V::U;
    const R * s = (const R *)src;
    R * d = (R *)dst;
    const ternion_u32 nv = (ternion_u32)(n / V::N), step = gridDim.x * blockDim.x;
    for (ternion_u32 i0 = blockIdx.x * blockDim.x + threadIdx.x; i0 < nv; i0 += U * step) {
        R v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const ternion_u32 i = i0 + u * step;
            if (i < nv) v[u] = ternion_ldcs(s + i);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const ternion_u32 i = i0 + u * step;
            if (i < nv) d[i] = V::template unary<Op>(v[u], p0, p1);
        }
    }
    const ternion_i64 t = (ternion_i64)nv * V::N + TERNION_TID();
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

// glu_flat on 16-byte vectors over evenly spaced rows: row r of dst, x and g
// starts at data + r·nb[1] (the host folds dims 2, 3 into dim 1), 16-byte
// aligned and a whole number of vectors long; ncv divides by the vectors of
// a row, nv < 2^31 is the number of vectors of dst. UG vectors of x and of g
// in flight per thread, loaded streaming (read once).
template <typename Act, typename T>
static __device__ __forceinline__ void glu_vec(ternion_tensor dst, ternion_tensor x, ternion_tensor g, ternion_fastdiv ncv, ternion_i64 nv) {
    typedef unary_vec<T> V;
    typedef typename V::raw R;
    constexpr int U = V::UG;
    const ternion_u32 step = gridDim.x * blockDim.x;
    for (ternion_u32 j0 = blockIdx.x * blockDim.x + threadIdx.x; j0 < nv; j0 += U * step) {
        R a[U], b[U];
        ternion_u32 r[U], c[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const ternion_u32 j = j0 + u * step;
            if (j < nv) {
                r[u] = ternion_fastdiv_div(j, ncv);
                c[u] = j - r[u] * ncv.d;
                a[u] = ternion_ldcs((const R *)((const char *)x.data + r[u] * x.nb[1]) + c[u]);
                b[u] = ternion_ldcs((const R *)((const char *)g.data + r[u] * g.nb[1]) + c[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (j0 + u * step < nv) ((R *)((char *)dst.data + r[u] * dst.nb[1]))[c[u]] = V::template glu<Act>(a[u], b[u]);
        }
    }
}

// ACC in one pass: dst[i] = src0[i] (both packed f32, dst may be src0),
// plus src1's element (i0, i1, i2, i3) where i - off = i0 + i1·s1 + i2·s2 +
// i3·s3 with each index inside src1's extent, for the n < 2^31 elements:
// the view of dst that ACC adds src1 into, its strides in elements nested
// (s1 ≥ ne10, s2 ≥ the span of dims 0-1, s3 ≥ that of dims 0-2; the host
// gives a dim of one element the span below it), so the division recovers
// the indices of every element of the view and no other element has all
// indices inside. src1 any strides.
extern "C" __global__ void acc_f32(float * dst, const float * src0, ternion_tensor src1, ternion_i64 off, ternion_fastdiv s1,
                                   ternion_fastdiv s2, ternion_fastdiv s3, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        float v = src0[i];
        if (i >= off) {
            const ternion_u32 o = (ternion_u32)(i - off);
            const ternion_u32 i3 = ternion_fastdiv_div(o, s3), r3 = o - i3 * s3.d;
            const ternion_u32 i2 = ternion_fastdiv_div(r3, s2), r2 = r3 - i2 * s2.d;
            const ternion_u32 i1 = ternion_fastdiv_div(r2, s1), i0 = r2 - i1 * s1.d;
            if (i0 < src1.ne[0] && i1 < src1.ne[1] && i2 < src1.ne[2] && i3 < src1.ne[3]) {
                v += *(const float *)((const char *)src1.data + i0 * src1.nb[0] + i1 * src1.nb[1] + i2 * src1.nb[2] + i3 * src1.nb[3]);
            }
        }
        dst[i] = v;
    }
}

// dst[i] = src[i]*scale + bias over n4 float4 (grid-stride, four in flight
// per thread).
extern "C" __global__ void scale4_f32(float4 * dst, const float4 * src, float scale, float bias, ternion_i64 n4) {
    TERNION_KERNEL_ENTRY();
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
