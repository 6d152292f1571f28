// cpy.cu - copies between tensors of one element type: any shapes with the
// same number of elements, any strides (ggml's CPY, CONT and DUP without a
// type conversion). The entry points (cpy_{T}) are generated from the
// catalog's template spec.
#include "vendor.h"

// Byte offset of element i (row-major in ne) of a tensor with strides nb;
// d0, d1, d2 divide by ne[0], ne[1], ne[2].
static __device__ __forceinline__ ternion_i64 ternion_offset(ternion_u32 i, const ternion_tensor & t, ternion_fastdiv d0,
                                                             ternion_fastdiv d1, ternion_fastdiv d2) {
    const ternion_u32 q0 = ternion_fastdiv_div(i, d0);
    const ternion_u32 i0 = i - q0 * d0.d;
    const ternion_u32 q1 = ternion_fastdiv_div(q0, d1);
    const ternion_u32 i1 = q0 - q1 * d1.d;
    const ternion_u32 i3 = ternion_fastdiv_div(q1, d2);
    const ternion_u32 i2 = q1 - i3 * d2.d;
    return i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Element i of src goes to element i of dst, for i < n (n < 2^31; grid-stride loop).
template <typename T>
static __device__ __forceinline__ void cpy(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne0, ternion_fastdiv sne1,
                                           ternion_fastdiv sne2, ternion_fastdiv dne0, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                           ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const T * s = (const T *)((const char *)src.data + ternion_offset((ternion_u32)i, src, sne0, sne1, sne2));
        T * d = (T *)((char *)dst.data + ternion_offset((ternion_u32)i, dst, dne0, dne1, dne2));
        *d = *s;
    }
}

// Element i of src (in src's shape) converted to element i of dst (in dst's
// shape), for i < n (n < 2^31; grid-stride loop): ggml's CPY between f32,
// f16 and bf16, any shapes of equal size and any strides.
template <typename TS, typename TD>
static __device__ __forceinline__ void cvt(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne0, ternion_fastdiv sne1,
                                           ternion_fastdiv sne2, ternion_fastdiv dne0, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                           ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const TS * s = (const TS *)((const char *)src.data + ternion_offset((ternion_u32)i, src, sne0, sne1, sne2));
        TD * d = (TD *)((char *)dst.data + ternion_offset((ternion_u32)i, dst, dne0, dne1, dne2));
        ternion_store(d, ternion_load(s));
    }
}

// Byte offset of row r (rows of dims 1..3, in t's shape) of t; d1, d2 divide
// by ne[1], ne[2].
static __device__ __forceinline__ ternion_i64 ternion_row_offset(ternion_u32 r, const ternion_tensor & t, ternion_fastdiv d1,
                                                                 ternion_fastdiv d2) {
    const ternion_u32 q = ternion_fastdiv_div(r, d1);
    const ternion_u32 i1 = r - q * d1.d;
    const ternion_u32 i3 = ternion_fastdiv_div(q, d2);
    const ternion_u32 i2 = q - i3 * d2.d;
    return i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Row r of src to row r of dst, converted, for r < nrows: src and dst rows
// hold ne0 elements each, packed (nb[0] is the element size in both). Blocks
// (x) and threads (y) index rows, threads (x) the elements of a row.
template <typename TS, typename TD>
static __device__ __forceinline__ void cvt_rows(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne1, ternion_fastdiv sne2,
                                                ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows) {
    const ternion_i64 ne0 = dst.ne[0];
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        const TS * s = (const TS *)((const char *)src.data + ternion_row_offset((ternion_u32)row, src, sne1, sne2));
        TD * d = (TD *)((char *)dst.data + ternion_row_offset((ternion_u32)row, dst, dne1, dne2));
        for (ternion_i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            ternion_store(d + i0, ternion_load(s + i0));
        }
    }
}

// Row r of src to row r of dst for r < nrows, rows of 4-byte elements, a
// multiple of 4 long and 16-byte aligned in both: 16-byte loads and stores.
extern "C" __global__ void rows4_b32(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne1, ternion_fastdiv sne2,
                                                 ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows) {
    const ternion_i64 n4 = dst.ne[0] / 4;
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        const uint4 * s = (const uint4 *)((const char *)src.data + ternion_row_offset((ternion_u32)row, src, sne1, sne2));
        uint4 * d = (uint4 *)((char *)dst.data + ternion_row_offset((ternion_u32)row, dst, dne1, dne2));
        for (ternion_i64 k = threadIdx.x; k < n4; k += blockDim.x) {
            d[k] = s[k];
        }
    }
}

#define TERNION_TILE 32

// dst = src converted, tensors of one shape where dst's elements are packed
// along dimension 0 and src's along dimension c (1, 2 or 3): a transpose of
// dims 0 and c through a shared-memory tile, so both sides are read and
// written along their packed dimension. Blocks: x tiles dim c, y tiles dim 0,
// z walks the other two dims (nbatch = their product; na divides by the
// lower one's size). Block 32x8 threads.
template <typename TS, typename TD>
static __device__ __forceinline__ void cvt_tile(ternion_tensor dst, ternion_tensor src, int c, ternion_fastdiv na, ternion_i64 nbatch) {
    __shared__ float tile[TERNION_TILE][TERNION_TILE + 1];
    const int a = c == 1 ? 2 : 1, b = c == 3 ? 2 : 3; // the other two dims, a < b
    const ternion_i64 nc = dst.ne[c], n0 = dst.ne[0];
    const ternion_i64 ic0 = (ternion_i64)blockIdx.x * TERNION_TILE, i00 = (ternion_i64)blockIdx.y * TERNION_TILE;
    for (ternion_i64 z = blockIdx.z; z < nbatch; z += gridDim.z) {
        const ternion_u32 ib = ternion_fastdiv_div((ternion_u32)z, na), ia = (ternion_u32)z - ib * na.d;
        const char * s = (const char *)src.data + ia * src.nb[a] + ib * src.nb[b];
        char * d = (char *)dst.data + ia * dst.nb[a] + ib * dst.nb[b];
        for (int k = threadIdx.y; k < TERNION_TILE; k += blockDim.y) {
            const ternion_i64 i0 = i00 + k, ic = ic0 + threadIdx.x;
            if (i0 < n0 && ic < nc) {
                tile[k][threadIdx.x] = ternion_load((const TS *)(s + i0 * src.nb[0] + ic * src.nb[c]));
            }
        }
        __syncthreads();
        for (int k = threadIdx.y; k < TERNION_TILE; k += blockDim.y) {
            const ternion_i64 i0 = i00 + threadIdx.x, ic = ic0 + k;
            if (i0 < n0 && ic < nc) {
                ternion_store((TD *)(d + i0 * dst.nb[0] + ic * dst.nb[c]), tile[threadIdx.x][k]);
            }
        }
        __syncthreads();
    }
}
