// wgq.cu - a standalone nvcc program (sm_90a): the form of wgmma.cu's
// quantized gemm that needs no tensor map, for any m, n and k a multiple of
// 256, as core would launch it for MUL_MAT of q4_0 / q8_0 weights by more than
// 8 columns, checked and timed against the tree's path (dq -> f16, src1 ->
// f16, cublasGemmEx) over a sweep of shapes.
//
//   cvt_tiled  (wgmma.cuh) src1 f32 [n][k] (row stride ldx) -> f16 in the gemm's B stage
//              order: tile (n-tile, k-tile) of 128 x 64 values at
//              ((n-tile · k/64) + k-tile) · 16 KB, row r's chunk c (8 values)
//              at r·128 + (c ^ (r & 7))·16 bytes; rows past n are zeros
//   wgq<q>     dst [n][m] f32 (column stride ldc) = src0 (q, rows of
//              a_row_bytes) · B; 512 threads: warpgroup 0 expands each
//              k-tile's rows into the A stage (fence, arrive), 1 and 2 multiply
//              (wgmma m64n128k16), 3 fetches: its warp 0 one 16 KB bulk copy of
//              B a stage, warps 1..3 the rows 8 blocks (4 k-tiles) ahead by
//              16-byte cp.async counted on the group's mbarrier (no thread that
//              fences has a copy in flight: wgmma.cu run A); 4 stages (run F);
//              rows past m are not copied and their results not stored
//
// Build and run (device tool, repo root; CUDA 12+):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/wgq \
//       bench/experiments/wgq.cu -lcublas && /tmp/wgq
#include "quant.cu"
#include "harness.cuh"
#include "wgmma.cuh"


constexpr int WQ_STAGES = 4, WQ_THREADS = 512;

template <int AT> __host__ __device__ constexpr int wgq_smem() { return smem_of<AT, WQ_STAGES>(); }

template <int AT>
__global__ void __launch_bounds__(WQ_THREADS, 1)
    wgq(float * C, long ldc, const unsigned char * Aq, long a_row_bytes, const __half * Bt, int M, int N, int K) {
    constexpr int S = WQ_STAGES, GB = group_of<AT>::BYTES, NQ = GB / 16;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[S], empty[S], rawfull[RAW], rawempty[RAW];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u, raw = base + S * STAGE;
    const int tid = threadIdx.x, wg = tid >> 7, t = tid & 127, warp = tid >> 5, l = tid & 31;
    const int mt = (M + BM - 1) / BM, m0 = (int)(blockIdx.x % mt) * BM, nt = (int)(blockIdx.x / mt), n0 = nt * BN;
    const int T = K / BK, G = T / 4, rows = min(BM, M - m0);
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            mbar_init(smem_u32(&full[s]), 128 + 1); // the producers, and warp 12's arrival expecting B's bytes
            mbar_init(smem_u32(&empty[s]), 8);      // lane 0 of each consumer warp
        }
        for (int r = 0; r < RAW; r++) {
            mbar_init(smem_u32(&rawfull[r]), 96);   // each lane of warps 13..15 (cp.async.mbarrier.arrive.noinc)
            mbar_init(smem_u32(&rawempty[r]), 128); // the producers, once they hold the group in registers
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 3) {
        if (warp == 12) {
            for (int kt = 0; kt < T; kt++) {
                const int s = kt % S;
                if (kt >= S) mbar_wait(smem_u32(&empty[s]), ((kt / S) - 1) & 1);
                if (l == 0) {
                    const unsigned f = smem_u32(&full[s]);
                    mbar_arrive_tx(f, TILE_B);
                    bulk_copy(base + s * STAGE + TILE_A, Bt + ((long)nt * T + kt) * (BN * BK), TILE_B, f);
                }
                __syncwarp();
            }
            return;
        }
        for (int g = 0; g < G; g++) {
            const int r = g % RAW;
            if (g >= RAW) mbar_wait(smem_u32(&rawempty[r]), ((g / RAW) - 1) & 1);
            for (int q = (warp - 13) * 32 + l; q < 128 * NQ; q += 96) {
                const int row = q / NQ, ch = q % NQ;
                if (row < rows) {
                    cp16(raw + r * (128 * GB) + row * GB + ch * 16, Aq + (long)(m0 + row) * a_row_bytes + (long)g * GB + ch * 16);
                }
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(&rawfull[r])) : "memory");
        }
        return;
    }
    if (wg == 0) {
        wg_expand<AT, S, 1>(base, raw, full, empty, rawfull, rawempty, G, t, 0);
        return;
    }
    wg_consume<S>(base, full, empty, T, wg - 1, t, C, ldc, m0, n0, M, N);
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
    CK(cudaFuncSetAttribute(wgq<A_Q4_0>, cudaFuncAttributeMaxDynamicSharedMemorySize, wgq_smem<A_Q4_0>()));
    CK(cudaFuncSetAttribute(wgq<A_Q8_0>, cudaFuncAttributeMaxDynamicSharedMemorySize, wgq_smem<A_Q8_0>()));
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
            auto fused = [&](cudaStream_t st) {
                cvt_tiled<<<cvt_tiled_grid(K, NT), 256, 0, st>>>(y, K, yt, N, K, NT);
                const dim3 grid((unsigned)(((M + BM - 1) / BM) * NT));
                if (q8) {
                    wgq<A_Q8_0><<<grid, WQ_THREADS, wgq_smem<A_Q8_0>(), st>>>(c, M, x, xs, yt, M, N, K);
                } else {
                    wgq<A_Q4_0><<<grid, WQ_THREADS, wgq_smem<A_Q4_0>(), st>>>(c, M, x, xs, yt, M, N, K);
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
            printf("%s m=%5d k=%5d n=%4d  tree %8.2f us  cvt_tiled+wgq %8.2f us (%4.0f TFLOP/s, %+5.1f %%)  nmse %.2e\n", q8 ? "q8_0" : "q4_0",
                   M, K, N, tt, tf, flop / tf / 1e6, 100.0 * (tf - tt) / tt, e);
        }
    }
    return 0;
}
