// dqprep.cu - a standalone nvcc program that times the two passes before the
// gemm on MUL_MAT's dequantize + BLAS path (m=4096 k=14336 n=512, Wave 2 ·
// 4/7's goal <= 150 us; dqgemm.cu measured dequantize 46 us, src1's
// conversion 20 us, GemmEx 81 us): variants of the dequantize (q4_0, q8_0,
// q4_K -> f16) and of src1's f32 -> f16 conversion, each checked byte for
// byte against the tree's kernel and timed as a CUDA graph of ITERS calls,
// best of 7.
//
//   dq       the tree's dq (one group of 8 values a thread, one thread a group, grid n/256)
//   dq/cap   the same kernel on a grid of 16 blocks a multiprocessor (grid-stride)
//   dq4      4 consecutive groups a thread (the values of 32 in a row), loads before stores
//   dq4w     4 groups a thread, warp-strided (lane l: groups l, l+32, l+64, l+96 of 128)
//   cvt      the tree's cvt_rows f32 -> f16 (quads of 4 values where rows allow)
//   cvt1     cvt_rows before quads (one value a load and a store)
//
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/dqprep bench/experiments/dqprep.cu && /tmp/dqprep
#include "quant.cu"
#include "convert.cu"
#include "harness.cuh"
#include <functional>

constexpr int M = 4096, K = 14336, N = 512, ITERS = 20;

template <typename Q>
__global__ void k_dq(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1, ternion_fastdiv ne2,
                     ternion_i64 n) {
    dq<Q, ternion_f16>(dst, src, groups, ne1, ne2, n, nullptr);
}

// 4 groups g = 4t … 4t+3 a thread (one row: groups a row is a multiple of 4).
template <typename Q>
__global__ void k_dq4(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1, ternion_fastdiv ne2,
                      ternion_i64 n) {
    for (ternion_i64 t = TERNION_TID(); t < n / 4; t += TERNION_NTHREADS()) {
        const ternion_u32 g = (ternion_u32)t * 4;
        const ternion_u32 row = ternion_fastdiv_div(g, groups);
        const ternion_u32 e = (g - row * groups.d) * 8;
        ternion_u32 i1, i2, i3;
        ternion_row_index(row, ne1, ne2, i1, i2, i3);
        const unsigned char * s = (const unsigned char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
        ternion_f16 * d = (ternion_f16 *)((char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]) + e;
        float v[4][8];
#pragma unroll
        for (int u = 0; u < 4; u++) Q::dq8(s + ((e + 8 * u) / Q::QK) * Q::BYTES, (e + 8 * u) % Q::QK, v[u]);
#pragma unroll
        for (int u = 0; u < 4; u++) quant_store8(d + 8 * u, v[u]);
    }
}

// 4 groups a thread, warp-strided: warp w takes groups 128w … 128w+127,
// lane l groups 128w + l + 32u (each store instruction of a warp writes 512
// contiguous bytes). n a multiple of 128.
template <typename Q>
__global__ void k_dq4w(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1, ternion_fastdiv ne2,
                       ternion_i64 n) {
    const int lane = threadIdx.x % 32;
    const ternion_i64 warps = TERNION_NTHREADS() / 32;
    for (ternion_i64 w = TERNION_TID() / 32; w < n / 128; w += warps) {
        float v[4][8];
        ternion_f16 * d[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_u32 g = (ternion_u32)(w * 128 + lane + 32 * u);
            const ternion_u32 row = ternion_fastdiv_div(g, groups);
            const ternion_u32 e = (g - row * groups.d) * 8;
            ternion_u32 i1, i2, i3;
            ternion_row_index(row, ne1, ne2, i1, i2, i3);
            const unsigned char * s = (const unsigned char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
            d[u] = (ternion_f16 *)((char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]) + e;
            Q::dq8(s + (e / Q::QK) * Q::BYTES, e % Q::QK, v[u]);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) quant_store8(d[u], v[u]);
    }
}

__global__ void k_cvt(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne1, ternion_fastdiv sne2, ternion_fastdiv dne1,
                      ternion_fastdiv dne2, ternion_i64 nrows) {
    cvt_rows<float, ternion_f16>(dst, src, sne1, sne2, dne1, dne2, nrows, nullptr);
}

// cvt_rows as it was before quads: its one-element-at-a-time branch (the
// tree's own, cvt_row_units over floats) for every row.
__global__ void k_cvt1(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne1, ternion_fastdiv sne2, ternion_fastdiv dne1,
                       ternion_fastdiv dne2, ternion_i64 nrows) {
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < nrows; row += (ternion_i64)gridDim.x * blockDim.y) {
        const float * s = (const float *)((const char *)src.data + ternion_row_offset((ternion_u32)row, src, sne1, sne2));
        ternion_f16 * d = (ternion_f16 *)((char *)dst.data + ternion_row_offset((ternion_u32)row, dst, dne1, dne2));
        cvt_row_units<float>(dst.ne[0], [&](ternion_i64 i) { return s[i]; }, [&](ternion_i64 i, float v) { ternion_store(d + i, v); });
    }
}

static bool same(const void * a, const void * b, size_t n) {
    std::vector<unsigned char> x(n), y(n);
    CK(cudaMemcpy(x.data(), a, n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(y.data(), b, n, cudaMemcpyDeviceToHost));
    return x == y;
}

template <typename Q> static void run(const char * name, unsigned char * x, __half * a, __half * a2, int sms) {
    const long xs = (long)K / Q::QK * Q::BYTES, nbytes = xs * M;
    fill_bytes<<<1024, 256>>>(x, nbytes, 17);
    CK(cudaDeviceSynchronize());
    // Finite scales: every f16 word of x set to small values where a format keeps one
    // (the first 2 or 4 bytes of a block); other bytes random.
    fix_scales<<<1024, 256>>>(x, nbytes / Q::BYTES, Q::BYTES, 0, 0.001f, 0.01f, 5);
    if (Q::BYTES == 144) fix_scales<<<1024, 256>>>(x, nbytes / Q::BYTES, Q::BYTES, 2, 0.001f, 0.01f, 6);
    CK(cudaDeviceSynchronize());
    const ternion_tensor td = {a, {K, M, 1, 1}, {2, 2L * K, 2L * K * M, 2L * K * M}};
    const ternion_tensor td2 = {a2, {K, M, 1, 1}, {2, 2L * K, 2L * K * M, 2L * K * M}};
    const ternion_tensor ts = {x, {K, M, 1, 1}, {Q::BYTES, xs, xs * M, xs * M}};
    const long n = (long)K * M / 8;
    const ternion_fastdiv g = fastdiv(K / 8), m1 = fastdiv(M), one = fastdiv(1);
    const double bytes = nbytes + 2.0 * M * K;
    k_dq<Q><<<(unsigned)std::min((n + 255) / 256, 65536L), 256>>>(td, ts, g, m1, one, n);
    struct variant {
        const char * name;
        std::function<void(cudaStream_t, ternion_tensor)> f;
    };
    std::vector<variant> vs = {
        {"dq", [&](cudaStream_t st, ternion_tensor t) { k_dq<Q><<<(unsigned)std::min((n + 255) / 256, 65536L), 256, 0, st>>>(t, ts, g, m1, one, n); }},
        {"dq/cap", [&](cudaStream_t st, ternion_tensor t) { k_dq<Q><<<sms * 16, 256, 0, st>>>(t, ts, g, m1, one, n); }},
        {"dq4", [&](cudaStream_t st, ternion_tensor t) { k_dq4<Q><<<(unsigned)((n / 4 + 255) / 256), 256, 0, st>>>(t, ts, g, m1, one, n); }},
        {"dq4/cap", [&](cudaStream_t st, ternion_tensor t) { k_dq4<Q><<<sms * 16, 256, 0, st>>>(t, ts, g, m1, one, n); }},
        {"dq4w", [&](cudaStream_t st, ternion_tensor t) { k_dq4w<Q><<<(unsigned)((n / 4 + 255) / 256), 256, 0, st>>>(t, ts, g, m1, one, n); }},
        {"dq4w/cap", [&](cudaStream_t st, ternion_tensor t) { k_dq4w<Q><<<sms * 16, 256, 0, st>>>(t, ts, g, m1, one, n); }},
    };
    for (auto & v : vs) {
        CK(cudaMemset(a2, 0xff, 2L * K * M));
        v.f(0, td2);
        CK(cudaDeviceSynchronize());
        const bool ok = same(a, a2, 2L * K * M);
        const float t = timeit([&](cudaStream_t st) { v.f(st, td2); }, ITERS);
        printf("%s %-9s %7.2f us  %5.0f GB/s  %s\n", name, v.name, t, bytes / t / 1e3, ok ? "same bytes" : "DIFFERENT");
    }
}

int main() {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned char * x;
    __half *a, *a2;
    CK(cudaMalloc(&x, (long)K / 32 * 34 * M)); // q8_0, the largest of the three
    CK(cudaMalloc(&a, 2L * K * M));
    CK(cudaMalloc(&a2, 2L * K * M));
    run<ternion_q4_0>("q4_0", x, a, a2, sms);
    run<ternion_q8_0>("q8_0", x, a, a2, sms);
    run<ternion_q4_K>("q4_K", x, a, a2, sms);

    float * y;
    __half *yh, *yh2;
    CK(cudaMalloc(&y, 4L * K * N));
    CK(cudaMalloc(&yh, 2L * K * N));
    CK(cudaMalloc(&yh2, 2L * K * N));
    fill_f32<<<1024, 256>>>(y, (long)K * N, 3);
    const ternion_tensor ys = {y, {K, N, 1, 1}, {4, 4L * K, 4L * K * N, 4L * K * N}};
    const ternion_tensor yd = {yh, {K, N, 1, 1}, {2, 2L * K, 2L * K * N, 2L * K * N}};
    const ternion_tensor yd2 = {yh2, {K, N, 1, 1}, {2, 2L * K, 2L * K * N, 2L * K * N}};
    const ternion_fastdiv n1 = fastdiv(N), one = fastdiv(1);
    const double bytes = 6.0 * K * N;
    // The tree's geometry (core/ops rowsGeometry for ne0 = K, vec 1): 256 x 1 threads, a block a row.
    k_cvt1<<<N, 256>>>(yd, ys, n1, one, n1, one, N);
    k_cvt<<<N, 256>>>(yd2, ys, n1, one, n1, one, N);
    CK(cudaDeviceSynchronize());
    printf("cvt vs cvt1: %s\n", same(yh, yh2, 2L * K * N) ? "same bytes" : "DIFFERENT");
    for (int rep = 0; rep < 2; rep++) {
        const float t1 = timeit([&](cudaStream_t st) { k_cvt1<<<N, 256, 0, st>>>(yd, ys, n1, one, n1, one, N); }, ITERS);
        const float t4 = timeit([&](cudaStream_t st) { k_cvt<<<N, 256, 0, st>>>(yd2, ys, n1, one, n1, one, N); }, ITERS);
        printf("src1 f32 -> f16 [%d, %d]: cvt1 %.2f us (%.0f GB/s), cvt %.2f us (%.0f GB/s)\n", K, N, t1, bytes / t1 / 1e3, t4,
               bytes / t4 / 1e3);
    }
    return 0;
}
