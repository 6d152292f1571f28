// streams.cu - a standalone nvcc program that times element-wise kernels of
// one read and one write stream (ADD with a broadcast row, SCALE) with
// different load/store cache hints and loop shapes, to learn what the H200's
// HBM gives a 1:1 read/write stream (the broadcast ADD goal of Wave 2 · 2/7
// asks 3.8 TB/s). Each variant is checked against a reference first.
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -o /tmp/streams bench/experiments/streams.cu && /tmp/streams
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr long NE0 = 4096, NE1 = 4096, N = NE0 * NE1, N4 = N / 4;

enum Hint { Plain, StreamStore, StreamBoth, LdgStream };

template <Hint H> __device__ __forceinline__ float4 load(const float4 * p) {
    if (H == StreamBoth) return __ldcs(p);
    if (H == LdgStream) return __ldg(p);
    return *p;
}
template <Hint H> __device__ __forceinline__ void store(float4 * p, float4 v) {
    if (H == Plain) { *p = v; return; }
    __stcs(p, v);
}

// dst = src0 + src1 (src1 one row of NE0 floats broadcast over rows), U
// float4 in flight per thread, grid-stride.
template <Hint H, int U>
__global__ void __launch_bounds__(256) add_row(float4 * dst, const float4 * src0, const float4 * src1) {
    const long step = (long)gridDim.x * blockDim.x;
    for (long i0 = blockIdx.x * (long)blockDim.x + threadIdx.x; i0 < N4; i0 += U * step) {
        float4 a[U], b[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long i = i0 + u * step;
            if (i < N4) { a[u] = load<H>(src0 + i); b[u] = src1[i % (NE0 / 4)]; }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long i = i0 + u * step;
            if (i < N4) store<H>(dst + i, make_float4(a[u].x + b[u].x, a[u].y + b[u].y, a[u].z + b[u].z, a[u].w + b[u].w));
        }
    }
}

// One row of NE0 per block: the src1 row read once into registers (each
// thread owns NE0/4/blockDim float4 of it) and reused over R rows.
template <Hint H, int R>
__global__ void __launch_bounds__(256) add_rows(float4 * dst, const float4 * src0, const float4 * src1) {
    constexpr int PER = NE0 / 4 / 256;
    float4 b[PER];
#pragma unroll
    for (int p = 0; p < PER; p++) b[p] = src1[threadIdx.x + p * 256];
    for (long r0 = (long)blockIdx.x * R; r0 < NE1; r0 += (long)gridDim.x * R) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            float4 a[PER];
            const long base = (r0 + r) * (NE0 / 4);
#pragma unroll
            for (int p = 0; p < PER; p++) a[p] = load<H>(src0 + base + threadIdx.x + p * 256);
#pragma unroll
            for (int p = 0; p < PER; p++)
                store<H>(dst + base + threadIdx.x + p * 256,
                         make_float4(a[p].x + b[p].x, a[p].y + b[p].y, a[p].z + b[p].z, a[p].w + b[p].w));
        }
    }
}

__global__ void add_ref(float * dst, const float * src0, const float * src1) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < N) dst[i] = src0[i] + src1[i % NE0];
}

template <typename F> float time_it(F launch, int iters) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 20; i++) launch();
    CK(cudaEventRecord(a));
    for (int i = 0; i < iters; i++) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000 / iters;
}

int main() {
    float *src0, *src1, *dst, *want;
    CK(cudaMalloc(&src0, N * 4)); CK(cudaMalloc(&src1, NE0 * 4)); CK(cudaMalloc(&dst, N * 4)); CK(cudaMalloc(&want, N * 4));
    std::vector<float> h(N);
    for (long i = 0; i < N; i++) h[i] = (float)((i * 2654435761u) % 1000) / 500 - 1;
    CK(cudaMemcpy(src0, h.data(), N * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(src1, h.data() + 7, NE0 * 4, cudaMemcpyHostToDevice));
    add_ref<<<(N + 255) / 256, 256>>>(want, src0, src1);
    std::vector<float> w(N), g(N);
    CK(cudaMemcpy(w.data(), want, N * 4, cudaMemcpyDeviceToHost));
    const double bytes = 2.0 * N * 4;
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    auto run = [&](const char * name, auto launch) {
        CK(cudaMemset(dst, 0, N * 4));
        launch(); CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(g.data(), dst, N * 4, cudaMemcpyDeviceToHost));
        if (g != w) { printf("%-40s WRONG\n", name); return; }
        float us = time_it(launch, 200);
        printf("%-40s %8.2f us  %7.0f GB/s (1e9)\n", name, us, bytes / us / 1e3);
    };
    auto f4 = [](float * p) { return (float4 *)p; };
    const float4 *s0 = (const float4 *)src0, *s1 = (const float4 *)src1;
#define FLAT(H, U, BL) run(#H " flat U=" #U " blocks=" #BL, [&] { add_row<H, U><<<BL, 256>>>(f4(dst), s0, s1); })
    FLAT(Plain, 4, 65536); FLAT(Plain, 4, 16384); FLAT(Plain, 1, 65536);
    FLAT(StreamStore, 4, 16384); FLAT(StreamBoth, 4, 16384); FLAT(LdgStream, 4, 16384);
    FLAT(Plain, 2, 132 * 16); FLAT(StreamStore, 2, 132 * 16); FLAT(StreamBoth, 4, 132 * 8);
#define ROWS(H, R, BL) run(#H " rows R=" #R " blocks=" #BL, [&] { add_rows<H, R><<<BL, 256>>>(f4(dst), s0, s1); })
    ROWS(Plain, 1, 4096); ROWS(Plain, 2, 2048); ROWS(StreamStore, 1, 4096); ROWS(StreamBoth, 1, 4096);
    ROWS(Plain, 1, 132 * 8); ROWS(StreamBoth, 2, 132 * 8);
    // the same bytes as a device-to-device copy, for the ceiling
    float us = time_it([&] { CK(cudaMemcpyAsync(dst, src0, N * 4, cudaMemcpyDeviceToDevice)); }, 200);
    printf("%-40s %8.2f us  %7.0f GB/s (1e9)\n", "cudaMemcpy D2D", us, bytes / us / 1e3);
    (void)sms;
    return 0;
}
