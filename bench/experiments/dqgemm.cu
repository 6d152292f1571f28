// dqgemm.cu - a standalone nvcc program that takes apart ternion's path for
// MUL_MAT of q4_0 weights by many columns (m=4096 k=14336 n=512: Wave 2 · 4/7's
// goal <= 150 us, ggml-cuda 323 us): the tree's dequantize kernel (dq, q4_0 ->
// f16 into a temporary), src1's f32 -> f16 conversion and cuBLAS (GemmEx, f16
// in, f32 out and compute, as core/ops' runGemm), each alone and together, then
// variants that keep the dequantized weights in the L2: k split into C chunks
// (dequantize a [k/C, m] slice into a small buffer, multiply it, accumulate
// with beta = 1) or m split into C chunks. Every variant is checked against
// the one-piece path (NMSE) and timed as a CUDA graph of ITERS calls, best of 7.
//
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/dqgemm bench/experiments/dqgemm.cu -lcublas && /tmp/dqgemm
#include "quant.cu"
#include "harness.cuh"
#include <cublas_v2.h>

constexpr int M = 4096, K = 14336, N = 512, ITERS = 10;

#define CB(x) do { cublasStatus_t s = (x); if (s != CUBLAS_STATUS_SUCCESS) { printf("%s:%d cublas %d\n", __FILE__, __LINE__, (int)s); exit(1); } } while (0)

// The tree's dequantize entry point for q4_0 -> f16 (kernels' dq_q4_0_f16).
__global__ void dq_q4_0_f16(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1, ternion_fastdiv ne2,
                            ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    dq<ternion_q4_0, ternion_f16>(dst, src, groups, ne1, ne2, n, nullptr);
}

__global__ void to_f16(const float * x, __half * y, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = __float2half(x[i]);
}

int main() {
    const long xs = (long)K / 32 * 18, nbytes = xs * M;
    unsigned char * x;
    float *y, *c, *cref;
    __half *yh, *a;
    CK(cudaMalloc(&x, nbytes));
    CK(cudaMalloc(&y, (long)K * N * 4));
    CK(cudaMalloc(&yh, (long)K * N * 2));
    CK(cudaMalloc(&a, (long)K * M * 2));
    CK(cudaMalloc(&c, (long)M * N * 4));
    CK(cudaMalloc(&cref, (long)M * N * 4));
    fill_bytes<<<1024, 256>>>(x, nbytes, 17);
    fix_scales<<<1024, 256>>>(x, nbytes / 18, 18, 0, 0.001f, 0.01f, 5);
    fill_f32<<<1024, 256>>>(y, (long)K * N, 3);
    CK(cudaDeviceSynchronize());
    cublasHandle_t h;
    CB(cublasCreate(&h));
    void * ws;
    CK(cudaMalloc(&ws, 32 << 20));
    CB(cublasSetWorkspace(h, ws, 32 << 20));
    const float one = 1.0f, zero = 0.0f;
    // Dequantizes rows r0 … r0 + mr - 1, values k0 … k0 + kr - 1 of x into
    // dst (kr values a row, packed) as the tree launches dq.
    auto dequant = [&](cudaStream_t st, __half * dst, int r0, int mr, int k0, int kr) {
        ternion_tensor td = {dst, {kr, mr, 1, 1}, {2, 2L * kr, 2L * kr * mr, 2L * kr * mr}};
        ternion_tensor ts = {x + (long)r0 * xs + (long)k0 / 32 * 18, {kr, mr, 1, 1}, {18, xs, xs * mr, xs * mr}};
        const long n = (long)kr * mr / 8;
        dq_q4_0_f16<<<(unsigned)std::min((n + 255) / 256, 65536L), 256, 0, st>>>(td, ts, fastdiv(kr / 8), fastdiv(mr), fastdiv(1), n);
    };
    auto convert = [&](cudaStream_t st) { to_f16<<<(unsigned)std::min(((long)K * N + 255) / 256, 65536L), 256, 0, st>>>(y, yh, (long)K * N); };
    // c[r0 …, :] (+)= a_chunk^T · yh[k0 …], a_chunk [kr, mr] packed.
    auto gemm = [&](cudaStream_t st, const __half * ac, int r0, int mr, int k0, int kr, bool acc) {
        CB(cublasSetStream(h, st));
        CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, mr, N, kr, &one, ac, CUDA_R_16F, kr, yh + k0, CUDA_R_16F, K, acc ? &one : &zero,
                        c + r0, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    std::vector<float> ref((long)M * N), got((long)M * N);
    auto check = [&](auto f) {
        CK(cudaMemset(c, 0xff, (long)M * N * 4));
        f((cudaStream_t)0);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
        return nmse(got, ref);
    };
    auto whole = [&](cudaStream_t st) {
        dequant(st, a, 0, M, 0, K);
        convert(st);
        gemm(st, a, 0, M, 0, K, false);
    };
    CK(cudaMemset(c, 0, (long)M * N * 4));
    whole(0);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(ref.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
    const double flop = 2.0 * M * N * K;
    printf("m=%d k=%d n=%d q4_0: %.1f MB of weights, %.1f MB as f16\n", M, K, N, nbytes / 1e6, 2.0 * M * K / 1e6);
    const float tdq = timeit([&](cudaStream_t st) { dequant(st, a, 0, M, 0, K); }, ITERS);
    printf("dequantize alone: %.2f us (%.0f GB/s of reads + writes)\n", tdq, (nbytes + 2.0 * M * K) / tdq / 1e3);
    const float tcv = timeit(convert, ITERS);
    printf("src1 f32 -> f16 alone: %.2f us\n", tcv);
    const float tg = timeit([&](cudaStream_t st) { gemm(st, a, 0, M, 0, K, false); }, ITERS);
    printf("GemmEx alone: %.2f us (%.0f TFLOP/s)\n", tg, flop / tg / 1e6);
    printf("whole path (dq + convert + gemm): %.2f us\n", timeit(whole, ITERS));
    for (int chunks : {2, 4, 7, 8}) {
        if (K % (32 * chunks) != 0) continue; // slices of whole q4_0 blocks
        const int kc = K / chunks;
        auto ksplit = [&](cudaStream_t st) {
            convert(st);
            for (int i = 0; i < chunks; i++) {
                dequant(st, a, 0, M, i * kc, kc);
                gemm(st, a, 0, M, i * kc, kc, i > 0);
            }
        };
        const double e = check(ksplit);
        printf("k in %d chunks of %d (%.1f MB of f16 a chunk): %.2f us; nmse vs whole %.2e\n", chunks, kc, 2.0 * M * kc / 1e6,
               timeit(ksplit, ITERS), e);
    }
    for (int chunks : {2, 4}) {
        const int mc = M / chunks;
        auto msplit = [&](cudaStream_t st) {
            convert(st);
            for (int i = 0; i < chunks; i++) {
                dequant(st, a, i * mc, mc, 0, K);
                gemm(st, a, i * mc, mc, 0, K, false);
            }
        };
        const double e = check(msplit);
        printf("m in %d chunks of %d: %.2f us; nmse vs whole %.2e\n", chunks, mc, timeit(msplit, ITERS), e);
    }
    CB(cublasDestroy(h));
    return 0;
}
