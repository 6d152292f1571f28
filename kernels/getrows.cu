// getrows.cu - ggml's GET_ROWS: row i10 of dst matrix (i11, i12) is row
// src1[i10, i11, i12] of src0 matrix (i11, i12), converted to f32 (f16,
// bf16 and f32 rows) or copied bit for bit (i32 rows). An index outside
// [0, src0.ne[1]) gives a row of zeros (ggml reads out of bounds there).
// getrows_{ts} serves any strides; getrows4_b32 copies 4-byte rows that are
// packed, a multiple of 4 elements long and 16-byte aligned with 16-byte
// loads and stores. Blocks (x) and threads (y) walk dst's rows, threads (x)
// the elements of a row.
#include "index.h"

// One element of src0 (type T) to dst (f32, or i32 for i32 rows).
static __device__ __forceinline__ void getrows_elem(char * d, const float * s) { *(float *)d = *s; }
static __device__ __forceinline__ void getrows_elem(char * d, const ternion_f16 * s) { *(float *)d = ternion_load(s); }
static __device__ __forceinline__ void getrows_elem(char * d, const ternion_bf16s * s) { *(float *)d = ternion_load(s); }
static __device__ __forceinline__ void getrows_elem(char * d, const ternion_u32 * s) { *(ternion_u32 *)d = *s; }

// The source row of dst's row r (nullptr for an index out of range) and the
// destination row; ne10 and ne11 divide r into (i10, i11, i12).
static __device__ __forceinline__ const char * getrows_rows(ternion_u32 r, const ternion_tensor & dst, const ternion_tensor & src0,
                                                            const ternion_tensor & src1, ternion_fastdiv ne10, ternion_fastdiv ne11,
                                                            char *& d) {
    ternion_u32 i10, i11, i12;
    ternion_row_index(r, ne10, ne11, i10, i11, i12);
    d = (char *)dst.data + i10 * dst.nb[1] + i11 * dst.nb[2] + i12 * dst.nb[3];
    const int i01 = *(const int *)((const char *)src1.data + i10 * src1.nb[0] + i11 * src1.nb[1] + i12 * src1.nb[2]);
    if (i01 < 0 || i01 >= src0.ne[1]) {
        return nullptr;
    }
    return (const char *)src0.data + i01 * src0.nb[1] + i11 * src0.nb[2] + i12 * src0.nb[3];
}

template <typename T>
static __device__ __forceinline__ void getrows(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv ne10,
                                               ternion_fastdiv ne11, ternion_i64 nrows) {
    const ternion_i64 ne0 = dst.ne[0];
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        char * d;
        const char * s = getrows_rows((ternion_u32)row, dst, src0, src1, ne10, ne11, d);
        for (ternion_i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            if (s == nullptr) {
                *(ternion_u32 *)(d + i0 * dst.nb[0]) = 0u;
            } else {
                getrows_elem(d + i0 * dst.nb[0], (const T *)(s + i0 * src0.nb[0]));
            }
        }
    }
}

// getrows for 4-byte rows (f32 or i32) packed in src0 and dst, ne0 % 4 == 0,
// rows 16-byte aligned: four 16-byte loads in flight per thread.
extern "C" __global__ void getrows4_b32(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv ne10,
                                        ternion_fastdiv ne11, ternion_i64 nrows) {
    TERNION_KERNEL_ENTRY();
    const ternion_i64 n4 = dst.ne[0] / 4;
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows;
         row += (ternion_i64)gridDim.x * blockDim.y) {
        char * dc;
        const uint4 * s = (const uint4 *)getrows_rows((ternion_u32)row, dst, src0, src1, ne10, ne11, dc);
        uint4 * d = (uint4 *)dc;
        for (ternion_i64 k0 = threadIdx.x; k0 < n4; k0 += 4 * (ternion_i64)blockDim.x) {
            uint4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                v[u] = make_uint4(0u, 0u, 0u, 0u);
                if (k < n4 && s != nullptr) v[u] = s[k];
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                if (k < n4) d[k] = v[u];
            }
        }
    }
}
