// quant.cu - ggml's quantized types on the device (block formats in
// quant.h): dequantize to f32/f16 (CPY, and the BLAS path of MUL_MAT),
// GET_ROWS of quantized rows, quantize f32 rows (CPY f32 -> q4_0, q4_1,
// q5_0, q5_1, q8_0, iq4_nl, as the seed's cpy kernels do), and the
// matrix-vector product of MUL_MAT for up to 8 f32 src1 columns.
// Threads work on groups of 8 consecutive values of one block (dq8).
#include "index.h"
#include "quant.h"

// Stores 8 values at d (f32 or f16 elements, packed).
static __device__ __forceinline__ void quant_store8(float * d, const float * v) {
#pragma unroll
    for (int i = 0; i < 8; i++) d[i] = v[i];
}
static __device__ __forceinline__ void quant_store8(ternion_f16 * d, const float * v) {
#pragma unroll
    for (int i = 0; i < 8; i++) d[i] = ternion_f32_to_f16(v[i]);
}

// dst (of TD, packed rows) = src (of Q) dequantized, both of src's shape: n
// groups of 8 values; groups divides by ne[0]/8, ne1 and ne2 by ne[1],
// ne[2].
template <typename Q, typename TD>
static __device__ __forceinline__ void dq(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1,
                                          ternion_fastdiv ne2, ternion_i64 n) {
    for (ternion_i64 g = TERNION_TID(); g < n; g += TERNION_NTHREADS()) {
        const ternion_u32 row = ternion_fastdiv_div((ternion_u32)g, groups);
        const ternion_u32 e = ((ternion_u32)g - row * groups.d) * 8;
        ternion_u32 i1, i2, i3;
        ternion_row_index(row, ne1, ne2, i1, i2, i3);
        const unsigned char * s = (const unsigned char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
        float v[8];
        Q::dq8(s + (e / Q::QK) * Q::BYTES, e % Q::QK, v);
        quant_store8((TD *)((char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]) + e, v);
    }
}

// GET_ROWS of quantized rows: dst row (i10, i11, i12) (f32, packed) = src0
// row (src1[i10, i11, i12], i11, i12) dequantized; an index out of range
// gives zeros. n groups of 8 values; groups divides by ne00/8, ne10 and
// ne11 split rows into (i10, i11, i12).
template <typename Q>
static __device__ __forceinline__ void getrows_q(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv ne10,
                                                 ternion_fastdiv ne11, ternion_fastdiv groups, ternion_i64 n) {
    for (ternion_i64 g = TERNION_TID(); g < n; g += TERNION_NTHREADS()) {
        const ternion_u32 row = ternion_fastdiv_div((ternion_u32)g, groups);
        const ternion_u32 e = ((ternion_u32)g - row * groups.d) * 8;
        ternion_u32 i10, i11, i12;
        ternion_row_index(row, ne10, ne11, i10, i11, i12);
        float * d = (float *)((char *)dst.data + i10 * dst.nb[1] + i11 * dst.nb[2] + i12 * dst.nb[3]) + e;
        const int i01 = *(const int *)((const char *)src1.data + i10 * src1.nb[0] + i11 * src1.nb[1] + i12 * src1.nb[2]);
        float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (i01 >= 0 && i01 < src0.ne[1]) {
            const unsigned char * s = (const unsigned char *)src0.data + i01 * src0.nb[1] + i11 * src0.nb[2] + i12 * src0.nb[3];
            Q::dq8(s + (e / Q::QK) * Q::BYTES, e % Q::QK, v);
        }
        quant_store8(d, v);
    }
}

// Quantizers of one block of 32 f32 values x into b, ggml's reference
// algorithms (the seed's cpy kernels use the same).
static __device__ __forceinline__ void quant_put_f16(unsigned char * p, float f) {
    const ternion_f16 h = ternion_f32_to_f16(f);
    p[0] = (unsigned char)(h & 0xff);
    p[1] = (unsigned char)(h >> 8);
}
static __device__ __forceinline__ void quant_put_u32(unsigned char * p, ternion_u32 v) {
#pragma unroll
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

// The value of largest magnitude (the first one on ties) and its magnitude.
static __device__ __forceinline__ float quant_absmax(const float * x, int n, float & amax) {
    float vmax = 0.0f;
    amax = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            vmax = x[j];
        }
    }
    return vmax;
}

struct quantize_q4_0 {
    static constexpr int QK = 32;
    static __device__ __forceinline__ void put(unsigned char * b, const float * x) {
        float amax;
        const float d = quant_absmax(x, 32, amax) / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(b, d);
        for (int j = 0; j < 16; j++) {
            const int x0 = min(15, (int)(signed char)(x[j] * id + 8.5f)), x1 = min(15, (int)(signed char)(x[16 + j] * id + 8.5f));
            b[2 + j] = (unsigned char)(x0 | (x1 << 4));
        }
    }
};

// The minimum and maximum of 32 values.
static __device__ __forceinline__ void quant_minmax(const float * x, float & lo, float & hi) {
    lo = 3.402823466e+38f;
    hi = -3.402823466e+38f;
    for (int j = 0; j < 32; j++) {
        lo = fminf(lo, x[j]);
        hi = fmaxf(hi, x[j]);
    }
}

struct quantize_q4_1 {
    static constexpr int QK = 32;
    static __device__ __forceinline__ void put(unsigned char * b, const float * x) {
        float lo, hi;
        quant_minmax(x, lo, hi);
        const float d = (hi - lo) / 15.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(b, d);
        quant_put_f16(b + 2, lo);
        for (int j = 0; j < 16; j++) {
            const int x0 = min(15, (int)(signed char)((x[j] - lo) * id + 0.5f));
            const int x1 = min(15, (int)(signed char)((x[16 + j] - lo) * id + 0.5f));
            b[4 + j] = (unsigned char)(x0 | (x1 << 4));
        }
    }
};

struct quantize_q5_0 {
    static constexpr int QK = 32;
    static __device__ __forceinline__ void put(unsigned char * b, const float * x) {
        float amax;
        const float d = quant_absmax(x, 32, amax) / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(b, d);
        ternion_u32 qh = 0;
        for (int j = 0; j < 16; j++) {
            const int x0 = min(31, (int)(signed char)(x[j] * id + 16.5f)), x1 = min(31, (int)(signed char)(x[16 + j] * id + 16.5f));
            b[6 + j] = (unsigned char)((x0 & 15) | ((x1 & 15) << 4));
            qh |= ((ternion_u32)(x0 & 0x10) >> 4) << j;
            qh |= ((ternion_u32)(x1 & 0x10) >> 4) << (j + 16);
        }
        quant_put_u32(b + 2, qh);
    }
};

struct quantize_q5_1 {
    static constexpr int QK = 32;
    static __device__ __forceinline__ void put(unsigned char * b, const float * x) {
        float lo, hi;
        quant_minmax(x, lo, hi);
        const float d = (hi - lo) / 31.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(b, d);
        quant_put_f16(b + 2, lo);
        ternion_u32 qh = 0;
        for (int j = 0; j < 16; j++) {
            const int x0 = (int)(unsigned char)((x[j] - lo) * id + 0.5f), x1 = (int)(unsigned char)((x[16 + j] - lo) * id + 0.5f);
            b[8 + j] = (unsigned char)((x0 & 15) | ((x1 & 15) << 4));
            qh |= ((ternion_u32)(x0 & 0x10) >> 4) << j;
            qh |= ((ternion_u32)(x1 & 0x10) >> 4) << (j + 16);
        }
        quant_put_u32(b + 4, qh);
    }
};

struct quantize_q8_0 {
    static constexpr int QK = 32;
    static __device__ __forceinline__ void put(unsigned char * b, const float * x) {
        float amax;
        quant_absmax(x, 32, amax);
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(b, d);
        for (int j = 0; j < 32; j++) b[2 + j] = (unsigned char)(signed char)roundf(x[j] * id);
    }
};

// The index of the iq4_nl level nearest to x (ggml's best_index_int8: the
// lower one on a tie).
static __device__ __forceinline__ int quant_iq4nl_index(float x) {
    int lo = 0, hi = 15;
    if (x <= quant_iq4nl(0)) return 0;
    if (x >= quant_iq4nl(15)) return 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < quant_iq4nl(mid)) hi = mid;
        else lo = mid;
    }
    return x - quant_iq4nl(lo) < quant_iq4nl(hi) - x ? lo : hi;
}

// iq4_nl as the seed's CPY quantizes it: d from the value of largest
// magnitude, nearest levels, then the least-squares scale Σqx/Σq².
struct quantize_iq4_nl {
    static constexpr int QK = 32;
    static __device__ __forceinline__ void put(unsigned char * b, const float * x) {
        float amax;
        const float vmax = quant_absmax(x, 32, amax);
        float d = vmax / quant_iq4nl(0);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int j = 0; j < 16; j++) {
            const int i0 = quant_iq4nl_index(x[j] * id), i1 = quant_iq4nl_index(x[16 + j] * id);
            b[2 + j] = (unsigned char)(i0 | (i1 << 4));
            const float v0 = quant_iq4nl(i0), v1 = quant_iq4nl(i1);
            const float w0 = x[j] * x[j], w1 = x[16 + j] * x[16 + j];
            sumqx += w0 * v0 * x[j] + w1 * v1 * x[16 + j];
            sumq2 += w0 * v0 * v0 + w1 * v1 * v1;
        }
        quant_put_f16(b, sumq2 > 0.0f ? sumqx / sumq2 : d);
    }
};

// dst (quantized by P, packed blocks in rows) = src (f32, packed rows), of
// one shape: n blocks; blocks divides by ne[0]/QK, ne1 and ne2 by ne[1],
// ne[2]. One thread per block.
template <typename P>
static __device__ __forceinline__ void qz(ternion_tensor dst, ternion_tensor src, ternion_fastdiv blocks, ternion_fastdiv ne1,
                                          ternion_fastdiv ne2, ternion_i64 n) {
    for (ternion_i64 k = TERNION_TID(); k < n; k += TERNION_NTHREADS()) {
        const ternion_u32 row = ternion_fastdiv_div((ternion_u32)k, blocks);
        const ternion_u32 ib = (ternion_u32)k - row * blocks.d;
        ternion_u32 i1, i2, i3;
        ternion_row_index(row, ne1, ne2, i1, i2, i3);
        const float * s = (const float *)((const char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3]) + ib * P::QK;
        unsigned char * d = (unsigned char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3] + ib * dst.nb[0];
        float x[P::QK];
#pragma unroll
        for (int j = 0; j < P::QK; j++) x[j] = s[j];
        P::put(d, x);
    }
}

// Adds the dot products of the row x (of Q, k values, k a multiple of 32)
// with up to 8 f32 columns y[c] (16-byte aligned) to sum[c]: lanes of one
// warp take runs of 32 values (a q4_0 block, an eighth of a q4_K block), so
// the loads of a block's scale and of its quants shared by two groups of 8
// are made once.
template <typename Q>
static __device__ __forceinline__ void mmvq_dot(const unsigned char * x, const char * const * y, int ncols, ternion_i64 k,
                                                float * sum) {
    const ternion_i64 runs = k / 32;
    for (ternion_i64 r = threadIdx.x; r < runs; r += TERNION_WARP_SIZE) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const ternion_i64 e = 32 * r + 8 * q;
            float v[8];
            Q::dq8(x + (e / Q::QK) * Q::BYTES, (int)(e % Q::QK), v);
#pragma unroll
            for (int c = 0; c < 8; c++) {
                if (c < ncols) {
                    const float4 * yc = (const float4 *)y[c] + e / 4;
                    const float4 a = yc[0], b = yc[1];
                    sum[c] += v[0] * a.x + v[1] * a.y + v[2] * a.z + v[3] * a.w + v[4] * b.x + v[5] * b.y + v[6] * b.z +
                              v[7] * b.w;
                }
            }
        }
    }
}

// The warp's sum of s, in every lane.
static __device__ __forceinline__ float mmvq_warp_sum(float s) {
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) s += TERNION_SHFL_XOR(s, m);
    return s;
}

// MUL_MAT for up to 8 src1 columns: dst[row, c] = Σ_k src0[row][k]·src1[c][k]
// with src0 of Q, src1 f32 with packed, 16-byte aligned rows, batched over
// dims 2 and 3 (src0 broadcast by division: i02 = i12 / r2). One warp per
// row (blockDim.x is the warp size), blockDim.y rows a block; lanes take
// groups of 8 values.
template <typename Q>
static __device__ __forceinline__ void mmvq(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                            ternion_fastdiv r3, int ncols) {
    const ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= src0.ne[1]) {
        return;
    }
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const unsigned char * x = (const unsigned char *)src0.data + row * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3];
    const char * y[8];
#pragma unroll
    for (int c = 0; c < 8; c++) y[c] = (const char *)src1.data + c * src1.nb[1] + i12 * src1.nb[2] + i13 * src1.nb[3];
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    mmvq_dot<Q>(x, y, ncols, src0.ne[0], sum);
#pragma unroll
    for (int c = 0; c < 8; c++) {
        if (c < ncols) {
            const float s = mmvq_warp_sum(sum[c]);
            if (threadIdx.x == 0) {
                *(float *)((char *)dst.data + row * dst.nb[0] + c * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3]) = s;
            }
        }
    }
}

// MUL_MAT_ID (ggml_mul_mat_id) one (expert slot e, token t) pair a block
// column: dst[row, e, t] = src0[:, row, ids[e, t]] · src1[:, e % ne11, t],
// src0 of Q ([k, m, n_expert]), src1 f32 rows packed and 16-byte aligned,
// ids i32 [n_used, n_tokens]. An expert index out of range gives NaN in
// its rows (the host checks ids it uploads). Grid (m/blockDim.y, n_used,
// n_tokens).
template <typename Q>
static __device__ __forceinline__ void mmvq_id(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_tensor ids) {
    const ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= src0.ne[1]) {
        return;
    }
    const ternion_u32 e = blockIdx.y, t = blockIdx.z;
    const int expert = *(const int *)((const char *)ids.data + e * ids.nb[0] + t * ids.nb[1]);
    float * out = (float *)((char *)dst.data + row * dst.nb[0] + e * dst.nb[1] + t * dst.nb[2]);
    if (expert < 0 || expert >= src0.ne[2]) {
        if (threadIdx.x == 0) *out = __int_as_float(0x7fc00000);
        return;
    }
    const unsigned char * x = (const unsigned char *)src0.data + row * src0.nb[1] + expert * src0.nb[2];
    const char * y[8];
    y[0] = (const char *)src1.data + (e % src1.ne[1]) * src1.nb[1] + t * src1.nb[2];
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    mmvq_dot<Q>(x, y, 1, src0.ne[0], sum);
    const float s = mmvq_warp_sum(sum[0]);
    if (threadIdx.x == 0) *out = s;
}
