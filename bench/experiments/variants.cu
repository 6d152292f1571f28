// variants.cu - a standalone nvcc program that times kernel variants for the
// two Wave 2 speed goals ternion missed, so a design change is chosen by
// measurement on the H200 before it goes into kernels/:
//   CONT f32 permute(2,1,0,3) of ne=[2048,512,64] (dst [64,512,2048]),
//   MUL_MAT f16 x f32 m=4096 k=14336 n=1 (mmv).
// Each variant is checked against a simple reference kernel before it is
// timed. Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -o /tmp/variants bench/experiments/variants.cu && /tmp/variants
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

// ---- CONT: dst[i0 + N0*i1 + N0*N1*i2] = src[i2 + N2*i1 + N2*N1*i0]
constexpr int N0 = 64, N1 = 512, N2 = 2048;

__global__ void cont_ref(const float * src, float * dst) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= (long)N0 * N1 * N2) return;
    long i0 = i % N0, i1 = (i / N0) % N1, i2 = i / ((long)N0 * N1);
    dst[i] = src[i2 + (long)N2 * i1 + (long)N2 * N1 * i0];
}

// Tile TI0 (dst dim 0) x 32*W (dst dim 2) x NZ (dim 1) per block of 32x8
// threads; each thread reads W consecutive floats. SWAP puts dim 1 on
// blockIdx.x (so neighbouring blocks walk dim 1 instead of dim 2).
template <int TI0, int W, int NZ, bool SWAP>
__global__ void __launch_bounds__(256) cont_tile(const float * __restrict__ src, float * __restrict__ dst) {
    constexpr int TI2 = 32 * W;
    extern __shared__ float tile[]; // [NZ][TI0][TI2+1]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int bx = SWAP ? blockIdx.z : blockIdx.x, bz = SWAP ? blockIdx.x : blockIdx.z;
    const long i2b = (long)bx * TI2, i0b = (long)blockIdx.y * TI0, i1b = (long)bz * NZ;
#pragma unroll
    for (int z = 0; z < NZ; z++) {
#pragma unroll
        for (int r = ty; r < TI0; r += 8) {
            const float * s = src + (i2b + tx * W) + (long)N2 * (i1b + z) + (long)N2 * N1 * (i0b + r);
            float * t = tile + (z * TI0 + r) * (TI2 + 1) + tx * W;
            if (W == 4) {
                float4 v = *(const float4 *)s;
                t[0] = v.x; t[1] = v.y; t[2] = v.z; t[3] = v.w;
            } else if (W == 2) {
                float2 v = *(const float2 *)s;
                t[0] = v.x; t[1] = v.y;
            } else {
                t[0] = *s;
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int z = 0; z < NZ; z++) {
#pragma unroll
        for (int c = ty; c < TI2; c += 8) {
#pragma unroll
            for (int q = 0; q < TI0 / 32; q++) {
                dst[(i0b + tx + 32 * q) + (long)N0 * (i1b + z) + (long)N0 * N1 * (i2b + c)] =
                    tile[(z * TI0 + tx + 32 * q) * (TI2 + 1) + c];
            }
        }
    }
}

// Ceiling: a float4 copy of the same bytes.
__global__ void copy4(const float4 * __restrict__ s, float4 * __restrict__ d, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) d[i] = s[i];
}

// ---- MMV: dst[r] = sum_k x[r][k] * y[k], x f16 [M][K], y f32 [K]
constexpr int M = 4096, K = 14336;

__global__ void mmv_ref(const half * x, const float * y, float * dst) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    float s = 0;
    for (int k = 0; k < K; k++) s += __half2float(x[(long)r * K + k]) * y[k];
    dst[r] = s;
}

template <int NT>
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float part[NT / 32];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffff, v, m);
    if (NT == 32) return v;
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < NT / 32 ? part[threadIdx.x] : 0.f;
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffff, v, m);
    return v;
}

// R rows per block of NT threads, 16-byte loads of x, y read once per R rows.
template <int NT, int R, int U>
__global__ void __launch_bounds__(NT) mmv_rows(const half * __restrict__ x, const float * __restrict__ y, float * __restrict__ dst) {
    const int r0 = blockIdx.x * R;
    const uint4 * xv = (const uint4 *)(x + (long)r0 * K);
    const float4 * yv = (const float4 *)y;
    float sum[R] = {};
#pragma unroll U
    for (int i = threadIdx.x; i < K / 8; i += NT) {
        const float4 a = yv[2 * i], b = yv[2 * i + 1];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const uint4 raw = xv[(long)r * (K / 8) + i];
            const half2 * h = (const half2 *)&raw;
            const float2 f0 = __half22float2(h[0]), f1 = __half22float2(h[1]), f2 = __half22float2(h[2]), f3 = __half22float2(h[3]);
            sum[r] += f0.x * a.x + f0.y * a.y + f1.x * a.z + f1.y * a.w + f2.x * b.x + f2.y * b.y + f3.x * b.z + f3.y * b.w;
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        float v = block_sum<NT>(sum[r]);
        if (threadIdx.x == 0) dst[r0 + r] = v;
        if (NT > 32) __syncthreads();
    }
}

// Pure read of x: the ceiling for mmv.
__global__ void read4(const uint4 * __restrict__ s, long n, unsigned * out) {
    unsigned acc = 0;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        uint4 v = s[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *out = acc;
}

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
    std::sort(t.begin(), t.end());
    return t[2];
}

static const double GiB = 1024.0 * 1024 * 1024;

template <int TI0, int W, int NZ, bool SWAP>
static void run_cont(const float * src, float * dst, const float * ref, std::vector<float> & h) {
    constexpr int TI2 = 32 * W;
    const size_t smem = sizeof(float) * NZ * TI0 * (TI2 + 1);
    CK(cudaFuncSetAttribute(cont_tile<TI0, W, NZ, SWAP>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid(N2 / TI2, N0 / TI0, N1 / NZ);
    if (SWAP) std::swap(grid.x, grid.z);
    CK(cudaMemset(dst, 0, sizeof(float) * N0 * N1 * N2));
    cont_tile<TI0, W, NZ, SWAP><<<grid, dim3(32, 8), smem>>>(src, dst);
    CK(cudaDeviceSynchronize());
    std::vector<float> g(h.size());
    CK(cudaMemcpy(g.data(), dst, sizeof(float) * g.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h.data(), ref, sizeof(float) * h.size(), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < g.size(); i++) bad += g[i] != h[i];
    float us = time_us([&] { cont_tile<TI0, W, NZ, SWAP><<<grid, dim3(32, 8), smem>>>(src, dst); });
    printf("CONT tile TI0=%d W=%d NZ=%d swap=%d smem=%zu: %8.2f us %8.1f GiB/s  mismatches=%zu\n", TI0, W, NZ, SWAP, smem, us,
           2.0 * sizeof(float) * N0 * N1 * N2 / GiB / (us * 1e-6), bad);
}

template <int NT, int R, int U>
static void run_mmv(const half * x, const float * y, float * dst, const std::vector<float> & want) {
    std::vector<float> g(M);
    CK(cudaMemset(dst, 0, sizeof(float) * M));
    mmv_rows<NT, R, U><<<M / R, NT>>>(x, y, dst);
    CK(cudaMemcpy(g.data(), dst, sizeof(float) * M, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int i = 0; i < M; i++) { num += (g[i] - want[i]) * (double)(g[i] - want[i]); den += want[i] * (double)want[i]; }
    float us = time_us([&] { mmv_rows<NT, R, U><<<M / R, NT>>>(x, y, dst); });
    printf("MMV NT=%d R=%d U=%d: %8.2f us %8.1f GB/s (1e9) nmse=%.2e\n", NT, R, U, us, 2.0 * M * K / 1e9 / (us * 1e-6), num / den);
}

__global__ void init_f(float * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = (v & 0xffffff) / 8388608.0f - 1.0f;
    }
}
__global__ void init_h(half * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = __float2half((v & 0xffffff) / 8388608.0f - 1.0f);
    }
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    const long n = (long)N0 * N1 * N2;
    float *src, *dst, *ref;
    CK(cudaMalloc(&src, n * 4)); CK(cudaMalloc(&dst, n * 4)); CK(cudaMalloc(&ref, n * 4));
    init_f<<<1024, 256>>>(src, n, 7);
    cont_ref<<<(n + 255) / 256, 256>>>(src, ref);
    CK(cudaDeviceSynchronize());
    std::vector<float> h(n);
    float us = time_us([&] { copy4<<<132 * 16, 256>>>((const float4 *)src, (float4 *)dst, n / 4); });
    printf("COPY float4 ceiling: %8.2f us %8.1f GiB/s\n", us, 2.0 * 4 * n / GiB / (us * 1e-6));
    run_cont<32, 1, 4, false>(src, dst, ref, h); // today's kernel's shape
    run_cont<32, 1, 4, true>(src, dst, ref, h);
    run_cont<64, 1, 4, false>(src, dst, ref, h);
    run_cont<64, 1, 4, true>(src, dst, ref, h);
    run_cont<64, 1, 8, false>(src, dst, ref, h);
    run_cont<64, 2, 2, false>(src, dst, ref, h);
    run_cont<64, 2, 4, false>(src, dst, ref, h);
    run_cont<64, 4, 1, false>(src, dst, ref, h);
    run_cont<64, 4, 2, false>(src, dst, ref, h);
    run_cont<32, 4, 2, false>(src, dst, ref, h);
    run_cont<32, 2, 4, false>(src, dst, ref, h);
    run_cont<64, 2, 4, true>(src, dst, ref, h);
    CK(cudaFree(src)); CK(cudaFree(dst)); CK(cudaFree(ref));

    half * x; float *y, *d, *dref; unsigned * sink;
    CK(cudaMalloc(&x, (long)M * K * 2)); CK(cudaMalloc(&y, K * 4)); CK(cudaMalloc(&d, M * 4)); CK(cudaMalloc(&dref, M * 4));
    CK(cudaMalloc(&sink, 4));
    init_h<<<1024, 256>>>(x, (long)M * K, 3);
    init_f<<<64, 256>>>(y, K, 5);
    mmv_ref<<<M / 128, 128>>>(x, y, dref);
    std::vector<float> want(M);
    CK(cudaMemcpy(want.data(), dref, M * 4, cudaMemcpyDeviceToHost));
    for (int blocks : {132 * 4, 132 * 8, 132 * 16}) {
        us = time_us([&] { read4<<<blocks, 256>>>((const uint4 *)x, (long)M * K / 8, sink); });
        printf("READ uint4 ceiling (%d blocks): %8.2f us %8.1f GB/s (1e9)\n", blocks, us, 2.0 * M * K / 1e9 / (us * 1e-6));
    }
    run_mmv<128, 1, 4>(x, y, d, want); // today's kernel's shape
    run_mmv<128, 2, 4>(x, y, d, want);
    run_mmv<128, 4, 2>(x, y, d, want);
    run_mmv<256, 1, 4>(x, y, d, want);
    run_mmv<256, 2, 2>(x, y, d, want);
    run_mmv<256, 4, 2>(x, y, d, want);
    run_mmv<64, 1, 4>(x, y, d, want);
    run_mmv<64, 2, 4>(x, y, d, want);
    run_mmv<512, 4, 1>(x, y, d, want);
    run_mmv<512, 8, 1>(x, y, d, want);
    return 0;
}
