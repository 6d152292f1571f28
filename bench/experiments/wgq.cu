// wgq.cu - a standalone nvcc program (sm_90a): ternion's gemm90 kernels
// (kernels/gemm90.cu, which wgmma.cuh includes, as the product builds them) checked and
// timed against the tree's other path (dq -> f16, src1 -> f16,
// cublasGemmEx) over a sweep of shapes. Session 26 wrote this with a copy of
// the kernel (run F's form of wgmma.cu); session 27 moved it into kernels/
// and this program onto it (the sweep of 2026-12-06 18:37 ran the copy).
//
//   gemm90_b_f32  src1 f32 [n][k] -> f16 in the gemm's B stage order
//   gemm90_q<Q>   dst [n][m] f32 = src0 (Q) · B, one 128 x 128 tile a block
//
// Build and run (device tool, repo root; CUDA 12+):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/wgq \
//       bench/experiments/wgq.cu -lcublas && /tmp/wgq
#include "quant.cu"
#include "harness.cuh"
#include "wgmma.cuh" // includes kernels/gemm90.cu

template <typename Q>
__global__ void __launch_bounds__(GEMM90_THREADS, 1) g90(ternion_tensor dst, ternion_tensor src0, const void * bt) {
    gemm90_q<Q>(dst, src0, bt);
}

int main() {
    struct shape { int m, k, n; };
    const shape shapes[] = {{4096, 14336, 512}, {14336, 4096, 512}, {4096, 4096, 512}, {4096, 14336, 100},
                            {4096, 14336, 1000}, {4000, 14336, 333}, {4096, 4096, 16},  {4096, 14336, 2048}};
    const long maxmk = 14336L * 4096, maxnk = 2048L * 14336, maxmn = 4096L * 2048;
    unsigned char * x;
    float *y, *c;
    __half *yh, *yt, *a;
    CK(cudaMalloc(&x, maxmk / 32 * 34));
    CK(cudaMalloc(&y, maxnk * 4));
    CK(cudaMalloc(&yh, maxnk * 2));
    CK(cudaMalloc(&yt, (maxnk + 128L * 14336) * 2));
    CK(cudaMalloc(&a, maxmk * 2));
    CK(cudaMalloc(&c, maxmn * 4));
    tree_path tp;
    CK(cudaFuncSetAttribute(g90<g90_q4_0>, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM90_SHARED(144)));
    CK(cudaFuncSetAttribute(g90<g90_q8_0>, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM90_SHARED(272)));
    for (const shape & sh : shapes) {
        for (int q8 = 0; q8 < 2; q8++) {
            const int M = sh.m, K = sh.k, N = sh.n, bb = q8 ? 34 : 18, NT = (N + BN - 1) / BN;
            const long xs = (long)K / 32 * bb;
            fill_bytes<<<1024, 256>>>(x, xs * M, 17 + q8);
            fix_scales<<<1024, 256>>>(x, xs * M / bb, bb, 0, q8 ? 0.0001f : 0.001f, q8 ? 0.001f : 0.01f, 5);
            fill_f32<<<1024, 256>>>(y, (long)K * N, 3);
            CK(cudaDeviceSynchronize());
            auto tree = [&](cudaStream_t st) {
                tp.dequant(st, a, x, M, K, q8);
                tp.convert(st, y, yh, (long)K * N);
                tp.gemm(st, a, yh, c, M, N, K);
            };
            const ternion_tensor td = {c, {M, N, 1, 1}, {4, 4L * M, 4L * M * N, 4L * M * N}};
            const ternion_tensor ta = {x, {K, M, 1, 1}, {bb, xs, xs * M, xs * M}};
            const ternion_tensor tb = {y, {K, N, 1, 1}, {4, 4L * K, 4L * K * N, 4L * K * N}};
            const long chunks = (long)NT * BN * K / 8;
            auto fused = [&](cudaStream_t st) {
                gemm90_b_f32<<<(unsigned)((chunks + 255) / 256), 256, 0, st>>>(yt, tb, chunks);
                const dim3 grid((unsigned)(((M + BM - 1) / BM) * NT));
                if (q8) {
                    g90<g90_q8_0><<<grid, GEMM90_THREADS, GEMM90_SHARED(272), st>>>(td, ta, yt);
                } else {
                    g90<g90_q4_0><<<grid, GEMM90_THREADS, GEMM90_SHARED(144), st>>>(td, ta, yt);
                }
            };
            std::vector<float> ref((long)M * N), got((long)M * N);
            tree(0);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(ref.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemset(c, 0xff, (long)M * N * 4));
            fused(0);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(got.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
            const double e = nmse(got, ref), flop = 2.0 * M * N * K;
            const float tt = timeit(tree, 10), tf = timeit(fused, 10);
            printf("%s m=%5d k=%5d n=%4d  tree %8.2f us  gemm90 %8.2f us (%4.0f TFLOP/s, %+5.1f %%)  nmse %.2e\n", q8 ? "q8_0" : "q4_0",
                   M, K, N, tt, tf, flop / tf / 1e6, 100.0 * (tf - tt) / tt, e);
        }
    }
    return 0;
}
