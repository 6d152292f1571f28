// mmvq8wt.cu - a standalone nvcc program that times quant.cu's mmvq8wt (the
// quantized MUL_MAT of 2..8 columns on the tensor cores with whole-word
// decoding, a warp a fixed part of k, src1 staged once) against the tree's
// mmvq8t and mmvq8 in the same run, m=4096 k=14336 (Wave 2 · 4/7's n=8 goals:
// q4_0 <= 14 us, q4_K <= 16 us), and checks its output against mmvq8t's.
//
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/mmvq8wt bench/experiments/mmvq8wt.cu && /tmp/mmvq8wt
#include "quant.cu"
#include "harness.cuh"
#include <string>

constexpr int M = 4096, K = 14336;

template <typename Q>
__global__ void __launch_bounds__(256, 2) base_t(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2,
                                                 ternion_fastdiv r3, int ncols) {
    TERNION_KERNEL_ENTRY();
    mmvq8t<Q>(dst, src0, yq, yd, r2, r3, ncols);
}
template <typename Q>
__global__ void __launch_bounds__(128) base_8(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2,
                                              ternion_fastdiv r3, int ncols) {
    TERNION_KERNEL_ENTRY();
    mmvq8<Q, 8>(dst, src0, ternion_ptr{yq}, ternion_ptr{yd}, r2, r3, ncols);
}
template <typename Q, int W, int S, int R>
__global__ void __launch_bounds__(32 * W, 1) wt(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2,
                                                ternion_fastdiv r3, int ncols) {
    TERNION_KERNEL_ENTRY_EARLY();
    mmvq8wt<Q, R, W, S>(dst, src0, yq, yd, r2, r3, ncols);
}

// wt with the full entry (wait, then let the next kernel launch): the
// body's own wait then returns at once, so src0's first copies are queued
// only after q8y ends.
template <typename Q, int W, int S, int R>
__global__ void __launch_bounds__(32 * W, 1) wt_late(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2,
                                                     ternion_fastdiv r3, int ncols) {
    TERNION_KERNEL_ENTRY();
    mmvq8wt<Q, R, W, S>(dst, src0, yq, yd, r2, r3, ncols);
}

template <typename Q>
static void run(const char * name, int nc) {
    typedef mmvq8wt_fmt<Q> F;
    const long xs = (long)K / Q::QK * Q::BYTES, nbytes = xs * M;
    unsigned char * x;
    float *y, *dst;
    signed char * yq;
    float4 * yd;
    CK(cudaMalloc(&x, nbytes));
    CK(cudaMalloc(&y, 8L * K * 4));
    CK(cudaMalloc(&dst, 8L * M * 4));
    CK(cudaMalloc(&yq, 8L * K));
    CK(cudaMalloc(&yd, 8L * K / 32 * 16));
    fill_bytes<<<1024, 256>>>(x, nbytes, 17);
    fix_scales<<<1024, 256>>>(x, nbytes / Q::BYTES, Q::BYTES, 0, 0.001f, 0.01f, 5);
    if (Q::QK == 256) fix_scales<<<1024, 256>>>(x, nbytes / Q::BYTES, Q::BYTES, 2, 0.001f, 0.01f, 7);
    fill_f32<<<64, 256>>>(y, 8L * K, 3);
    CK(cudaDeviceSynchronize());
    ternion_tensor ty = {y, {K, nc, 1, 1}, {4, 4L * K, 4L * K * nc, 4L * K * nc}};
    ternion_tensor tx = {x, {K, M, 1, 1}, {Q::BYTES, xs, xs * M, xs * M}};
    ternion_tensor td = {dst, {M, nc, 1, 1}, {4, 4L * M, 4L * M * nc, 4L * M * nc}};
    const ternion_fastdiv one = fastdiv(1), blocks = fastdiv(K / 32), fnc = fastdiv(nc);
    const int nb = nc * K / 32;
    auto quant = [&](cudaStream_t st, bool pdl) {
        launch(pdl, q8y, dim3((nb + 7) / 8), dim3(256), 0, st, ty, (void *)yq, (void *)yd, blocks, fnc, one, (ternion_i64)nb);
    };
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    std::vector<float> ref(M * nc), got(M * nc);
    auto result = [&](std::vector<float> & v, auto f) {
        CK(cudaMemset(dst, 0xff, 8L * M * 4));
        quant(0, false);
        f(0, false);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(v.data(), dst, (size_t)M * nc * 4, cudaMemcpyDeviceToHost));
    };
    auto report = [&](const char * what, auto f) {
        const float t1 = timeit([&](cudaStream_t st) { f(st, false); });
        const float t2 = timeit([&](cudaStream_t st) { quant(st, true); f(st, true); });
        const float t3 = timeit_mean([&](cudaStream_t st) { quant(st, true); f(st, true); });
        printf("%s n=%d %-28s: %.2f us alone, q8y+it (pdl) %.2f best / %.2f mean; nmse vs mmvq8t %.2e\n", name, nc, what, t1, t2, t3,
               nmse(got, ref));
    };
    const int tsm = mmvq8t_chunk<Q>::SHARED;
    CK(cudaFuncSetAttribute(base_t<Q>, cudaFuncAttributeMaxDynamicSharedMemorySize, tsm));
    auto ft = [&](cudaStream_t st, bool pdl) {
        launch(pdl, base_t<Q>, dim3(M / 16), dim3(256), tsm, st, td, tx, (void *)yq, (void *)yd, one, one, nc);
    };
    result(ref, ft);
    got = ref;
    report("tree mmvq8t", ft);
    auto f8 = [&](cudaStream_t st, bool pdl) {
        launch(pdl, base_8<Q>, dim3(M / 4), dim3(128), 0, st, td, tx, (void *)yq, (void *)yd, one, one, nc);
    };
    result(got, f8);
    report("tree mmvq8_8", f8);
    auto variant = [&](auto kern, int w, int s, int r, bool late) {
        const int grid = std::min(M / (16 * r), nsm);
        const int wsm = K / 256 * MMVQ8WT_YGROUP + w * s * 16 * r * F::GROUP + w * 128 * r * 4;
        char what[64];
        snprintf(what, sizeof what, "mmvq8wt W=%d S=%d R=%d (smem %d)%s", w, s, r, wsm, late ? " late" : "");
        if (wsm > 232448) {
            printf("%s n=%d %s: does not fit\n", name, nc, what);
            return;
        }
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, wsm));
        auto fw = [&](cudaStream_t st, bool pdl) {
            launch(pdl, kern, dim3(grid), dim3(32 * w), wsm, st, td, tx, (void *)yq, (void *)yd, one, one, nc);
        };
        result(got, fw);
        report(what, fw);
    };
    variant(wt_late<Q, 8, F::STAGES_R1, 1>, 8, F::STAGES_R1, 1, true);
    variant(wt<Q, 8, F::STAGES_R1, 1>, 8, F::STAGES_R1, 1, false);
    variant(wt<Q, 8, 2, 2>, 8, 2, 2, false);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(dst));
    CK(cudaFree(yq));
    CK(cudaFree(yd));
}

// Arguments (optional): the column count and the format (q4_0, q4_K, q8_0);
// without them every format at 8, 4 and 2 columns.
int main(int argc, char ** argv) {
    const std::string only = argc > 2 ? argv[2] : "";
    for (int nc : {8, 4, 2}) {
        if (argc > 1 && nc != atoi(argv[1])) continue;
        if (only.empty() || only == "q4_0") run<ternion_q4_0>("q4_0", nc);
        if (only.empty() || only == "q4_K") run<ternion_q4_K>("q4_K", nc);
        if (only.empty() || only == "q8_0") run<ternion_q8_0>("q8_0", nc);
    }
    return 0;
}
