// quant.cu - ggml's quantized types on the device (block formats in
// quant.h): dequantize to f32/f16 (CPY, and the BLAS path of MUL_MAT),
// GET_ROWS of quantized rows, quantize f32 rows (CPY f32 -> q4_0, q4_1,
// q5_0, q5_1, q8_0, iq4_nl, as the seed's cpy kernels do), and the
// matrix-vector product of MUL_MAT for up to 8 f32 src1 columns.
// Threads work on groups of 8 consecutive values of one block (dq8).
#include "index.h"
#include "quant.h"

// Stores 8 values at d (f32 or f16 elements, packed): one or two 16-byte
// stores where d is 16-byte aligned (a contiguous destination always is).
static __device__ __forceinline__ void quant_store8(float * d, const float * v) {
    if (((unsigned long long)d & 15) == 0) {
        ((float4 *)d)[0] = make_float4(v[0], v[1], v[2], v[3]);
        ((float4 *)d)[1] = make_float4(v[4], v[5], v[6], v[7]);
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) d[i] = v[i];
}
static __device__ __forceinline__ void quant_store8(ternion_f16 * d, const float * v) {
    ternion_u32 w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) w[i] = ternion_f32_to_f16(v[2 * i]) | ((ternion_u32)ternion_f32_to_f16(v[2 * i + 1]) << 16);
    if (((unsigned long long)d & 15) == 0) {
        *(uint4 *)d = make_uint4(w[0], w[1], w[2], w[3]);
        return;
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        d[2 * i] = (ternion_f16)(w[i] & 0xffffu);
        d[2 * i + 1] = (ternion_f16)(w[i] >> 16);
    }
}

// dst (of TD, packed rows) = src (of Q) dequantized, both of src's shape: n
// groups of 8 values; groups divides by ne[0]/8, ne1 and ne2 by ne[1],
// ne[2]. dst's data is read from *dslot when dslot is not null (the CPY
// pointer array, index.h).
template <typename Q, typename TD>
static __device__ __forceinline__ void dq(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1,
                                          ternion_fastdiv ne2, ternion_i64 n, void * const * dslot) {
    dst.data = ternion_copy_dst(dst, dslot);
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
// Stores f as f16 at p (2-byte aligned: the blocks with an f16 have even
// sizes). One 16-bit store: on sm_90, storing the bytes of the converted
// value one by one wrote a zero low byte (nvcc 13, measured on the H200).
static __device__ __forceinline__ void quant_put_f16(unsigned char * p, float f) { *(ternion_f16 *)p = ternion_f32_to_f16(f); }
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
// ne[2]. One thread per block. dst's data is read from *dslot when dslot is
// not null (the CPY pointer array, index.h).
template <typename P>
static __device__ __forceinline__ void qz(ternion_tensor dst, ternion_tensor src, ternion_fastdiv blocks, ternion_fastdiv ne1,
                                          ternion_fastdiv ne2, ternion_i64 n, void * const * dslot) {
    dst.data = ternion_copy_dst(dst, dslot);
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

// MMVQ_ROWS is how many rows of src0 one warp of mmvq multiplies: each
// group of src1 values a lane loads serves that many rows (with one row a
// warp, the f32 src1 reads were most of the L1 traffic: 69 µs for q4_0
// 4096×14336 on the H200, L1/TEX 96 % busy).
#define MMVQ_ROWS 4

// Adds the dot products of R rows x[r] (r < nr; of Q, k values, k a
// multiple of 8) with NC f32 columns y[c] (16-byte aligned) to sum[r][c],
// over the groups of 8 values first, first + stride, ...: consecutive
// threads read consecutive src1 bytes and neighbouring weight bytes.
template <typename Q, int NC, int R>
static __device__ __forceinline__ void mmvq_dot(const unsigned char * const * x, int nr, const char * const * y, ternion_i64 k,
                                                float (*sum)[NC], int first, int stride) {
    constexpr int GPB = Q::QK / 8; // groups per block
    const ternion_i64 groups = k / 8;
    for (ternion_i64 g = first; g < groups; g += stride) {
        float4 a[NC], b[NC];
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const float4 * yc = (const float4 *)y[c] + 2 * g;
            a[c] = yc[0];
            b[c] = yc[1];
        }
        const ternion_i64 blk = (g / GPB) * Q::BYTES;
        const int j = (int)(g % GPB) * 8;
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (r < nr) {
                float v[8];
                Q::dq8(x[r] + blk, j, v);
#pragma unroll
                for (int c = 0; c < NC; c++) {
                    sum[r][c] += v[0] * a[c].x + v[1] * a[c].y + v[2] * a[c].z + v[3] * a[c].w + v[4] * b[c].x + v[5] * b[c].y +
                                 v[6] * b[c].z + v[7] * b[c].w;
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

// MMVQ_WARPS is how many warps an mmvq block has: they split the row's k
// (with MMVQ_ROWS rows a warp and one warp per row group, 4096 rows gave 8
// warps an SM and a latency-bound kernel).
#define MMVQ_WARPS 4

// One block's MMVQ_ROWS rows from row0 of mmvq for NC columns (see mmvq):
// the block's warps split k, then warp 0 adds their sums.
template <typename Q, int NC>
static __device__ __forceinline__ void mmvq_rows(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_i64 row0,
                                                 ternion_u32 i02, ternion_u32 i03, ternion_u32 i12, ternion_u32 i13) {
    __shared__ float part[MMVQ_WARPS][MMVQ_ROWS * NC];
    const int nr = (int)min((ternion_i64)MMVQ_ROWS, src0.ne[1] - row0);
    const unsigned char * x[MMVQ_ROWS];
    float sum[MMVQ_ROWS][NC];
#pragma unroll
    for (int r = 0; r < MMVQ_ROWS; r++) {
        x[r] = (const unsigned char *)src0.data + (row0 + r) * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3];
#pragma unroll
        for (int c = 0; c < NC; c++) sum[r][c] = 0.0f;
    }
    const char * y[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) y[c] = (const char *)src1.data + c * src1.nb[1] + i12 * src1.nb[2] + i13 * src1.nb[3];
    mmvq_dot<Q, NC, MMVQ_ROWS>(x, nr, y, src0.ne[0], sum, threadIdx.y * TERNION_WARP_SIZE + threadIdx.x,
                               MMVQ_WARPS * TERNION_WARP_SIZE);
#pragma unroll
    for (int r = 0; r < MMVQ_ROWS; r++) {
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const float s = mmvq_warp_sum(sum[r][c]);
            if (threadIdx.x == 0) part[threadIdx.y][r * NC + c] = s;
        }
    }
    __syncthreads();
    const int i = threadIdx.x, r = i / NC, c = i % NC;
    if (threadIdx.y == 0 && i < MMVQ_ROWS * NC && r < nr) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < MMVQ_WARPS; w++) s += part[w][i];
        *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + c * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3]) = s;
    }
}

// MUL_MAT for up to 8 src1 columns: dst[row, c] = Σ_k src0[row][k]·src1[c][k]
// with src0 of Q, src1 f32 with packed, 16-byte aligned rows, batched over
// dims 2 and 3 (src0 broadcast by division: i02 = i12 / r2). Each block
// (blockDim = (warp size, MMVQ_WARPS)) computes MMVQ_ROWS rows; the column
// count is a compile-time constant per branch.
template <typename Q>
static __device__ __forceinline__ void mmvq(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                            ternion_fastdiv r3, int ncols) {
    const ternion_i64 row0 = (ternion_i64)blockIdx.x * MMVQ_ROWS;
    if (row0 >= src0.ne[1]) {
        return;
    }
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    switch (ncols) {
    case 1: mmvq_rows<Q, 1>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    case 2: mmvq_rows<Q, 2>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    case 3: mmvq_rows<Q, 3>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    case 4: mmvq_rows<Q, 4>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    case 5: mmvq_rows<Q, 5>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    case 6: mmvq_rows<Q, 6>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    case 7: mmvq_rows<Q, 7>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    default: mmvq_rows<Q, 8>(dst, src0, src1, row0, i02, i03, i12, i13); break;
    }
}

// MUL_MAT_ID (ggml_mul_mat_id) one (expert slot e, token t) pair a block
// column: dst[row, e, t] = src0[:, row, ids[e, t]] · src1[:, e % ne11, t],
// src0 of Q ([k, m, n_expert]), src1 f32 rows packed and 16-byte aligned,
// ids i32 [n_used, n_tokens]. An expert index out of range gives NaN in
// its rows and, when flag is not null, sets bit 1 of *flag (the backend's
// device error word, read after the graph: ids computed on the device are
// checked here, where checking them on the host would need a sync; the host
// checks ids it uploads before launch). Grid (m/blockDim.y, n_used,
// n_tokens).
template <typename Q>
static __device__ __forceinline__ void mmvq_id(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_tensor ids,
                                               unsigned int * flag) {
    const ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= src0.ne[1]) {
        return;
    }
    const ternion_u32 e = blockIdx.y, t = blockIdx.z;
    const int expert = *(const int *)((const char *)ids.data + e * ids.nb[0] + t * ids.nb[1]);
    float * out = (float *)((char *)dst.data + row * dst.nb[0] + e * dst.nb[1] + t * dst.nb[2]);
    if (expert < 0 || expert >= src0.ne[2]) {
        if (threadIdx.x == 0) {
            *out = __int_as_float(0x7fc00000);
            if (flag != nullptr && threadIdx.y == 0) atomicOr(flag, 1u);
        }
        return;
    }
    const unsigned char * x = (const unsigned char *)src0.data + row * src0.nb[1] + expert * src0.nb[2];
    const char * y[1] = {(const char *)src1.data + (e % src1.ne[1]) * src1.nb[1] + t * src1.nb[2]};
    float sum[1][1] = {{0.0f}};
    mmvq_dot<Q, 1, 1>(&x, 1, y, src0.ne[0], sum, threadIdx.x, TERNION_WARP_SIZE);
    const float s = mmvq_warp_sum(sum[0][0]);
    if (threadIdx.x == 0) *out = s;
}
