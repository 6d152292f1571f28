// reduce.cu - ggml's SUM_ROWS, MEAN, ARGMAX, SUM and COUNT_EQUAL.
//
// Row reductions (reduce_rows, reduce_argmax): blockDim.x threads share a row
// (a multiple of the warp size, at most 1024), blockDim.y rows per block,
// blocks walk the rows grid-stride; V = 4 reads 16-byte vectors (rows packed,
// 16-byte aligned, ne0 % 4 == 0), V = 1 any strides. Long packed rows take
// a block each instead (sumrowsb_f32, argmaxb_f32, argmaxbp_f32: one row a
// block, rows grid-stride, more 16-byte loads in flight a thread, measured
// fastest on the H200 in bench/experiments/reduce.cu). Whole-tensor reductions
// (SUM, COUNT_EQUAL) run in two launches: each block of a grid-stride pass
// writes its partial result to partial[blockIdx.x], then one block adds the
// partials (reduce_final_*), so the result is deterministic and no atomics
// are needed.
#include "index.h"

// Sum of v over the threads of a block row (threadIdx.y) of blockDim.x
// threads, returned to every thread of the row. Every thread of the block
// calls it (it synchronises when a row spans several warps).
template <typename T>
static __device__ __forceinline__ T reduce_row_sum(T v) {
    __shared__ T part[1024 / 32];
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        v += TERNION_SHFL_XOR(v, m);
    }
    if (blockDim.x <= TERNION_WARP_SIZE) {
        return v;
    }
    const int wpr = blockDim.x / TERNION_WARP_SIZE; // warps per row
    const int warp = threadIdx.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
    __syncthreads(); // part may still be read by a previous call
    if (lane == 0) {
        part[threadIdx.y * wpr + warp] = v;
    }
    __syncthreads();
    v = lane < wpr ? part[threadIdx.y * wpr + lane] : (T)0;
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        v += TERNION_SHFL_XOR(v, m);
    }
    return v;
}

// dst[0, i1, i2, i3] = scale * Σ_i0 src[i0, i1, i2, i3] (f32) for the nrows
// rows of src; ne1 and ne2 divide a row number into (i1, i2, i3).
template <int V>
static __device__ __forceinline__ void reduce_rows(ternion_tensor dst, ternion_tensor src, ternion_fastdiv ne1, ternion_fastdiv ne2,
                                                   ternion_i64 nrows, float scale) {
    const ternion_i64 ne0 = src.ne[0];
    for (ternion_i64 base = (ternion_i64)blockIdx.x * blockDim.y; base < nrows; base += (ternion_i64)gridDim.x * blockDim.y) {
        const ternion_i64 row = base + threadIdx.y;
        float sum = 0.0f;
        ternion_u32 i1 = 0, i2 = 0, i3 = 0;
        if (row < nrows) {
            ternion_row_index((ternion_u32)row, ne1, ne2, i1, i2, i3);
            const char * s = (const char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
            if (V == 4) {
                const float4 * s4 = (const float4 *)s;
                const ternion_i64 n4 = ne0 / 4;
                float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (ternion_i64 k0 = threadIdx.x; k0 < n4; k0 += 4 * (ternion_i64)blockDim.x) {
                    float4 v[4];
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                        v[u] = k < n4 ? s4[k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    }
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
                    }
                }
                sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            } else {
                for (ternion_i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
                    sum += *(const float *)(s + i0 * src.nb[0]);
                }
            }
        }
        sum = reduce_row_sum(sum);
        if (row < nrows && threadIdx.x == 0) {
            *(float *)((char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]) = sum * scale;
        }
    }
}

// (v, i) replaces (bv, bi) when v is larger, or equal at a smaller index
// (ggml's first maximum); NaN never wins.
static __device__ __forceinline__ void reduce_argmax_take(float v, int i, float & bv, int & bi) {
    if (v > bv || (v == bv && i < bi)) {
        bv = v;
        bi = i;
    }
}

// The index of "no element yet" in an argmax (larger than any index).
#define REDUCE_ARGMAX_NONE 0x7fffffff

// Reduces (bv, bi) over the threads of a block row (threadIdx.y) of
// blockDim.x threads, the result in every thread of the row. Every thread of
// the block calls it (it synchronises when a row spans several warps).
static __device__ __forceinline__ void reduce_argmax_row(float & bv, int & bi) {
    __shared__ float pv[1024 / 32];
    __shared__ int pi[1024 / 32];
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        reduce_argmax_take(TERNION_SHFL_XOR(bv, m), TERNION_SHFL_XOR(bi, m), bv, bi);
    }
    if (blockDim.x <= TERNION_WARP_SIZE) {
        return;
    }
    const int wpr = blockDim.x / TERNION_WARP_SIZE;
    const int warp = threadIdx.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
    __syncthreads(); // pv, pi may still be read by a previous call
    if (lane == 0) {
        pv[threadIdx.y * wpr + warp] = bv;
        pi[threadIdx.y * wpr + warp] = bi;
    }
    __syncthreads();
    bv = -__int_as_float(0x7f800000);
    bi = REDUCE_ARGMAX_NONE;
    if (lane < wpr) {
        bv = pv[threadIdx.y * wpr + lane];
        bi = pi[threadIdx.y * wpr + lane];
    }
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        reduce_argmax_take(TERNION_SHFL_XOR(bv, m), TERNION_SHFL_XOR(bi, m), bv, bi);
    }
}

// dst[row] = the index of the first maximum of row row of src (f32, a
// matrix: row offset row*nb[1]) for row < nrows; 0 for a row with no
// comparable value (all NaN).
template <int V>
static __device__ __forceinline__ void reduce_argmax(ternion_tensor dst, ternion_tensor src, ternion_i64 nrows) {
    const ternion_i64 ne0 = src.ne[0];
    const int none = REDUCE_ARGMAX_NONE;
    for (ternion_i64 base = (ternion_i64)blockIdx.x * blockDim.y; base < nrows; base += (ternion_i64)gridDim.x * blockDim.y) {
        const ternion_i64 row = base + threadIdx.y;
        float bv = -__int_as_float(0x7f800000);
        int bi = none;
        if (row < nrows) {
            const char * s = (const char *)src.data + row * src.nb[1];
            if (V == 4) {
                const float4 * s4 = (const float4 *)s;
                const ternion_i64 n4 = ne0 / 4;
                for (ternion_i64 k0 = threadIdx.x; k0 < n4; k0 += 4 * (ternion_i64)blockDim.x) {
                    float4 v[4];
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                        if (k < n4) v[u] = s4[k];
                    }
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        const ternion_i64 k = k0 + u * (ternion_i64)blockDim.x;
                        if (k < n4) {
                            const int i = (int)(4 * k);
                            reduce_argmax_take(v[u].x, i, bv, bi);
                            reduce_argmax_take(v[u].y, i + 1, bv, bi);
                            reduce_argmax_take(v[u].z, i + 2, bv, bi);
                            reduce_argmax_take(v[u].w, i + 3, bv, bi);
                        }
                    }
                }
            } else {
                for (ternion_i64 i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
                    reduce_argmax_take(*(const float *)(s + i0 * src.nb[0]), (int)i0, bv, bi);
                }
            }
        }
        reduce_argmax_row(bv, bi);
        if (row < nrows && threadIdx.x == 0) {
            *(int *)((char *)dst.data + row * dst.nb[0]) = bi == none ? 0 : bi;
        }
    }
}

// A 16-byte load of p: streaming (evict first, the data is read once) when CS.
template <bool CS>
static __device__ __forceinline__ float4 reduce_load4(const float4 * p) {
    if (CS) {
        return ternion_ldcs(p);
    }
    return *p;
}

// reduce_argmax_loads requests the vectors s4[k0 + u·stride] (u < U) below
// n4 into v.
template <int U, bool CS>
static __device__ __forceinline__ void reduce_argmax_loads(const float4 * s4, int k0, int stride, int n4, float4 * v) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int k = k0 + u * stride;
        if (k < n4) {
            v[u] = reduce_load4<CS>(s4 + k);
        }
    }
}

// reduce_rows<4> with one row a block of NT threads (blockDim (NT, 1), rows
// blockIdx.x grid-stride), U 16-byte loads in flight a thread, streaming
// loads when CS. SUM_ROWS f32 [8192, 8192] on the H200: NT=512 U=4 CS 4147
// GiB/s, NT=256 U=8 plain 4088, reduce_rows<4> (512, 1) 3951.
template <int NT, int U, bool CS>
static __device__ __forceinline__ void reduce_rows_block(ternion_tensor dst, ternion_tensor src, ternion_fastdiv ne1, ternion_fastdiv ne2,
                                                         ternion_i64 nrows, float scale) {
    const int n4 = (int)(src.ne[0] / 4);
    for (ternion_i64 row = blockIdx.x; row < nrows; row += gridDim.x) {
        ternion_u32 i1, i2, i3;
        ternion_row_index((ternion_u32)row, ne1, ne2, i1, i2, i3);
        const float4 * s4 = (const float4 *)((const char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3]);
        float acc[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            acc[u] = 0.0f;
        }
        for (int k0 = threadIdx.x; k0 < n4; k0 += U * NT) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * NT;
                v[u] = k < n4 ? reduce_load4<CS>(s4 + k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
        }
        float sum = 0.0f;
#pragma unroll
        for (int u = 0; u < U; u++) {
            sum += acc[u];
        }
        sum = reduce_row_sum(sum);
        if (threadIdx.x == 0) {
            *(float *)((char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]) = sum * scale;
        }
    }
}

// reduce_argmax<4> with one row a block of NT threads (blockDim (NT, 1), rows
// blockIdx.x grid-stride), U 16-byte loads in flight a thread, each tracked
// apart (no dependency between them), streaming loads when CS. ARGMAX f32
// [32000, 512] on the H200: NT=256 U=8 plain 3204 GiB/s, reduce_argmax<4>
// (512, 1) 3106; the streaming read ceiling was 3624 against 3404 plain.
// With early set, each thread requests its first U loads before the kernel
// waits for the kernels before it (core sets it only where no kernel that
// may still run writes src: core/ops/early.go), so a block that starts
// while the kernel before it ends has its first bytes on the way (an H100:
// 24.42 -> 24.06 µs). P (pipelined): a thread requests a row's next U
// vectors before it compares the U it holds, so its loads never drain
// between steps (without P every step waits a memory round trip with
// nothing in flight: at [32000, 512] four steps a row, all blocks in step;
// on an H100, argmaxbp_f32's U=4 with P 24.02-24.09 µs against U=8
// without 24.59-24.62, three rounds in one run).
template <int NT, int U, bool CS, bool P>
static __device__ __forceinline__ void reduce_argmax_block(ternion_tensor dst, ternion_tensor src, ternion_i64 nrows, int early) {
    const int n4 = (int)(src.ne[0] / 4);
    float4 v[U];
    // pending: v holds the loads of the first step of row blockIdx.x
    bool pending = early && (ternion_i64)blockIdx.x < nrows;
    if (pending) {
        reduce_argmax_loads<U, CS>((const float4 *)((const char *)src.data + blockIdx.x * src.nb[1]), threadIdx.x, NT, n4, v);
    }
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 row = blockIdx.x; row < nrows; row += gridDim.x) {
        const float4 * s4 = (const float4 *)((const char *)src.data + row * src.nb[1]);
        float bvs[U];
        int bis[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            bvs[u] = -__int_as_float(0x7f800000);
            bis[u] = REDUCE_ARGMAX_NONE;
        }
        if (!pending) {
            reduce_argmax_loads<U, CS>(s4, threadIdx.x, NT, n4, v);
        }
        pending = false;
        for (int k0 = threadIdx.x; k0 < n4; k0 += U * NT) {
            float4 w[U]; // the next step's vectors (P)
            if (P) {
                reduce_argmax_loads<U, CS>(s4, k0 + U * NT, NT, n4, w);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * NT;
                if (k < n4) {
                    reduce_argmax_take(v[u].x, 4 * k, bvs[u], bis[u]);
                    reduce_argmax_take(v[u].y, 4 * k + 1, bvs[u], bis[u]);
                    reduce_argmax_take(v[u].z, 4 * k + 2, bvs[u], bis[u]);
                    reduce_argmax_take(v[u].w, 4 * k + 3, bvs[u], bis[u]);
                }
            }
            if (P) {
#pragma unroll
                for (int u = 0; u < U; u++) {
                    v[u] = w[u];
                }
            } else {
                reduce_argmax_loads<U, CS>(s4, k0 + U * NT, NT, n4, v);
            }
        }
        float bv = bvs[0];
        int bi = bis[0];
#pragma unroll
        for (int u = 1; u < U; u++) {
            reduce_argmax_take(bvs[u], bis[u], bv, bi);
        }
        reduce_argmax_row(bv, bi);
        if (threadIdx.x == 0) {
            *(int *)((char *)dst.data + row * dst.nb[0]) = bi == REDUCE_ARGMAX_NONE ? 0 : bi;
        }
    }
}

// The one-row-a-block kernels' block sizes (the planner's reduceBlockThreads
// and reduceArgmaxThreads).
#define REDUCE_SUMROWS_NT 512
#define REDUCE_ARGMAX_NT 256

// sumrowsb_f32: reduce_rows_block for packed 16-byte aligned rows.
extern "C" __global__ void __launch_bounds__(512)
    sumrowsb_f32(ternion_tensor dst, ternion_tensor src, ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_i64 nrows, float scale) {
    TERNION_KERNEL_ENTRY();
    reduce_rows_block<REDUCE_SUMROWS_NT, 4, true>(dst, src, ne1, ne2, nrows, scale);
}

// partial[blockIdx.x] (for blocks below nparts, the grid's size) = Σ of the elements of the packed f32 buffer src
// (n elements) the block's threads reach grid-stride: V = 4 reads the n/4
// 16-byte vectors (src 16-byte aligned) and the last n % 4 elements singly.
// blockDim.x is a multiple of the warp size (blockDim.y 1).
template <int V>
static __device__ __forceinline__ void reduce_flat(float * partial, ternion_i64 nparts, const float * src, ternion_i64 n) {
    float sum = 0.0f;
    ternion_i64 tail = 0;
    if (V == 4) {
        const float4 * s4 = (const float4 *)src;
        const ternion_i64 n4 = n / 4;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (ternion_i64 k0 = TERNION_TID(); k0 < n4; k0 += 4 * TERNION_NTHREADS()) {
            float4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const ternion_i64 k = k0 + u * TERNION_NTHREADS();
                v[u] = k < n4 ? s4[k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
        }
        sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        tail = 4 * n4;
    }
    for (ternion_i64 i = tail + TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        sum += src[i];
    }
    sum = reduce_row_sum(sum);
    if (threadIdx.x == 0 && blockIdx.x < nparts) {
        partial[blockIdx.x] = sum;
    }
}

// partial[blockIdx.x] (blocks below nparts) = the number of elements i < n (n < 2^31) with a[i]
// == b[i] (i32 tensors of one shape, any strides) the block's threads reach
// grid-stride; ne0, ne1, ne2 divide an element number into indices.
extern "C" __global__ void count_equal_i32(ternion_i64 * partial, ternion_i64 nparts, ternion_tensor a, ternion_tensor b, ternion_fastdiv ne0,
                                           ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    ternion_i64 count = 0;
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const int x = *(const int *)((const char *)a.data + ternion_offset((ternion_u32)i, a, ne0, ne1, ne2));
        const int y = *(const int *)((const char *)b.data + ternion_offset((ternion_u32)i, b, ne0, ne1, ne2));
        count += x == y;
    }
    count = reduce_row_sum(count);
    if (threadIdx.x == 0 && blockIdx.x < nparts) {
        partial[blockIdx.x] = count;
    }
}

// dst[0] = scale * Σ_{i<n} partial[i] (one block, blockDim.x a multiple of
// the warp size).
extern "C" __global__ void reduce_final_f32(float * dst, const float * partial, ternion_i64 n, float scale) {
    TERNION_KERNEL_ENTRY();
    float sum = 0.0f;
    for (ternion_i64 i = threadIdx.x; i < n; i += blockDim.x) {
        sum += partial[i];
    }
    sum = reduce_row_sum(sum);
    if (threadIdx.x == 0) {
        dst[0] = sum * scale;
    }
}

// dst[0] = Σ_{i<n} partial[i] (one block, blockDim.x a multiple of the warp
// size).
extern "C" __global__ void reduce_final_i64(ternion_i64 * dst, const ternion_i64 * partial, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    ternion_i64 sum = 0;
    for (ternion_i64 i = threadIdx.x; i < n; i += blockDim.x) {
        sum += partial[i];
    }
    sum = reduce_row_sum(sum);
    if (threadIdx.x == 0) {
        dst[0] = sum;
    }
}
