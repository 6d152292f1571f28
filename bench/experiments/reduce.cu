// reduce.cu - a standalone nvcc program that times kernel variants for the
// three reduce-group speed goals ternion missed on the H200, so the design
// that goes into kernels/reduce.cu and kernels/argsort.cu is chosen by
// measurement:
//   SUM_ROWS f32 [8192,8192]   (3327 GiB/s, goal >= 4000),
//   ARGMAX   f32 [32000,512]   (3078 GiB/s, goal >= 3500),
//   ARGSORT  f32 [200000,16]   (566 us, goal <= 300; also [65000,16], [200000,1]).
// "cur" variants copy today's kernels' logic (contiguous rows, so plain
// indexing instead of FastDiv). Every variant is checked against a simple
// reference before it is timed (median of 5 batches of back-to-back
// launches, cudaEvents); GiB/s counts src + dst bytes as test-backend-ops.
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -o /tmp/reduce bench/experiments/reduce.cu && /tmp/reduce [argmax]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <numeric>
#include <functional>
#include <string>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

static const double GiB = 1024.0 * 1024 * 1024;
static int g_sms = 132;

template <typename F>
static float time_us(F launch, int iters = 50) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 5; i++) launch();
    std::vector<float> t;
    for (int rep = 0; rep < 5; rep++) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < iters; i++) launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000 / iters);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[2];
}

// Runs the phases in order (one whole operation) 20 times with an event
// between phases, and prints each phase's mean time in that sequence.
static void phased(const std::vector<std::function<void()>> & phases, const std::vector<std::string> & names) {
    const int reps = 20, np = (int)phases.size();
    std::vector<cudaEvent_t> ev(np + 1);
    for (auto & evt : ev) CK(cudaEventCreate(&evt));
    std::vector<double> sum(np, 0.0);
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(ev[0]));
        for (int i = 0; i < np; i++) { phases[i](); CK(cudaEventRecord(ev[i + 1])); }
        CK(cudaEventSynchronize(ev[np]));
        for (int i = 0; i < np; i++) { float ms; CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1])); sum[i] += ms * 1000; }
    }
    CK(cudaGetLastError());
    for (int i = 0; i < np; i++) printf("    %-52s %8.1f us\n", names[i].c_str(), sum[i] / reps);
    for (auto & evt : ev) CK(cudaEventDestroy(evt));
}

template <bool CS>
static __device__ __forceinline__ float4 ld4(const float4 * p) {
    if (CS) return __ldcs(p);
    return *p;
}

// ---------------------------------------------------------------- ceilings
// Pure read of n float4, U loads in flight a thread, grid-stride.
template <int U, bool CS>
__global__ void __launch_bounds__(256) read_ceiling(const float4 * __restrict__ s, long n, float * out) {
    const long step = (long)gridDim.x * blockDim.x;
    float acc = 0.f;
    for (long i0 = blockIdx.x * (long)blockDim.x + threadIdx.x; i0 < n; i0 += U * step) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long i = i0 + u * step;
            v[u] = i < n ? ld4<CS>(s + i) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < U; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    if (acc == 1234.5f) *out = acc;
}

// ---------------------------------------------------------------- block sums
// Sum over the threads of a block row (threadIdx.y) of blockDim.x threads
// (a copy of reduce.cu's reduce_row_sum).
static __device__ __forceinline__ float cur_row_sum(float v) {
    __shared__ float part[1024 / 32];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    if (blockDim.x <= 32) return v;
    const int wpr = blockDim.x / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) part[threadIdx.y * wpr + warp] = v;
    __syncthreads();
    v = lane < wpr ? part[threadIdx.y * wpr + lane] : 0.f;
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

// Sum of a block of NT threads (1-D), the result valid in thread 0.
template <int NT>
static __device__ __forceinline__ float blk_sum(float v) {
    __shared__ float part[NT / 32];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    if (NT == 32) return v;
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < NT / 32 ? part[threadIdx.x] : 0.f;
    if (threadIdx.x < 32)
        for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

// ---------------------------------------------------------------- SUM_ROWS
constexpr int SR_NE0 = 8192, SR_ROWS = 8192;

__global__ void sumrows_ref(float * dst, const float * src, int ne0, int nrows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows) return;
    double s = 0;
    for (int i = 0; i < ne0; i++) s += src[(long)r * ne0 + i];
    dst[r] = (float)s;
}

// Today's reduce_rows<4>: blockDim (bx, by), rows grid-stride, 4 float4 in flight.
__global__ void sumrows_cur(float * dst, const float * src, int ne0, long nrows) {
    for (long base = (long)blockIdx.x * blockDim.y; base < nrows; base += (long)gridDim.x * blockDim.y) {
        const long row = base + threadIdx.y;
        float sum = 0.f;
        if (row < nrows) {
            const float4 * s4 = (const float4 *)(src + row * ne0);
            const long n4 = ne0 / 4;
            float acc[4] = {0.f, 0.f, 0.f, 0.f};
            for (long k0 = threadIdx.x; k0 < n4; k0 += 4 * (long)blockDim.x) {
                float4 v[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const long k = k0 + u * (long)blockDim.x;
                    v[u] = k < n4 ? s4[k] : make_float4(0.f, 0.f, 0.f, 0.f);
                }
#pragma unroll
                for (int u = 0; u < 4; u++) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
            sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        }
        sum = cur_row_sum(sum);
        if (row < nrows && threadIdx.x == 0) dst[row] = sum;
    }
}

// One row per block of NT threads (rows grid-stride), U float4 in flight.
template <int NT, int U, bool CS>
__global__ void __launch_bounds__(NT) sumrows_block(float * dst, const float * src, int ne0, int nrows) {
    const int n4 = ne0 / 4;
    for (int row = blockIdx.x; row < nrows; row += gridDim.x) {
        const float4 * s4 = (const float4 *)(src + (long)row * ne0);
        float acc[U];
#pragma unroll
        for (int u = 0; u < U; u++) acc[u] = 0.f;
        for (int k0 = threadIdx.x; k0 < n4; k0 += U * NT) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * NT;
                v[u] = k < n4 ? ld4<CS>(s4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < U; u++) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        float sum = 0.f;
#pragma unroll
        for (int u = 0; u < U; u++) sum += acc[u];
        sum = blk_sum<NT>(sum);
        if (threadIdx.x == 0) dst[row] = sum;
        if (gridDim.x < nrows) __syncthreads(); // part[] reuse on the next row
    }
}

// One row per warp (W warps a block), rows grid-stride over all warps of
// the grid, U float4 in flight a lane; no block synchronisation at all.
template <int W, int U, bool CS>
__global__ void __launch_bounds__(W * 32) sumrows_warp(float * dst, const float * src, int ne0, int nrows) {
    const int lane = threadIdx.x % 32;
    const int n4 = ne0 / 4;
    for (int row = blockIdx.x * W + threadIdx.x / 32; row < nrows; row += gridDim.x * W) {
        const float4 * s4 = (const float4 *)(src + (long)row * ne0);
        float acc[U];
#pragma unroll
        for (int u = 0; u < U; u++) acc[u] = 0.f;
        for (int k0 = lane; k0 < n4; k0 += U * 32) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * 32;
                v[u] = k < n4 ? ld4<CS>(s4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < U; u++) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        float sum = 0.f;
#pragma unroll
        for (int u = 0; u < U; u++) sum += acc[u];
        for (int m = 16; m > 0; m >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, m);
        if (lane == 0) dst[row] = sum;
    }
}

// ---------------------------------------------------------------- ARGMAX
constexpr int AM_NE0 = 32000, AM_ROWS = 512;
#define AM_NONE 0x7fffffff

__global__ void argmax_ref(int * dst, const float * src, int ne0, int nrows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows) return;
    float bv = 0; int bi = -1;
    for (int i = 0; i < ne0; i++) {
        const float v = src[(long)r * ne0 + i];
        if (v != v) continue;
        if (bi < 0 || v > bv) { bv = v; bi = i; }
    }
    dst[r] = bi < 0 ? 0 : bi;
}

static __device__ __forceinline__ void am_take(float v, int i, float & bv, int & bi) {
    if (v > bv || (v == bv && i < bi)) { bv = v; bi = i; }
}

// Today's reduce_argmax<4>.
__global__ void argmax_cur(int * dst, const float * src, int ne0, long nrows) {
    __shared__ float pv[1024 / 32];
    __shared__ int pi[1024 / 32];
    for (long base = (long)blockIdx.x * blockDim.y; base < nrows; base += (long)gridDim.x * blockDim.y) {
        const long row = base + threadIdx.y;
        float bv = -__int_as_float(0x7f800000);
        int bi = AM_NONE;
        if (row < nrows) {
            const float4 * s4 = (const float4 *)(src + row * ne0);
            const long n4 = ne0 / 4;
            for (long k0 = threadIdx.x; k0 < n4; k0 += 4 * (long)blockDim.x) {
                float4 v[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const long k = k0 + u * (long)blockDim.x;
                    if (k < n4) v[u] = s4[k];
                }
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const long k = k0 + u * (long)blockDim.x;
                    if (k < n4) {
                        const int i = (int)(4 * k);
                        am_take(v[u].x, i, bv, bi); am_take(v[u].y, i + 1, bv, bi);
                        am_take(v[u].z, i + 2, bv, bi); am_take(v[u].w, i + 3, bv, bi);
                    }
                }
            }
        }
        for (int m = 16; m > 0; m >>= 1) am_take(__shfl_xor_sync(0xffffffffu, bv, m), __shfl_xor_sync(0xffffffffu, bi, m), bv, bi);
        if (blockDim.x > 32) {
            const int wpr = blockDim.x / 32;
            const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
            __syncthreads();
            if (lane == 0) { pv[threadIdx.y * wpr + warp] = bv; pi[threadIdx.y * wpr + warp] = bi; }
            __syncthreads();
            bv = -__int_as_float(0x7f800000);
            bi = AM_NONE;
            if (lane < wpr) { bv = pv[threadIdx.y * wpr + lane]; bi = pi[threadIdx.y * wpr + lane]; }
            for (int m = 16; m > 0; m >>= 1) am_take(__shfl_xor_sync(0xffffffffu, bv, m), __shfl_xor_sync(0xffffffffu, bi, m), bv, bi);
        }
        if (row < nrows && threadIdx.x == 0) dst[row] = bi == AM_NONE ? 0 : bi;
    }
}

// A thread's accumulator sees increasing indices, so a strictly larger
// value (or the first comparable one, for -inf) is all it takes.
static __device__ __forceinline__ void am_take_seq(float v, int i, float & bv, int & bi) {
    if (v > bv || (bi == AM_NONE && v == v)) { bv = v; bi = i; }
}

// (bv, bi) of a block of NT threads, valid in thread 0.
template <int NT>
static __device__ __forceinline__ void am_block(float & bv, int & bi) {
    __shared__ float pv[NT / 32];
    __shared__ int pi[NT / 32];
    for (int m = 16; m > 0; m >>= 1) am_take(__shfl_xor_sync(0xffffffffu, bv, m), __shfl_xor_sync(0xffffffffu, bi, m), bv, bi);
    if (NT == 32) return;
    if (threadIdx.x % 32 == 0) { pv[threadIdx.x / 32] = bv; pi[threadIdx.x / 32] = bi; }
    __syncthreads();
    if (threadIdx.x < 32) {
        bv = threadIdx.x < NT / 32 ? pv[threadIdx.x] : -__int_as_float(0x7f800000);
        bi = threadIdx.x < NT / 32 ? pi[threadIdx.x] : AM_NONE;
        for (int m = 16; m > 0; m >>= 1) am_take(__shfl_xor_sync(0xffffffffu, bv, m), __shfl_xor_sync(0xffffffffu, bi, m), bv, bi);
    }
}

// The (max, index) of float4 [k_begin, k_end) of row s4 over NT threads, U
// float4 in flight and U independent accumulators a thread.
template <int NT, int U, bool CS>
static __device__ __forceinline__ void am_scan(const float4 * s4, int kb, int ke, float & bv, int & bi) {
    float v_[U]; int i_[U];
#pragma unroll
    for (int u = 0; u < U; u++) { v_[u] = -__int_as_float(0x7f800000); i_[u] = AM_NONE; }
    for (int k0 = kb + threadIdx.x; k0 < ke; k0 += U * NT) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * NT;
            if (k < ke) v[u] = ld4<CS>(s4 + k);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * NT;
            if (k < ke) {
                am_take_seq(v[u].x, 4 * k, v_[u], i_[u]); am_take_seq(v[u].y, 4 * k + 1, v_[u], i_[u]);
                am_take_seq(v[u].z, 4 * k + 2, v_[u], i_[u]); am_take_seq(v[u].w, 4 * k + 3, v_[u], i_[u]);
            }
        }
    }
    bv = v_[0]; bi = i_[0];
#pragma unroll
    for (int u = 1; u < U; u++) am_take(v_[u], i_[u], bv, bi);
}

// One row per block of NT threads (one block per row, grid = nrows).
template <int NT, int U, bool CS>
__global__ void __launch_bounds__(NT) argmax_block(int * dst, const float * src, int ne0) {
    float bv; int bi;
    am_scan<NT, U, CS>((const float4 *)(src + (long)blockIdx.x * ne0), 0, ne0 / 4, bv, bi);
    am_block<NT>(bv, bi);
    if (threadIdx.x == 0) dst[blockIdx.x] = bi == AM_NONE ? 0 : bi;
}

// The tree's argmaxbp_f32 (reduce_argmax_block<NT, U, true, true>): one row
// a block, a thread requests the row's next U vectors (streaming) before it
// compares the U it holds.
template <int NT, int U>
__global__ void __launch_bounds__(NT) argmax_pipe(int * dst, const float * src, int ne0) {
    const float4 * s4 = (const float4 *)(src + (long)blockIdx.x * ne0);
    const int n4 = ne0 / 4;
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) if (threadIdx.x + u * NT < n4) v[u] = __ldcs(s4 + threadIdx.x + u * NT);
    float bv = -__int_as_float(0x7f800000);
    int bi = AM_NONE;
    for (int k0 = threadIdx.x; k0 < n4; k0 += U * NT) {
        float4 w[U];
#pragma unroll
        for (int u = 0; u < U; u++) if (k0 + (U + u) * NT < n4) w[u] = __ldcs(s4 + k0 + (U + u) * NT);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * NT;
            if (k < n4) {
                am_take(v[u].x, 4 * k, bv, bi); am_take(v[u].y, 4 * k + 1, bv, bi);
                am_take(v[u].z, 4 * k + 2, bv, bi); am_take(v[u].w, 4 * k + 3, bv, bi);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = w[u];
    }
    am_block<NT>(bv, bi);
    if (threadIdx.x == 0) dst[blockIdx.x] = bi == AM_NONE ? 0 : bi;
}

// One row a block, streamed through S shared-memory stages of CH bytes by
// the bulk copy engine (cp.async.bulk, sm_90: one request a stage from
// thread 0, completing on the stage's mbarrier), so the bytes in flight are
// bounded by shared memory, not by registers: 4 blocks of S·CH bytes a
// multiprocessor. Rows 16-byte aligned, ne0 a multiple of 4.
template <int NT, int CH, int S>
__global__ void __launch_bounds__(NT) argmax_bulk(int * dst, const float * src, int ne0) {
    extern __shared__ __align__(128) unsigned char am_bulk_smem[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(am_bulk_smem), bars = base + S * CH;
    const char * row = (const char *)(src + (long)blockIdx.x * ne0);
    const int bytes = ne0 * 4, nch = (bytes + CH - 1) / CH;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bars + 8 * s) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](int c) {
        const int s = c % S, n = min(CH, bytes - c * CH);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bars + 8 * s), "r"(n) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(base + s * CH),
                     "l"(row + (long)c * CH), "r"(n), "r"(bars + 8 * s)
                     : "memory");
    };
    if (threadIdx.x == 0) {
        for (int c = 0; c < S && c < nch; c++) issue(c);
    }
    float bv = -__int_as_float(0x7f800000);
    int bi = AM_NONE;
    for (int c = 0; c < nch; c++) {
        const int s = c % S;
        const unsigned par = (unsigned)(c / S) & 1u;
        unsigned done;
        do {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bars + 8 * s), "r"(par) : "memory");
        } while (!done);
        const int n4 = min(CH, bytes - c * CH) / 16;
        const float4 * v4 = (const float4 *)(am_bulk_smem + s * CH);
        const int i0 = c * (CH / 4);
#pragma unroll 4
        for (int k = threadIdx.x; k < n4; k += NT) {
            const float4 v = v4[k];
            am_take(v.x, i0 + 4 * k, bv, bi);
            am_take(v.y, i0 + 4 * k + 1, bv, bi);
            am_take(v.z, i0 + 4 * k + 2, bv, bi);
            am_take(v.w, i0 + 4 * k + 3, bv, bi);
        }
        __syncthreads(); // every thread is done with stage s
        if (threadIdx.x == 0 && c + S < nch) {
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            issue(c + S);
        }
    }
    am_block<NT>(bv, bi);
    if (threadIdx.x == 0) dst[blockIdx.x] = bi == AM_NONE ? 0 : bi;
}

// S blocks a row, each over a 1/S slice of its float4; partials to (pv, pi)
// [row*S + s]. LAST: the last block of a row to finish (a counter per row,
// left at 0 again) reduces the S partials and writes dst; otherwise
// argmax_fin does in a second launch.
template <int NT, int U, int S, bool CS, bool LAST>
__global__ void __launch_bounds__(NT) argmax_split(int * dst, const float * src, int ne0, float * pv, int * pi, unsigned * cnt) {
    const int row = blockIdx.x / S, seg = blockIdx.x % S;
    const int n4 = ne0 / 4;
    const int per = (n4 + S - 1) / S;
    const int kb = seg * per, ke = min(n4, kb + per);
    float bv; int bi;
    am_scan<NT, U, CS>((const float4 *)(src + (long)row * ne0), kb, ke, bv, bi);
    am_block<NT>(bv, bi);
    if (!LAST) {
        if (threadIdx.x == 0) { pv[blockIdx.x] = bv; pi[blockIdx.x] = bi; }
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        pv[blockIdx.x] = bv; pi[blockIdx.x] = bi;
        __threadfence();
        last = atomicAdd(cnt + row, 1u) == S - 1;
    }
    __syncthreads();
    if (last && threadIdx.x < 32) {
        __threadfence();
        bv = threadIdx.x < S ? __ldcg(pv + row * S + threadIdx.x) : -__int_as_float(0x7f800000);
        bi = threadIdx.x < S ? __ldcg(pi + row * S + threadIdx.x) : AM_NONE;
        for (int m = 16; m > 0; m >>= 1) am_take(__shfl_xor_sync(0xffffffffu, bv, m), __shfl_xor_sync(0xffffffffu, bi, m), bv, bi);
        if (threadIdx.x == 0) { dst[row] = bi == AM_NONE ? 0 : bi; cnt[row] = 0; }
    }
}

// One warp a row: dst[row] from the S partials.
template <int S>
__global__ void argmax_fin(int * dst, const float * pv, const int * pi, int nrows) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= nrows) return;
    float bv = lane < S ? pv[row * S + lane] : -__int_as_float(0x7f800000);
    int bi = lane < S ? pi[row * S + lane] : AM_NONE;
    for (int m = 16; m > 0; m >>= 1) am_take(__shfl_xor_sync(0xffffffffu, bv, m), __shfl_xor_sync(0xffffffffu, bi, m), bv, bi);
    if (lane == 0) dst[row] = bi == AM_NONE ? 0 : bi;
}

// ---------------------------------------------------------------- ARGSORT: today's chunk + merge
#define AS_TILE 2048

static __device__ __forceinline__ bool as_before(float ka, int ia, float kb, int ib, int desc) {
    if (ka != kb) return desc ? ka > kb : ka < kb;
    return ia < ib;
}

// Today's argsort_chunk (contiguous rows).
__global__ void as_chunk(float * okeys, int * oidx, const float * src, int ne0, int nchunks, int chunk, int order) {
    extern __shared__ float as_smem[];
    float * keys = as_smem;
    int * idx = (int *)(as_smem + chunk);
    const int row = blockIdx.x / nchunks;
    const int c = blockIdx.x - row * nchunks;
    const int start = c * chunk;
    const int n = ne0 - start < chunk ? ne0 - start : chunk;
    const float * s = src + (long)row * ne0;
    for (int j = threadIdx.x; j < chunk; j += blockDim.x) {
        keys[j] = j < n ? s[start + j] : 0.0f;
        idx[j] = start + j;
    }
    const int limit = start + n;
    __syncthreads();
    for (int k = 2; k <= chunk; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int p = threadIdx.x; p < chunk / 2; p += blockDim.x) {
                const int a = ((p & ~(j - 1)) << 1) | (p & (j - 1));
                const int b = a + j;
                const float ka = keys[a], kb = keys[b];
                const int ia = idx[a], ib = idx[b];
                const bool pa = ia >= limit, pb = ib >= limit;
                const bool b_first = pa != pb ? pa : (pa ? ib < ia : as_before(kb, ib, ka, ia, order));
                const bool up = (a & k) == 0;
                if (b_first == up) { keys[a] = kb; keys[b] = ka; idx[a] = ib; idx[b] = ia; }
            }
            __syncthreads();
        }
    }
    const long o = (long)row * ne0 + start;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        oidx[o + j] = idx[j];
        if (okeys != nullptr) okeys[o + j] = keys[j];
    }
}

static __device__ __forceinline__ int as_split(const float * ka, const int * ia, int na, const float * kb, const int * ib, int nb, int d, int order) {
    int lo = d - nb > 0 ? d - nb : 0, hi = d < na ? d : na;
    while (hi > lo) {
        const int step = (hi - lo + (int)blockDim.x - 1) / (int)blockDim.x;
        const int p = lo + ((int)threadIdx.x + 1) * step - 1;
        const bool before = p < hi && as_before(ka[p], ia[p], kb[d - 1 - p], ib[d - 1 - p], order);
        const int cnt = __syncthreads_count(before);
        const int nhi = lo + (cnt + 1) * step - 1;
        lo += cnt * step;
        hi = nhi < hi ? nhi : hi;
    }
    return lo;
}

static __device__ __forceinline__ int as_split1(const float * ka, const int * ia, int na, const float * kb, const int * ib, int nb, int d, int order) {
    int lo = d - nb > 0 ? d - nb : 0, hi = d < na ? d : na;
    while (hi > lo) {
        const int mid = (lo + hi) / 2;
        if (as_before(ka[mid], ia[mid], kb[d - 1 - mid], ib[d - 1 - mid], order)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Today's argsort_merge.
__global__ void __launch_bounds__(256) as_merge(float * okeys, int * oidx, const float * ikeys, const int * iidx, long nrows, long ne0,
                                                long width, int tiles, int order) {
    __shared__ float sk[AS_TILE];
    __shared__ int si[AS_TILE];
    __shared__ float ok[AS_TILE];
    __shared__ int oi[AS_TILE];
    const int row = blockIdx.x / tiles;
    if (row >= nrows) return;
    const long t0 = (long)(blockIdx.x - row * tiles) * AS_TILE;
    const long pair = t0 / (2 * width) * (2 * width);
    const int na = (int)(ne0 - pair < width ? ne0 - pair : width);
    const long bstart = pair + na;
    const int nb = (int)(ne0 - bstart < width ? (ne0 - bstart > 0 ? ne0 - bstart : 0) : width);
    const long base = (long)row * ne0;
    const float * ka = ikeys + base + pair;
    const int * ia = iidx + base + pair;
    const float * kb = ikeys + base + bstart;
    const int * ib = iidx + base + bstart;
    const int d0 = (int)(t0 - pair);
    const int d1 = d0 + AS_TILE < na + nb ? d0 + AS_TILE : na + nb;
    const int a0 = as_split(ka, ia, na, kb, ib, nb, d0, order);
    const int a1 = as_split(ka, ia, na, kb, ib, nb, d1, order);
    const int b0 = d0 - a0, b1 = d1 - a1;
    const int ta = a1 - a0, tb = b1 - b0, n = d1 - d0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        if (j < ta) { sk[j] = ka[a0 + j]; si[j] = ia[a0 + j]; }
        else { sk[j] = kb[b0 + j - ta]; si[j] = ib[b0 + j - ta]; }
    }
    __syncthreads();
    const int per = AS_TILE / 256;
    const int d = (int)threadIdx.x * per;
    if (d < n) {
        int x = as_split1(sk, si, ta, sk + ta, si + ta, tb, d, order);
        int y = d - x;
        for (int j = d; j < d + per && j < n; j++) {
            const bool from_a = y >= tb || (x < ta && as_before(sk[x], si[x], sk[ta + y], si[ta + y], order));
            if (from_a) { ok[j] = sk[x]; oi[j] = si[x]; x++; }
            else { ok[j] = sk[ta + y]; oi[j] = si[ta + y]; y++; }
        }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        oidx[base + t0 + j] = oi[j];
        if (okeys != nullptr) okeys[base + t0 + j] = ok[j];
    }
}

// ---------------------------------------------------------------- ARGSORT: LSD radix sort per row
// Keys become order-preserving u32 (-0 as +0, so equal floats tie and keep
// index order; descending inverts them); 4 stable passes of 8-bit digits,
// each: rs_up (a digit histogram per tile of 256*IPT keys of a row), rs_scan
// (exclusive offsets per row in (digit, tile) order), rs_down (stable rank
// within the tile, reorder in shared memory, coalesced scatter).
static __device__ __forceinline__ unsigned rs_key(float x, int desc) {
    unsigned f = __float_as_uint(x);
    if (f == 0x80000000u) f = 0;
    const unsigned k = (f & 0x80000000u) ? ~f : (f | 0x80000000u);
    return desc ? ~k : k;
}

template <int IPT>
__global__ void __launch_bounds__(256) rs_up(unsigned * hist, const float * src, const unsigned * kin, int ncols, int T, int shift, int desc) {
    constexpr int TILE = 256 * IPT;
    __shared__ unsigned bins[256];
    const int row = blockIdx.x / T, t = blockIdx.x - row * T;
    const int t0 = t * TILE;
    const int n = min(TILE, ncols - t0);
    const long rb = (long)row * ncols + t0;
    bins[threadIdx.x] = 0;
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += 256) {
        const unsigned k = src != nullptr ? rs_key(src[rb + j], desc) : kin[rb + j];
        atomicAdd(&bins[(k >> shift) & 255], 1u);
    }
    __syncthreads();
    hist[((long)row * 256 + threadIdx.x) * T + t] = bins[threadIdx.x];
}

// Exclusive scan of the n values of a 1-D block of NT threads (one a
// thread); *total gets the sum.
template <int NT>
static __device__ __forceinline__ unsigned rs_block_scan(unsigned v, unsigned * total) {
    __shared__ unsigned ws[NT / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) ws[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned w = lane < NT / 32 ? ws[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        if (lane < NT / 32) ws[lane] = w; // inclusive warp totals
    }
    __syncthreads();
    const unsigned before = warp > 0 ? ws[warp - 1] : 0;
    if (total != nullptr) *total = ws[NT / 32 - 1];
    __syncthreads(); // ws reuse
    return before + x - v;
}

// One block of 1024 threads a row: hist[row] (256*T values) in place to
// exclusive offsets within the row.
__global__ void __launch_bounds__(1024) rs_scan(unsigned * hist, int T) {
    const int n = 256 * T;
    unsigned * h = hist + (long)blockIdx.x * n;
    const int per = (n + 1023) / 1024;
    const int b = threadIdx.x * per, e = min(n, b + per);
    unsigned s = 0;
    for (int i = b; i < e; i++) s += h[i];
    unsigned run = rs_block_scan<1024>(s, nullptr);
    for (int i = b; i < e; i++) { const unsigned c = h[i]; h[i] = run; run += c; }
}

// MATCH: a round's peers (lanes of one digit) by __match_any_sync, else by
// 8 ballots (what a HIP port would do). LASTP: write only indices to dst.
template <int IPT, bool MATCH>
__global__ void __launch_bounds__(256) rs_down(unsigned * kout, int * iout, const float * src, const unsigned * kin, const int * iin,
                                               const unsigned * offs, int ncols, int T, int shift, int desc) {
    constexpr int TILE = 256 * IPT;
    __shared__ unsigned wcnt[8][256];
    __shared__ unsigned skey[TILE];
    __shared__ int sidx[TILE];
    __shared__ unsigned lbase[256];
    __shared__ int gofs[256];
    const int row = blockIdx.x / T, t = blockIdx.x - row * T;
    const int t0 = t * TILE;
    const int n = min(TILE, ncols - t0);
    const long rb = (long)row * ncols;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = threadIdx.x; i < 8 * 256; i += 256) (&wcnt[0][0])[i] = 0;
    __syncthreads();
    unsigned key[IPT], rk[IPT];
    int idx[IPT], dig[IPT];
    const unsigned lt = (1u << lane) - 1;
#pragma unroll
    for (int r = 0; r < IPT; r++) {
        const int j = warp * 32 * IPT + r * 32 + lane;
        const bool valid = j < n;
        unsigned k = 0;
        int ix = 0;
        if (valid) {
            if (src != nullptr) { k = rs_key(src[rb + t0 + j], desc); ix = t0 + j; }
            else { k = kin[rb + t0 + j]; ix = iin[rb + t0 + j]; }
        }
        const int d = valid ? (int)((k >> shift) & 255) : 256;
        unsigned peers;
        if (MATCH) {
            peers = __match_any_sync(0xffffffffu, d);
        } else {
            const unsigned vb = __ballot_sync(0xffffffffu, valid);
            peers = valid ? vb : ~vb;
#pragma unroll
            for (int b = 0; b < 8; b++) {
                const unsigned m = __ballot_sync(0xffffffffu, (d >> b) & 1);
                peers &= ((d >> b) & 1) ? m : ~m;
            }
        }
        const unsigned rank = __popc(peers & lt);
        const unsigned pre = valid ? wcnt[warp][d] : 0;
        __syncwarp();
        if (valid && (peers >> lane) == 1u) wcnt[warp][d] = pre + __popc(peers);
        __syncwarp();
        key[r] = k; idx[r] = ix; dig[r] = d; rk[r] = pre + rank;
    }
    __syncthreads();
    {
        const int d = threadIdx.x;
        unsigned s = 0;
#pragma unroll
        for (int w = 0; w < 8; w++) { const unsigned c = wcnt[w][d]; wcnt[w][d] = s; s += c; }
        const unsigned ex = rs_block_scan<256>(s, nullptr);
        lbase[d] = ex;
        gofs[d] = (int)offs[((long)row * 256 + d) * T + t] - (int)ex;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < IPT; r++) {
        if (dig[r] < 256) {
            const unsigned p = lbase[dig[r]] + wcnt[warp][dig[r]] + rk[r];
            skey[p] = key[r];
            sidx[p] = idx[r];
        }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += 256) {
        const unsigned k = skey[j];
        const int q = gofs[(k >> shift) & 255] + j;
        if ((unsigned)q >= (unsigned)ncols) continue; // only a wrong variant gets here; it shows as mismatches
        if (kout != nullptr) kout[rb + q] = k;
        iout[rb + q] = sidx[j];
    }
}

// ---------------------------------------------------------------- drivers
__global__ void init_f(float * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = (v & 0xffffff) / 8388608.0f - 1.0f;
    }
}

static void ceilings(const float * buf, long nfloats, const char * what) {
    float * sink; CK(cudaMalloc(&sink, 4));
    const long n4 = nfloats / 4;
    const double bytes = 4.0 * nfloats;
    for (int k : {4, 8, 16}) {
        const int grid = g_sms * k;
        float us = time_us([&] { read_ceiling<4, false><<<grid, 256>>>((const float4 *)buf, n4, sink); });
        printf("READ ceiling %-18s U=4 blocks=SMs*%-2d        %8.2f us %8.1f GiB/s\n", what, k, us, bytes / GiB / (us * 1e-6));
        us = time_us([&] { read_ceiling<8, false><<<grid, 256>>>((const float4 *)buf, n4, sink); });
        printf("READ ceiling %-18s U=8 blocks=SMs*%-2d        %8.2f us %8.1f GiB/s\n", what, k, us, bytes / GiB / (us * 1e-6));
        us = time_us([&] { read_ceiling<8, true><<<grid, 256>>>((const float4 *)buf, n4, sink); });
        printf("READ ceiling %-18s U=8 ldcs blocks=SMs*%-2d   %8.2f us %8.1f GiB/s\n", what, k, us, bytes / GiB / (us * 1e-6));
    }
    CK(cudaFree(sink));
}

static void bench_sumrows() {
    const int ne0 = SR_NE0, nrows = SR_ROWS;
    const long n = (long)ne0 * nrows;
    float *src, *dst, *ref;
    CK(cudaMalloc(&src, n * 4)); CK(cudaMalloc(&dst, nrows * 4)); CK(cudaMalloc(&ref, nrows * 4));
    init_f<<<1024, 256>>>(src, n, 11);
    sumrows_ref<<<nrows / 128, 128>>>(ref, src, ne0, nrows);
    CK(cudaDeviceSynchronize());
    std::vector<float> want(nrows), got(nrows);
    CK(cudaMemcpy(want.data(), ref, nrows * 4, cudaMemcpyDeviceToHost));
    printf("\n== SUM_ROWS f32 [%d,%d] (%.0f MiB) ==\n", ne0, nrows, n * 4.0 / (1 << 20));
    ceilings(src, n, "[8192,8192]");
    const double bytes = 4.0 * n + 4.0 * nrows;
    auto run = [&](const char * name, auto launch) {
        CK(cudaMemset(dst, 0, nrows * 4));
        launch();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), dst, nrows * 4, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (int i = 0; i < nrows; i++) { num += (got[i] - want[i]) * (double)(got[i] - want[i]); den += want[i] * (double)want[i]; }
        const float us = time_us(launch);
        printf("SUM_ROWS %-44s %8.2f us %8.1f GiB/s  nmse=%.1e%s\n", name, us, bytes / GiB / (us * 1e-6), num / den,
               num / den > 1e-10 ? "  WRONG" : "");
        fflush(stdout);
    };
    run("cur (512,1) grid=rows", [&] { sumrows_cur<<<nrows, dim3(512, 1)>>>(dst, src, ne0, nrows); });
    run("cur (512,1) grid=SMs*4", [&] { sumrows_cur<<<g_sms * 4, dim3(512, 1)>>>(dst, src, ne0, nrows); });
    run("cur (256,1) grid=rows", [&] { sumrows_cur<<<nrows, dim3(256, 1)>>>(dst, src, ne0, nrows); });
    run("cur (1024,1) grid=rows", [&] { sumrows_cur<<<nrows, dim3(1024, 1)>>>(dst, src, ne0, nrows); });
    run("block NT=256 U=8 grid=rows", [&] { sumrows_block<256, 8, false><<<nrows, 256>>>(dst, src, ne0, nrows); });
    run("block NT=256 U=8 ldcs grid=rows", [&] { sumrows_block<256, 8, true><<<nrows, 256>>>(dst, src, ne0, nrows); });
    run("block NT=128 U=16 grid=rows", [&] { sumrows_block<128, 16, false><<<nrows, 128>>>(dst, src, ne0, nrows); });
    run("block NT=128 U=16 ldcs grid=rows", [&] { sumrows_block<128, 16, true><<<nrows, 128>>>(dst, src, ne0, nrows); });
    run("block NT=512 U=4 ldcs grid=rows", [&] { sumrows_block<512, 4, true><<<nrows, 512>>>(dst, src, ne0, nrows); });
    run("block NT=256 U=8 grid=SMs*8", [&] { sumrows_block<256, 8, false><<<g_sms * 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=8 U=4 grid=rows/8", [&] { sumrows_warp<8, 4, false><<<nrows / 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=8 U=8 grid=rows/8", [&] { sumrows_warp<8, 8, false><<<nrows / 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=8 U=8 ldcs grid=rows/8", [&] { sumrows_warp<8, 8, true><<<nrows / 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=8 U=16 grid=rows/8", [&] { sumrows_warp<8, 16, false><<<nrows / 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=8 U=8 grid=SMs*8", [&] { sumrows_warp<8, 8, false><<<g_sms * 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=8 U=8 ldcs grid=SMs*8", [&] { sumrows_warp<8, 8, true><<<g_sms * 8, 256>>>(dst, src, ne0, nrows); });
    run("warp W=4 U=8 grid=SMs*16", [&] { sumrows_warp<4, 8, false><<<g_sms * 16, 128>>>(dst, src, ne0, nrows); });
    run("warp W=16 U=8 grid=SMs*4", [&] { sumrows_warp<16, 8, false><<<g_sms * 4, 512>>>(dst, src, ne0, nrows); });
    CK(cudaFree(src)); CK(cudaFree(dst)); CK(cudaFree(ref));
}

static void bench_argmax() {
    const int ne0 = AM_NE0, nrows = AM_ROWS;
    const long n = (long)ne0 * nrows;
    float * src; int *dst, *ref; float * pv; int * pi; unsigned * cnt;
    CK(cudaMalloc(&src, n * 4)); CK(cudaMalloc(&dst, nrows * 4)); CK(cudaMalloc(&ref, nrows * 4));
    CK(cudaMalloc(&pv, nrows * 32 * 4)); CK(cudaMalloc(&pi, nrows * 32 * 4)); CK(cudaMalloc(&cnt, nrows * 4));
    CK(cudaMemset(cnt, 0, nrows * 4));
    init_f<<<1024, 256>>>(src, n, 5);
    CK(cudaDeviceSynchronize());
    {   // plant ties: row r's maximum 2.0 at two places, the first one varying
        std::vector<float> two(1, 2.0f);
        for (int r = 0; r < nrows; r++) {
            const long a = (r * 7919L) % ne0, b = (r * 104729L + 13) % ne0;
            CK(cudaMemcpy(src + (long)r * ne0 + a, two.data(), 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(src + (long)r * ne0 + b, two.data(), 4, cudaMemcpyHostToDevice));
        }
    }
    argmax_ref<<<nrows / 128, 128>>>(ref, src, ne0, nrows);
    CK(cudaDeviceSynchronize());
    std::vector<int> want(nrows), got(nrows);
    CK(cudaMemcpy(want.data(), ref, nrows * 4, cudaMemcpyDeviceToHost));
    printf("\n== ARGMAX f32 [%d,%d] (%.1f MiB, H200 L2 50 MiB) ==\n", ne0, nrows, n * 4.0 / (1 << 20));
    ceilings(src, n, "[32000,512]");
    const double bytes = 4.0 * n + 4.0 * nrows;
    auto run = [&](const char * name, auto launch) {
        CK(cudaMemset(dst, 0xff, nrows * 4));
        launch();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), dst, nrows * 4, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < nrows; i++) bad += got[i] != want[i];
        const float us = time_us(launch, 100);
        printf("ARGMAX %-46s %8.2f us %8.1f GiB/s  mismatches=%d%s\n", name, us, bytes / GiB / (us * 1e-6), bad, bad ? "  WRONG" : "");
        fflush(stdout);
    };
    run("cur (512,1) grid=rows", [&] { argmax_cur<<<nrows, dim3(512, 1)>>>(dst, src, ne0, nrows); });
    run("cur (1024,1) grid=rows", [&] { argmax_cur<<<nrows, dim3(1024, 1)>>>(dst, src, ne0, nrows); });
    run("cur (256,1) grid=rows", [&] { argmax_cur<<<nrows, dim3(256, 1)>>>(dst, src, ne0, nrows); });
    run("block NT=512 U=4", [&] { argmax_block<512, 4, false><<<nrows, 512>>>(dst, src, ne0); });
    run("block NT=1024 U=8", [&] { argmax_block<1024, 8, false><<<nrows, 1024>>>(dst, src, ne0); });
    run("block NT=1024 U=8 ldcs", [&] { argmax_block<1024, 8, true><<<nrows, 1024>>>(dst, src, ne0); });
    run("block NT=512 U=8", [&] { argmax_block<512, 8, false><<<nrows, 512>>>(dst, src, ne0); });
    run("block NT=256 U=8", [&] { argmax_block<256, 8, false><<<nrows, 256>>>(dst, src, ne0); });
    run("block NT=256 U=8 ldcs", [&] { argmax_block<256, 8, true><<<nrows, 256>>>(dst, src, ne0); });
    run("block NT=256 U=16", [&] { argmax_block<256, 16, false><<<nrows, 256>>>(dst, src, ne0); });
#define AM_BULK(NT, CH, S)                                                                                     \
    {                                                                                                          \
        const int smem = S * CH + 8 * S;                                                                       \
        CK(cudaFuncSetAttribute(argmax_bulk<NT, CH, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));   \
        run("bulk NT=" #NT " CH=" #CH " S=" #S, [&] { argmax_bulk<NT, CH, S><<<nrows, NT, smem>>>(dst, src, ne0); }); \
    }
    run("pipe NT=256 U=4 (the tree's argmaxbp_f32)", [&] { argmax_pipe<256, 4><<<nrows, 256>>>(dst, src, ne0); });
    run("pipe NT=256 U=8", [&] { argmax_pipe<256, 8><<<nrows, 256>>>(dst, src, ne0); });
    AM_BULK(256, 8192, 4);
    AM_BULK(256, 8192, 6);
    AM_BULK(256, 16384, 3);
    AM_BULK(512, 8192, 6);
    AM_BULK(256, 4096, 8);
    AM_BULK(128, 8192, 5);
#define AM_SPLIT2(NT, U, S, CS)                                                                                  \
    run("split NT=" #NT " U=" #U " S=" #S " ldcs=" #CS " +fin", [&] {                                             \
        argmax_split<NT, U, S, CS, false><<<nrows * S, NT>>>(dst, src, ne0, pv, pi, cnt);                        \
        argmax_fin<S><<<nrows / 8, 256>>>(dst, pv, pi, nrows);                                                    \
    })
#define AM_SPLIT1(NT, U, S, CS)                                                                                  \
    run("split NT=" #NT " U=" #U " S=" #S " ldcs=" #CS " last-block", [&] {                                       \
        argmax_split<NT, U, S, CS, true><<<nrows * S, NT>>>(dst, src, ne0, pv, pi, cnt);                         \
    })
    AM_SPLIT2(256, 8, 2, false);
    AM_SPLIT2(256, 8, 4, false);
    AM_SPLIT1(256, 8, 2, false);
    AM_SPLIT1(256, 8, 4, false);
    AM_SPLIT1(256, 4, 8, false);
    AM_SPLIT1(512, 4, 2, false);
    AM_SPLIT1(512, 8, 2, false);
    AM_SPLIT1(256, 8, 4, true);
    AM_SPLIT1(128, 8, 8, false);
    CK(cudaFree(src)); CK(cudaFree(dst)); CK(cudaFree(ref)); CK(cudaFree(pv)); CK(cudaFree(pi)); CK(cudaFree(cnt));
}

// Keys with many ties (131072 values) and signed zeros.
static void as_data(std::vector<float> & h, long n, unsigned seed) {
    for (long i = 0; i < n; i++) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        const int q = (int)(v % 131072) - 65536;
        h[i] = q == 0 ? ((v >> 20) & 1 ? -0.0f : 0.0f) : q / 65536.0f;
    }
}

static void bench_argsort(int ncols, int nrows) {
    const long n = (long)ncols * nrows;
    std::vector<float> h(n);
    as_data(h, n, 977u + ncols + nrows);
    std::vector<int> want(n), got(n);
    for (int r = 0; r < nrows; r++) {
        int * w = want.data() + (long)r * ncols;
        const float * k = h.data() + (long)r * ncols;
        std::iota(w, w + ncols, 0);
        std::sort(w, w + ncols, [&](int a, int b) { return k[a] != k[b] ? k[a] < k[b] : a < b; });
    }
    float * src; int * dst; void * tmp; unsigned * hist;
    CK(cudaMalloc(&src, n * 4)); CK(cudaMalloc(&dst, n * 4)); CK(cudaMalloc(&tmp, n * 16));
    CK(cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice));
    printf("\n== ARGSORT f32 [%d,%d] order=0 ==\n", ncols, nrows);
    auto check = [&](const char * name) {
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), dst, n * 4, cudaMemcpyDeviceToHost));
        long bad = 0;
        for (long i = 0; i < n; i++) bad += got[i] != want[i];
        if (bad) printf("ARGSORT %s: mismatches=%ld  WRONG\n", name, bad);
        return bad;
    };
    // today's chunk sort + merge passes, each phase timed alone
    for (int maxchunk : {4096, 2048, 8192}) {
        int chunk = 2;
        while (chunk < ncols && chunk < maxchunk) chunk *= 2;
        const int nchunks = (ncols + chunk - 1) / chunk;
        const int tiles = (ncols + AS_TILE - 1) / AS_TILE;
        const size_t smem = 8 * chunk;
        CK(cudaFuncSetAttribute(as_chunk, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        float * keys[2] = {(float *)tmp, (float *)tmp + 2 * n};
        int * idx[2] = {(int *)tmp + n, (int *)tmp + 3 * n};
        auto chunk_sort = [&] {
            if (nchunks == 1) as_chunk<<<nrows * nchunks, std::min(chunk / 2, 1024), smem>>>(nullptr, dst, src, ncols, nchunks, chunk, 0);
            else as_chunk<<<nrows * nchunks, std::min(chunk / 2, 1024), smem>>>(keys[0], idx[0], src, ncols, nchunks, chunk, 0);
        };
        auto pass = [&](long width, int in) {
            float * ok = keys[1 - in]; int * oi = idx[1 - in];
            if (2 * width >= ncols) { ok = nullptr; oi = dst; }
            as_merge<<<nrows * tiles, 256>>>(ok, oi, keys[in], idx[in], nrows, ncols, width, tiles, 0);
        };
        auto all = [&] {
            chunk_sort();
            for (long width = chunk, in = 0; width < ncols; width *= 2, in = 1 - in) pass(width, (int)in);
        };
        all();
        char name[96];
        snprintf(name, sizeof name, "merge chunk=%d", chunk);
        const long bad = check(name);
        const float total = time_us(all, 20);
        printf("ARGSORT %-40s total %8.1f us%s\n", name, total, bad ? "  WRONG" : "");
        std::vector<std::function<void()>> phases{chunk_sort};
        std::vector<std::string> names{"chunk sort (" + std::to_string(nrows * nchunks) + " blocks of " +
                                       std::to_string(std::min(chunk / 2, 1024)) + ")"};
        int in = 0;
        for (long width = chunk; width < ncols; width *= 2, in = 1 - in) {
            const int i = in;
            phases.push_back([&, width, i] { pass(width, i); });
            names.push_back("merge pass width=" + std::to_string(width) + " (" + std::to_string(nrows * tiles) + " blocks)");
        }
        phased(phases, names);
        fflush(stdout);
    }
    // radix sort
    auto radix = [&](auto up, auto down, int ipt, const char * name) {
        const int tile = 256 * ipt;
        const int T = (ncols + tile - 1) / tile;
        CK(cudaMalloc(&hist, (long)nrows * 256 * T * 4));
        unsigned * keys[2] = {(unsigned *)tmp, (unsigned *)tmp + 2 * n};
        int * idx[2] = {(int *)tmp + n, (int *)tmp + 3 * n};
        auto step_up = [&](int p) {
            up<<<nrows * T, 256>>>(hist, p == 0 ? src : nullptr, p == 0 ? nullptr : keys[(p - 1) & 1], ncols, T, 8 * p, 0);
        };
        auto step_scan = [&] { rs_scan<<<nrows, 1024>>>(hist, T); };
        auto step_down = [&](int p) {
            const int in = (p - 1) & 1, out = p & 1;
            down<<<nrows * T, 256>>>(p == 3 ? nullptr : keys[out], p == 3 ? dst : idx[out], p == 0 ? src : nullptr,
                                      p == 0 ? nullptr : keys[in], p == 0 ? nullptr : idx[in], hist, ncols, T, 8 * p, 0);
        };
        auto all = [&] {
            for (int p = 0; p < 4; p++) { step_up(p); step_scan(); step_down(p); }
        };
        CK(cudaMemset(dst, 0, n * 4));
        all();
        const long bad = check(name);
        const float total = time_us(all, 20);
        printf("ARGSORT %-40s total %8.1f us%s  (%d tiles of %d a row)\n", name, total, bad ? "  WRONG" : "", T, tile);
        std::vector<std::function<void()>> phases;
        std::vector<std::string> names;
        for (int p = 0; p < 4; p++) {
            phases.push_back([&, p] { step_up(p); });
            names.push_back("pass " + std::to_string(p) + " up");
            phases.push_back(step_scan);
            names.push_back("pass " + std::to_string(p) + " scan");
            phases.push_back([&, p] { step_down(p); });
            names.push_back("pass " + std::to_string(p) + " down");
        }
        phased(phases, names);
        fflush(stdout);
        CK(cudaFree(hist));
    };
    radix(rs_up<16>, rs_down<16, true>, 16, "radix IPT=16 match");
    radix(rs_up<16>, rs_down<16, false>, 16, "radix IPT=16 ballot");
    radix(rs_up<8>, rs_down<8, true>, 8, "radix IPT=8 match");
    radix(rs_up<8>, rs_down<8, false>, 8, "radix IPT=8 ballot");
    CK(cudaFree(src)); CK(cudaFree(dst)); CK(cudaFree(tmp));
}

int main(int argc, char ** argv) {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("%s, %d SMs, L2 %d MiB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
    if (argc > 1 && strcmp(argv[1], "argmax") == 0) { // ARGMAX only
        bench_argmax();
        return 0;
    }
    bench_sumrows();
    bench_argmax();
    bench_argsort(200000, 16);
    bench_argsort(65000, 16);
    bench_argsort(200000, 1);
    return 0;
}
