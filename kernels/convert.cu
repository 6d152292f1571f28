// convert.cu - ggml's CPY, CONT and DUP between f32, f16 and bf16: element by
// element for any shapes and strides, row by row when rows are packed on both
// sides, through shared-memory tiles when the packed dimensions differ (a
// transpose), and 16-byte row copies of 4-byte elements. The entry points of
// the templates are generated from the catalog.
#include "index.h"

// One element converted from TS to TD.
template <typename TS, typename TD> struct ternion_copy_convert {
    static __device__ __forceinline__ void apply(char * d, const char * s) { ternion_store((TD *)d, ternion_load((const TS *)s)); }
};

// Element i of src (in src's shape) converted to element i of dst (in dst's
// shape), for i < n (n < 2^31; grid-stride loop): ggml's CPY between f32,
// f16 and bf16, any shapes of equal size and any strides. Every kernel of
// this file writes through ternion_copy_dst(dst, dslot) (index.h).
template <typename TS, typename TD>
static __device__ __forceinline__ void cvt(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne0, ternion_fastdiv sne1,
                                           ternion_fastdiv sne2, ternion_fastdiv dne0, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                           ternion_i64 n, void * const * dslot) {
    dst.data = ternion_copy_dst(dst, dslot);
    ternion_copy_elements<ternion_copy_convert<TS, TD> >(dst, src, sne0, sne1, sne2, dne0, dne1, dne2, n);
}

// Four consecutive elements of T, aligned as one load or store of their
// size (16 bytes of f32, 8 of f16 or bf16).
template <typename T> struct alignas(4 * sizeof(T)) cvt_quad {
    T v[4];
};

// Whether every row of t starts on a cvt_quad<T> boundary: data and the
// strides of dims 1..3 multiples of the quad's size.
template <typename T> static __device__ __forceinline__ bool cvt_quad_rows(const ternion_tensor & t) {
    const ternion_i64 a = 4 * (ternion_i64)sizeof(T) - 1;
    return (((ternion_i64)(unsigned long long)t.data | t.nb[1] | t.nb[2] | t.nb[3]) & a) == 0;
}

// The threads (x) of a block move units 0 … n − 1 of one row: v = load(k)
// then store(k, v), with 4 loads of V in flight a thread before its stores
// (dst may alias src, so the compiler would not reorder them itself).
template <typename V, typename L, typename S> static __device__ __forceinline__ void cvt_row_units(ternion_i64 n, L load, S store) {
    for (ternion_i64 k0 = threadIdx.x; k0 < n; k0 += 4 * (ternion_i64)blockDim.x) {
        V v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
            if (k < n) v[u] = load(k);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
            if (k < n) store(k, v[u]);
        }
    }
}

// Row r of src to row r of dst, converted, for r < nrows: src and dst rows
// hold ne0 elements each, packed (nb[0] is the element size in both). Blocks
// (x) and threads (y) index rows, threads (x) the elements of a row. Where
// ne0 is a multiple of 4 and every row of both starts on a 4-element
// boundary (checked here, as dst may come from dslot), threads move 4
// elements at a time with one load and one store each (16 bytes of f32).
template <typename TS, typename TD>
static __device__ __forceinline__ void cvt_rows(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne1, ternion_fastdiv sne2,
                                                ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows, void * const * dslot) {
    dst.data = ternion_copy_dst(dst, dslot);
    const ternion_i64 ne0 = dst.ne[0];
    const bool quads = ne0 % 4 == 0 && cvt_quad_rows<TS>(src) && cvt_quad_rows<TD>(dst);
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        const TS * s = (const TS *)((const char *)src.data + ternion_row_offset((ternion_u32)row, src, sne1, sne2));
        TD * d = (TD *)((char *)dst.data + ternion_row_offset((ternion_u32)row, dst, dne1, dne2));
        if (quads) {
            const cvt_quad<TS> * sq = (const cvt_quad<TS> *)s;
            cvt_quad<TD> * dq = (cvt_quad<TD> *)d;
            cvt_row_units<cvt_quad<TS> >(
                ne0 / 4, [&](ternion_i64 k) { return sq[k]; },
                [&](ternion_i64 k, const cvt_quad<TS> & q) {
                    cvt_quad<TD> o;
#pragma unroll
                    for (int e = 0; e < 4; e++) ternion_store(&o.v[e], ternion_load(&q.v[e]));
                    dq[k] = o;
                });
        } else {
            cvt_row_units<float>(
                ne0, [&](ternion_i64 i) { return ternion_load(s + i); }, [&](ternion_i64 i, float v) { ternion_store(d + i, v); });
        }
    }
}

// Row r of src to row r of dst for r < nrows, rows of 4-byte elements, a
// multiple of 4 long and 16-byte aligned in both: 16-byte loads and stores.
extern "C" __global__ void rows4_b32(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne1, ternion_fastdiv sne2,
                                                 ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows, void * const * dslot) {
    TERNION_KERNEL_ENTRY();
    dst.data = ternion_copy_dst(dst, dslot);
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        const uint4 * s = (const uint4 *)((const char *)src.data + ternion_row_offset((ternion_u32)row, src, sne1, sne2));
        uint4 * d = (uint4 *)((char *)dst.data + ternion_row_offset((ternion_u32)row, dst, dne1, dne2));
        cvt_row_units<uint4>(dst.ne[0] / 4, [&](ternion_i64 k) { return s[k]; }, [&](ternion_i64 k, uint4 v) { d[k] = v; });
    }
}

#define TERNION_TILE 32
#define TERNION_TILE_Z 4

// dst = src converted, tensors of one shape where dst's elements are packed
// along dimension 0 and src's along dimension c (1, 2 or 3): a transpose of
// dims 0 and c through shared-memory tiles, so both sides are read and
// written along their packed dimension. Blocks: x tiles dim c, y tiles dim 0,
// z walks the other two dims (nbatch = their product; na divides by the
// lower one's size), TERNION_TILE_Z of them at a time so each thread has
// 16 loads in flight. Block 32x8 threads.
// The strides are picked by selects (an array indexed by c would put the
// descriptors in local memory) and each thread's addresses are formed once:
// the kernel is otherwise bound by its 64-bit address arithmetic (measured
// 2.4x slower on the H200, bench/experiments/variants.cu).
template <typename TS, typename TD>
static __device__ __forceinline__ void cvt_tile(ternion_tensor dst, ternion_tensor src, int c, ternion_fastdiv na, ternion_i64 nbatch,
                                                void * const * dslot) {
    dst.data = ternion_copy_dst(dst, dslot);
    __shared__ float tile[TERNION_TILE_Z][TERNION_TILE][TERNION_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const ternion_i64 nc = c == 1 ? dst.ne[1] : c == 2 ? dst.ne[2] : dst.ne[3], n0 = dst.ne[0];
    const ternion_i64 snc = c == 1 ? src.nb[1] : c == 2 ? src.nb[2] : src.nb[3];
    const ternion_i64 dnc = c == 1 ? dst.nb[1] : c == 2 ? dst.nb[2] : dst.nb[3];
    // the other two dims, a < b
    const ternion_i64 sna = c == 1 ? src.nb[2] : src.nb[1], dna = c == 1 ? dst.nb[2] : dst.nb[1];
    const ternion_i64 snb = c == 3 ? src.nb[2] : src.nb[3], dnb = c == 3 ? dst.nb[2] : dst.nb[3];
    const ternion_i64 ic0 = (ternion_i64)blockIdx.x * TERNION_TILE, i00 = (ternion_i64)blockIdx.y * TERNION_TILE;
    // reads: i0 = i00 + ty + 8j, ic = ic0 + tx; writes: i0 = i00 + tx, ic = ic0 + ty + 8j
    const bool read_c = ic0 + tx < nc, write_0 = i00 + tx < n0;
    const ternion_i64 rows0 = n0 - i00 - ty, rowsc = nc - ic0 - ty; // j valid while 8j < rows
    const char * sthread = (const char *)src.data + (i00 + ty) * src.nb[0] + (ic0 + tx) * snc;
    char * dthread = (char *)dst.data + (i00 + tx) * dst.nb[0] + (ic0 + ty) * dnc;
    const ternion_i64 sstep = 8 * src.nb[0], dstep = 8 * dnc;
    for (ternion_i64 z0 = (ternion_i64)blockIdx.z * TERNION_TILE_Z; z0 < nbatch; z0 += (ternion_i64)gridDim.z * TERNION_TILE_Z) {
#pragma unroll
        for (int zz = 0; zz < TERNION_TILE_Z; zz++) {
            const ternion_i64 z = z0 + zz;
            if (z < nbatch && read_c) {
                const ternion_u32 ib = ternion_fastdiv_div((ternion_u32)z, na), ia = (ternion_u32)z - ib * na.d;
                const char * s = sthread + ia * sna + ib * snb;
#pragma unroll
                for (int j = 0; j < TERNION_TILE / 8; j++) {
                    if (8 * j < rows0) {
                        tile[zz][ty + 8 * j][tx] = ternion_load((const TS *)(s + j * sstep));
                    }
                }
            }
        }
        __syncthreads();
#pragma unroll
        for (int zz = 0; zz < TERNION_TILE_Z; zz++) {
            const ternion_i64 z = z0 + zz;
            if (z < nbatch && write_0) {
                const ternion_u32 ib = ternion_fastdiv_div((ternion_u32)z, na), ia = (ternion_u32)z - ib * na.d;
                char * d = dthread + ia * dna + ib * dnb;
#pragma unroll
                for (int j = 0; j < TERNION_TILE / 8; j++) {
                    if (8 * j < rowsc) {
                        ternion_store((TD *)(d + j * dstep), tile[zz][tx][ty + 8 * j]);
                    }
                }
            }
        }
        __syncthreads();
    }
}
