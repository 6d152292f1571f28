// wgmma.cuh - what the standalone wgmma experiments (wgmma.cu, wgq.cu) share:
// the 128 x 128 x 64 tile geometry, mbarrier / copy / wgmma wrappers in
// inline PTX (sm_90a), the 128-byte-swizzled stage layout and its shared-memory
// descriptor, and the expansion of q4_0 / q8_0 blocks into f16 stage rows
// (bit-exact with the tree's dq: (q - 8) * d or q * d rounded once), the
// producers' and consumers' loops, and the tree's kernels for reference.
// Include after quant.cu and harness.cuh.
#pragma once
#include "gemm90.cu" // the product's kernels and its value expansion (g90_u8x4, g90_nibs, g90_i8x4)
#include <cuda_fp16.h>
#include <cublas_v2.h>
#include <cstdint>

#define CB(x) do { cublasStatus_t s = (x); if (s != CUBLAS_STATUS_SUCCESS) { printf("%s:%d cublas %d\n", __FILE__, __LINE__, (int)s); exit(1); } } while (0)

constexpr int BM = 128, BN = 128, BK = 64;
constexpr int TILE_A = BM * BK * 2, TILE_B = BN * BK * 2, STAGE = TILE_A + TILE_B;
#ifndef WG_RAW
#define WG_RAW 2
#endif
constexpr int RAW = WG_RAW; // quantized group buffers (8 blocks, 4 k-tiles, of each of a tile's rows)


enum { A_F16 = 0, A_Q4_0 = 1, A_Q8_0 = 2 };

static __device__ __forceinline__ unsigned smem_u32(const void * p) { return ternion_smem_u32(p); }

static __device__ __forceinline__ void mbar_init(unsigned a, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}
static __device__ __forceinline__ void mbar_arrive(unsigned a) {
    unsigned long long st;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(a) : "memory");
}
static __device__ __forceinline__ void mbar_wait(unsigned a, unsigned parity) { ternion_mbar_wait(a, parity); }
static __device__ __forceinline__ void mbar_arrive_tx(unsigned a, unsigned bytes) {
    unsigned long long st;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(a), "r"(bytes) : "memory");
}
// bytes (a multiple of 16) from global src to shared dst on the async proxy, counted on mbarrier bar.
static __device__ __forceinline__ void bulk_copy(unsigned dst, const void * src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}
// The box at (c0, c1) of the 2D tensor map tm into shared dst, counted on mbarrier bar.
static __device__ __forceinline__ void tma_2d(unsigned dst, const void * tm, int c0, int c1, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"(tm), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}
static __device__ __forceinline__ void cp16(unsigned dst, const void * src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void fence_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
static __device__ __forceinline__ uint4 ld_shared_v4(unsigned a) {
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) : "memory");
    return v;
}
static __device__ __forceinline__ void st_shared_v4(unsigned a, uint4 v) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
static __device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int NPEND> static __device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(NPEND) : "memory"); }

// The descriptor of a K-major operand in a 128-byte-swizzled stage: rows of
// 64 f16 (128 bytes), 8-row groups 1024 bytes apart (SBO), start address a
// (1024-aligned tile base plus 32 bytes a k16 step).
static __device__ __forceinline__ unsigned long long desc_sw128(unsigned a) {
    return (unsigned long long)((a & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// d (64 f32 accumulators of an m64n128 tile) += A (64x16, desc a) . B^T (128x16, desc b)
static __device__ __forceinline__ void wgmma_m64n128k16(float * d, unsigned long long a, unsigned long long b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(1));
}

// Word i (compile-time) of an array of uint4.
static __device__ __forceinline__ unsigned g90_word(const uint4 * c, int i) {
    const uint4 v = c[i >> 2];
    return (i & 3) == 0 ? v.x : (i & 3) == 1 ? v.y : (i & 3) == 2 ? v.z : v.w;
}

// Four low (hi 0) or high (1) nibbles of word w as (q - 8)·d in f16: the
// f16 pairs of values (b0, b1) and (b2, b3).
static __device__ __forceinline__ uint2 g90_nib4(unsigned w, int hi, unsigned d) {
    const uint2 t = g90_u8x4(g90_nibs(w, hi));
    return make_uint2(g90_scale(t.x, 0x64086408u, d), g90_scale(t.y, 0x64086408u, d)); // - 1032 = q - 8
}

// The expansion of blocks into f16 stage rows (bit-exact with the tree's
// dq): session 27's product form (kernels/gemm90.cu until session 28, which
// expands into wgmma's register fragments instead), kept here for the
// experiments that measure it. The scale of block o (compile-time) of the
// group in c (2-byte scale first) in both halves, and its NW words of values.
template <int NW> static __device__ __forceinline__ unsigned st_block(const uint4 * c, int o, unsigned * q) {
    unsigned dw;
    if ((o & 3) == 0) {
        dw = g90_word(c, o >> 2) & 0xffffu;
#pragma unroll
        for (int j = 0; j < NW; j++) q[j] = __funnelshift_r(g90_word(c, (o >> 2) + j), g90_word(c, (o >> 2) + j + 1), 16);
    } else {
        dw = g90_word(c, o >> 2) >> 16;
#pragma unroll
        for (int j = 0; j < NW; j++) q[j] = g90_word(c, ((o + 2) >> 2) + j);
    }
    return dw | (dw << 16);
}

// Block b (compile-time, 0..7) of the group in c written as f16 chunks (8
// values, 16 bytes) pos0 … pos0+3 of row r of the A stage at as (swizzled).
static __device__ __forceinline__ void st_expand(g90_q4_0, const uint4 * c, int b, unsigned as, int r, int pos0) {
    unsigned q[4];
    const unsigned d = st_block<4>(c, 18 * b, q);
#pragma unroll
    for (int ch = 0; ch < 4; ch++) {
        // chunk 0: low nibbles of bytes 0..7 (values 0..7), 1: of bytes 8..15, 2, 3: the high nibbles (values 16..31)
        const unsigned w0 = q[(ch & 1) * 2], w1 = q[(ch & 1) * 2 + 1];
        const uint2 a = g90_nib4(w0, ch >= 2, d), e = g90_nib4(w1, ch >= 2, d);
        st_shared_v4(as + r * 128 + (((pos0 + ch) ^ (r & 7)) << 4), make_uint4(a.x, a.y, e.x, e.y));
    }
}
static __device__ __forceinline__ void st_expand(g90_q8_0, const uint4 * c, int b, unsigned as, int r, int pos0) {
    unsigned q[8];
    const unsigned d = st_block<8>(c, 34 * b, q);
#pragma unroll
    for (int ch = 0; ch < 4; ch++) {
        const uint2 a = g90_i8x4(q[2 * ch], d), e = g90_i8x4(q[2 * ch + 1], d);
        st_shared_v4(as + r * 128 + (((pos0 + ch) ^ (r & 7)) << 4), make_uint4(a.x, a.y, e.x, e.y));
    }
}

// Bytes of a row's group of 8 blocks (4 k-tiles) for A's formats.
template <int AT> struct group_of { static constexpr int BYTES = AT == A_Q8_0 ? 272 : 144; };
template <int AT, int NS> __host__ __device__ constexpr int smem_of() { return NS * STAGE + (AT == A_F16 ? 0 : RAW * 128 * group_of<AT>::BYTES) + 1024; }


// The producers' part: thread t of the producer warpgroup h (of PW)
// expands row t of every k-tile of the G groups (from the RAW group buffers
// at raw, GB bytes a row) into the A stage (with PW = 2, block h of the
// k-tile's two), then fences the async proxy and arrives on full.
template <int AT, int S, int PW>
static __device__ __forceinline__ void wg_expand(unsigned base, unsigned raw, unsigned long long * full, unsigned long long * empty,
                                                 unsigned long long * rawfull, unsigned long long * rawempty, int G, int t, int h) {
    constexpr int GB = group_of<AT>::BYTES, NQ = GB / 16;
    for (int g = 0; g < G; g++) {
        const int r = g % RAW;
        mbar_wait(smem_u32(&rawfull[r]), (g / RAW) & 1);
        uint4 cur[NQ];
#pragma unroll
        for (int i = 0; i < NQ; i++) cur[i] = ld_shared_v4(raw + r * (128 * GB) + t * GB + 16 * i);
        mbar_arrive(smem_u32(&rawempty[r]));
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int kt = 4 * g + u, s = kt % S;
            if (kt >= S) mbar_wait(smem_u32(&empty[s]), ((kt / S) - 1) & 1);
            const unsigned as = base + s * STAGE;
#pragma unroll
            for (int b = 0; b < 2; b++) {
                if (PW == 2 && b != h) continue;
                if (AT == A_Q4_0) {
                    st_expand(g90_q4_0(), cur, 2 * u + b, as, t, 4 * b);
                } else {
                    st_expand(g90_q8_0(), cur, 2 * u + b, as, t, 4 * b);
                }
            }
            fence_async();
            mbar_arrive(smem_u32(&full[s]));
        }
    }
}

// The consumers' part: consumer warpgroup c (0 or 1) multiplies rows
// 64c … 64c + 63 of each of the T k-tiles' stages by B's 128 rows and stores
// its 64 x 128 results into C [n][m] (column stride ldc) where row < M and
// column < N (session 27's product form): one commit group a k-tile, a
// stage released on empty once the next tile's group is issued.
template <int S>
static __device__ __forceinline__ void wg_consume(unsigned base, unsigned long long * full, unsigned long long * empty, int T, int c,
                                                  int t, float * C, long ldc, int m0, int n0, int M, int N) {
    const int w = t >> 5, l = t & 31, wm = c * 64;
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++) d[i] = 0.0f;
    for (int kt = 0; kt < T; kt++) {
        const int s = kt % S;
        mbar_wait(smem_u32(&full[s]), (kt / S) & 1);
        const unsigned as = base + s * STAGE + wm * 128, bs = base + s * STAGE + TILE_A;
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) wgmma_m64n128k16(d, desc_sw128(as + kk * 32), desc_sw128(bs + kk * 32));
        wg_commit();
        wg_wait<1>();
        if (kt > 0 && l == 0) mbar_arrive(smem_u32(&empty[(kt - 1) % S]));
    }
    wg_wait<0>();
    const int r0 = m0 + wm + w * 16 + (l >> 2);
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int n = n0 + j * 8 + (l & 3) * 2;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int row = r0 + (e >> 1) * 8, col = n + (e & 1);
            if (row < M && col < N) C[(long)col * ldc + row] = d[4 * j + e];
        }
    }
}

// The tree's path, for reference: its dequantize (kernels' dq_q4_0_f16,
// dq_q8_0_f16; include quant.cu first) and a plain f32 -> f16 conversion.
template <typename Q>
__global__ void dq_f16(ternion_tensor dst, ternion_tensor src, ternion_fastdiv groups, ternion_fastdiv ne1, ternion_fastdiv ne2,
                       ternion_i64 n) {
    dq<Q, ternion_f16>(dst, src, groups, ne1, ne2, n, nullptr);
}

__global__ void to_f16(const float * x, __half * y, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = __float2half(x[i]);
}

// src1 f32 [n][k] (row stride ldx) -> f16 in the gemms' B stage order: tile
// (n-tile, k-tile) of 128 x 64 values at ((n-tile · k/64) + k-tile) · 16 KB,
// row r's chunk c (8 values) at r·128 + (c ^ (r & 7))·16 bytes; rows past n
// (up to NT·128) are zeros. One chunk a thread: launch with cvt_tiled_grid.
__global__ void cvt_tiled(const float * x, long ldx, __half * y, int N, int K, int NT) {
    const long q = blockIdx.x * (long)blockDim.x + threadIdx.x; // chunk: n = q / (K/8), k = 8 (q % (K/8))
    if (q >= (long)NT * BN * (K / 8)) return;
    const int n = (int)(q / (K / 8)), k = (int)(q % (K / 8)) * 8;
    float4 a = make_float4(0, 0, 0, 0), b = a;
    if (n < N) {
        a = *(const float4 *)(x + (long)n * ldx + k), b = *(const float4 *)(x + (long)n * ldx + k + 4);
    }
    const __half2 h0 = __floats2half2_rn(a.x, a.y), h1 = __floats2half2_rn(a.z, a.w), h2 = __floats2half2_rn(b.x, b.y),
                  h3 = __floats2half2_rn(b.z, b.w);
    const int r = n % BN, c = (k % BK) / 8;
    const long o = ((long)(n / BN) * (K / BK) + k / BK) * (BN * BK) + r * BK + ((c ^ (r & 7)) * 8);
    *(uint4 *)(y + o) = make_uint4(*(const unsigned *)&h0, *(const unsigned *)&h1, *(const unsigned *)&h2, *(const unsigned *)&h3);
}
static unsigned cvt_tiled_grid(int K, int NT) { return (unsigned)(((long)NT * BN * (K / 8) + 255) / 256); }

// The tree's MUL_MAT of quantized weights by many columns, to check and time
// the gemms against: dq -> f16, src1 -> f16, cublasGemmEx (f16 in, f32 out
// and compute, as core/ops' runGemm), with cuBLAS's 32 MiB workspace.
struct tree_path {
    cublasHandle_t h;
    void * ws;
    tree_path() {
        CB(cublasCreate(&h));
        CK(cudaMalloc(&ws, 32 << 20));
        CB(cublasSetWorkspace(h, ws, 32 << 20));
    }
    ~tree_path() {
        cublasDestroy(h);
        cudaFree(ws);
    }
    // a (f16 [M][K]) = x (q8_0 or q4_0 rows of K values) as the tree's dq.
    void dequant(cudaStream_t st, __half * a, const void * x, int M, int K, bool q8) {
        const long bb = q8 ? 34 : 18, xs = (long)K / 32 * bb, n = (long)K * M / 8;
        ternion_tensor td = {a, {K, M, 1, 1}, {2, 2L * K, 2L * K * M, 2L * K * M}};
        ternion_tensor ts = {(void *)x, {K, M, 1, 1}, {bb, xs, xs * M, xs * M}};
        const unsigned g = (unsigned)std::min((n + 255) / 256, 65536L);
        if (q8) {
            dq_f16<ternion_q8_0><<<g, 256, 0, st>>>(td, ts, fastdiv(K / 8), fastdiv(M), fastdiv(1), n);
        } else {
            dq_f16<ternion_q4_0><<<g, 256, 0, st>>>(td, ts, fastdiv(K / 8), fastdiv(M), fastdiv(1), n);
        }
    }
    void convert(cudaStream_t st, const float * y, __half * yh, long n) {
        to_f16<<<(unsigned)std::min((n + 255) / 256, 65536L), 256, 0, st>>>(y, yh, n);
    }
    // c [N][M] f32 = a [M][K] · yh [N][K]^T.
    void gemm(cudaStream_t st, const __half * a, const __half * yh, float * c, int M, int N, int K) {
        const float one = 1.0f, zero = 0.0f;
        CB(cublasSetStream(h, st));
        CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, a, CUDA_R_16F, K, yh, CUDA_R_16F, K, &zero, c, CUDA_R_32F, M,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
};
