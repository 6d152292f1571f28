// softmax.cu - a standalone nvcc program that times SOFT_MAX (f32, no mask,
// scale 1) kernels for the two Wave 2 · 3/7 speed goals:
//  - [4096,4096,5] (20480 rows of 4096): ternion's row kernel (the logic of
//    kernels/softmax.cu softmax_rows<nomask,V=4,K=8> copied in, with the
//    planner's geometry: block 128x2, grid 10240) against one-row-per-block
//    variants (256/512 threads, float4 in registers, warp shuffles + one
//    __syncthreads per reduction, expf vs __expf, __stcs stores, 2 rows a
//    block);
//  - [131072,16]: ternion's split path (softmax_part + softmax_norm, chunk
//    2048, grid 64x16, 256 threads) against single launches on a thread
//    block cluster (8 or 16 blocks a row, the row in registers, the
//    partials exchanged through distributed shared memory; the hardware
//    co-schedules a cluster's blocks, so cluster.sync() is a safe grid-wide
//    wait for the row - no spin-waiting on blocks that might not be
//    resident);
// with a float4 copy kernel and cudaMemcpy D2D of the same bytes as the
// ceiling. Each variant is checked against a float64 reference kernel
// (NMSE, ggml's 1e-7 limit) before it is timed with cudaEvents over many
// back-to-back launches; µs and GiB/s of src+dst (what ggml's perf prints).
// Build and run (device tool, repo root, nvcc >= 11.8 for clusters):
//   nvcc -O3 -arch=sm_90 -o /tmp/softmax bench/experiments/softmax.cu && /tmp/softmax
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

#define NEG_INF (-__int_as_float(0x7f800000))

// ---------------------------------------------------------------- reference
// One thread a row, float64.
__global__ void ref_softmax(float * y, const float * x, int ne0, int nrows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows) return;
    const float * xr = x + (long)r * ne0;
    float * yr = y + (long)r * ne0;
    double m = -INFINITY, s = 0;
    for (int i = 0; i < ne0; i++) m = fmax(m, (double)xr[i]);
    for (int i = 0; i < ne0; i++) s += exp((double)xr[i] - m);
    for (int i = 0; i < ne0; i++) yr[i] = (float)(exp((double)xr[i] - m) / s);
}

// --------------------------------------------------- ternion's kernels (copy)
// softmax_reduce of kernels/softmax.cu: shuffles, then (rows over one warp)
// a sync before and after the shared-memory exchange.
template <bool MAX> __device__ __forceinline__ float t_reduce(float v) {
    __shared__ float part[1024 / 32];
    for (int m = 16; m > 0; m >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    if (blockDim.x <= 32) return v;
    const int wpr = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) part[threadIdx.y * wpr + warp] = v;
    __syncthreads();
    v = lane < wpr ? part[threadIdx.y * wpr + lane] : (MAX ? NEG_INF : 0.0f);
    for (int m = 16; m > 0; m >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    return v;
}

__device__ __forceinline__ float t_rescale(float s, float m, float to) { return m == to ? s : s * expf(m - to); }

// softmax_rows<nomask, 4, K>: rows grid-stride, blockDim.y rows a block,
// K float4 a thread (scale 1, no mask, no sinks).
template <int K> __global__ void t_rows(float * y, const float * x, int ne0, long nrows, float scale) {
    const int nv = ne0 / 4;
    for (long base = (long)blockIdx.x * blockDim.y; base < nrows; base += (long)gridDim.x * blockDim.y) {
        const long row = base + threadIdx.y;
        const bool ok = row < nrows;
        float w[K][4];
        float mx = NEG_INF;
        const float * xr = x + row * ne0;
        float * yr = y + row * ne0;
        if (ok) {
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int j = threadIdx.x + u * blockDim.x;
                if (j < nv) {
                    const float4 q = *(const float4 *)(xr + j * 4);
                    w[u][0] = q.x * scale; w[u][1] = q.y * scale; w[u][2] = q.z * scale; w[u][3] = q.w * scale;
#pragma unroll
                    for (int e = 0; e < 4; e++) mx = fmaxf(mx, w[u][e]);
                }
            }
        }
        mx = t_reduce<true>(mx);
        float sum = 0.0f;
        if (ok) {
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int j = threadIdx.x + u * blockDim.x;
                if (j < nv) {
#pragma unroll
                    for (int e = 0; e < 4; e++) { w[u][e] = expf(w[u][e] - mx); sum += w[u][e]; }
                }
            }
        }
        sum = t_reduce<false>(sum);
        if (ok) {
            const float inv = 1.0f / sum;
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int j = threadIdx.x + u * blockDim.x;
                if (j < nv) *(float4 *)(yr + j * 4) = make_float4(w[u][0] * inv, w[u][1] * inv, w[u][2] * inv, w[u][3] * inv);
            }
        }
    }
}

__device__ __forceinline__ void t_online(const float * w, float & m, float & s) {
    const float bm = fmaxf(fmaxf(w[0], w[1]), fmaxf(w[2], w[3]));
    if (bm > m) { s = t_rescale(s, m, bm); m = bm; }
    if (m != NEG_INF) for (int e = 0; e < 4; e++) s += expf(w[e] - m);
}
__device__ __forceinline__ void t_load(const float * xr, long j, float scale, float * w) {
    const float4 q = *(const float4 *)(xr + j * 4);
    w[0] = q.x * scale; w[1] = q.y * scale; w[2] = q.z * scale; w[3] = q.w * scale;
}

// softmax_part<nomask, 4>: chunk blockIdx.x of each row (grid y).
__global__ void t_part(const float * x, int ne0, long nrows, float scale, float * partial, long chunk, int nchunks) {
    const long j0 = (long)blockIdx.x * chunk / 4, end = (long)(blockIdx.x + 1) * chunk;
    const long j1 = (end < ne0 ? end : ne0) / 4, bd = blockDim.x;
    for (long row = blockIdx.y; row < nrows; row += gridDim.y) {
        const float * xr = x + row * ne0;
        float m = NEG_INF, s = 0.0f;
        for (long j = j0 + threadIdx.x; j < j1; j += 2 * bd) {
            float a[4], b[4];
            const bool two = j + bd < j1;
            t_load(xr, j, scale, a);
            if (two) t_load(xr, j + bd, scale, b);
            t_online(a, m, s);
            if (two) t_online(b, m, s);
        }
        const float bm = t_reduce<true>(m);
        const float bs = t_reduce<false>(t_rescale(s, m, bm));
        if (threadIdx.x == 0) { partial[2 * (row * nchunks + blockIdx.x)] = bm; partial[2 * (row * nchunks + blockIdx.x) + 1] = bs; }
    }
}

// softmax_norm<nomask, 4>.
__global__ void t_norm(float * y, const float * x, int ne0, long nrows, float scale, const float * partial, long chunk, int nchunks) {
    const long j0 = (long)blockIdx.x * chunk / 4, end = (long)(blockIdx.x + 1) * chunk;
    const long j1 = (end < ne0 ? end : ne0) / 4, bd = blockDim.x;
    for (long row = blockIdx.y; row < nrows; row += gridDim.y) {
        const float * xr = x + row * ne0;
        float * yr = y + row * ne0;
        const long ja = j0 + threadIdx.x, jb = ja + bd;
        float a[4], b[4];
        if (ja < j1) t_load(xr, ja, scale, a);
        if (jb < j1) t_load(xr, jb, scale, b);
        const float * p = partial + 2 * row * nchunks;
        float m = NEG_INF, s = 0.0f;
        for (int c = threadIdx.x; c < nchunks; c += blockDim.x) {
            const float pm = p[2 * c], ps = p[2 * c + 1], nm = fmaxf(m, pm);
            s = t_rescale(s, m, nm) + t_rescale(ps, pm, nm);
            m = nm;
        }
        const float mx = t_reduce<true>(m);
        const float sum = t_reduce<false>(t_rescale(s, m, mx));
        const float inv = 1.0f / sum;
        auto out = [&](long j, float * w) {
            *(float4 *)(yr + j * 4) = make_float4(expf(w[0] - mx) * inv, expf(w[1] - mx) * inv, expf(w[2] - mx) * inv, expf(w[3] - mx) * inv);
        };
        if (ja < j1) out(ja, a);
        if (jb < j1) out(jb, b);
        for (long j = jb + bd; j < j1; j += bd) { float w[4]; t_load(xr, j, scale, w); out(j, w); }
    }
}

// ------------------------------------------------------------- row variants
template <bool FAST> __device__ __forceinline__ float v_exp(float v) { return FAST ? __expf(v) : expf(v); }

// v_block_reduce: the max (MAX) or sum over the block's NW warps (threads
// of one row); one __syncthreads (buf is this reduction's own buffer).
template <bool MAX, int NW> __device__ __forceinline__ float v_block_reduce(float v, float * buf) {
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    if (NW == 1) return v;
    if (threadIdx.x % 32 == 0) buf[threadIdx.x / 32] = v;
    __syncthreads();
    float r = buf[0];
#pragma unroll
    for (int i = 1; i < NW; i++) r = MAX ? fmaxf(r, buf[i]) : r + buf[i];
    return r;
}

// v_rows: R rows a block (consecutive), T threads on each row together
// (T*P*4 == ne0, ne0 fixed at compile time), P float4 a thread; FAST:
// __expf; CS: __ldcs loads and __stcs stores.
template <int NE0, int T, int R, bool FAST, bool CS>
__global__ void __launch_bounds__(T) v_rows(float * y, const float * x, long nrows, float scale) {
    constexpr int P = NE0 / 4 / T, NW = T / 32;
    __shared__ float buf[2 * R][NW];
    const long row0 = (long)blockIdx.x * R;
    float4 w[R][P];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int p = 0; p < P; p++) {
            const float4 * src = (const float4 *)(x + (row0 + r) * NE0) + threadIdx.x + p * T;
            w[r][p] = CS ? __ldcs(src) : *src;
        }
#pragma unroll
    for (int r = 0; r < R; r++) {
        float mx = NEG_INF;
#pragma unroll
        for (int p = 0; p < P; p++) {
            w[r][p].x *= scale; w[r][p].y *= scale; w[r][p].z *= scale; w[r][p].w *= scale;
            mx = fmaxf(mx, fmaxf(fmaxf(w[r][p].x, w[r][p].y), fmaxf(w[r][p].z, w[r][p].w)));
        }
        mx = v_block_reduce<true, NW>(mx, buf[2 * r]);
        float s = 0.0f;
#pragma unroll
        for (int p = 0; p < P; p++) {
            w[r][p].x = v_exp<FAST>(w[r][p].x - mx); w[r][p].y = v_exp<FAST>(w[r][p].y - mx);
            w[r][p].z = v_exp<FAST>(w[r][p].z - mx); w[r][p].w = v_exp<FAST>(w[r][p].w - mx);
            s += (w[r][p].x + w[r][p].y) + (w[r][p].z + w[r][p].w);
        }
        s = v_block_reduce<false, NW>(s, buf[2 * r + 1]);
        const float inv = 1.0f / s;
#pragma unroll
        for (int p = 0; p < P; p++) {
            float4 * dst = (float4 *)(y + (row0 + r) * NE0) + threadIdx.x + p * T;
            const float4 o = make_float4(w[r][p].x * inv, w[r][p].y * inv, w[r][p].z * inv, w[r][p].w * inv);
            if (CS) __stcs(dst, o); else *dst = o;
        }
    }
}

// ------------------------------------------------------- cluster variants
#if __CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 8)
#define HAVE_CLUSTER 1
// c_rows: one row on a cluster of gridDim.x/nrows... blocks: cluster
// (blockIdx.x / C) is the row, block rank c its slice of NE0/C elements,
// T threads with P float4 each in registers. Each block's (max, Σexp)
// goes to its shared memory; after cluster.sync() every block reads the
// C pairs through distributed shared memory and combines them (one
// exchange, online rescaling); a second cluster.sync() keeps the pairs
// alive until all have read them.
template <int NE0, int C, int T, bool FAST>
__global__ void __launch_bounds__(T) c_rows(float * y, const float * x, float scale) {
    constexpr int P = NE0 / 4 / C / T, NW = T / 32;
    cg::cluster_group cl = cg::this_cluster();
    __shared__ float wbuf[2][NW];
    __shared__ float2 pair;
    const unsigned c = cl.block_rank();
    const long row = blockIdx.x / C;
    const float4 * src = (const float4 *)(x + row * NE0 + (long)c * (NE0 / C));
    float4 * dst = (float4 *)(y + row * NE0 + (long)c * (NE0 / C));
    float4 w[P];
#pragma unroll
    for (int p = 0; p < P; p++) w[p] = src[threadIdx.x + p * T];
    float mx = NEG_INF;
#pragma unroll
    for (int p = 0; p < P; p++) {
        w[p].x *= scale; w[p].y *= scale; w[p].z *= scale; w[p].w *= scale;
        mx = fmaxf(mx, fmaxf(fmaxf(w[p].x, w[p].y), fmaxf(w[p].z, w[p].w)));
    }
    mx = v_block_reduce<true, NW>(mx, wbuf[0]);
    float s = 0.0f;
#pragma unroll
    for (int p = 0; p < P; p++) {
        w[p].x = v_exp<FAST>(w[p].x - mx); w[p].y = v_exp<FAST>(w[p].y - mx);
        w[p].z = v_exp<FAST>(w[p].z - mx); w[p].w = v_exp<FAST>(w[p].w - mx);
        s += (w[p].x + w[p].y) + (w[p].z + w[p].w);
    }
    s = v_block_reduce<false, NW>(s, wbuf[1]);
    if (threadIdx.x == 0) pair = make_float2(mx, s);
    cl.sync();
    float gm = NEG_INF, gs = 0.0f;
    float2 q[C];
#pragma unroll
    for (int i = 0; i < C; i++) { q[i] = *cl.map_shared_rank(&pair, i); gm = fmaxf(gm, q[i].x); }
#pragma unroll
    for (int i = 0; i < C; i++) gs += q[i].x == gm ? q[i].y : q[i].y * v_exp<FAST>(q[i].x - gm);
    cl.sync();
    const float f = (mx == gm ? 1.0f : v_exp<FAST>(mx - gm)) / gs;
#pragma unroll
    for (int p = 0; p < P; p++) dst[threadIdx.x + p * T] = make_float4(w[p].x * f, w[p].y * f, w[p].z * f, w[p].w * f);
}

template <int NE0, int C, int T, bool FAST> cudaError_t c_launch(float * y, const float * x, int nrows) {
    auto k = c_rows<NE0, C, T, FAST>;
    if (C > 8) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (e != cudaSuccess) return e;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(nrows * C);
    cfg.blockDim = dim3(T);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = C; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, k, y, x, 1.0f);
}
#endif

// ------------------------------------------------------------------- copy
__global__ void copy4(float4 * y, const float4 * x, long n4) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) y[i] = x[i];
}

// ---------------------------------------------------------------- harness
template <typename F> float time_it(F launch, int iters) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 20; i++) launch();
    CK(cudaEventRecord(a));
    for (int i = 0; i < iters; i++) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return ms * 1000 / iters;
}

struct Problem {
    int ne0; long nrows; long n;
    float *x, *y, *want;
    std::vector<float> w, g;
    double bytes;
};

static Problem make_problem(int ne0, long nrows) {
    Problem p;
    p.ne0 = ne0; p.nrows = nrows; p.n = ne0 * nrows; p.bytes = 2.0 * p.n * 4;
    CK(cudaMalloc(&p.x, p.n * 4)); CK(cudaMalloc(&p.y, p.n * 4)); CK(cudaMalloc(&p.want, p.n * 4));
    std::vector<float> h(p.n);
    for (long i = 0; i < p.n; i++) h[i] = (float)((i * 2654435761u) % 4001) / 250 - 8; // [-8, 8]
    CK(cudaMemcpy(p.x, h.data(), p.n * 4, cudaMemcpyHostToDevice));
    ref_softmax<<<(nrows + 127) / 128, 128>>>(p.want, p.x, ne0, (int)nrows);
    CK(cudaDeviceSynchronize());
    p.w.resize(p.n); p.g.resize(p.n);
    CK(cudaMemcpy(p.w.data(), p.want, p.n * 4, cudaMemcpyDeviceToHost));
    return p;
}

static void free_problem(Problem & p) { CK(cudaFree(p.x)); CK(cudaFree(p.y)); CK(cudaFree(p.want)); }

// run checks launch's result (NMSE vs the reference, ggml's 1e-7 limit;
// check=false for the copies) and times it.
template <typename F> static void run(Problem & p, const char * name, F launch, int iters, bool check = true) {
    CK(cudaMemset(p.y, 0, p.n * 4));
    cudaError_t e = launch();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("  %-52s FAILED: %s\n", name, cudaGetErrorString(e)); cudaGetLastError(); return; }
    double nmse = 0;
    if (check) {
        CK(cudaMemcpy(p.g.data(), p.y, p.n * 4, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (long i = 0; i < p.n; i++) { const double d = (double)p.g[i] - p.w[i]; num += d * d; den += (double)p.w[i] * p.w[i]; }
        nmse = num / den;
        if (!(nmse <= 1e-7)) { printf("  %-52s WRONG (NMSE %.3g)\n", name, nmse); return; }
    }
    const float us = time_it([&] { launch(); }, iters);
    printf("  %-52s %8.2f us  %7.0f GiB/s  (NMSE %.1e)\n", name, us, p.bytes / us / 1e-6 / (1024.0 * 1024 * 1024), nmse);
}

static void ceiling(Problem & p, int iters) {
    run(p, "copy float4 kernel (ceiling)", [&] {
        copy4<<<132 * 16, 256>>>((float4 *)p.y, (const float4 *)p.x, p.n / 4);
        return cudaGetLastError(); }, iters, false);
    run(p, "cudaMemcpy D2D (ceiling)", [&] { return cudaMemcpyAsync(p.y, p.x, p.n * 4, cudaMemcpyDeviceToDevice); }, iters, false);
}

int main() {
    const float one = 1.0f;
    {
        constexpr int NE0 = 4096;
        Problem p = make_problem(NE0, 4096L * 5);
        const long nr = p.nrows;
        printf("SOFT_MAX f32 [4096,4096,5] (%ld rows of %d), %.0f MiB src+dst\n", nr, NE0, p.bytes / (1 << 20));
        ceiling(p, 300);
        // ternion: k8, block 128x2, grid min(rows/2, 65536)
        run(p, "ternion softmax_rows k8 128x2 grid 10240", [&] {
            t_rows<8><<<(unsigned)((nr + 1) / 2), dim3(128, 2)>>>(p.y, p.x, NE0, nr, one);
            return cudaGetLastError(); }, 300);
        run(p, "ternion softmax_rows k8 128x2 grid 132*16", [&] {
            t_rows<8><<<132 * 16, dim3(128, 2)>>>(p.y, p.x, NE0, nr, one);
            return cudaGetLastError(); }, 300);
#define ROWV(T, R, FAST, CS)                                                                                    \
        run(p, "row/block T=" #T " R=" #R " __expf=" #FAST " cs=" #CS, [&] {                                   \
            v_rows<NE0, T, R, FAST, CS><<<(unsigned)(nr / R), T>>>(p.y, p.x, nr, one);                         \
            return cudaGetLastError(); }, 300)
        ROWV(256, 1, false, false);
        ROWV(256, 1, true, false);
        ROWV(256, 1, true, true);
        ROWV(512, 1, true, false);
        ROWV(512, 1, true, true);
        ROWV(256, 2, true, false);
        ROWV(128, 1, true, false);
        free_problem(p);
    }
    {
        constexpr int NE0 = 131072;
        Problem p = make_problem(NE0, 16);
        const long nr = p.nrows;
        printf("SOFT_MAX f32 [131072,16], %.0f MiB src+dst (eager launches add ~3.6-4 us of CPU each in ternion)\n", p.bytes / (1 << 20));
        ceiling(p, 2000);
        float * partial;
        CK(cudaMalloc(&partial, 8 * nr * 128));
        // ternion: chunk 2048, 64 chunks, grid 64x16, 256 threads, two launches
        auto split = [&](long chunk, int threads) {
            const int nch = (int)((NE0 + chunk - 1) / chunk);
            t_part<<<dim3(nch, (unsigned)nr), threads>>>(p.x, NE0, nr, one, partial, chunk, nch);
            t_norm<<<dim3(nch, (unsigned)nr), threads>>>(p.y, p.x, NE0, nr, one, partial, chunk, nch);
            return cudaGetLastError();
        };
        run(p, "ternion split part+norm chunk 2048 (64x16) 256 thr", [&] { return split(2048, 256); }, 2000);
        run(p, "split part+norm chunk 4096 (32x16) 256 thr", [&] { return split(4096, 256); }, 2000);
        run(p, "split part+norm chunk 1024 (128x16) 128 thr", [&] { return split(1024, 128); }, 2000);
        run(p, "split part only (2048, 64x16) - first launch", [&] {
            t_part<<<dim3(64, (unsigned)nr), 256>>>(p.x, NE0, nr, one, partial, 2048, 64);
            return cudaGetLastError(); }, 2000, false);
#ifdef HAVE_CLUSTER
        run(p, "cluster 8 x 512 thr, 8 float4/thr, expf", [&] { return c_launch<NE0, 8, 512, false>(p.y, p.x, (int)nr); }, 2000);
        run(p, "cluster 8 x 512 thr, 8 float4/thr, __expf", [&] { return c_launch<NE0, 8, 512, true>(p.y, p.x, (int)nr); }, 2000);
        run(p, "cluster 8 x 1024 thr, 4 float4/thr, __expf", [&] { return c_launch<NE0, 8, 1024, true>(p.y, p.x, (int)nr); }, 2000);
        run(p, "cluster 16 (non-portable) x 512 thr, 4 float4/thr", [&] { return c_launch<NE0, 16, 512, true>(p.y, p.x, (int)nr); }, 2000);
#else
        printf("  (cluster variants need nvcc >= 11.8)\n");
#endif
        CK(cudaFree(partial));
        free_problem(p);
    }
    return 0;
}
