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

// src1 quantized to 8 bits for mmvq8 and mmvq8t (ggml's q8_1 activations,
// laid out for aligned loads): column col of k values (k a multiple of 32)
// is k signed bytes q at yq + col·k and, per 32 values, the float4 (scale
// d, d·Σq, d·Σ of q's first 16, d·Σ of its last 16) at yd[col·k/32 + i];
// the bytes times d are the values. The sums are ggml's q8_1 s, taken of
// the quantized values so that a format's offsets (q4_0's 8, the K-quants'
// mins) round as its products do.

// q8y_cols quantizes src (f32, any strides, ne[0] a multiple of 32) into
// the columns yq/yd, column = row index i1 + ne1·(i2 + ne2·i3): n blocks of
// 32 values in all (blocks = ne[0]/32 a row), 32 threads a block (a warp or
// half of a 64-wide one), values rounded to nearest as ggml's
// quantize_q8_1 does. EARLY (q8ye, an EarlyEntry kernel): the entry has let
// the next kernel launch already, so the body waits for the kernels before
// it here (the product after it then streams its weights while the one
// before it ends).
template <bool EARLY>
static __device__ __forceinline__ void q8y_cols(ternion_tensor src, signed char * yq, float4 * yd, ternion_fastdiv blocks,
                                                ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_i64 n) {
    if (EARLY) TERNION_GRID_WAIT();
    const int lane = threadIdx.x % 32;
    const ternion_i64 step = TERNION_NTHREADS() / 32;
    for (ternion_i64 g = TERNION_TID() / 32; g < n; g += step) {
        const ternion_u32 row = ternion_fastdiv_div((ternion_u32)g, blocks);
        const ternion_u32 ib = (ternion_u32)g - row * blocks.d;
        ternion_u32 i1, i2, i3;
        ternion_row_index(row, ne1, ne2, i1, i2, i3);
        const float x = *(const float *)((const char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3] +
                                         (ternion_i64)(ib * 32 + lane) * src.nb[0]);
        float amax = fabsf(x);
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) amax = fmaxf(amax, TERNION_SHFL_XOR(amax, m));
        const float d = amax / 127.0f;
        const int q = amax == 0.0f ? 0 : (int)roundf(x / d);
        yq[(ternion_i64)g * 32 + lane] = (signed char)q;
        int half = q; // Σq of this lane's half of the block
#pragma unroll
        for (int m = 8; m > 0; m >>= 1) half += TERNION_SHFL_XOR(half, m);
        const int other = TERNION_SHFL_XOR(half, 16);
        if (lane == 0) yd[g] = make_float4(d, d * (float)(half + other), d * (float)half, d * (float)other);
    }
}

// MMVQ8_THREADS is the threads of an mmvq8 block, MMVQ8_ROWS the rows of
// src0 it multiplies (R in the functions below): each thread takes one
// 32-value item of every row per chunk, so one load of src1's bytes serves
// R rows. 2 rows a block for the one-column kernels, measured on the H200
// (m=4096 k=14336), gave q4_0 the same time, q4_K 10 % more and q8_0 5 %
// less than 4.
#define MMVQ8_THREADS 128
#define MMVQ8_ROWS 4

// A chunk of mmvq8: the blocks of a row staged in shared memory at a time,
// one item a thread; BYTES is a multiple of 16 for every format (128·BYTES
// for 32-value blocks, 16·BYTES for 256-value ones), so a 16-byte aligned
// row is read with 16-byte loads only, whatever the block size.
template <typename Q, int R>
struct mmvq8_chunk {
    static constexpr int ITEMS = Q::QK / 32;
    static constexpr int BLOCKS = MMVQ8_THREADS / ITEMS;
    static constexpr int BYTES = BLOCKS * Q::BYTES;
    static constexpr int VECS = BYTES / 16;
    static constexpr int LOADS = (R * VECS + MMVQ8_THREADS - 1) / MMVQ8_THREADS; // 16-byte loads a thread
};

// MMVQ8_ASYNC: mmvq8 stages rows with cp.async (CUDA, sm_80 and later):
// the copies of the next chunk fly while the block computes on this one, in
// two tiles, with no registers held for them. Elsewhere a chunk's loads go
// through registers into one tile.
#if TERNION_SM80
#define MMVQ8_ASYNC 1
#define MMVQ8_TILES 2
#else
#define MMVQ8_ASYNC 0
#define MMVQ8_TILES 1
#endif

// Shared memory of an mmvq8 block: the staged rows and the warps' partial
// sums.
template <typename Q, int R>
struct mmvq8_smem {
    uint4 tile[MMVQ8_TILES][R][mmvq8_chunk<Q, R>::VECS];
    float part[MMVQ8_THREADS / TERNION_WARP_SIZE][R * 8];
};

// Copies the partial last 16 bytes of a chunk of bytes bytes (only in a
// row's last chunk, when the row's bytes are not a multiple of 16) from the
// row's chunk at s to its tile at d, byte by byte.
static __device__ __forceinline__ void mmvq8_tail(unsigned char * d, const unsigned char * s, int bytes) {
    for (int k = 16 * (bytes / 16); k < bytes; k++) d[k] = s[k];
}

// Stages the nb blocks from block b0 of the nr rows x + r·xs (16-byte
// aligned) into tile (row r at tile + r·VECS). With MMVQ8_ASYNC the copies are queued as one
// cp.async group (wait for it before reading tile); else every 16-byte
// load of the chunk is issued before any store, and tile is written on
// return.
template <typename Q, int R>
static __device__ __forceinline__ void mmvq8_stage(uint4 * tile, const unsigned char * x, ternion_i64 xs, int nr, ternion_i64 b0,
                                                   int nb) {
    typedef mmvq8_chunk<Q, R> C;
    const int bytes = nb * Q::BYTES, full = bytes / 16, tid = threadIdx.x;
    x += b0 * Q::BYTES;
#if MMVQ8_ASYNC
    for (int i = tid; i < R * C::VECS; i += MMVQ8_THREADS) {
        const int r = i / C::VECS, e = i % C::VECS;
        if (r >= nr) break;
        if (e < full) {
            const unsigned int d = (unsigned int)__cvta_generic_to_shared(tile + r * C::VECS + e);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(x + r * xs + 16 * e));
        } else if (e == full && bytes % 16 != 0) {
            mmvq8_tail((unsigned char *)(tile + r * C::VECS), x + r * xs, bytes);
        }
    }
    asm volatile("cp.async.commit_group;\n" ::);
#else
    uint4 v[C::LOADS];
#pragma unroll
    for (int j = 0; j < C::LOADS; j++) {
        const int i = tid + j * MMVQ8_THREADS, r = i / C::VECS, e = i % C::VECS;
        if (i < R * C::VECS && r < nr && e < full) v[j] = ((const uint4 *)(x + r * xs))[e];
    }
#pragma unroll
    for (int j = 0; j < C::LOADS; j++) {
        const int i = tid + j * MMVQ8_THREADS, r = i / C::VECS, e = i % C::VECS;
        if (i < R * C::VECS && r < nr) {
            if (e < full) {
                tile[r * C::VECS + e] = v[j];
            } else if (e == full && bytes % 16 != 0) {
                mmvq8_tail((unsigned char *)(tile + r * C::VECS), x + r * xs, bytes);
            }
        }
    }
#endif
}

#if MMVQ8_ASYNC
// A thread's copies of a whole chunk (BLOCKS blocks of each of the nr
// rows): they sit at the same places in every chunk, so their shared
// addresses (in tile 0; TILE bytes on for tile 1) and their offsets from
// the chunk's first byte are computed once for the block's rows (rows of
// fewer than 2^30 bytes: the offsets are 32-bit), and staging a chunk is a
// cp.async a copy.
template <typename Q, int R>
struct mmvq8_plan {
    typedef mmvq8_chunk<Q, R> C;
    static constexpr unsigned int TILE = R * C::VECS * 16;
    unsigned int dst[C::LOADS], src[C::LOADS], mask;
    __device__ __forceinline__ mmvq8_plan(uint4 * tile0, ternion_i64 xs, int nr) {
        mask = 0;
#pragma unroll
        for (int j = 0; j < C::LOADS; j++) {
            const int i = threadIdx.x + j * MMVQ8_THREADS, r = i / C::VECS, e = i % C::VECS;
            dst[j] = (unsigned int)__cvta_generic_to_shared(tile0 + r * C::VECS + e);
            src[j] = (unsigned int)r * (unsigned int)xs + 16u * (unsigned int)e;
            if (i < R * C::VECS && r < nr) mask |= 1u << j;
        }
    }
    // Queues the copies of the whole chunk from block b0 of the rows at x
    // into tile t, as one cp.async group.
    __device__ __forceinline__ void stage(const unsigned char * x, ternion_i64 b0, int t) const {
        x += b0 * Q::BYTES;
#pragma unroll
        for (int j = 0; j < C::LOADS; j++) {
            if (mask & (1u << j)) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst[j] + t * TILE), "l"(x + src[j]));
            }
        }
        asm volatile("cp.async.commit_group;\n" ::);
    }
};
#endif

// Adds this thread's item of a staged chunk (item of the row; tile holds
// the chunk's blocks) times the NC columns to sum[r][c] for the nr rows.
// A thread keeps its item's src1 bytes of all NC columns in registers and
// decodes one row at a time.
template <typename Q, int NC, int R>
static __device__ __forceinline__ void mmvq8_item(const uint4 * tile, int nr, ternion_i64 item,
                                                  const signed char * const * yq, const float4 * const * yd,
                                                  float (*sum)[NC]) {
    typedef mmvq8_chunk<Q, R> C;
    const int tid = threadIdx.x;
    int y[NC][8];
    float4 ds[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const int4 y0 = ((const int4 *)(yq[c] + 32 * item))[0], y1 = ((const int4 *)(yq[c] + 32 * item))[1];
        y[c][0] = y0.x, y[c][1] = y0.y, y[c][2] = y0.z, y[c][3] = y0.w;
        y[c][4] = y1.x, y[c][5] = y1.y, y[c][6] = y1.z, y[c][7] = y1.w;
        ds[c] = yd[c][item];
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        if (r >= nr) continue;
        int q[8];
        float sc[2], mn[2];
        quant_q32<Q>((const unsigned char *)(tile + r * C::VECS) + (tid / C::ITEMS) * Q::BYTES, tid % C::ITEMS, q, sc, mn);
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int s0 = 0, s1 = 0;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                s0 = ternion_dp4a(q[i], y[c][i], s0);
                s1 = ternion_dp4a(q[4 + i], y[c][4 + i], s1);
            }
            float v = Q::SPLIT ? ds[c].x * (sc[0] * (float)s0 + sc[1] * (float)s1) : ds[c].x * sc[0] * (float)(s0 + s1);
            if (Q::MIN == 1) v -= mn[0] * ds[c].y;
            if (Q::MIN == 2) v -= mn[0] * ds[c].z + mn[1] * ds[c].w;
            sum[r][c] += v;
        }
    }
}

// The dot products of the nr rows x + r·xs (of Q, k values, 16-byte
// aligned) with NC columns quantized by q8y (yq[c], yd[c]): thread t <
// R·NC returns the one of row t / NC and column t % NC (the others
// return 0). Every thread of the block must call it.
template <typename Q, int NC, int R>
static __device__ __forceinline__ float mmvq8_block(mmvq8_smem<Q, R> & sm, const unsigned char * x, ternion_i64 xs, int nr,
                                                    ternion_i64 k, const signed char * const * yq, const float4 * const * yd) {
    typedef mmvq8_chunk<Q, R> C;
    const int tid = threadIdx.x;
    const ternion_i64 nblocks = k / Q::QK;
    float sum[R][NC];
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int c = 0; c < NC; c++) sum[r][c] = 0.0f;
    }
#if MMVQ8_ASYNC
    const mmvq8_plan<Q, R> plan(&sm.tile[0][0][0], xs, nr);
    const bool planned = xs < (1 << 30); // the plan's 32-bit offsets hold
    // Chunk at b0 into tile tt: whole chunks through the plan, the last
    // partial one (or all, for rows past the plan) copy by copy.
    auto stage = [&](ternion_i64 b, int tt) {
        if (planned && b + C::BLOCKS <= nblocks) {
            plan.stage(x, b, tt);
        } else {
            mmvq8_stage<Q, R>(&sm.tile[tt][0][0], x, xs, nr, b, (int)min((ternion_i64)C::BLOCKS, nblocks - b));
        }
    };
    stage(0, 0);
    int t = 0;
    for (ternion_i64 b0 = 0; b0 < nblocks; b0 += C::BLOCKS, t ^= 1) {
        const int nb = (int)min((ternion_i64)C::BLOCKS, nblocks - b0);
        if (b0 + C::BLOCKS < nblocks) {
            stage(b0 + C::BLOCKS, t ^ 1);
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads(); // chunk b0 is in tile t for every thread
        if (tid < nb * C::ITEMS) mmvq8_item<Q, NC, R>(&sm.tile[t][0][0], nr, b0 * C::ITEMS + tid, yq, yd, sum);
        __syncthreads(); // tile t is read before the next iteration stages into it
    }
#else
    for (ternion_i64 b0 = 0; b0 < nblocks; b0 += C::BLOCKS) {
        const int nb = (int)min((ternion_i64)C::BLOCKS, nblocks - b0);
        __syncthreads(); // the previous chunk's reads of the tile are done
        mmvq8_stage<Q, R>(&sm.tile[0][0][0], x, xs, nr, b0, nb);
        __syncthreads();
        if (tid < nb * C::ITEMS) mmvq8_item<Q, NC, R>(&sm.tile[0][0][0], nr, b0 * C::ITEMS + tid, yq, yd, sum);
    }
#endif
    const int warp = tid / TERNION_WARP_SIZE, lane = tid % TERNION_WARP_SIZE;
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const float s = mmvq_warp_sum(sum[r][c]);
            if (lane == 0) sm.part[warp][r * NC + c] = s;
        }
    }
    __syncthreads();
    float s = 0.0f;
    if (tid < R * NC) {
#pragma unroll
        for (int w = 0; w < MMVQ8_THREADS / TERNION_WARP_SIZE; w++) s += sm.part[w][tid];
    }
    return s;
}

// R rows from row0 of mmvq8 for NC columns (see mmvq8).
template <typename Q, int NC, int R>
static __device__ __forceinline__ void mmvq8_rows(mmvq8_smem<Q, R> & sm, ternion_tensor dst, ternion_tensor src0, const signed char * yq,
                                                  const float4 * yd, ternion_i64 row0, ternion_u32 i02, ternion_u32 i03,
                                                  ternion_u32 i12, ternion_u32 i13) {
    const int nr = (int)min((ternion_i64)R, src0.ne[1] - row0);
    const ternion_i64 k = src0.ne[0];
    const unsigned char * x = (const unsigned char *)src0.data + row0 * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3];
    const signed char * yqc[NC];
    const float4 * ydc[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const ternion_i64 col = c + dst.ne[1] * (i12 + dst.ne[2] * i13);
        yqc[c] = yq + col * k;
        ydc[c] = yd + col * (k / 32);
    }
    const float s = mmvq8_block<Q, NC, R>(sm, x, src0.nb[1], nr, k, yqc, ydc);
    const int t = threadIdx.x, r = t / NC, c = t % NC;
    if (t < R * NC && r < nr) {
        *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + c * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3]) = s;
    }
}

// MUL_MAT for up to 8 src1 columns against src1 quantized by q8y (yq, yd;
// the columns of dst's dims 1..3 in order): dst[row, c] = Σ_k
// src0[row][k]·src1[c][k], src0 of Q with 16-byte aligned rows, batched over
// dims 2 and 3 (i02 = i12 / r2). Blocks of MMVQ8_THREADS threads,
// R rows each; grid (rows/R, ne12, ne13). NCMAX 1 is
// the kernel for one column (compiled alone: the registers the 8-column
// case needs would halve its occupancy), 8 the one for 1..8.
template <typename Q, int NCMAX>
static __device__ __forceinline__ void mmvq8(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd,
                                             ternion_fastdiv r2, ternion_fastdiv r3, int ncols) {
    constexpr int R = MMVQ8_ROWS;
    __shared__ mmvq8_smem<Q, R> sm;
    const ternion_i64 row0 = (ternion_i64)blockIdx.x * R;
    if (row0 >= src0.ne[1]) {
        return;
    }
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const signed char * q = (const signed char *)yq;
    const float4 * d = (const float4 *)yd;
    if (NCMAX == 1) {
        mmvq8_rows<Q, 1, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13);
        return;
    }
    switch (ncols) {
    case 1: mmvq8_rows<Q, 1, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    case 2: mmvq8_rows<Q, 2, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    case 3: mmvq8_rows<Q, 3, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    case 4: mmvq8_rows<Q, 4, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    case 5: mmvq8_rows<Q, 5, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    case 6: mmvq8_rows<Q, 6, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    case 7: mmvq8_rows<Q, 7, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    default: mmvq8_rows<Q, 8, R>(sm, dst, src0, q, d, row0, i02, i03, i12, i13); break;
    }
}

// mmvq8t: mmvq8 on the tensor cores (NVIDIA, arch 8.0 and later; elsewhere
// its body is empty and the planner never launches it). A block of
// MMVQ8T_WARPS warps takes MMVQ8T_ROWS = 16 rows (the M of one
// mma.m16n8k32) and up to 8 columns (its N); the warps split k in chunks
// (warp w takes chunks w, w + 8, …), each staging its chunks (16 rows'
// bytes, the columns' bytes and their float4) into its own shared-memory
// slots with cp.async, so the copies of the next chunks fly while it
// multiplies this one. Per 32-value item lane 4g + t decodes words t and 4
// + t (values 4t … 4t + 3 and 16 + 4t … 16 + 4t + 3) of rows g and g + 8,
// which is its part of the mma's A fragment; one mma gives the item's 16×8
// integer dot products, and each lane scales its 4 (rows g, g + 8; columns
// 2t, 2t + 1) by the row's and the column's scales.
#define MMVQ8T_WARPS 8
#define MMVQ8T_ROWS 16
#define MMVQ8T_STAGES 2
#define MMVQ8T_COLS 8 // column slots: the mma's N

// The fewest blocks of bytes bytes whose size is a multiple of 16.
static __host__ __device__ constexpr int mmvq8t_align_blocks(int bytes) {
    return bytes % 16 == 0 ? 1 : bytes % 8 == 0 ? 2 : bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 8 : 16;
}

// The chunk of mmvq8t for format Q: BLOCKS blocks of a
// row (ITEMS 32-value items, at least 8; BLOCKS·Q::BYTES a multiple of 16),
// and a warp's slot for one: the 16 rows' bytes (ROW_BYTES each), each
// column's ITEMS·32 bytes (YSTRIDE apart: 16 bytes of padding keep the
// fragment loads free of bank conflicts), each column's ITEMS float4.
// MMVQ8T_STAGES slots a warp (4 would not fit q8_0's 8 columns; 2 keep 2
// blocks an SM); SHARED is a block's dynamic shared memory (core/ops
// computes the same: mmvq8tShared).
template <typename Q>
struct mmvq8t_chunk {
    static constexpr int IPB = Q::QK / 32;
    static constexpr int BLOCKS = mmvq8t_align_blocks(Q::BYTES) * IPB >= 8 ? mmvq8t_align_blocks(Q::BYTES) : 8 / IPB;
    static constexpr int ITEMS = BLOCKS * IPB;
    static constexpr int ROW_BYTES = BLOCKS * Q::BYTES;
    static constexpr int YSTRIDE = ITEMS * 32 + 16;
    static constexpr int Y_OFF = MMVQ8T_ROWS * ROW_BYTES;
    static constexpr int D_OFF = Y_OFF + MMVQ8T_COLS * YSTRIDE;
    static constexpr int SLOT = D_OFF + MMVQ8T_COLS * ITEMS * 16;
    static constexpr int STAGES = MMVQ8T_STAGES;
    static constexpr int SHARED = MMVQ8T_WARPS * STAGES * SLOT;
    static_assert(ITEMS <= 16 && !Q::SPLIT && Q::MIN < 2, "mmvq8t takes formats of one scale an item and chunks of at most 16 items");
};

#if TERNION_SM80
// c = a·b for one m16n8k32 tile of signed bytes (i32 products).
static __device__ __forceinline__ void mmvq8t_mma(int * c, int a0, int a1, int a2, int a3, int b0, int b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
}

// Queues the 16-byte copy of global g to shared s.
static __device__ __forceinline__ void mmvq8t_cp16(void * s, const void * g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned int)__cvta_generic_to_shared(s)), "l"(g));
}

// Queues the copies of one chunk into slot: of the nr rows xc + r·xs (the
// chunk's bytes bytes of each, 16-byte aligned), and of the ncols columns
// yq + cols[c]·ys (items·32 bytes each) and yd + cols[c]·ds (items float4s
// each; cols in shared memory). FULL:
// the chunk is whole (bytes = ROW_BYTES, items = ITEMS). Each lane's copies
// sit at the same places in every chunk, so their offsets are computed
// once. The caller commits the group.
template <typename Q, bool FULL>
static __device__ __forceinline__ void mmvq8t_stage(unsigned char * slot, const unsigned char * xc, ternion_i64 xs, int nr, int bytes,
                                                    const signed char * yq, ternion_i64 ys, const float4 * yd, ternion_i64 ds,
                                                    const ternion_i64 * cols, int ncols, int items, int lane) {
    typedef mmvq8t_chunk<Q> C;
    constexpr int VECS = C::ROW_BYTES / 16, XV = MMVQ8T_ROWS * VECS, YV = MMVQ8T_COLS * C::ITEMS * 2, DV = MMVQ8T_COLS * C::ITEMS;
#pragma unroll
    for (int u = 0; u < (XV + 31) / 32; u++) {
        const int i = lane + 32 * u, r = i / VECS, e = i % VECS;
        if ((XV % 32 != 0 && i >= XV) || r >= nr) continue;
        if (FULL || 16 * e + 16 <= bytes) {
            mmvq8t_cp16(slot + r * C::ROW_BYTES + 16 * e, xc + r * xs + 16 * e);
        } else if (16 * e < bytes) {
            mmvq8_tail(slot + r * C::ROW_BYTES, xc + r * xs, bytes);
        }
    }
#pragma unroll
    for (int u = 0; u < (YV + 31) / 32; u++) {
        const int i = lane + 32 * u, c = i / (2 * C::ITEMS), e = i % (2 * C::ITEMS);
        if ((YV % 32 == 0 || i < YV) && c < ncols && (FULL || e < 2 * items)) {
            mmvq8t_cp16(slot + C::Y_OFF + c * C::YSTRIDE + 16 * e, yq + cols[c] * ys + 16 * e);
        }
    }
#pragma unroll
    for (int u = 0; u < (DV + 31) / 32; u++) {
        const int i = lane + 32 * u, c = i / C::ITEMS, e = i % C::ITEMS;
        if ((DV % 32 == 0 || i < DV) && c < ncols && (FULL || e < items)) {
            mmvq8t_cp16(slot + C::D_OFF + 16 * (c * C::ITEMS + e), yd + cols[c] * ds + e);
        }
    }
}

// Stages chunk ci (of nchunks; the last may be partial) into slot.
template <typename Q>
static __device__ __forceinline__ void mmvq8t_stage_chunk(unsigned char * slot, const unsigned char * x, ternion_i64 xs, int nr,
                                                          ternion_i64 rowbytes, const signed char * yq, const float4 * yd,
                                                          const ternion_i64 * cols, ternion_i64 k, int ncols, ternion_i64 ci,
                                                          ternion_i64 nchunks, int lane) {
    typedef mmvq8t_chunk<Q> C;
    const ternion_i64 item0 = ci * C::ITEMS;
    if (ci + 1 < nchunks) {
        mmvq8t_stage<Q, true>(slot, x + ci * C::ROW_BYTES, xs, nr, C::ROW_BYTES, yq + item0 * 32, k, yd + item0, k / 32,
                                  cols, ncols, C::ITEMS, lane);
    } else {
        mmvq8t_stage<Q, false>(slot, x + ci * C::ROW_BYTES, xs, nr, (int)(rowbytes - ci * C::ROW_BYTES), yq + item0 * 32, k,
                                   yd + item0, k / 32, cols, ncols, (int)(k / 32 - item0), lane);
    }
}

// Adds the items items of the chunk in slot to lane 4g + t's acc: rows g
// and g + 8 times columns 2t and 2t + 1 (acc[0], acc[1] row g; acc[2],
// acc[3] row g + 8). FULL: items is the chunk's ITEMS (no branch between
// the items, so their loads can be issued together).
template <typename Q, bool FULL>
static __device__ __forceinline__ void mmvq8t_dot(const unsigned char * slot, int items, int ncols, int g, int t, float * acc) {
    typedef mmvq8t_chunk<Q> C;
    const unsigned char * x0 = slot + g * C::ROW_BYTES;
    const unsigned char * x1 = slot + (g + 8) * C::ROW_BYTES;
    const unsigned char * yc = slot + C::Y_OFF + g * C::YSTRIDE + 4 * t;
    const bool yin = g < ncols;
    // the float4s of columns 2t and 2t + 1 (a lane's results for columns
    // past ncols are never written)
    const float4 * d0 = (const float4 *)(slot + C::D_OFF) + 2 * t * C::ITEMS;
    const float4 * d1 = d0 + C::ITEMS;
    // Items in groups of 4: every load of a group first, then its mmas, then
    // the scaling, so that the shared-memory and mma latencies of 4 items
    // overlap (one item at a time, a warp waited on each in turn).
    constexpr int G = 2;
#pragma unroll
    for (int j0 = 0; j0 < C::ITEMS; j0 += G) {
        int a[G][4], y[G][2], c[G][4];
        float s0[G][2], m0[G][2], s1[G][2], m1[G][2];
        float4 e0[G], e1[G];
#pragma unroll
        for (int u = 0; u < G; u++) {
            const int j = j0 + u;
            if (!FULL && j >= items) continue;
            const unsigned char * b0 = x0 + (j / C::IPB) * Q::BYTES;
            const unsigned char * b1 = x1 + (j / C::IPB) * Q::BYTES;
            const int it = j % C::IPB;
            Q::scales(b0, it, s0[u], m0[u]);
            Q::scales(b1, it, s1[u], m1[u]);
            a[u][0] = Q::word(b0, it, t);
            a[u][1] = Q::word(b1, it, t);
            a[u][2] = Q::word(b0, it, 4 + t);
            a[u][3] = Q::word(b1, it, 4 + t);
            y[u][0] = yin ? *(const int *)(yc + 32 * j) : 0;
            y[u][1] = yin ? *(const int *)(yc + 32 * j + 16) : 0;
            e0[u] = d0[j];
            e1[u] = d1[j];
        }
#pragma unroll
        for (int u = 0; u < G; u++) {
            if (!FULL && j0 + u >= items) continue;
            mmvq8t_mma(c[u], a[u][0], a[u][1], a[u][2], a[u][3], y[u][0], y[u][1]);
        }
#pragma unroll
        for (int u = 0; u < G; u++) {
            if (!FULL && j0 + u >= items) continue;
            acc[0] += s0[u][0] * (e0[u].x * (float)c[u][0]);
            acc[2] += s1[u][0] * (e0[u].x * (float)c[u][2]);
            acc[1] += s0[u][0] * (e1[u].x * (float)c[u][1]);
            acc[3] += s1[u][0] * (e1[u].x * (float)c[u][3]);
            if (Q::MIN == 1) {
                acc[0] -= m0[u][0] * e0[u].y;
                acc[2] -= m1[u][0] * e0[u].y;
                acc[1] -= m0[u][0] * e1[u].y;
                acc[3] -= m1[u][0] * e1[u].y;
            }
        }
    }
}
#endif

// The dot products of the nr ≤ 16 rows x + r·xs (of Q, k values, 16-byte
// aligned) with ncols ≤ 8 columns quantized by q8y (column c's bytes at
// yq + cols[c]·k, its float4s at yd + cols[c]·k/32; cols in shared memory,
// written before a __syncthreads): thread i < 128 returns the one of row i
// / 8 and column i % 8 (0 for the others). Every thread of the block must
// call it; smem is the block's dynamic shared memory (mmvq8t_chunk's
// SHARED bytes).
template <typename Q>
static __device__ __forceinline__ float mmvq8t_block(unsigned char * smem, const unsigned char * x, ternion_i64 xs, int nr,
                                                     ternion_i64 k, const signed char * yq, const float4 * yd,
                                                     const ternion_i64 * cols, int ncols) {
#if TERNION_SM80
    typedef mmvq8t_chunk<Q> C;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    unsigned char * slots = smem + warp * C::STAGES * C::SLOT;
    const ternion_i64 nitems = k / 32, rowbytes = k / Q::QK * Q::BYTES;
    const ternion_i64 nchunks = (nitems + C::ITEMS - 1) / C::ITEMS;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; s++) {
        const ternion_i64 ci = warp + (ternion_i64)s * MMVQ8T_WARPS;
        if (ci < nchunks) mmvq8t_stage_chunk<Q>(slots + s * C::SLOT, x, xs, nr, rowbytes, yq, yd, cols, k, ncols, ci, nchunks, lane);
        asm volatile("cp.async.commit_group;\n" ::); // an empty group past the end keeps the count
    }
    int s = 0;
    for (ternion_i64 ci = warp; ci < nchunks; ci += MMVQ8T_WARPS) {
        const ternion_i64 cn = ci + (ternion_i64)(C::STAGES - 1) * MMVQ8T_WARPS;
        const int sn = (s + C::STAGES - 1) % C::STAGES;
        if (cn < nchunks) mmvq8t_stage_chunk<Q>(slots + sn * C::SLOT, x, xs, nr, rowbytes, yq, yd, cols, k, ncols, cn, nchunks, lane);
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group %0;\n" ::"n"(C::STAGES - 1));
        __syncwarp(); // chunk ci is in slot s for every lane (the tails' plain stores too)
        if (ci + 1 < nchunks) {
            mmvq8t_dot<Q, true>(slots + s * C::SLOT, C::ITEMS, ncols, g, t, acc);
        } else {
            mmvq8t_dot<Q, false>(slots + s * C::SLOT, (int)(nitems - ci * C::ITEMS), ncols, g, t, acc);
        }
        __syncwarp(); // slot s is read before a later iteration stages into it
        s = s + 1 == C::STAGES ? 0 : s + 1;
    }
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads(); // every warp is done with its slots: they hold the partial sums now
    float * part = (float *)smem; // [warp][row][column]
    part[(warp * 16 + g) * 8 + 2 * t] = acc[0];
    part[(warp * 16 + g) * 8 + 2 * t + 1] = acc[1];
    part[(warp * 16 + g + 8) * 8 + 2 * t] = acc[2];
    part[(warp * 16 + g + 8) * 8 + 2 * t + 1] = acc[3];
    __syncthreads();
    float r = 0.0f;
    if (tid < 128) {
#pragma unroll
        for (int w = 0; w < MMVQ8T_WARPS; w++) r += part[w * 128 + tid];
    }
    return r;
#else
    return 0.0f;
#endif
}

#if TERNION_SM80
// Whether the launch gave the block mmvq8t_chunk<Q>'s SHARED bytes of
// dynamic shared memory.
template <typename Q>
static __device__ __forceinline__ bool mmvq8t_shared_ok() {
    unsigned int shared;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(shared));
    return shared >= (unsigned int)mmvq8t_chunk<Q>::SHARED;
}
#endif

// MUL_MAT for ncols ≤ 8 src1 columns against src1 quantized by q8y, as
// mmvq8 computes it, on the tensor cores: src0 of Q with 16-byte aligned
// rows, blocks of MMVQ8T_WARPS·32 threads, 16 rows each, grid (rows/16,
// ne12, ne13), mmvq8t_chunk<Q>'s SHARED bytes of dynamic shared memory
// (a launch with less writes NaN rows, never past its memory).
template <typename Q>
static __device__ __forceinline__ void mmvq8t(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd,
                                              ternion_fastdiv r2, ternion_fastdiv r3, int ncols) {
#if TERNION_SM80
    extern __shared__ __align__(16) unsigned char mmvq8t_smem[];
    const ternion_i64 row0 = (ternion_i64)blockIdx.x * MMVQ8T_ROWS;
    if (row0 >= src0.ne[1]) {
        return;
    }
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const int nr = (int)min((ternion_i64)MMVQ8T_ROWS, src0.ne[1] - row0), nc = ncols;
    const int r = threadIdx.x / 8, c = threadIdx.x % 8;
    char * out = (char *)dst.data + (row0 + r) * dst.nb[0] + c * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3];
    if (!mmvq8t_shared_ok<Q>()) {
        if (threadIdx.x < 128 && r < nr && c < nc) *(float *)out = __int_as_float(0x7fc00000);
        return;
    }
    __shared__ ternion_i64 cols[8];
    if (threadIdx.x < 8) cols[threadIdx.x] = dst.ne[1] * (i12 + dst.ne[2] * i13) + threadIdx.x;
    __syncthreads();
    const unsigned char * x = (const unsigned char *)src0.data + row0 * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3];
    const float v = mmvq8t_block<Q>(mmvq8t_smem, x, src0.nb[1], nr, src0.ne[0], (const signed char *)yq, (const float4 *)yd, cols, nc);
    if (threadIdx.x < 128 && r < nr && c < nc) *(float *)out = v;
#endif
}

// MUL_MAT_ID for many tokens: the (expert slot, token) pairs grouped by
// expert, so each expert's rows are read once for up to 8 of its pairs
// (mmvq8_idg) instead of once per pair. MMID_TILE is the pairs of a tile.
#define MMID_TILE 8

// mmid_group groups MUL_MAT_ID's pairs p = e + n_used·t (ids [n_used,
// n_tokens], i32) by expert, in one block: list (n_pairs i32) gets the pairs
// of expert 0, then of expert 1, ...; tiles (max_tiles pairs of i32) gets,
// for each run of up to MMID_TILE pairs of one expert, its first index in
// list and expert | count << 16, then count 0 up to max_tiles (max_tiles >=
// n_experts + n_pairs / MMID_TILE). A pair whose expert is out of range is
// left out: its dst rows (dst [m, n_used, n_tokens] f32) become NaN and bit 1
// of *flag is set when flag is not null. Dynamic shared memory: 2·n_experts
// ints; n_experts < 65536.
extern "C" __global__ void mmid_group(ternion_tensor ids, ternion_tensor dst, int n_experts, void * list, void * tiles, int max_tiles,
                                      unsigned int * flag) {
    TERNION_KERNEL_ENTRY();
    extern __shared__ int mmid_smem[];
    __shared__ int ntiles;
    int * cnt = mmid_smem, * cur = mmid_smem + n_experts;
    int * out = (int *)list, * tl = (int *)tiles;
    const int n_used = (int)ids.ne[0], n_pairs = n_used * (int)ids.ne[1], tid = threadIdx.x;
    for (int x = tid; x < n_experts; x += blockDim.x) cnt[x] = 0;
    __syncthreads();
    for (int p = tid; p < n_pairs; p += blockDim.x) {
        const int e = p % n_used, t = p / n_used;
        const int x = *(const int *)((const char *)ids.data + e * ids.nb[0] + t * ids.nb[1]);
        if (x >= 0 && x < n_experts) {
            atomicAdd(&cnt[x], 1);
            continue;
        }
        for (ternion_i64 r = 0; r < dst.ne[0]; r++) {
            *(float *)((char *)dst.data + r * dst.nb[0] + e * dst.nb[1] + t * dst.nb[2]) = __int_as_float(0x7fc00000);
        }
        if (flag != nullptr) atomicOr(flag, 1u);
    }
    __syncthreads();
    if (tid == 0) {
        int off = 0, n = 0;
        for (int x = 0; x < n_experts; x++) {
            const int c = cnt[x];
            cur[x] = off;
            for (int j = 0; j < c; j += MMID_TILE, n++) {
                tl[2 * n] = off + j;
                tl[2 * n + 1] = x | (min(MMID_TILE, c - j) << 16);
            }
            off += c;
        }
        ntiles = n;
    }
    __syncthreads();
    for (int i = ntiles + tid; i < max_tiles; i += blockDim.x) tl[2 * i + 1] = 0;
    for (int p = tid; p < n_pairs; p += blockDim.x) {
        const int e = p % n_used, t = p / n_used;
        const int x = *(const int *)((const char *)ids.data + e * ids.nb[0] + t * ids.nb[1]);
        if (x >= 0 && x < n_experts) out[atomicAdd(&cur[x], 1)] = p;
    }
}

// The pairs of mmid_group's tile blockIdx.y (in list), with their count
// and expert; nullptr for a tile at or past max_tiles or of count 0.
static __device__ __forceinline__ const int * mmid_tile(const void * list, const void * tiles, int max_tiles, int & count,
                                                        int & expert) {
    if ((int)blockIdx.y >= max_tiles) {
        return nullptr;
    }
    const int * tl = (const int *)tiles + 2 * blockIdx.y;
    count = tl[1] >> 16;
    expert = tl[1] & 0xffff;
    return count == 0 ? nullptr : (const int *)list + tl[0];
}

// One tile of mmvq8_idg with NC pairs (its count).
template <typename Q, int NC, int R>
static __device__ __forceinline__ void mmvq8_idg_tile(mmvq8_smem<Q, R> & sm, ternion_tensor dst, ternion_tensor src0, const void * yq,
                                                      const void * yd, int ne11, int n_used, const int * pairs, int expert,
                                                      ternion_i64 row0) {
    const int nr = (int)min((ternion_i64)R, src0.ne[1] - row0);
    const ternion_i64 k = src0.ne[0];
    const signed char * yqc[NC];
    const float4 * ydc[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const int p = pairs[c], e = p % n_used, t = p / n_used;
        const ternion_i64 col = e % ne11 + (ternion_i64)ne11 * t;
        yqc[c] = (const signed char *)yq + col * k;
        ydc[c] = (const float4 *)yd + col * (k / 32);
    }
    const unsigned char * x = (const unsigned char *)src0.data + row0 * src0.nb[1] + expert * src0.nb[2];
    const float s = mmvq8_block<Q, NC, R>(sm, x, src0.nb[1], nr, k, yqc, ydc);
    const int i = threadIdx.x, r = i / NC, c = i % NC;
    if (i < R * NC && r < nr) {
        const int p = pairs[c], e = p % n_used, t = p / n_used;
        *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + e * dst.nb[1] + t * dst.nb[2]) = s;
    }
}

// MUL_MAT_ID over mmid_group's tiles (list, tiles): block (bx, by) computes
// rows 4·bx … of tile by's pairs (up to 8 of one expert) against src1
// quantized by q8y (column (e % ne11) + ne11·t), dst [m, n_used, n_tokens];
// a tile of count 0 (or by >= max_tiles) does nothing. src0 of Q with
// 16-byte aligned rows.
// Blocks of MMVQ8_THREADS threads; grid (rows/R, max_tiles).
template <typename Q>
static __device__ __forceinline__ void mmvq8_idg(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd, int ne11,
                                                 int n_used, const void * list, const void * tiles, int max_tiles) {
    constexpr int R = MMVQ8_ROWS;
    __shared__ mmvq8_smem<Q, R> sm;
    const ternion_i64 row0 = (ternion_i64)blockIdx.x * R;
    int count, expert;
    const int * pairs = mmid_tile(list, tiles, max_tiles, count, expert);
    if (pairs == nullptr || row0 >= src0.ne[1]) {
        return;
    }
    switch (count) {
    case 1: mmvq8_idg_tile<Q, 1, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    case 2: mmvq8_idg_tile<Q, 2, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    case 3: mmvq8_idg_tile<Q, 3, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    case 4: mmvq8_idg_tile<Q, 4, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    case 5: mmvq8_idg_tile<Q, 5, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    case 6: mmvq8_idg_tile<Q, 6, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    case 7: mmvq8_idg_tile<Q, 7, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    default: mmvq8_idg_tile<Q, 8, R>(sm, dst, src0, yq, yd, ne11, n_used, pairs, expert, row0); break;
    }
}

// MUL_MAT_ID over mmid_group's tiles on the tensor cores (mmvq8_idg's
// work, as mmvq8t does mmvq8's): block (bx, by) computes rows 16·bx … of
// tile by's pairs (up to 8 of one expert, the columns of one mma) against
// src1 quantized by q8y (column (e % ne11) + ne11·t), dst [m, n_used,
// n_tokens]; a tile of count 0 (or by >= max_tiles) does nothing. src0 of Q
// with 16-byte aligned rows. Blocks of MMVQ8T_WARPS·32 threads, grid
// (rows/16, max_tiles), mmvq8t_chunk<Q>'s SHARED bytes of dynamic shared
// memory (less: NaN rows).
template <typename Q>
static __device__ __forceinline__ void mmvq8t_idg(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd, int ne11,
                                                  int n_used, const void * list, const void * tiles, int max_tiles) {
#if TERNION_SM80
    extern __shared__ __align__(16) unsigned char mmvq8t_smem[];
    const ternion_i64 row0 = (ternion_i64)blockIdx.x * MMVQ8T_ROWS;
    int count, expert;
    const int * pairs = mmid_tile(list, tiles, max_tiles, count, expert);
    if (pairs == nullptr || row0 >= src0.ne[1]) {
        return;
    }
    const int nr = (int)min((ternion_i64)MMVQ8T_ROWS, src0.ne[1] - row0);
    const int r = threadIdx.x / 8, c = threadIdx.x % 8;
    const int p = pairs[min(c, count - 1)], e = p % n_used, t = p / n_used;
    char * out = (char *)dst.data + (row0 + r) * dst.nb[0] + e * dst.nb[1] + t * dst.nb[2];
    if (!mmvq8t_shared_ok<Q>()) {
        if (threadIdx.x < 128 && r < nr && c < count) *(float *)out = __int_as_float(0x7fc00000);
        return;
    }
    __shared__ ternion_i64 cols[8];
    if (threadIdx.x < 8) cols[threadIdx.x] = e % ne11 + (ternion_i64)ne11 * t;
    __syncthreads();
    const unsigned char * x = (const unsigned char *)src0.data + row0 * src0.nb[1] + expert * src0.nb[2];
    const float v = mmvq8t_block<Q>(mmvq8t_smem, x, src0.nb[1], nr, src0.ne[0], (const signed char *)yq, (const float4 *)yd, cols,
                                       count);
    if (threadIdx.x < 128 && r < nr && c < count) *(float *)out = v;
#endif
}

// mmvq8w: MUL_MAT of one src1 column quantized by q8y with src0 rows of
// q4_0, q8_0, q4_K, q5_K or q6_K, k a multiple of 256 and rows a multiple of 16
// bytes (NVIDIA, arch 8.0 and later: cp.async; elsewhere an empty body the
// planner never launches). A warp takes one row at a time and its lanes
// take groups of 256 values (8 q4_0 blocks of 18 bytes or 8 q8_0 blocks of
// 34, one q4_K, q5_K or q6_K block of 144, 176 or 210): a lane copies its
// group from shared memory with 16-byte loads (4-byte ones for q6_K, whose
// groups start 2-byte aligned) and decodes the blocks from whole words (a
// funnel shift where a field starts at 2 mod 4) instead of mmvq8's 2-byte
// loads (a third of mmvq8's instructions a value). Each warp streams its
// rows in chunks of 32 groups through a ring of MMVQ8W_STAGES shared-memory
// slots filled by cp.async; the block stages src1's bytes and float4s once,
// swizzled (unit u of group g at u ^ (g & 7)) so that the 8 lanes of one
// 16-byte shared load phase read 8 different bank groups. The 4-bit
// formats multiply their high nibbles in place (q & 0xf0f0f0f0 as unsigned
// bytes) and shift the sum right by 4, exact since it is a multiple of 16.
// Warp wg of the grid takes units wg, wg + nw, … (nw the grid's warps; warp
// w of block b is wg = w·gridDim.x + b, so that a grid of more warps than
// units keeps every block busy), so a grid of at most one block a
// multiprocessor covers any m (and launches early, programmatic dependent
// launch, while q8y ends). A unit is one row
// when a row has 32 groups or more, or its rows are not packed; otherwise
// 32 / groups consecutive rows (one contiguous copy), so that short rows
// (k = 2048: 8 groups) keep all 32 lanes busy: lane l takes group l % groups
// of row l / groups, and each row's lanes sum in a segmented reduction.
// mmvq8w_id multiplies the experts' rows of MUL_MAT_ID the same way.
#define MMVQ8W_STAGES 2

// The group layout and warps a block of mmvq8w for format Q: GROUP bytes
// of 256 values, WARPS warps (measured on the H200, m=4096 k=14336:
// bench/README.md).
template <typename Q> struct mmvq8w_fmt;
template <> struct mmvq8w_fmt<ternion_q4_0> { static constexpr int GROUP = 144, WARPS = 16; };
template <> struct mmvq8w_fmt<ternion_q8_0> { static constexpr int GROUP = 272, WARPS = 8; };
template <> struct mmvq8w_fmt<ternion_q4_K> { static constexpr int GROUP = 144, WARPS = 16; };
template <> struct mmvq8w_fmt<ternion_q5_K> { static constexpr int GROUP = 176, WARPS = 16; };
template <> struct mmvq8w_fmt<ternion_q6_K> { static constexpr int GROUP = 210, WARPS = 8; };

#if TERNION_SM80
// Word i of a group held as 16-byte units.
template <int U>
static __device__ __forceinline__ ternion_u32 mmvq8w_word(const uint4 (&x)[U], int i) {
    const uint4 & v = x[i / 4];
    return i % 4 == 0 ? v.x : i % 4 == 1 ? v.y : i % 4 == 2 ? v.z : v.w;
}

// Bytes o … o + 3 of a group (o even) as a little-endian word.
template <int U>
static __device__ __forceinline__ ternion_u32 mmvq8w_ld32(const uint4 (&x)[U], int o) {
    return o % 4 == 0 ? mmvq8w_word(x, o / 4) : __funnelshift_r(mmvq8w_word(x, o / 4), mmvq8w_word(x, o / 4 + 1), 16);
}

// The f16 in the low (hi false) or high half of w, as float.
static __device__ __forceinline__ float mmvq8w_half(ternion_u32 w, bool hi) {
    return ternion_f16_to_f32((ternion_f16)(hi ? w >> 16 : w & 0xffffu));
}

// The f16 at byte o of a group (o even), as float.
template <int U>
static __device__ __forceinline__ float mmvq8w_f16(const uint4 (&x)[U], int o) {
    return mmvq8w_half(mmvq8w_word(x, o / 4), o % 4 != 0);
}

// q4_K's and q5_K's 6-bit scales (sc) and mins (mn) of items 0..7 from the
// block's words 1..3 (s0, s1, s2), a byte each (ggml's get_scale_min_k4, 4
// at a time); mmvq8w_k_byte takes item j's as float.
static __device__ __forceinline__ void mmvq8w_k_scales(ternion_u32 s0, ternion_u32 s1, ternion_u32 s2, ternion_u32 (&sc)[2],
                                                       ternion_u32 (&mn)[2]) {
    sc[0] = s0 & 0x3f3f3f3fu, sc[1] = (s2 & 0x0f0f0f0fu) | ((s0 & 0xc0c0c0c0u) >> 2);
    mn[0] = s1 & 0x3f3f3f3fu, mn[1] = ((s2 >> 4) & 0x0f0f0f0fu) | ((s1 & 0xc0c0c0c0u) >> 2);
}

static __device__ __forceinline__ float mmvq8w_k_byte(const ternion_u32 (&v)[2], int j) {
    return (float)((v[j / 4] >> (8 * (j % 4))) & 0xffu);
}

// c + the dot product of a's 4 unsigned bytes with b's 4 signed bytes.
static __device__ __forceinline__ int mmvq8w_dp4a_us(ternion_u32 a, int b, int c) {
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

// src1 of one group in shared memory: its 16 units of bytes (unit u at
// q[u ^ sw]) and 8 float4s (block j at d[j ^ sw]).
struct mmvq8w_y {
    const int4 * q;
    const float4 * d;
    int sw;
    // The 32 bytes of block j as 8 words, its scale and d·Σq.
    __device__ __forceinline__ void get(int j, int (&w)[8], float & dy, float & sy) const {
        const float4 e = get(j, w);
        dy = e.x, sy = e.y;
    }
    // The 32 bytes of block j as 8 words; returns its float4 (d, d·Σq, d·Σ
    // of the first 16, d·Σ of the last 16).
    __device__ __forceinline__ float4 get(int j, int (&w)[8]) const {
        const int4 a = q[(2 * j) ^ sw], b = q[(2 * j + 1) ^ sw];
        w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
        return d[j ^ sw];
    }
};

// The group of U 16-byte units at g (shared memory, 16-byte aligned) in
// registers.
template <int U>
static __device__ __forceinline__ void mmvq8w_load(uint4 (&x)[U], const unsigned char * g) {
#pragma unroll
    for (int i = 0; i < U; i++) x[i] = ((const uint4 *)g)[i];
}

// The dot product of one group of src0 (at g in shared memory) with src1's.
template <typename Q>
static __device__ __forceinline__ float mmvq8w_dot(const unsigned char * g, const mmvq8w_y & y);

template <>
__device__ __forceinline__ float mmvq8w_dot<ternion_q4_0>(const unsigned char * g, const mmvq8w_y & y) {
    uint4 x[9];
    mmvq8w_load(x, g);
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; j++) { // block j at byte 18j: d, then 16 bytes of nibbles
        int yw[8];
        float dy, sy;
        y.get(j, yw, dy, sy);
        int lo = 0, hi = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const ternion_u32 q = mmvq8w_ld32(x, 18 * j + 2 + 4 * i);
            lo = mmvq8w_dp4a_us(q & 0x0f0f0f0fu, yw[i], lo);
            hi = mmvq8w_dp4a_us(q & 0xf0f0f0f0u, yw[4 + i], hi);
        }
        acc += mmvq8w_f16(x, 18 * j) * (dy * (float)(lo + (hi >> 4)) - 8.0f * sy);
    }
    return acc;
}

template <>
__device__ __forceinline__ float mmvq8w_dot<ternion_q8_0>(const unsigned char * g, const mmvq8w_y & y) {
    uint4 x[17];
    mmvq8w_load(x, g);
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; j++) { // block j at byte 34j: d, then 32 signed bytes
        int yw[8];
        float dy, sy;
        y.get(j, yw, dy, sy);
        int s = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) s = ternion_dp4a((int)mmvq8w_ld32(x, 34 * j + 2 + 4 * i), yw[i], s);
        acc += mmvq8w_f16(x, 34 * j) * dy * (float)s;
    }
    return acc;
}

// q4_K and q5_K (Q5: a fifth bit from qh): d, dmin, then 12 bytes of 6-bit
// scales and mins (ggml's get_scale_min_k4, 4 at a time), [q5_K: qh[32],
// bit it of qh[l] the fifth bit of value l of item it,] then 128 bytes:
// items 2c and 2c + 1 are the low and high nibbles of bytes 32c … 32c + 31.
template <bool Q5, int U>
static __device__ __forceinline__ float mmvq8w_dot_k(const uint4 (&x)[U], const mmvq8w_y & y) {
    constexpr int QS = Q5 ? 12 : 4; // the word of qs[0]
    ternion_u32 sc[2], mn[2];
    mmvq8w_k_scales(mmvq8w_word(x, 1), mmvq8w_word(x, 2), mmvq8w_word(x, 3), sc, mn);
    float a = 0.0f, b = 0.0f;
#pragma unroll
    for (int c = 0; c < 4; c++) {
        int ya[8], yb[8];
        float da, sa, db, sb;
        y.get(2 * c, ya, da, sa);
        y.get(2 * c + 1, yb, db, sb);
        int lo = 0, hi = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const ternion_u32 q = mmvq8w_word(x, QS + 8 * c + i);
            ternion_u32 ql = q & 0x0f0f0f0fu, qh = q & 0xf0f0f0f0u; // qh: the high nibbles in place (16 times their value)
            if (Q5) {
                const ternion_u32 h = mmvq8w_word(x, 4 + i); // bits 2c, 2c + 1: the fifth bits of items 2c, 2c + 1
                ql |= (c < 2 ? h << (4 - 2 * c) : h >> (2 * c - 4)) & 0x10101010u;
                qh = (qh >> 4) | ((c < 2 ? h << (3 - 2 * c) : h >> (2 * c - 3)) & 0x10101010u);
            }
            lo = mmvq8w_dp4a_us(ql, ya[i], lo);
            hi = mmvq8w_dp4a_us(qh, yb[i], hi);
        }
        if (!Q5) hi >>= 4;
        const int ia = 2 * c, ib = 2 * c + 1;
        a += mmvq8w_k_byte(sc, ia) * da * (float)lo + mmvq8w_k_byte(sc, ib) * db * (float)hi;
        b += mmvq8w_k_byte(mn, ia) * sa + mmvq8w_k_byte(mn, ib) * sb;
    }
    return mmvq8w_f16(x, 0) * a - mmvq8w_f16(x, 2) * b;
}

template <>
__device__ __forceinline__ float mmvq8w_dot<ternion_q4_K>(const unsigned char * g, const mmvq8w_y & y) {
    uint4 x[9];
    mmvq8w_load(x, g);
    return mmvq8w_dot_k<false>(x, y);
}

template <>
__device__ __forceinline__ float mmvq8w_dot<ternion_q5_K>(const unsigned char * g, const mmvq8w_y & y) {
    uint4 x[11];
    mmvq8w_load(x, g);
    return mmvq8w_dot_k<true>(x, y);
}

template <>
__device__ __forceinline__ float mmvq8w_dot<ternion_q6_K>(const unsigned char * g, const mmvq8w_y & y) {
    // ql[128] (low 4 bits), qh[64] (high 2 bits), 16 int8 scales, d; the
    // block starts 2-byte aligned: its 53 covering words, shifted by sh.
    const ternion_u32 * w0 = (const ternion_u32 *)((unsigned long long)g & ~3ull);
    const int sh = (int)((unsigned long long)g & 2) * 8;
    ternion_u32 w[53];
#pragma unroll
    for (int i = 0; i < 53; i++) w[i] = w0[i];
    auto word = [&](int i) { return __funnelshift_r(w[i], w[i + 1], sh); }; // bytes 4i … 4i + 3 (i < 52)
    float acc = 0.0f;
#pragma unroll
    for (int n = 0; n < 2; n++) { // ggml's halves of 128 values
#pragma unroll
        for (int t = 0; t < 4; t++) { // item 4n + t: ql[64n + 32(t & 1) …] nibble t >> 1, qh[32n …] bits 2t, 2t + 1
            int yw[8];
            const float4 e = y.get(4 * n + t, yw);
            int s0 = 0, s1 = 0;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const ternion_u32 l = word(16 * n + 8 * (t & 1) + i), h = word(32 + 8 * n + i);
                const ternion_u32 q = ((l >> (4 * (t >> 1))) & 0x0f0f0f0fu) | ((t < 2 ? h << (4 - 2 * t) : h >> (2 * t - 4)) & 0x30303030u);
                if (i < 4) {
                    s0 = mmvq8w_dp4a_us(q, yw[i], s0);
                } else {
                    s1 = mmvq8w_dp4a_us(q, yw[i], s1);
                }
            }
            const int si = 8 * n + 2 * t; // scales of the item's halves: bytes 192 + si, 192 + si + 1
            const ternion_u32 sw = word(48 + si / 4);
            const float sa = (float)(signed char)(sw >> (8 * (si % 4))), sb = (float)(signed char)(sw >> (8 * (si % 4 + 1)));
            acc += sa * (e.x * (float)s0 - 32.0f * e.z) + sb * (e.x * (float)s1 - 32.0f * e.w);
        }
    }
    return ternion_f16_to_f32((ternion_f16)(__funnelshift_r(w[52], 0u, sh) & 0xffffu)) * acc;
}
#endif

#if TERNION_SM80
// src1's column of k f32 values at yf (packed, 16-byte aligned, k a
// multiple of 256) quantized by the block's nt threads into its shared
// memory as q8y quantizes it and as mmvq8w_rows stages q8y's column: the
// bytes of 16-value unit u at ysq[16(u/16) + ((u % 16) ^ ((u/16) & 7))],
// the float4 of 32-value block j at ysd[8(j/8) + ((j % 8) ^ ((j/8) & 7))].
// 8 threads a block of 32 values, 4 values (one float4) a thread, 4 float4s
// a thread in flight; the scale, rounding and sums are q8y's, so the
// products equal those against q8y's column bit for bit.
static __device__ __forceinline__ void mmvq8w_quantize(const float * yf, ternion_i64 k, uint4 * ysq, uint4 * ysd, int nt) {
    constexpr int U = 4;
    const int n4 = (int)(k / 4); // a multiple of 64: a warp's 32 float4s are all in or all out
    for (int i0 = threadIdx.x; i0 < n4; i0 += U * nt) {
        float4 v[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            const int i = i0 + j * nt;
            v[j] = i < n4 ? ((const float4 *)yf)[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int j = 0; j < U; j++) {
            const int i = i0 + j * nt; // float4 i: values 4i … 4i + 3 of block i / 8
            if (i >= n4) break;        // warp-uniform
            float amax = fmaxf(fmaxf(fabsf(v[j].x), fabsf(v[j].y)), fmaxf(fabsf(v[j].z), fabsf(v[j].w)));
#pragma unroll
            for (int o = 1; o < 8; o <<= 1) amax = fmaxf(amax, TERNION_SHFL_XOR(amax, o));
            const float d = amax / 127.0f;
            const int q0 = amax == 0.0f ? 0 : (int)roundf(v[j].x / d), q1 = amax == 0.0f ? 0 : (int)roundf(v[j].y / d);
            const int q2 = amax == 0.0f ? 0 : (int)roundf(v[j].z / d), q3 = amax == 0.0f ? 0 : (int)roundf(v[j].w / d);
            const int u = i / 4;
            ((ternion_u32 *)(ysq + 16 * (u / 16) + ((u % 16) ^ ((u / 16) & 7))))[i % 4] =
                (ternion_u32)(q0 & 0xff) | (ternion_u32)(q1 & 0xff) << 8 | (ternion_u32)(q2 & 0xff) << 16 | (ternion_u32)(q3 & 0xff) << 24;
            int half = q0 + q1 + q2 + q3; // Σq of the thread's quarter of its half of the block
            half += TERNION_SHFL_XOR(half, 1);
            half += TERNION_SHFL_XOR(half, 2);
            const int other = TERNION_SHFL_XOR(half, 4);
            const int b = i / 8;
            if (i % 8 == 0)
                ((float4 *)ysd)[8 * (b / 8) + ((b % 8) ^ ((b / 8) & 7))] =
                    make_float4(d, d * (float)(half + other), d * (float)half, d * (float)other);
        }
    }
}
#endif

// The rows of one src1 column for mmvq8w, mmvq8wf and their MUL_MAT_ID
// forms: x points at src0's first row of the column's matrix (Q, m rows xs
// bytes apart, k values a row, k a multiple of 256, rows a multiple of 16
// bytes starting 16-byte aligned), ycol and dcol at q8y's bytes and float4s
// of the column, or (yf not null) yf at its k f32 values (packed, 16-byte
// aligned), quantized here (mmvq8w_quantize) instead; out at dst's first row
// (rows os bytes apart); warp wg of nw takes units wg, wg + nw, …. Blocks
// of mmvq8w_fmt<Q>::WARPS warps, dynamic shared memory 3·k/2 bytes (src1) +
// WARPS·MMVQ8W_STAGES chunks of 32·GROUP bytes, as core/ops' mmvq8wShared
// computes (a launch with less writes NaN rows, never past its memory). With
// q8y's column the first chunks of src0 are queued before the wait for the
// grid before (q8y, which writes only its scratch), src1 after it; with yf
// (mmvq8wf: any kernel may come before, and may write src0) both after it.
template <typename Q>
static __device__ __forceinline__ void mmvq8w_rows(const unsigned char * x, ternion_i64 xs, ternion_i64 m, ternion_i64 k,
                                                   const signed char * ycol, const float4 * dcol, const float * yf, char * out,
                                                   ternion_i64 os, ternion_i64 wg, ternion_i64 nw) {
#if TERNION_SM80
    typedef mmvq8w_fmt<Q> F;
    constexpr int SLOT = 32 * F::GROUP / 16, C = MMVQ8W_STAGES, W = F::WARPS; // SLOT: 16-byte units of a chunk
    extern __shared__ __align__(16) uint4 mmvq8w_smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned int shared;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(shared));
    if ((ternion_i64)shared < 3 * k / 2 + (ternion_i64)W * C * 32 * F::GROUP) {
        TERNION_GRID_WAIT();
        for (ternion_i64 row = wg; lane == 0 && row < m; row += nw) *(float *)(out + row * os) = __int_as_float(0x7fc00000);
        return;
    }
    const int ngroups = (int)(k / 256);
    // ru rows a unit, nch chunks of 32 groups a unit; seg lanes a row in
    // the unit's sums (32 for one row of one or more chunks).
    const int ru = ngroups < 32 && xs == (ternion_i64)ngroups * F::GROUP ? 32 / ngroups : 1;
    const int nch = ru > 1 ? 1 : (ngroups + 31) / 32, seg = ru > 1 ? ngroups : 32;
    const int rl = lane / seg, gl = lane - rl * seg; // the lane's row in the unit and its group there
    const ternion_i64 mu = (m + ru - 1) / ru;     // units of ru rows
    const int nunits = wg < mu ? (int)((mu - wg + nw - 1) / nw) : 0, nu = nunits * nch;
    uint4 * ysq = mmvq8w_smem, * ysd = mmvq8w_smem + k / 16;
    uint4 * ring = mmvq8w_smem + 3 * k / 32 + warp * C * SLOT;
    // Chunk n of the warp's sequence: chunk n % nch of its unit n / nch, into
    // slot n % C; its groups: ng. The caller commits (an empty group past the
    // end keeps the waits uniform).
    auto groups = [&](int n) {
        const ternion_i64 r0 = (wg + (ternion_i64)(n / nch) * nw) * ru;
        return ru > 1 ? (int)min((ternion_i64)ru, m - r0) * ngroups : min(32, ngroups - 32 * (n % nch));
    };
    auto copy = [&](int n) {
        if (n < nu) {
            const int ng = groups(n);
            uint4 * s = ring + (n % C) * SLOT;
            const uint4 * g = (const uint4 *)(x + (wg + (ternion_i64)(n / nch) * nw) * ru * xs + (ternion_i64)32 * (n % nch) * F::GROUP);
            for (int i = lane; i < ng * F::GROUP / 16; i += 32) mmvq8t_cp16(s + i, g + i);
        }
    };
    auto stage = [&](int n) {
        copy(n);
        asm volatile("cp.async.commit_group;\n" ::);
    };
    // The first C chunks are queued before the wait for q8y (the kernel
    // before this one, which does not write src0), src1 after it: all in
    // the first group, then C − 1 empty ones, as if each chunk had its own.
    if (yf != nullptr) TERNION_GRID_WAIT(); // any kernel may come before: src0 only after it ends
#pragma unroll
    for (int n = 0; n < C; n++) copy(n);
    TERNION_GRID_WAIT();
    if (yf != nullptr) {
        mmvq8w_quantize(yf, k, ysq, ysd, 32 * W);
    } else {
        for (int u = threadIdx.x; u < k / 16; u += 32 * W) mmvq8t_cp16(ysq + 16 * (u / 16) + ((u % 16) ^ ((u / 16) & 7)), ycol + 16 * (ternion_i64)u);
        for (int u = threadIdx.x; u < k / 32; u += 32 * W) mmvq8t_cp16(ysd + 8 * (u / 8) + ((u % 8) ^ ((u / 8) & 7)), dcol + u);
    }
#pragma unroll
    for (int n = 0; n < C; n++) asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(C - 1)); // src1 is in (and the first chunks)
    __syncthreads();
    float acc = 0.0f;
    for (int n = 0; n < nu; n++) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(C - 1));
        __syncwarp();
        const int c = n % nch, g = 32 * c + gl, ng = groups(n);
        if (lane < ng) {
            mmvq8w_y y;
            y.q = (const int4 *)(ysq + 16 * g), y.d = (const float4 *)(ysd + 8 * g), y.sw = g & 7;
            acc += mmvq8w_dot<Q>((const unsigned char *)(ring + (n % C) * SLOT) + lane * F::GROUP, y);
        }
        __syncwarp(); // the slot is read before it is staged again
        stage(n + C);
        if (c == nch - 1) {
            // Segmented sum: lane gl of a row adds lane gl + o of the same
            // row; the row's lane 0 ends with its sum.
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const float v = __shfl_down_sync(0xffffffffu, acc, o);
                if (gl + o < seg) acc += v;
            }
            if (gl == 0 && lane < ng) *(float *)(out + ((wg + (ternion_i64)(n / nch) * nw) * ru + rl) * os) = acc;
            acc = 0.0f;
        }
    }
#endif
}

// MUL_MAT of src0 (Q, k = ne[0] a multiple of 256, rows a multiple of 16
// bytes long starting 16-byte aligned) by one src1 column, batched over
// dims 2 and 3 (i02 = i12 / r2): mmvq8w_rows over column (i12, i13) (ycol,
// dcol: q8y's; yf: src1's f32 values, or null), warp wg of the grid's (at
// most the multiprocessors, ne12, ne13) warp·gridDim.x + blockIdx.x, so that
// units fewer than the grid's warps spread over every block.
template <typename Q>
static __device__ __forceinline__ void mmvq8w_col(ternion_tensor dst, ternion_tensor src0, const signed char * ycol, const float4 * dcol,
                                                  const float * yf, ternion_fastdiv r2, ternion_fastdiv r3) {
    constexpr int W = mmvq8w_fmt<Q>::WARPS;
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    mmvq8w_rows<Q>((const unsigned char *)src0.data + i02 * src0.nb[2] + i03 * src0.nb[3], src0.nb[1], src0.ne[1], src0.ne[0], ycol, dcol,
                   yf, (char *)dst.data + i12 * dst.nb[2] + i13 * dst.nb[3], dst.nb[0], (ternion_i64)(threadIdx.x / 32) * gridDim.x + blockIdx.x,
                   (ternion_i64)gridDim.x * W);
}

// mmvq8w: src1 quantized by q8y (yq, yd; column i12 + ne12·i13).
template <typename Q>
static __device__ __forceinline__ void mmvq8w(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd, ternion_fastdiv r2,
                                              ternion_fastdiv r3) {
    const ternion_i64 k = src0.ne[0], col = (ternion_i64)blockIdx.y + dst.ne[2] * blockIdx.z;
    mmvq8w_col<Q>(dst, src0, (const signed char *)yq + col * k, (const float4 *)yd + col * (k / 32), nullptr, r2, r3);
}

// mmvq8wf: src1 f32 (one column, packed along k, column starts 16-byte
// aligned), quantized in each block (no q8y).
template <typename Q>
static __device__ __forceinline__ void mmvq8wf(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                               ternion_fastdiv r3) {
    mmvq8w_col<Q>(dst, src0, nullptr, nullptr, (const float *)((const char *)src1.data + blockIdx.y * src1.nb[2] + blockIdx.z * src1.nb[3]), r2,
                  r3);
}

// MUL_MAT_ID of src0 (experts along dim 2; Q, as mmvq8w) for pair (slot e,
// token t) = (blockIdx.y, blockIdx.z): dst[:, e, t] = src0[:, :, ids[e, t]] ·
// src1 column (e % ne11) + ne11·t: rows(x, out, wg, nw) runs mmvq8w_rows
// over the expert's matrix x; an expert out of range writes NaN rows and
// sets bit 1 of *flag (when flag is not null). Grid (blocks a pair, n_used,
// tokens). With wait, the ids are read after the wait for the grid before
// (mmvq8wf_id); without, before it (mmvq8w_id: the kernel right before it
// is always q8y, core/ops runMulMatID, which writes only its scratch, so
// the ids were written before q8y began, and the expert's first chunks are
// queued before the wait as mmvq8w queues its rows).
template <typename Q, typename F>
static __device__ __forceinline__ void mmvq8w_pair(ternion_tensor dst, ternion_tensor src0, ternion_tensor ids, unsigned int * flag, bool wait,
                                                   F rows) {
    constexpr int W = mmvq8w_fmt<Q>::WARPS;
    if (wait) TERNION_GRID_WAIT();
    const ternion_u32 e = blockIdx.y, t = blockIdx.z;
    const int expert = *(const int *)((const char *)ids.data + e * ids.nb[0] + t * ids.nb[1]);
    char * out = (char *)dst.data + e * dst.nb[1] + t * dst.nb[2];
    const ternion_i64 wg = (ternion_i64)(threadIdx.x / 32) * gridDim.x + blockIdx.x, nw = (ternion_i64)gridDim.x * W;
    if (expert < 0 || expert >= src0.ne[2]) {
        TERNION_GRID_WAIT();
        for (ternion_i64 row = wg; threadIdx.x % 32 == 0 && row < src0.ne[1]; row += nw) *(float *)(out + row * dst.nb[0]) = __int_as_float(0x7fc00000);
        if (flag != nullptr && threadIdx.x == 0 && blockIdx.x == 0) atomicOr(flag, 1u);
        return;
    }
    rows((const unsigned char *)src0.data + expert * src0.nb[2], out, wg, nw);
}

// mmvq8w_id: src1 quantized by q8y (yq, yd).
template <typename Q>
static __device__ __forceinline__ void mmvq8w_id(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd, int ne11,
                                                 ternion_tensor ids, unsigned int * flag) {
    const ternion_i64 k = src0.ne[0], col = (ternion_i64)(blockIdx.y % ne11) + (ternion_i64)ne11 * blockIdx.z;
    mmvq8w_pair<Q>(dst, src0, ids, flag, false, [&](const unsigned char * x, char * out, ternion_i64 wg, ternion_i64 nw) {
        mmvq8w_rows<Q>(x, src0.nb[1], src0.ne[1], k, (const signed char *)yq + col * k, (const float4 *)yd + col * (k / 32), nullptr, out,
                       dst.nb[0], wg, nw);
    });
}

// mmvq8wf_id: src1 f32 [k, ne11, tokens] (packed along k, columns starting
// 16-byte aligned), each pair's column quantized in its blocks (no q8y).
template <typename Q>
static __device__ __forceinline__ void mmvq8wf_id(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_tensor ids,
                                                  unsigned int * flag) {
    const float * yf = (const float *)((const char *)src1.data + (blockIdx.y % src1.ne[1]) * src1.nb[1] + blockIdx.z * src1.nb[2]);
    mmvq8w_pair<Q>(dst, src0, ids, flag, true, [&](const unsigned char * x, char * out, ternion_i64 wg, ternion_i64 nw) {
        mmvq8w_rows<Q>(x, src0.nb[1], src0.ne[1], src0.ne[0], nullptr, nullptr, yf, out, dst.nb[0], wg, nw);
    });
}

// mmvq8wt: MUL_MAT of 2 … 8 src1 columns quantized by q8y with src0 rows of
// q4_0, q8_0 or q4_K, k a multiple of 256 and rows a multiple of 16 bytes:
// mmvq8t's products on the tensor cores with mmvq8w's whole-word decoding
// (NVIDIA, arch 8.0 and later; elsewhere an empty body the planner never
// launches). A block of W = MMVQ8WT_WARPS warps takes 16-row tiles (the M of
// mma.m16n8k32) in turn: tiles blockIdx.x, blockIdx.x + gridDim.x, …
// (a grid of at most one block a multiprocessor, so the launch may start
// early while q8y ends). Warp w always takes the same part of k, groups
// w·G/W … (w + 1)·G/W − 1 of a row's G groups of 256 values, so the
// columns' bytes and (d, d·Σq) of its part come into shared memory once,
// with the units of its first tile, and stay; it streams only src0, one
// group of the tile's 16 rows at a time through a ring of
// mmvq8wt_fmt<Q>::STAGES slots filled by cp.async. Per 32-value
// item lane 4g + t decodes its A fragment from whole words (values 4t … 4t
// + 3 and 16 + 4t … 16 + 4t + 3 of rows g and g + 8; a funnel shift where a
// field starts at 2 mod 4), one mma gives the item's 16×8 integer products
// (the 4-bit formats as unsigned bytes, their offsets taken against q8y's
// sums), and the lane scales its 4: rows g, g + 8, columns 2t, 2t + 1. At
// the end of a tile the warps' partial sums meet in shared memory.
#define MMVQ8WT_WARPS 8
#define MMVQ8WT_YGROUP (8 * 256 + 8 * 8 * 8) // src1's group of 8 columns in shared memory: bytes, then (d, d·Σq) of 8 items × 8 columns

// The bytes of a 256-value group of format Q and the ring slots of a warp
// that takes 1 (STAGES_R1) or 2 (STAGES_R2) tiles of 16 rows at a time
// (measured on the H200, m=4096 k=14336 n=8, blocks of MMVQ8WT_WARPS warps:
// bench/README.md). The tree has both tile counts: 2 tiles a warp share
// src1's loads and run faster, 1 fits a longer k in shared memory; core/ops
// takes 2 where they fit (mmvq8wtTiles). kernels.MMVQ8WTFormats holds the
// same (a test keeps them equal).
template <typename Q> struct mmvq8wt_fmt;
template <> struct mmvq8wt_fmt<ternion_q4_0> { static constexpr int GROUP = 144, STAGES_R1 = 2, STAGES_R2 = 2; };
template <> struct mmvq8wt_fmt<ternion_q8_0> { static constexpr int GROUP = 272, STAGES_R1 = 2, STAGES_R2 = 2; };
template <> struct mmvq8wt_fmt<ternion_q4_K> { static constexpr int GROUP = 144, STAGES_R1 = 3, STAGES_R2 = 2; };

// The ring slots of a warp of format Q taking R tiles at a time.
template <typename Q, int R> struct mmvq8wt_stages {
    static constexpr int S = R == 1 ? mmvq8wt_fmt<Q>::STAGES_R1 : mmvq8wt_fmt<Q>::STAGES_R2;
};

#if TERNION_SM80
// c = a·b for one m16n8k32 tile, a unsigned bytes, b signed (i32 products).
static __device__ __forceinline__ void mmvq8wt_mma_us(int * c, ternion_u32 a0, ternion_u32 a1, ternion_u32 a2, ternion_u32 a3, int b0,
                                                      int b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
}

// Queues the 8-byte copy of global g to shared s.
static __device__ __forceinline__ void mmvq8wt_cp8(void * s, const void * g) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"((unsigned int)__cvta_generic_to_shared(s)), "l"(g));
}

// Queues the 16-byte copy of global g to shared address s when p.
static __device__ __forceinline__ void mmvq8wt_cp16_if(unsigned int s, const void * g, bool p) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(s), "l"(g), "r"((int)p));
}

// The columns' side of item j of a group (yg in shared memory: column c's
// 16-byte unit u at c·256 + 16·(u ^ c), so that the 8 columns of a
// fragment load hit 8 different bank groups) for lane 4g + t: its B
// fragment (bytes 4t … 4t + 3 and 16 + 4t … of column g) and the (d, d·Σq)
// of columns 2t (x, y) and 2t + 1 (z, w).
struct mmvq8wt_y {
    const unsigned char * yg;
    int g, t;
    __device__ __forceinline__ void get(int j, int & b0, int & b1, float4 & e) const {
        const unsigned char * p = yg + g * 256 + 4 * t;
        b0 = *(const int *)(p + 16 * ((2 * j) ^ g)), b1 = *(const int *)(p + 16 * ((2 * j + 1) ^ g));
        e = *(const float4 *)(yg + 8 * 256 + (8 * j + 2 * t) * 8);
    }
};

// Adds one group's products to lane 4g + t's acc for R tiles of 16 rows
// (rows g and g + 8 of tile r at x + 16r·rs and x + (16r + 8)·rs in shared
// memory, rs the words of a row's group) times columns 2t and 2t + 1
// (acc[r][0], acc[r][1] row g, acc[r][2], acc[r][3] row g + 8); the R tiles
// share each item's loads of src1. mmvq8wt_dot<Q, R>::run for format Q.
template <typename Q, int R> struct mmvq8wt_dot;

template <int R> struct mmvq8wt_dot<ternion_q4_0, R> {
    static __device__ __forceinline__ void run(const ternion_u32 * x, int rs, const mmvq8wt_y & y, float (&acc)[R][4]) {
        const int t = y.t;
#pragma unroll
        for (int b = 0; b < 8; b++) { // block b at byte 18b: d, then 16 bytes of nibbles (values l and 16 + l in byte l)
            int b0, b1;
            float4 e;
            y.get(b, b0, b1, e);
            const float n0 = -8.0f * e.y, n1 = -8.0f * e.w; // the nibbles' offset 8 against the columns' sums
#pragma unroll
            for (int r = 0; r < R; r++) {
                const ternion_u32 * x0 = x + 16 * r * rs, * x1 = x0 + 8 * rs;
                ternion_u32 q0, q1;
                float w0, w1;
                if (b % 2 == 0) { // the block starts at word 9b/2: its nibbles at 2 mod 4
                    const int o = 9 * b / 2;
                    q0 = __funnelshift_r(x0[o + t], x0[o + t + 1], 16), q1 = __funnelshift_r(x1[o + t], x1[o + t + 1], 16);
                    w0 = mmvq8w_half(x0[o], false), w1 = mmvq8w_half(x1[o], false);
                } else { // its nibbles start at word (18b + 2)/4, d is the high half of the word before
                    const int o = (18 * b + 2) / 4;
                    q0 = x0[o + t], q1 = x1[o + t];
                    w0 = mmvq8w_half(x0[o - 1], true), w1 = mmvq8w_half(x1[o - 1], true);
                }
                int c[4];
                mmvq8wt_mma_us(c, q0 & 0x0f0f0f0fu, q1 & 0x0f0f0f0fu, (q0 >> 4) & 0x0f0f0f0fu, (q1 >> 4) & 0x0f0f0f0fu, b0, b1);
                acc[r][0] += w0 * fmaf(e.x, (float)c[0], n0);
                acc[r][1] += w0 * fmaf(e.z, (float)c[1], n1);
                acc[r][2] += w1 * fmaf(e.x, (float)c[2], n0);
                acc[r][3] += w1 * fmaf(e.z, (float)c[3], n1);
            }
        }
    }
};

template <int R> struct mmvq8wt_dot<ternion_q8_0, R> {
    static __device__ __forceinline__ void run(const ternion_u32 * x, int rs, const mmvq8wt_y & y, float (&acc)[R][4]) {
        const int t = y.t;
#pragma unroll
        for (int b = 0; b < 8; b++) { // block b at byte 34b: d, then 32 signed bytes
            int b0, b1;
            float4 e;
            y.get(b, b0, b1, e);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const ternion_u32 * x0 = x + 16 * r * rs, * x1 = x0 + 8 * rs;
                ternion_u32 l0, l1, h0, h1;
                float w0, w1;
                if (b % 2 == 0) { // the block starts at word 17b/2: its bytes at 2 mod 4
                    const int o = 17 * b / 2;
                    l0 = __funnelshift_r(x0[o + t], x0[o + t + 1], 16), l1 = __funnelshift_r(x1[o + t], x1[o + t + 1], 16);
                    h0 = __funnelshift_r(x0[o + 4 + t], x0[o + 5 + t], 16), h1 = __funnelshift_r(x1[o + 4 + t], x1[o + 5 + t], 16);
                    w0 = mmvq8w_half(x0[o], false), w1 = mmvq8w_half(x1[o], false);
                } else { // its bytes start at word (34b + 2)/4, d is the high half of the word before
                    const int o = (34 * b + 2) / 4;
                    l0 = x0[o + t], l1 = x1[o + t], h0 = x0[o + 4 + t], h1 = x1[o + 4 + t];
                    w0 = mmvq8w_half(x0[o - 1], true), w1 = mmvq8w_half(x1[o - 1], true);
                }
                int c[4];
                mmvq8t_mma(c, (int)l0, (int)l1, (int)h0, (int)h1, b0, b1);
                acc[r][0] += w0 * (e.x * (float)c[0]);
                acc[r][1] += w0 * (e.z * (float)c[1]);
                acc[r][2] += w1 * (e.x * (float)c[2]);
                acc[r][3] += w1 * (e.z * (float)c[3]);
            }
        }
    }
};

// q4_K: d, dmin, 12 bytes of 6-bit scales and mins (mmvq8w_k_scales),
// then 128 bytes: items 2c and 2c + 1 are the low and
// high nibbles of bytes 32c … 32c + 31. The super-block's d and dmin are
// taken out of the group's sums.
template <int R> struct mmvq8wt_dot<ternion_q4_K, R> {
    static __device__ __forceinline__ void run(const ternion_u32 * x, int rs, const mmvq8wt_y & y, float (&acc)[R][4]) {
        const int t = y.t;
        ternion_u32 sc[R][2][2], mn[R][2][2];
        float d[R][2], dm[R][2], a[R][4], s[R][4];
#pragma unroll
        for (int r = 0; r < R; r++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const ternion_u32 * xr = x + (16 * r + 8 * h) * rs;
                d[r][h] = mmvq8w_half(xr[0], false), dm[r][h] = mmvq8w_half(xr[0], true);
                mmvq8w_k_scales(xr[1], xr[2], xr[3], sc[r][h], mn[r][h]);
            }
#pragma unroll
            for (int i = 0; i < 4; i++) a[r][i] = 0.0f, s[r][i] = 0.0f;
        }
#pragma unroll
        for (int c = 0; c < 4; c++) {
            ternion_u32 l[R][2], hq[R][2];
#pragma unroll
            for (int r = 0; r < R; r++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const ternion_u32 * xr = x + (16 * r + 8 * h) * rs;
                    l[r][h] = xr[4 + 8 * c + t], hq[r][h] = xr[8 + 8 * c + t];
                }
            }
#pragma unroll
            for (int n = 0; n < 2; n++) { // item 2c + n: nibble n of each byte
                const int j = 2 * c + n, sh = 4 * n;
                int b0, b1;
                float4 e;
                y.get(j, b0, b1, e);
#pragma unroll
                for (int r = 0; r < R; r++) {
                    int p[4];
                    mmvq8wt_mma_us(p, (l[r][0] >> sh) & 0x0f0f0f0fu, (l[r][1] >> sh) & 0x0f0f0f0fu, (hq[r][0] >> sh) & 0x0f0f0f0fu,
                                   (hq[r][1] >> sh) & 0x0f0f0f0fu, b0, b1);
                    const float sc0 = mmvq8w_k_byte(sc[r][0], j), sc1 = mmvq8w_k_byte(sc[r][1], j);
                    const float mn0 = mmvq8w_k_byte(mn[r][0], j), mn1 = mmvq8w_k_byte(mn[r][1], j);
                    a[r][0] += sc0 * (e.x * (float)p[0]);
                    a[r][1] += sc0 * (e.z * (float)p[1]);
                    a[r][2] += sc1 * (e.x * (float)p[2]);
                    a[r][3] += sc1 * (e.z * (float)p[3]);
                    s[r][0] += mn0 * e.y;
                    s[r][1] += mn0 * e.w;
                    s[r][2] += mn1 * e.y;
                    s[r][3] += mn1 * e.w;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            acc[r][0] += d[r][0] * a[r][0] - dm[r][0] * s[r][0];
            acc[r][1] += d[r][0] * a[r][1] - dm[r][0] * s[r][1];
            acc[r][2] += d[r][1] * a[r][2] - dm[r][1] * s[r][2];
            acc[r][3] += d[r][1] * a[r][3] - dm[r][1] * s[r][3];
        }
    }
};
#endif

// MUL_MAT of src0 (Q, k = ne[0] a multiple of 256, rows a multiple of 16
// bytes long starting 16-byte aligned, 16·R rows within 2^31 bytes) by
// ncols ≤ 8 src1 columns quantized by q8y (yq, yd; columns ne1·(i12 +
// ne12·i13) + c), batched over dims 2 and 3 (i02 = i12 / r2): blocks of W
// warps taking R tiles of 16 rows at a time (tile sets b, b + gridDim.x,
// …), grid (at most the multiprocessors, ne12, ne13), dynamic shared memory
// k/256 groups of MMVQ8WT_YGROUP bytes (src1), W·S ring slots of 16·R rows'
// groups and W·128·R floats of partial sums, as core/ops' mmvq8wtShared
// computes (a launch with less writes NaN rows, never past its memory).
template <typename Q, int R, int W = MMVQ8WT_WARPS, int S = mmvq8wt_stages<Q, R>::S>
static __device__ __forceinline__ void mmvq8wt(ternion_tensor dst, ternion_tensor src0, const void * yq, const void * yd,
                                               ternion_fastdiv r2, ternion_fastdiv r3, int ncols) {
#if TERNION_SM80
    typedef mmvq8wt_fmt<Q> F;
    static_assert(128 * R <= 32 * W, "the block's threads sum the 128 R partial sums of its tiles");
    constexpr int ROWS = 16 * R, SLOT = ROWS * F::GROUP, U = F::GROUP / 16; // U: 16-byte units of a row's group
    extern __shared__ __align__(16) unsigned char mmvq8wt_smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const ternion_i64 m = src0.ne[1], k = src0.ne[0], xs = src0.nb[1], tiles = (m + ROWS - 1) / ROWS; // sets of R tiles
    const int ngroups = (int)(k / 256);
    const int g0 = warp * ngroups / W, ng = (warp + 1) * ngroups / W - g0;
    const int nt = blockIdx.x < tiles ? (int)((tiles - blockIdx.x + gridDim.x - 1) / gridDim.x) : 0;
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    char * out = (char *)dst.data + i12 * dst.nb[2] + i13 * dst.nb[3];
    const int ysize = ngroups * MMVQ8WT_YGROUP, rsize = W * S * SLOT;
    unsigned int shared;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(shared));
    if ((ternion_i64)shared < (ternion_i64)ysize + rsize + W * 128 * R * 4) {
        TERNION_GRID_WAIT();
        const int r = threadIdx.x / 8, c = threadIdx.x % 8;
        for (int i = 0; i < nt && threadIdx.x < 128 * R; i++) {
            const ternion_i64 row = ROWS * ((ternion_i64)blockIdx.x + (ternion_i64)i * gridDim.x) + r;
            if (row < m && c < ncols) *(float *)(out + row * dst.nb[0] + c * dst.nb[1]) = __int_as_float(0x7fc00000);
        }
        return;
    }
    unsigned char * ys = mmvq8wt_smem + g0 * MMVQ8WT_YGROUP; // the warp's groups of src1
    unsigned char * ring = mmvq8wt_smem + ysize + warp * S * SLOT;
    float * part = (float *)(mmvq8wt_smem + ysize + rsize); // [warp][row < 16R][column]
    const unsigned char * x = (const unsigned char *)src0.data + i02 * src0.nb[2] + i03 * src0.nb[3];
    const ternion_i64 col0 = dst.ne[1] * ((ternion_i64)i12 + dst.ne[2] * i13);
    // Unit n of the warp: group g0 + n % ng of its tile n / ng, into slot n
    // % S; stage is called for n = 0, 1, … in turn (an empty group past the
    // end keeps the waits uniform). The units of the first tile also bring
    // their group of src1 (bytes and (d, d·Σq)), which stays for the later
    // tiles. A lane's copies of src0 sit at the same places in every unit:
    // their rows and offsets are computed once.
    constexpr int NC = (ROWS * U + 31) / 32;
    int crow[NC], coff[NC], cx[NC];
#pragma unroll
    for (int u = 0; u < NC; u++) {
        const int i = lane + 32 * u;
        crow[u] = i < ROWS * U ? i / U : ROWS, coff[u] = crow[u] * F::GROUP + 16 * (i % U), cx[u] = crow[u] * (int)xs + 16 * (i % U);
    }
    const int nu = nt * ng;
    int sn = 0, sj = 0;
    ternion_i64 srow = ROWS * (ternion_i64)blockIdx.x;
    const unsigned int ring_s = (unsigned int)__cvta_generic_to_shared(ring);
    // Queues the copies of unit sn (of src0 when x0, of its group of src1
    // when y0 and the unit is of the first tile) and moves on to the next.
    auto copy = [&](bool x0, bool y0) {
        if (sn < nu) {
            if (x0) {
                const int nr = (int)min((ternion_i64)ROWS, m - srow);
                const unsigned char * gx = x + srow * xs + (ternion_i64)(g0 + sj) * F::GROUP;
                const unsigned int s = ring_s + (sn % S) * SLOT;
#pragma unroll
                for (int u = 0; u < NC; u++) mmvq8wt_cp16_if(s + coff[u], gx + cx[u], crow[u] < nr);
            }
            if (y0 && sn < ng) {
                unsigned char * yg = ys + sj * MMVQ8WT_YGROUP;
#pragma unroll
                for (int u = 0; u < 4; u++) { // 8 columns × 16 units
                    const int i = lane + 32 * u, c = i / 16, e = i % 16;
                    if (c < ncols) mmvq8t_cp16(yg + c * 256 + 16 * (e ^ c), (const signed char *)yq + (col0 + c) * k + (ternion_i64)(g0 + sj) * 256 + 16 * e);
                }
#pragma unroll
                for (int u = 0; u < 2; u++) { // 8 items × 8 columns
                    const int i = lane + 32 * u, it = i / 8, c = i % 8;
                    if (c < ncols) mmvq8wt_cp8(yg + 8 * 256 + i * 8, (const float4 *)yd + (col0 + c) * (k / 32) + (ternion_i64)(g0 + sj) * 8 + it);
                }
            }
            if (++sj == ng) sj = 0, srow += ROWS * (ternion_i64)gridDim.x;
        }
        sn++;
    };
    // The first S units' src0 is queued before the wait for q8y (the
    // kernel before this one, which does not write src0), their src1 after
    // it, a group each (the first also holds their src0).
#pragma unroll
    for (int n = 0; n < S; n++) copy(true, false);
    TERNION_GRID_WAIT();
    sn = 0, sj = 0, srow = ROWS * (ternion_i64)blockIdx.x;
#pragma unroll
    for (int n = 0; n < S; n++) {
        copy(false, true);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    mmvq8wt_y y;
    y.g = lane / 4, y.t = lane % 4;
    int n = 0;
    for (int i = 0; i < nt; i++) {
        float acc[R][4];
#pragma unroll
        for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.0f;
        for (int j = 0; j < ng; j++, n++) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1));
            __syncwarp();
            const ternion_u32 * s = (const ternion_u32 *)(ring + (n % S) * SLOT);
            y.yg = ys + j * MMVQ8WT_YGROUP;
            mmvq8wt_dot<Q, R>::run(s + y.g * (F::GROUP / 4), F::GROUP / 4, y, acc);
            __syncwarp(); // the slot is read before it is staged again
            copy(true, true); // unit n + S
            asm volatile("cp.async.commit_group;\n" ::);
        }
        float * p = part + warp * 128 * R;
        if (i > 0) __syncthreads(); // the sums of tile set i − 1 are read
#pragma unroll
        for (int r = 0; r < R; r++) {
            float * q = p + 128 * r;
            q[y.g * 8 + 2 * y.t] = acc[r][0], q[y.g * 8 + 2 * y.t + 1] = acc[r][1];
            q[(y.g + 8) * 8 + 2 * y.t] = acc[r][2], q[(y.g + 8) * 8 + 2 * y.t + 1] = acc[r][3];
        }
        __syncthreads();
        if (threadIdx.x < 128 * R) {
            const int r = threadIdx.x / 8, c = threadIdx.x % 8;
            const ternion_i64 row = ROWS * ((ternion_i64)blockIdx.x + (ternion_i64)i * gridDim.x) + r;
            float v = 0.0f;
#pragma unroll
            for (int w = 0; w < W; w++) v += part[w * 128 * R + threadIdx.x];
            if (row < m && c < ncols) *(float *)(out + row * dst.nb[0] + c * dst.nb[1]) = v;
        }
    }
#endif
}
