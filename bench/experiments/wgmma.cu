// wgmma.cu - a standalone nvcc program (sm_90a) that asks whether a gemm of
// ternion's own, on Hopper's warpgroup tensor-core instructions (wgmma), can
// take MUL_MAT of quantized weights by many columns (m=4096 k=14336 n=512:
// Wave 2 · 4/7's goal <= 150 µs; the tree's dequantize -> f16 -> cuBLAS path
// 159.5 µs on the H200, 46 µs of it the dequantize writing 117 MB of f16)
// without the dequantize pass: the weights are expanded to f16 inside the
// gemm, in shared memory, by a producer warpgroup, while two consumer
// warpgroups multiply.
//
//   wg<f16>   A (weights) f16 [M][K], B (src1) f16 [N][K]: both copied by
//             cp.async into 128-byte-swizzled stages; the same gemm as
//             cuBLAS's GemmEx, to compare the kernel itself
//   wg<q4_0>  A q4_0: each producer thread owns one of the tile's 128 rows,
//             loads 8 blocks (144 bytes, 4 k-tiles) a group ahead into
//             registers and writes each k-tile's 64 values as f16 (the
//             seed's dequantize: (q - 8) * d rounded once, so bit-exact with
//             dq_q4_0_f16) into the swizzled stage
//
//   wg_f16f32 f16 A by TMA times src1 f32, converted to f16 inside the gemm
//             (issue 8's f16 x f32 case without the conversion pass)
//
// CTA tile 128 (m) x 128 (n) x 64 (k), one wave of 128 CTAs on 132 SMs, S
// stages of 32 KB, full/empty mbarriers; consumers: m64n128k16 wgmma from
// shared-memory descriptors, one commit group a k-tile, the stage released
// when the next tile's group is issued. Every result is compared (NMSE) with
// the tree's path: dq -> f16, src1 -> f16, cublasGemmEx (f32 out and compute).
//
// Build and run (device tool, repo root; CUDA 12+):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/wgmma \
//       bench/experiments/wgmma.cu -lcublas -lcuda && /tmp/wgmma
#include "quant.cu"
#include "harness.cuh"
#include <cstdint>
#include <cuda.h>
#if CUDA_VERSION < 12000 // a compile check with an older toolkit's headers (-ptx only)
struct alignas(64) CUtensorMap { unsigned long long opaque[16]; };
#endif

constexpr int M = 4096, K = 14336, N = 512, ITERS = 10;

#include "wgmma.cuh"

// C [N][M] (f32, m fastest: ggml's dst of MUL_MAT) = A [M][K] . B [N][K]^T.
// tmA, tmB: 2D tensor maps of A (f16 only) and B, boxes of 64 (k) x 128
// rows, 128-byte swizzle: the copy engine writes the stages in the layout
// the wgmma descriptors read.
//
// BT: B comes pre-swizzled (cvt_tiled's layout: 16 KB a (n-tile, k-tile),
// in stage order) by one 1D bulk copy a stage instead of the tensor map.
//
// PW: producer warpgroups. With 2, thread (h, t) of the producers expands
// block h of row t's two blocks in each k-tile (twice the threads on the
// expansion, each with half of it).
//
// FW: 0: one fetch warp (B, and the quantized rows by 2D TMA); 1: a fetch
// warpgroup, its warp 0 issuing B, warps 1..3 the quantized rows by 16-byte
// cp.async (no tensor map for them).
template <int AT, bool BT, int S, int PW = 1, int FW = 0>
__global__ void __launch_bounds__((2 + PW) * 128 + (FW ? 128 : 32), 1)
    wg_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, const __grid_constant__ CUtensorMap tmQ,
            const unsigned char * Aq,
            const __half * Bt, float * C, long a_row_bytes) {
    static_assert(smem_of<AT, S>() <= 232448, "more shared memory than a block can have");
    constexpr int GB = group_of<AT>::BYTES, NQ = GB / 16;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[S], empty[S], rawfull[RAW], rawempty[RAW];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const int tid = threadIdx.x, wg = tid >> 7, t = tid & 127, warp = tid >> 5;
    const int m0 = (blockIdx.x % (M / BM)) * BM, n0 = (blockIdx.x / (M / BM)) * BN;
    constexpr int T = K / BK, G = T / 4;
    const unsigned raw = base + S * STAGE;
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            // the fetch warp's arrival (with the bytes it expects), and for
            // quantized A every producer thread's
            mbar_init(smem_u32(&full[s]), AT == A_F16 ? 1 : 128 * PW + 1);
            mbar_init(smem_u32(&empty[s]), 8);
        }
        for (int r = 0; r < RAW; r++) {
            mbar_init(smem_u32(&rawfull[r]), FW ? 96 : 1);
            mbar_init(smem_u32(&rawempty[r]), 128 * PW);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp >= (2 + PW) * 4) {
        const int fwarp = warp - (2 + PW) * 4; // 0 (B), 1..3 (rows, FW = 1)
        // The fetch warp: every copy (TMA or bulk) is issued here, so no
        // thread that fences (MEMBAR) has one outstanding. Quantized A's
        // group of rows RAW - 1 groups ahead, then B (and f16 A) of each k-tile.
        const int l = tid & 31;
        // Quantized rows: the group's 128 rows x GB bytes by one 2D TMA
        // (tmQ: the weights as u16 [M][row bytes / 2], boxes GB/2 x 128).
        auto fetch_raw = [&](int g) {
            const int r = g % RAW;
            if (g >= RAW) mbar_wait(smem_u32(&rawempty[r]), ((g / RAW) - 1) & 1);
            if (FW) {
                for (int q = (fwarp - 1) * 32 + l; q < 128 * NQ; q += 96) {
                    const int row = q / NQ, ch = q % NQ;
                    cp16(raw + r * (128 * GB) + row * GB + ch * 16, Aq + (long)(m0 + row) * a_row_bytes + (long)g * GB + ch * 16);
                }
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(&rawfull[r])) : "memory");
            } else if (l == 0) {
                const unsigned bar = smem_u32(&rawfull[r]);
                mbar_arrive_tx(bar, 128 * GB);
                tma_2d(raw + r * (128 * GB), &tmQ, g * (GB / 2), m0, bar);
            }
            __syncwarp();
        };
        if (FW && fwarp > 0) {
            if (AT != A_F16) {
                for (int g = 0; g < G; g++) fetch_raw(g);
            }
            return;
        }
        if (AT != A_F16 && !FW) {
            for (int g = 0; g < RAW - 1 && g < G; g++) fetch_raw(g);
        }
        for (int g = 0; g < G; g++) {
            if (AT != A_F16 && !FW && g + RAW - 1 < G) fetch_raw(g + RAW - 1);
            for (int u = 0; u < 4; u++) {
                const int kt = 4 * g + u, s = kt % S;
                if (kt >= S) mbar_wait(smem_u32(&empty[s]), ((kt / S) - 1) & 1);
                if (l == 0) {
                    const unsigned as = base + s * STAGE, f = smem_u32(&full[s]);
                    mbar_arrive_tx(f, AT == A_F16 ? STAGE : TILE_B);
                    if (AT == A_F16) tma_2d(as, &tmA, kt * BK, m0, f);
                    if (BT) {
                        bulk_copy(as + TILE_A, Bt + ((long)(n0 / BN) * T + kt) * (TILE_B / 2), TILE_B, f);
                    } else {
                        tma_2d(as + TILE_A, &tmB, kt * BK, n0, f);
                    }
                }
                __syncwarp();
            }
        }
        return;
    }
    if (wg < PW) {
        if (AT == A_F16) return;
        // Producers: thread t expands row t of each k-tile (with PW = 2,
        // warpgroup h block h of the k-tile's two) into the stage.
        wg_expand<AT, S, PW>(base, raw, full, empty, rawfull, rawempty, G, t, wg);
        return;
    }
    // Consumers: warpgroup PW rows 0..63 of the tile, PW + 1 rows 64..127.
    wg_consume<S>(base, full, empty, T, wg - PW, t, C, M, m0, n0, M, N);
}


// wg_f16f32: f16 A [M][K] (TMA) times f32 B [N][K] converted to f16 inside
// the gemm (issue 8's MUL_MAT f16 x f32 without src1's conversion pass): warp
// 12 brings each k-tile's B as f32 by two TMA boxes of 32 x 128 (128-byte
// swizzle) into one of 2 staging buffers and A into the stage; producer
// thread t converts B's row t (64 values, rounded as __float2half) into the
// B stage, fences and arrives; warpgroups 1 and 2 multiply as wg_gemm's.
constexpr int STAGING = 128 * 64 * 4, NSTG = 2;
template <int S> __host__ __device__ constexpr int smem_f16f32() { return S * STAGE + NSTG * STAGING + 1024; }
template <int S>
__global__ void __launch_bounds__(416, 1)
    wg_f16f32(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmBf, float * C) {
    static_assert(smem_f16f32<S>() <= 232448, "more shared memory than a block can have");
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[S], empty[S], sfull[NSTG], sempty[NSTG];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u, stg = base + S * STAGE;
    const int tid = threadIdx.x, wg = tid >> 7, t = tid & 127, warp = tid >> 5, l = tid & 31;
    const int m0 = (blockIdx.x % (M / BM)) * BM, n0 = (blockIdx.x / (M / BM)) * BN;
    constexpr int T = K / BK;
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            mbar_init(smem_u32(&full[s]), 128 + 1);
            mbar_init(smem_u32(&empty[s]), 8);
        }
        for (int b = 0; b < NSTG; b++) {
            mbar_init(smem_u32(&sfull[b]), 1);
            mbar_init(smem_u32(&sempty[b]), 128);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 12) {
        for (int kt = 0; kt < T; kt++) {
            const int b = kt % NSTG, s = kt % S;
            if (kt >= NSTG) mbar_wait(smem_u32(&sempty[b]), ((kt / NSTG) - 1) & 1);
            if (l == 0) {
                const unsigned f = smem_u32(&sfull[b]);
                mbar_arrive_tx(f, STAGING);
                tma_2d(stg + b * STAGING, &tmBf, kt * BK, n0, f);
                tma_2d(stg + b * STAGING + STAGING / 2, &tmBf, kt * BK + 32, n0, f);
            }
            __syncwarp();
            if (kt >= S) mbar_wait(smem_u32(&empty[s]), ((kt / S) - 1) & 1);
            if (l == 0) {
                const unsigned f = smem_u32(&full[s]);
                mbar_arrive_tx(f, TILE_A);
                tma_2d(base + s * STAGE, &tmA, kt * BK, m0, f);
            }
            __syncwarp();
        }
        return;
    }
    if (wg == 0) {
        for (int kt = 0; kt < T; kt++) {
            const int b = kt % NSTG, s = kt % S;
            mbar_wait(smem_u32(&sfull[b]), (kt / NSTG) & 1);
            uint4 v[16]; // row t's 64 values: half h (k 32h..), 16-byte chunk c of it at (c ^ (t & 7))
#pragma unroll
            for (int i = 0; i < 16; i++) v[i] = ld_shared_v4(stg + b * STAGING + (i >> 3) * (STAGING / 2) + t * 128 + (((i & 7) ^ (t & 7)) << 4));
            mbar_arrive(smem_u32(&sempty[b]));
            if (kt >= S) mbar_wait(smem_u32(&empty[s]), ((kt / S) - 1) & 1);
            const unsigned bs = base + s * STAGE + TILE_A;
#pragma unroll
            for (int j = 0; j < 8; j++) { // f16 chunk j: values 8j..8j+7 = f32 chunks 2j, 2j+1
                const uint4 p = v[2 * j], q = v[2 * j + 1];
                const __half2 h0 = __floats2half2_rn(__uint_as_float(p.x), __uint_as_float(p.y)),
                              h1 = __floats2half2_rn(__uint_as_float(p.z), __uint_as_float(p.w)),
                              h2 = __floats2half2_rn(__uint_as_float(q.x), __uint_as_float(q.y)),
                              h3 = __floats2half2_rn(__uint_as_float(q.z), __uint_as_float(q.w));
                st_shared_v4(bs + t * 128 + ((j ^ (t & 7)) << 4),
                             make_uint4(*(const unsigned *)&h0, *(const unsigned *)&h1, *(const unsigned *)&h2, *(const unsigned *)&h3));
            }
            fence_async();
            mbar_arrive(smem_u32(&full[s]));
        }
        return;
    }
    wg_consume<S>(base, full, empty, T, wg - 1, t, C, M, m0, n0, M, N);
}


#if CUDA_VERSION >= 12000
// A 2D tensor map of a row-major matrix of rows x cols elements of type t
// (es bytes each): boxes of box0 elements x 128 rows, with swizzle sw.
static CUtensorMap map_tiles(const void * p, CUtensorMapDataType t, int es, long rows, long cols, unsigned box0, CUtensorMapSwizzle sw) {
    CUtensorMap m;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)cols * es};
    cuuint32_t box[2] = {box0, 128}, el[2] = {1, 1};
    const CUresult r = cuTensorMapEncodeTiled(&m, t, 2, (void *)p, dims, strides, box, el, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("cuTensorMapEncodeTiled: %d\n", (int)r);
        exit(1);
    }
    return m;
}
// f16 [rows][cols] in boxes of BK x 128 (128-byte swizzle: the stage layout).
static CUtensorMap map_2d(const void * p, long rows, long cols) {
    return map_tiles(p, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, rows, cols, BK, CU_TENSOR_MAP_SWIZZLE_128B);
}
// Quantized rows as u16 [rows][row_bytes / 2] in boxes of gb bytes x 128 (no swizzle).
static CUtensorMap map_rows(const void * p, long rows, long row_bytes, int gb) {
    return map_tiles(p, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, rows, row_bytes / 2, gb / 2, CU_TENSOR_MAP_SWIZZLE_NONE);
}
// f32 [rows][cols] in boxes of 32 (128 bytes) x 128, 128-byte swizzle.
static CUtensorMap map_2d_f32(const void * p, long rows, long cols) {
    return map_tiles(p, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, rows, cols, 32, CU_TENSOR_MAP_SWIZZLE_128B);
}
#else // the -ptx compile check with an older toolkit's headers
static CUtensorMap map_2d(const void *, long, long) { return CUtensorMap{}; }
static CUtensorMap map_rows(const void *, long, long, int) { return CUtensorMap{}; }
static CUtensorMap map_2d_f32(const void *, long, long) { return CUtensorMap{}; }
#endif

template <int AT, bool BT, int NS, int PW = 1, int FW = 0> static void prepare() {
    CK(cudaFuncSetAttribute(wg_gemm<AT, BT, NS, PW, FW>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_of<AT, NS>()));
}

int main() {
    const long xs4 = (long)K / 32 * 18, xs8 = (long)K / 32 * 34;
    unsigned char *x4, *x8;
    float *y, *c;
    __half *yh, *yt, *a4, *a8;
    CK(cudaMalloc(&x4, xs4 * M));
    CK(cudaMalloc(&x8, xs8 * M));
    CK(cudaMalloc(&y, (long)K * N * 4));
    CK(cudaMalloc(&yh, (long)K * N * 2));
    CK(cudaMalloc(&yt, (long)K * N * 2));
    CK(cudaMalloc(&a4, (long)K * M * 2));
    CK(cudaMalloc(&a8, (long)K * M * 2));
    CK(cudaMalloc(&c, (long)M * N * 4));
    fill_bytes<<<1024, 256>>>(x4, xs4 * M, 17);
    fix_scales<<<1024, 256>>>(x4, xs4 * M / 18, 18, 0, 0.001f, 0.01f, 5);
    fill_bytes<<<1024, 256>>>(x8, xs8 * M, 19);
    fix_scales<<<1024, 256>>>(x8, xs8 * M / 34, 34, 0, 0.0001f, 0.001f, 7);
    fill_f32<<<1024, 256>>>(y, (long)K * N, 3);
    CK(cudaDeviceSynchronize());
    tree_path tp;
    auto dequant = [&](cudaStream_t st, bool q8) { tp.dequant(st, q8 ? a8 : a4, q8 ? (void *)x8 : (void *)x4, M, K, q8); };
    auto convert = [&](cudaStream_t st) { tp.convert(st, y, yh, (long)K * N); };
    auto convert_tiled = [&](cudaStream_t st) { cvt_tiled<<<cvt_tiled_grid(K, N / BN), 256, 0, st>>>(y, K, yt, N, K, N / BN); };
    auto gemm = [&](cudaStream_t st, const __half * a) { tp.gemm(st, a, yh, c, M, N, K); };
    prepare<A_F16, false, 6>();
    CK(cudaFuncSetAttribute(wg_f16f32<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_f16f32<4>()));
    CK(cudaFuncSetAttribute(wg_f16f32<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_f16f32<3>()));
    prepare<A_F16, true, 6>();
    prepare<A_F16, false, 4>();
    prepare<A_F16, false, 7>();
    prepare<A_Q4_0, false, 5>();
    prepare<A_Q4_0, true, 5>();
    prepare<A_Q4_0, true, 4>();
    prepare<A_Q8_0, true, 4>();
    prepare<A_Q8_0, false, 4>();
    prepare<A_Q4_0, true, 5, 2>();
    prepare<A_Q4_0, true, 4, 1, 1>();
    prepare<A_Q8_0, true, 4, 1, 1>();
    prepare<A_Q4_0, true, 3>();
    prepare<A_Q8_0, true, 3>();
    prepare<A_Q8_0, true, 4, 2>();
    const CUtensorMap tmA4 = map_2d(a4, M, K), tmB = map_2d(yh, N, K), tmQ4 = map_rows(x4, M, xs4, 144), tmQ8 = map_rows(x8, M, xs8, 272);
    const dim3 grid((M / BM) * (N / BN));
#define WG(AT, BT, NS, XQ, XS) [&](cudaStream_t st) { wg_gemm<AT, BT, NS><<<grid, 416, smem_of<AT, NS>(), st>>>(tmA4, tmB, XQ == x8 ? tmQ8 : tmQ4, XQ, yt, c, XS); }
#define WGF(AT, NS, XQ, XS) [&](cudaStream_t st) { wg_gemm<AT, true, NS, 1, 1><<<grid, 512, smem_of<AT, NS>(), st>>>(tmA4, tmB, tmQ4, XQ, yt, c, XS); }
#define WG2(AT, NS, XQ, XS) [&](cudaStream_t st) { wg_gemm<AT, true, NS, 2><<<grid, 544, smem_of<AT, NS>(), st>>>(tmA4, tmB, XQ == x8 ? tmQ8 : tmQ4, XQ, yt, c, XS); }
    std::vector<float> ref4((long)M * N), ref8((long)M * N), got((long)M * N);
    auto check = [&](auto f, const std::vector<float> & ref) {
        CK(cudaMemset(c, 0xff, (long)M * N * 4));
        f((cudaStream_t)0);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
        return nmse(got, ref);
    };
    auto tree = [&](cudaStream_t st, bool q8) {
        dequant(st, q8);
        convert(st);
        gemm(st, q8 ? a8 : a4);
    };
    for (int q8 = 0; q8 < 2; q8++) {
        tree(0, q8);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy((q8 ? ref8 : ref4).data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
    }
    convert_tiled(0);
    CK(cudaDeviceSynchronize());
    const double flop = 2.0 * M * N * K;
    printf("m=%d k=%d n=%d: q4_0 %.1f MB, q8_0 %.1f MB, as f16 %.1f MB; %d quantized group buffers\n", M, K, N, xs4 * M / 1e6,
           xs8 * M / 1e6, 2.0 * M * K / 1e6, RAW);
    auto row = [&](const char * name, auto f, const std::vector<float> & ref) {
        const double e = check(f, ref);
        const float us = timeit(f, ITERS);
        printf("%-44s %8.2f us %5.0f TFLOP/s  nmse %.2e\n", name, us, flop / us / 1e6, e);
    };
    row("cublasGemmEx f16 (q4_0 dequantized)", [&](cudaStream_t st) { gemm(st, a4); }, ref4);
    row("wg<f16> tma B, 6 stages", WG(A_F16, false, 6, nullptr, 0), ref4);
    row("wg<f16> tiled B, 6 stages", WG(A_F16, true, 6, nullptr, 0), ref4);
    const CUtensorMap tmBf = map_2d_f32(y, N, K);
    auto f16f32_4 = [&](cudaStream_t st) { wg_f16f32<4><<<grid, 416, smem_f16f32<4>(), st>>>(tmA4, tmBf, c); };
    auto f16f32_3 = [&](cudaStream_t st) { wg_f16f32<3><<<grid, 416, smem_f16f32<3>(), st>>>(tmA4, tmBf, c); };
    row("wg<f16 x f32>: src1 converted inside, 4 stages", f16f32_4, ref4);
    row("wg<f16 x f32>: src1 converted inside, 3 stages", f16f32_3, ref4);
    row("tree f16: to_f16 + cublasGemmEx", [&](cudaStream_t st) { convert(st); gemm(st, a4); }, ref4);
    row("cvt_tiled + wg<f16> tiled B, 6 stages", [&](cudaStream_t st) { convert_tiled(st); WG(A_F16, true, 6, nullptr, 0)(st); }, ref4);
    row("wg<q4_0> tma B, 5 stages", WG(A_Q4_0, false, 5, x4, xs4), ref4);
    row("wg<q4_0> tiled B, 5 stages", WG(A_Q4_0, true, 5, x4, xs4), ref4);
    row("wg<q4_0> tiled B, 4 stages", WG(A_Q4_0, true, 4, x4, xs4), ref4);
    row("wg<q8_0> tma B, 4 stages", WG(A_Q8_0, false, 4, x8, xs8), ref8);
    row("wg<q4_0> tiled B, 3 stages", WG(A_Q4_0, true, 3, x4, xs4), ref4);
    row("wg<q8_0> tiled B, 3 stages", WG(A_Q8_0, true, 3, x8, xs8), ref8);
    row("wg<q4_0> tiled B, 4 stages, rows by cp.async", WGF(A_Q4_0, 4, x4, xs4), ref4);
    row("wg<q8_0> tiled B, 4 stages, rows by cp.async", WGF(A_Q8_0, 4, x8, xs8), ref8);
    row("wg<q8_0> tiled B, 4 stages", WG(A_Q8_0, true, 4, x8, xs8), ref8);
    row("src1 -> f16 (to_f16)", convert, ref4);
    row("src1 -> f16 tiled (cvt_tiled)", convert_tiled, ref4);
    row("tree q4_0: dq + convert + gemm", [&](cudaStream_t st) { tree(st, false); }, ref4);
    row("cvt_tiled + wg<q4_0> tiled, 5 stages", [&](cudaStream_t st) { convert_tiled(st); WG(A_Q4_0, true, 5, x4, xs4)(st); }, ref4);
    row("cvt_tiled + wg<q4_0> tiled, 4 stages", [&](cudaStream_t st) { convert_tiled(st); WG(A_Q4_0, true, 4, x4, xs4)(st); }, ref4);
    row("cvt_tiled + wg<q4_0>, rows by cp.async", [&](cudaStream_t st) { convert_tiled(st); WGF(A_Q4_0, 4, x4, xs4)(st); }, ref4);
    row("tree q8_0: dq + convert + gemm", [&](cudaStream_t st) { tree(st, true); }, ref8);
    row("cvt_tiled + wg<q8_0>, rows by cp.async", [&](cudaStream_t st) { convert_tiled(st); WGF(A_Q8_0, 4, x8, xs8)(st); }, ref8);
    row("cvt_tiled + wg<q8_0> tiled, 4 stages", [&](cudaStream_t st) { convert_tiled(st); WG(A_Q8_0, true, 4, x8, xs8)(st); }, ref8);
    return 0;
}
