// launchgap.cu - a standalone nvcc program that places the ~0.6 us a node by
// which `ternion ops perf` (and the same launches captured through the
// driver, cuda/BenchmarkQuantPair) measures MUL_MAT q4_0 n=1 (q8y + mmvq8w)
// above this directory's experiments: the same pair of kernels timed from
// (A) this binary (runtime API, the kernels compiled here from
// kernels/quant.cu) and (B) the tree's own fatbin, loaded through the driver
// API (cuModuleLoad, cuLaunchKernelEx with programmatic stream serialization),
// both captured into CUDA graphs, best of 7 and as ops perf times them. If B
// is slower, the difference is in the fatbin (how go generate compiles it);
// if not, in how ternion launches or places its buffers.
//
// Build and run (device tool, repo root, after TERNION_CUDA_ARCHS=90 go generate ./kernels):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/launchgap bench/experiments/launchgap.cu -lcuda && /tmp/launchgap kernels/gen/cuda/quant.fatbin
#include "quant.cu"
#include "harness.cuh"
#include <cuda.h>
#include <functional>

constexpr int M = 4096, K = 14336;

#define CU(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char * s; cuGetErrorString(r, &s); printf("%s:%d %s\n", __FILE__, __LINE__, s); exit(1); } } while (0)

__global__ void rt_mmvq8w(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2, ternion_fastdiv r3) {
    TERNION_KERNEL_ENTRY_EARLY();
    mmvq8w<ternion_q4_0>(dst, src0, yq, yd, r2, r3);
}

// Launches f with programmatic stream serialization through the driver.
static void cu_launch(CUfunction f, dim3 grid, dim3 block, unsigned smem, cudaStream_t st, void ** params) {
    CUlaunchConfig cfg = {};
    cfg.gridDimX = grid.x, cfg.gridDimY = grid.y, cfg.gridDimZ = grid.z;
    cfg.blockDimX = block.x, cfg.blockDimY = block.y, cfg.blockDimZ = block.z;
    cfg.sharedMemBytes = smem, cfg.hStream = (CUstream)st;
    CUlaunchAttribute at[1];
    at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at[0].value.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at, cfg.numAttrs = 1;
    CU(cuLaunchKernelEx(&cfg, f, params, nullptr));
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        printf("usage: launchgap kernels/gen/cuda/quant.fatbin\n");
        return 2;
    }
    CK(cudaFree(0));
    CUmodule mod;
    CU(cuModuleLoad(&mod, argv[1]));
    CUfunction fq, fw;
    CU(cuModuleGetFunction(&fq, mod, "q8y"));
    CU(cuModuleGetFunction(&fw, mod, "mmvq8w_q4_0"));
    const long xs = (long)K / 32 * 18, nbytes = xs * M;
    unsigned char * x;
    float *y, *dst;
    signed char * yq;
    float4 * yd;
    CK(cudaMalloc(&x, nbytes));
    CK(cudaMalloc(&y, K * 4));
    CK(cudaMalloc(&dst, M * 4));
    CK(cudaMalloc(&yq, K));
    CK(cudaMalloc(&yd, K / 32 * 16));
    fill_bytes<<<1024, 256>>>(x, nbytes, 17);
    fix_scales<<<1024, 256>>>(x, nbytes / 18, 18, 0, 0.001f, 0.01f, 5);
    fill_f32<<<64, 256>>>(y, K, 3);
    CK(cudaDeviceSynchronize());
    ternion_tensor ty = {y, {K, 1, 1, 1}, {4, 4L * K, 4L * K, 4L * K}};
    ternion_tensor tx = {x, {K, M, 1, 1}, {18, xs, xs * M, xs * M}};
    ternion_tensor td = {dst, {M, 1, 1, 1}, {4, 4L * M, 4L * M, 4L * M}};
    ternion_fastdiv one = fastdiv(1), blocks = fastdiv(K / 32);
    ternion_i64 nb = K / 32;
    void * pyq = yq, * pyd = yd;
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    const unsigned smem = 3 * K / 2 + 16 * 2 * 32 * 144, qgrid = (unsigned)((nb * 32 + 255) / 256);
    const dim3 wgrid(std::min((M + 15) / 16, nsm));
    CK(cudaFuncSetAttribute(rt_mmvq8w, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CU(cuFuncSetAttribute(fw, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
    auto rt = [&](cudaStream_t st) {
        launch(true, q8y, dim3(qgrid), dim3(256), 0, st, ty, pyq, pyd, blocks, one, one, nb);
        launch(true, rt_mmvq8w, wgrid, dim3(512), (int)smem, st, td, tx, pyq, pyd, one, one);
    };
    void * qp[] = {&ty, &pyq, &pyd, &blocks, &one, &one, &nb};
    void * wp[] = {&td, &tx, &pyq, &pyd, &one, &one};
    auto drv = [&](cudaStream_t st) {
        cu_launch(fq, dim3(qgrid), dim3(256), 0, st, qp);
        cu_launch(fw, wgrid, dim3(512), smem, st, wp);
    };
    std::vector<float> a(M), b(M);
    auto result = [&](const std::function<void(cudaStream_t)> & f, std::vector<float> & v) {
        CK(cudaMemset(dst, 0xff, M * 4));
        f(0);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(v.data(), dst, M * 4, cudaMemcpyDeviceToHost));
    };
    result(rt, a);
    result(drv, b);
    printf("nmse driver vs runtime: %.2e\n", nmse(b, a));
    for (int rep = 0; rep < 2; rep++) {
        printf("runtime pair: %.2f us best, %.2f mean; tree fatbin via driver: %.2f best, %.2f mean\n", timeit(rt), timeit_mean(rt),
               timeit(drv), timeit_mean(drv));
    }
    return 0;
}
