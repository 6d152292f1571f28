// harness.cuh - what the standalone nvcc experiments share: error checks,
// launches with programmatic dependent launch, random data, timing as a CUDA
// graph (best of 7) and as `ternion ops perf` times an op (mean with sync),
// NMSE and the fast division of the tree's kernels. Include after quant.cu.
#pragma once
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

// Launches kern with programmatic stream serialization when pdl.
template <typename... A>
static void launch(bool pdl, void (*kern)(A...), dim3 grid, dim3 block, int smem, cudaStream_t st, A... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = smem, cfg.stream = st;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at, cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, kern, args...));
}

__global__ void fill_bytes(unsigned char * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
        p[i] = (unsigned char)h;
    }
}
// block scales: the f16 at offset o of every block of BYTES bytes set to a value in [lo, hi)
__global__ void fix_scales(unsigned char * p, long blocks, int bytes, int o, float lo, float hi, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < blocks; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2246822519u ^ seed;
        h ^= h >> 15, h *= 2654435761u, h ^= h >> 16;
        *(__half *)(p + i * bytes + o) = __float2half(lo + (hi - lo) * (h & 0xffff) / 65536.0f);
    }
}
__global__ void fill_f32(float * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        p[i] = (h & 0xffffff) / 8388608.0f - 1.0f;
    }
}

template <int R>
__global__ void readall(const uint4 * a, long n, unsigned * sink) {
    unsigned s = 0;
    const long step = (long)gridDim.x * blockDim.x;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += R * step) {
        uint4 v[R];
#pragma unroll
        for (int r = 0; r < R; r++) v[r] = i + r * step < n ? __ldg(a + i + r * step) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int r = 0; r < R; r++) s ^= v[r].x ^ v[r].y ^ v[r].z ^ v[r].w;
    }
    if (s == 0x12345678) *sink = s;
}

// A CUDA graph of iters calls of f captured on its own stream, launched
// once (warm-up); release frees it.
struct graph_of_calls {
    cudaStream_t st;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    template <typename Fn>
    graph_of_calls(Fn f, int iters) {
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < iters; i++) f(st);
        CK(cudaStreamEndCapture(st, &g));
        CK(cudaGraphInstantiateWithFlags(&ge, g, 0));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaStreamSynchronize(st));
    }
    void release() {
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
        CK(cudaStreamDestroy(st));
    }
};

// µs per call of f, replayed as a CUDA graph of iters calls (as ops perf runs an op), best of 7.
template <typename Fn>
static float timeit(Fn f, int iters = 100) {
    graph_of_calls gc(f, iters);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int rep = 0; rep < 7; rep++) {
        CK(cudaEventRecord(e0, gc.st));
        CK(cudaGraphLaunch(gc.ge, gc.st));
        CK(cudaEventRecord(e1, gc.st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = std::min(best, ms * 1000 / iters);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    gc.release();
    return best;
}

// µs per call of f as `ternion ops perf` times an op: a graph of iters
// calls launched and synchronized reps times, the wall time of all divided
// by the calls (mean, host overheads included), not the best graph.
template <typename Fn>
static float timeit_mean(Fn f, int iters = 853, int reps = 30) {
    graph_of_calls gc(f, iters);
    const auto t0 = std::chrono::steady_clock::now();
    for (int rep = 0; rep < reps; rep++) {
        CK(cudaGraphLaunch(gc.ge, gc.st));
        CK(cudaStreamSynchronize(gc.st));
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    gc.release();
    return (float)(us / ((double)iters * reps));
}

static double nmse(const std::vector<float> & a, const std::vector<float> & b) {
    double e = 0, s = 0;
    for (size_t i = 0; i < a.size(); i++) {
        e += (a[i] - b[i]) * (double)(a[i] - b[i]);
        s += b[i] * (double)b[i];
    }
    return e / s;
}

static ternion_fastdiv fastdiv(unsigned d) {
    unsigned l = 0;
    while (l < 32 && (1ull << l) < d) l++;
    ternion_fastdiv f;
    f.mp = (unsigned)(((1ull << 32) * ((1ull << l) - d)) / d + 1);
    f.l = l;
    f.d = d;
    return f;
}

