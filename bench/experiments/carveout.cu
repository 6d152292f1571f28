// carveout.cu - a standalone nvcc program that asks where the q8y + mmvq8w
// pair (MUL_MAT q4_0 m=4096 k=14336 n=1) and the q8y + mmvq8w_id pair
// (MUL_MAT_ID q4_0, 128 experts, 8 used, m=768 k=2048, one token) lose time
// between their kernels, timed as `ternion ops perf` replays an op (a CUDA
// graph of the pair repeated, programmatic dependent launch):
//   pair        q8y then the product, as the tree launches them;
//   carveout    the same with both kernels' preferred shared-memory
//               carveout set to the maximum (q8y uses no shared memory,
//               mmvq8w ~150 KB: if the SMs are reconfigured between the
//               two, every pair pays a drain);
//   product     the product alone, src1 quantized once before (the bound
//               for quantizing src1 inside the product's blocks);
//   q8y         q8y alone;
//   fused       mmvq8wf / mmvq8wf_id (TERNION_MMVQ8WF): src1 quantized
//               inside the product's blocks, no q8y; it waits for the
//               kernel before it before it reads src0.
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/carveout bench/experiments/carveout.cu && /tmp/carveout
#include "quant.cu"
#include "harness.cuh"
#include <cmath>
#include <functional>

__global__ void rt_mmvq8w(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2, ternion_fastdiv r3) {
    TERNION_KERNEL_ENTRY_EARLY();
    mmvq8w<ternion_q4_0>(dst, src0, yq, yd, r2, r3);
}

__global__ void rt_mmvq8w_id(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, int ne11, ternion_tensor ids,
                             unsigned int * flag) {
    TERNION_KERNEL_ENTRY_EARLY();
    mmvq8w_id<ternion_q4_0>(dst, src0, yq, yd, ne11, ids, flag);
}

__global__ void rt_mmvq8wf(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2, ternion_fastdiv r3) {
    TERNION_KERNEL_ENTRY_EARLY();
    mmvq8wf<ternion_q4_0>(dst, src0, src1, r2, r3);
}

__global__ void rt_mmvq8wf_id(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_tensor ids, unsigned int * flag) {
    TERNION_KERNEL_ENTRY_EARLY();
    mmvq8wf_id<ternion_q4_0>(dst, src0, src1, ids, flag);
}

__global__ void set_ids(int * ids, int n, int experts) {
    if (threadIdx.x < n) ids[threadIdx.x] = (int)((threadIdx.x * 37u + 11u) % (unsigned)experts);
}

// The carveout preference of q8y and the product kernel k (-1: none).
template <typename K>
static void carve(K k, int pct) {
    CK(cudaFuncSetAttribute(q8y, cudaFuncAttributePreferredSharedMemoryCarveout, pct));
    CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, pct));
}

// Times pair, product alone and q8y alone for the launches given, with the
// carveout preference off, at the maximum, and off again.
// fused: the fused kernel's launch; out, n: the product's output, checked
// against the pair's (the same quantized src1: equal up to float order).
template <typename K>
static void report(const char * name, K k, const std::function<void(cudaStream_t)> & q, const std::function<void(cudaStream_t)> & p,
                   const std::function<void(cudaStream_t)> & fused, float * out, int n) {
    auto pair = [&](cudaStream_t st) { q(st), p(st); };
    std::vector<float> a(n), b(n);
    auto result = [&](const std::function<void(cudaStream_t)> & f, std::vector<float> & v) {
        CK(cudaMemset(out, 0xff, n * 4));
        f(0);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(v.data(), out, n * 4, cudaMemcpyDeviceToHost));
    };
    result(pair, a);
    result(fused, b);
    printf("%s fused vs pair: nmse %.2e, max |diff| %.3g\n", name, nmse(b, a), [&] {
        float m = 0;
        for (int i = 0; i < n; i++) m = std::max(m, std::fabs(a[i] - b[i]));
        return m;
    }());
    printf("%s fused: %.2f us best, %.2f mean\n", name, timeit(fused), timeit_mean(fused));
    for (int pct : {-1, 100, -1}) {
        carve(k, pct);
        printf("%s carveout %4d: pair %.2f us best, %.2f mean; product alone %.2f best, %.2f mean; q8y alone %.2f best, %.2f mean\n", name,
               pct, timeit(pair), timeit_mean(pair), timeit(p), timeit_mean(p), timeit(q), timeit_mean(q));
    }
}

int main() {
    CK(cudaFree(0));
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    unsigned * flag;
    CK(cudaMalloc(&flag, 4));
    {
        constexpr long M = 4096, K = 14336, xs = K / 32 * 18;
        unsigned char * x;
        float *y, *dst;
        signed char * yq;
        float4 * yd;
        CK(cudaMalloc(&x, xs * M));
        CK(cudaMalloc(&y, K * 4));
        CK(cudaMalloc(&dst, M * 4));
        CK(cudaMalloc(&yq, K));
        CK(cudaMalloc(&yd, K / 32 * 16));
        fill_bytes<<<1024, 256>>>(x, xs * M, 17);
        fix_scales<<<1024, 256>>>(x, xs * M / 18, 18, 0, 0.001f, 0.01f, 5);
        fill_f32<<<64, 256>>>(y, K, 3);
        ternion_tensor ty = {y, {K, 1, 1, 1}, {4, 4 * K, 4 * K, 4 * K}};
        ternion_tensor tx = {x, {K, M, 1, 1}, {18, xs, xs * M, xs * M}};
        ternion_tensor td = {dst, {M, 1, 1, 1}, {4, 4 * M, 4 * M, 4 * M}};
        ternion_fastdiv one = fastdiv(1), blocks = fastdiv(K / 32);
        ternion_i64 nb = K / 32;
        void *pyq = yq, *pyd = yd;
        const unsigned smem = 3 * K / 2 + 16 * 2 * 32 * 144, qgrid = (unsigned)((nb * 32 + 255) / 256);
        const dim3 wgrid(std::min((unsigned)(M + 15) / 16, (unsigned)nsm));
        CK(cudaFuncSetAttribute(rt_mmvq8w, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        auto q = [&](cudaStream_t st) { launch(true, q8y, dim3(qgrid), dim3(256), 0, st, ty, pyq, pyd, blocks, one, one, nb); };
        auto p = [&](cudaStream_t st) { launch(true, rt_mmvq8w, wgrid, dim3(512), (int)smem, st, td, tx, pyq, pyd, one, one); };
        auto f = [&](cudaStream_t st) { launch(true, rt_mmvq8wf, wgrid, dim3(512), (int)smem, st, td, tx, ty, one, one); };
        CK(cudaFuncSetAttribute(rt_mmvq8wf, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        q(0);
        CK(cudaDeviceSynchronize());
        report("mul_mat q4_0 n=1", rt_mmvq8w, q, p, f, dst, (int)M);
    }
    {
        constexpr long M = 768, K = 2048, E = 128, U = 8, xs = K / 32 * 18;
        unsigned char * x;
        float *y, *dst;
        signed char * yq;
        float4 * yd;
        int * ids;
        CK(cudaMalloc(&x, xs * M * E));
        CK(cudaMalloc(&y, K * U * 4));
        CK(cudaMalloc(&dst, M * U * 4));
        CK(cudaMalloc(&yq, K * U));
        CK(cudaMalloc(&yd, K * U / 32 * 16));
        CK(cudaMalloc(&ids, U * 4));
        fill_bytes<<<1024, 256>>>(x, xs * M * E, 19);
        fix_scales<<<1024, 256>>>(x, xs * M * E / 18, 18, 0, 0.001f, 0.01f, 7);
        fill_f32<<<64, 256>>>(y, K * U, 5);
        set_ids<<<1, 32>>>(ids, U, E);
        ternion_tensor ty = {y, {K, U, 1, 1}, {4, 4 * K, 4 * K * U, 4 * K * U}};
        ternion_tensor tx = {x, {K, M, E, 1}, {18, xs, xs * M, xs * M * E}};
        ternion_tensor td = {dst, {M, U, 1, 1}, {4, 4 * M, 4 * M * U, 4 * M * U}};
        ternion_tensor ti = {ids, {U, 1, 1, 1}, {4, 4 * U, 4 * U, 4 * U}};
        ternion_fastdiv one = fastdiv(1), blocks = fastdiv(K / 32), ne1 = fastdiv(U);
        ternion_i64 nb = K * U / 32;
        void *pyq = yq, *pyd = yd;
        const unsigned smem = 3 * K / 2 + 16 * 2 * 32 * 144, qgrid = (unsigned)((nb * 32 + 255) / 256);
        // the tree's mmvq8wIDGrid: units of 4 rows over at most nsm / 8 blocks a pair
        const dim3 wgrid(std::max(1u, std::min((unsigned)((M / 4 + 15) / 16), (unsigned)nsm / 8)), U, 1);
        CK(cudaFuncSetAttribute(rt_mmvq8w_id, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        auto q = [&](cudaStream_t st) { launch(true, q8y, dim3(qgrid), dim3(256), 0, st, ty, pyq, pyd, blocks, ne1, one, nb); };
        auto p = [&](cudaStream_t st) {
            launch(true, rt_mmvq8w_id, wgrid, dim3(512), (int)smem, st, td, tx, pyq, pyd, (int)U, ti, flag);
        };
        auto f = [&](cudaStream_t st) { launch(true, rt_mmvq8wf_id, wgrid, dim3(512), (int)smem, st, td, tx, ty, ti, flag); };
        CK(cudaFuncSetAttribute(rt_mmvq8wf_id, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        q(0);
        CK(cudaDeviceSynchronize());
        report("mul_mat_id q4_0 n=1", rt_mmvq8w_id, q, p, f, dst, (int)(M * U));
    }
    return 0;
}
