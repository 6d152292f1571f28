// binbcast.cu - ggml's ADD, SUB, MUL and DIV with broadcasting: src1 tiles
// into src0 (row i1 of src0 reads row i1 % ne11 of src1, likewise dims 2 and
// 3, and element i0 reads element i0 % ne10). The result has src0's type and
// shape. The entry points are generated from the catalog's templates:
// bin_{op}_{t0}_{t1} (any strides and types) and bin4_{op}_f32 (f32 rows that
// are contiguous, 16-byte aligned and a multiple of 4 long, with src1 rows as
// long as src0's: float4 loads and stores).
#include "binop.h"
#include "index.h"

// The rows of one launch: block (x) and thread (y) index the rows, the
// threads' x index the elements of a row. Row r of dst is (i1, i2, i3) with
// ne01 and ne02 dividing r; src1's row is (i1 % ne11, i2 % ne12, i3 % ne13).
static __device__ __forceinline__ void ternion_bin_row(ternion_u32 r, ternion_fastdiv ne01, ternion_fastdiv ne02,
                                                       ternion_fastdiv ne11, ternion_fastdiv ne12, ternion_fastdiv ne13,
                                                       ternion_u32 * i, ternion_u32 * j) {
    ternion_row_index(r, ne01, ne02, i[1], i[2], i[3]);
    j[1] = ternion_fastdiv_mod(i[1], ne11);
    j[2] = ternion_fastdiv_mod(i[2], ne12);
    j[3] = ternion_fastdiv_mod(i[3], ne13);
}

template <typename Op, typename T0, typename T1>
static __device__ __forceinline__ void bin_bcast(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1,
                                                 ternion_fastdiv ne01, ternion_fastdiv ne02, ternion_fastdiv ne10,
                                                 ternion_fastdiv ne11, ternion_fastdiv ne12, ternion_fastdiv ne13,
                                                 ternion_i64 nrows) {
    const ternion_i64 ne0 = dst.ne[0];
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        ternion_u32 i[4], j[4];
        ternion_bin_row((ternion_u32)row, ne01, ne02, ne11, ne12, ne13, i, j);
        char * d = (char *)dst.data + i[1] * dst.nb[1] + i[2] * dst.nb[2] + i[3] * dst.nb[3];
        const char * a = (const char *)src0.data + i[1] * src0.nb[1] + i[2] * src0.nb[2] + i[3] * src0.nb[3];
        const char * b = (const char *)src1.data + j[1] * src1.nb[1] + j[2] * src1.nb[2] + j[3] * src1.nb[3];
        for (ternion_i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            const ternion_u32 j0 = ternion_fastdiv_mod((ternion_u32)i0, ne10);
            const float x = ternion_load((const T0 *)(a + i0 * src0.nb[0]));
            const float y = ternion_load((const T1 *)(b + j0 * src1.nb[0]));
            ternion_store((T0 *)(d + i0 * dst.nb[0]), Op::apply(x, y));
        }
    }
}

template <typename Op>
static __device__ __forceinline__ void bin4_f32(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1,
                                                ternion_fastdiv ne01, ternion_fastdiv ne02, ternion_fastdiv ne11,
                                                ternion_fastdiv ne12, ternion_fastdiv ne13, ternion_i64 nrows) {
    const ternion_i64 n4 = dst.ne[0] / 4;
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        ternion_u32 i[4], j[4];
        ternion_bin_row((ternion_u32)row, ne01, ne02, ne11, ne12, ne13, i, j);
        float4 * d = (float4 *)((char *)dst.data + i[1] * dst.nb[1] + i[2] * dst.nb[2] + i[3] * dst.nb[3]);
        const float4 * a = (const float4 *)((const char *)src0.data + i[1] * src0.nb[1] + i[2] * src0.nb[2] + i[3] * src0.nb[3]);
        const float4 * b = (const float4 *)((const char *)src1.data + j[1] * src1.nb[1] + j[2] * src1.nb[2] + j[3] * src1.nb[3]);
        // Four float4 of each operand in flight per thread before any store
        // (dst may alias a source, so the compiler would not reorder them).
        for (ternion_i64 k0 = threadIdx.x; k0 < n4; k0 += 4 * (ternion_i64)blockDim.x) {
            float4 x[4], y[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                if (k < n4) {
                    x[u] = ternion_ldcs(a + k); // src0 and dst stream through once: evict first
                    y[u] = b[k];                // src1 rows repeat: keep them cached
                }
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                if (k < n4) {
                    ternion_stcs(d + k, make_float4(Op::apply(x[u].x, y[u].x), Op::apply(x[u].y, y[u].y),
                                                    Op::apply(x[u].z, y[u].z), Op::apply(x[u].w, y[u].w)));
                }
            }
        }
    }
}
