// mmv.cu - the matrix-vector product of ggml's MUL_MAT for one src1 column
// (ne11 == 1): dst[row] = Σ_k src0[row][k]·src1[k] with f32, f16 or bf16
// src0 and f32 src1 and dst, batched over dims 2 and 3 with src0 broadcast
// by division (i02 = i12 / r2). The entry points are generated from the
// catalog's templates: mmv_{t} (any row start) and mmvv_{t} (16-byte vector
// loads: rows a multiple of 16 bytes long and 16-byte aligned in src0 and
// src1).
#include "vendor.h"

// The sums of v[0..R) over the block's threads, returned to thread 0
// (blockDim.x a multiple of the warp size, at most 1024).
template <int R>
static __device__ __forceinline__ void ternion_block_sums(float * v) {
    __shared__ float partial[R][1024 / 32];
    const int warp = threadIdx.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
#pragma unroll
    for (int r = 0; r < R; r++) {
        for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) v[r] += TERNION_SHFL_XOR(v[r], m);
        if (lane == 0) partial[r][warp] = v[r];
    }
    __syncthreads();
    const int nwarps = blockDim.x / TERNION_WARP_SIZE;
#pragma unroll
    for (int r = 0; r < R; r++) {
        v[r] = threadIdx.x < nwarps ? partial[r][threadIdx.x] : 0.0f;
        if (warp == 0) {
            for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) v[r] += TERNION_SHFL_XOR(v[r], m);
        }
    }
}

// Block (x, y, z) computes rows R·x … R·x + R - 1 of matrix (y, z) (those
// below ne01): its threads stride over k, each loaded group of src1 values
// serving the R rows (with V > 1, V values of T a 16-byte load; one row a
// block read 2 bytes of f32 src1 from L1 for every byte of f16 weights).
template <typename T, int V, int R>
static __device__ __forceinline__ void mmv(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                           ternion_fastdiv r3) {
    const ternion_u32 row0 = blockIdx.x * R, i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const char * x[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const ternion_i64 row = min((ternion_i64)(row0 + r), src0.ne[1] - 1);
        x[r] = (const char *)src0.data + row * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3];
    }
    const float * y = (const float *)((const char *)src1.data + i12 * src1.nb[2] + i13 * src1.nb[3]);
    const ternion_i64 k = src0.ne[0];
    float sum[R];
#pragma unroll
    for (int r = 0; r < R; r++) sum[r] = 0.0f;
    if (V == 1) {
        for (ternion_i64 i = threadIdx.x; i < k; i += blockDim.x) {
#pragma unroll
            for (int r = 0; r < R; r++) sum[r] += ternion_load((const T *)x[r] + i) * y[i];
        }
    } else {
        const float4 * yv = (const float4 *)y;
#pragma unroll 4
        for (ternion_i64 i = threadIdx.x; i < k / V; i += blockDim.x) {
            float4 f[V >= 4 ? V / 4 : 1]; // V is 1 only in the branch above
#pragma unroll
            for (int j = 0; j < V / 4; j++) f[j] = yv[i * (V / 4) + j];
#pragma unroll
            for (int r = 0; r < R; r++) {
                const uint4 raw = ((const uint4 *)x[r])[i];
                const T * e = (const T *)&raw;
#pragma unroll
                for (int j = 0; j < V / 4; j++) {
                    sum[r] += ternion_load(e + 4 * j) * f[j].x + ternion_load(e + 4 * j + 1) * f[j].y +
                              ternion_load(e + 4 * j + 2) * f[j].z + ternion_load(e + 4 * j + 3) * f[j].w;
                }
            }
        }
    }
    ternion_block_sums<R>(sum);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (row0 + r < src0.ne[1]) *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + i12 * dst.nb[2] + i13 * dst.nb[3]) = sum[r];
        }
    }
}

// Rows R·blockIdx.x … of mmvn for NC columns (see mmvn).
template <typename T, int V, int R, int NC>
static __device__ __forceinline__ void mmvn_cols(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_u32 i02,
                                                 ternion_u32 i03, ternion_u32 i12, ternion_u32 i13) {
    const ternion_u32 row0 = blockIdx.x * R;
    const uint4 * x[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const ternion_i64 row = min((ternion_i64)(row0 + r), src0.ne[1] - 1);
        x[r] = (const uint4 *)((const char *)src0.data + row * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3]);
    }
    const float4 * y[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) y[c] = (const float4 *)((const char *)src1.data + c * src1.nb[1] + i12 * src1.nb[2] + i13 * src1.nb[3]);
    float sum[R * NC];
#pragma unroll
    for (int i = 0; i < R * NC; i++) sum[i] = 0.0f;
#pragma unroll 2
    for (ternion_i64 i = threadIdx.x; i < src0.ne[0] / V; i += blockDim.x) {
        uint4 raw[R];
#pragma unroll
        for (int r = 0; r < R; r++) raw[r] = x[r][i];
#pragma unroll
        for (int c = 0; c < NC; c++) {
            float4 f[V / 4];
#pragma unroll
            for (int j = 0; j < V / 4; j++) f[j] = y[c][i * (V / 4) + j];
#pragma unroll
            for (int r = 0; r < R; r++) {
                const T * e = (const T *)&raw[r];
#pragma unroll
                for (int j = 0; j < V / 4; j++) {
                    sum[r * NC + c] += ternion_load(e + 4 * j) * f[j].x + ternion_load(e + 4 * j + 1) * f[j].y +
                                       ternion_load(e + 4 * j + 2) * f[j].z + ternion_load(e + 4 * j + 3) * f[j].w;
                }
            }
        }
    }
    ternion_block_sums<R * NC>(sum);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (row0 + r >= src0.ne[1]) continue;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + c * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3]) = sum[r * NC + c];
            }
        }
    }
}

// MUL_MAT for 2 to 8 f32 src1 columns (ncols) with mmvv's 16-byte loads:
// block (x, y, z) computes rows R·x … R·x + R - 1 of matrix (y, z) for
// every column; each 16-byte load of weights serves the ncols columns and
// each load of src1 the R rows.
template <typename T, int V, int R>
static __device__ __forceinline__ void mmvn(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                            ternion_fastdiv r3, int ncols) {
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    switch (ncols) {
    case 2: mmvn_cols<T, V, R, 2>(dst, src0, src1, i02, i03, i12, i13); break;
    case 3: mmvn_cols<T, V, R, 3>(dst, src0, src1, i02, i03, i12, i13); break;
    case 4: mmvn_cols<T, V, R, 4>(dst, src0, src1, i02, i03, i12, i13); break;
    case 5: mmvn_cols<T, V, R, 5>(dst, src0, src1, i02, i03, i12, i13); break;
    case 6: mmvn_cols<T, V, R, 6>(dst, src0, src1, i02, i03, i12, i13); break;
    case 7: mmvn_cols<T, V, R, 7>(dst, src0, src1, i02, i03, i12, i13); break;
    default: mmvn_cols<T, V, R, 8>(dst, src0, src1, i02, i03, i12, i13); break;
    }
}

// The pointer arrays of a batched gemm (ggml's k_compute_batched_ptrs): for
// batch i = i12 + i13*ne12 < ne12*ne13, out[i] = a + (i12/r2)*nba2 +
// (i13/r3)*nba3, out[n + i] = b + i12*nbb2 + i13*nbb3, out[2n + i] = c +
// i12*nbc2 + i13*nbc3 (n = ne12*ne13; grid-stride loop).
extern "C" __global__ void batched_ptrs(ternion_i64 * out, ternion_i64 a, ternion_i64 b, ternion_i64 c, ternion_i64 ne12,
                                        ternion_i64 ne13, ternion_i64 nba2, ternion_i64 nba3, ternion_i64 nbb2, ternion_i64 nbb3,
                                        ternion_i64 nbc2, ternion_i64 nbc3, ternion_i64 r2, ternion_i64 r3) {
    const ternion_i64 n = ne12 * ne13;
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const ternion_i64 i12 = i % ne12, i13 = i / ne12;
        out[i] = a + (i12 / r2) * nba2 + (i13 / r3) * nba3;
        out[n + i] = b + i12 * nbb2 + i13 * nbb3;
        out[2 * n + i] = c + i12 * nbc2 + i13 * nbc3;
    }
}
