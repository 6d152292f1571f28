// gemm90.cu - MUL_MAT of q4_0 / q8_0 / q4_K weights by many f32 columns on Hopper's
// warpgroup tensor cores (wgmma, NVIDIA sm_90a only), the weights expanded to
// f16 inside the gemm instead of dequantized into a temporary first.
//
//   gemm90_b_f32  src1 f32 [n][k] (rows packed, 16-byte aligned) -> f16 in the
//                 gemm's B stage order: tile (n-tile, k-tile) of 128 x 64
//                 values at ((n-tile · k/64) + k-tile) · 16 KB, row r's chunk c
//                 (8 values) at r·128 + (c ^ (r & 7))·16 bytes (the 128-byte
//                 swizzle wgmma's descriptors read); rows past n up to the
//                 next multiple of 128 are zeros. One chunk a thread.
//   gemm90_{q}    dst f32 [n][m] = src0 ({q}, [m][k], k % 256 == 0) · bᵀ: block
//                 b computes the 128 x 128 tile (m-tile b % mt, n-tile b / mt);
//                 512 threads, four warpgroups: 0 expands each k-tile's 128
//                 rows into the A stage ((q - 8)·d, q·d or (d·sc)·q - dmin·m
//                 rounded once to f16: bit-identical to dequantizing to f16
//                 first), fences the
//                 async proxy and arrives; 1 and 2 multiply (wgmma m64n128k16
//                 from 128-byte-swizzled shared memory, one commit group a
//                 k-tile); 3 fetches: its warp 0 one 16 KB bulk copy of B a
//                 stage, warps 1..3 the quantized rows a group of 256
//                 values (8 blocks of 32, or one q4_K block; 4 k-tiles) ahead by 16-byte cp.async counted on the
//                 group's mbarrier (a thread that fences never has a copy in
//                 flight: fence.proxy.async waits for them all). 4 stages,
//                 2 group buffers; rows past m are not read, results past m
//                 or n not stored. GEMM90_SHARED(group bytes) of dynamic
//                 shared memory (core/ops' gemm90Shared).
//
// bench/experiments/wgq.cu is the standalone form this was measured as
// (bench/README.md, session 26). The family is sm_90a code: kernels/internal/gen
// does not prebuild it, the run-time compiler builds it for compute capability
// 9.0 (kernels.Family.ArchSpecific), and built for any other target the
// kernels trap, so a launch there is an error, never a silent no-op.
#include "vendor.h"

#if defined(TERNION_VENDOR_CUDA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TERNION_GEMM90 1
#else
#define TERNION_GEMM90 0
#endif

#define GEMM90_BM 128
#define GEMM90_BN 128
#define GEMM90_BK 64
#define GEMM90_STAGES 4
#define GEMM90_RAW 2
#define GEMM90_THREADS 512
#define GEMM90_TILE_A (GEMM90_BM * GEMM90_BK * 2)
#define GEMM90_TILE_B (GEMM90_BN * GEMM90_BK * 2)
#define GEMM90_STAGE (GEMM90_TILE_A + GEMM90_TILE_B)
// The dynamic shared memory of gemm90_{q}: the stages, the group buffers of
// 128 rows of gb bytes, and 1024 bytes to align the stages to 1024.
#define GEMM90_SHARED(gb) (GEMM90_STAGES * GEMM90_STAGE + GEMM90_RAW * 128 * (gb) + 1024)

// g90_q4_0, g90_q8_0 and g90_q4_K are the weight formats: the bytes of a
// row's group of 256 values (4 k-tiles): 8 blocks of 32, or one q4_K block.
struct g90_q4_0 {
    static constexpr int GROUP = 144;
};
struct g90_q8_0 {
    static constexpr int GROUP = 272;
};
struct g90_q4_K {
    static constexpr int GROUP = 144;
};

#if TERNION_GEMM90

static __device__ __forceinline__ void g90_mbar_init(unsigned a, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}
static __device__ __forceinline__ void g90_arrive(unsigned a) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(a) : "memory");
}
// One bulk copy of bytes (a multiple of 16) from global src to shared dst,
// expected and counted on mbarrier bar.
static __device__ __forceinline__ void g90_bulk(unsigned dst, const void * src, unsigned bytes, unsigned bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}
static __device__ __forceinline__ uint4 g90_ld4(unsigned a) {
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) : "memory");
    return v;
}

// The descriptor of a K-major operand in a 128-byte-swizzled stage: rows of
// 64 f16 (128 bytes), 8-row groups 1024 bytes apart, start address a
// (1024-aligned tile base plus 32 bytes a k16 step).
static __device__ __forceinline__ unsigned long long g90_desc(unsigned a) {
    return (unsigned long long)((a & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// d (64 f32 accumulators of an m64n128 tile) += A (64 x 16, desc a) · Bᵀ (128 x 16, desc b).
static __device__ __forceinline__ void g90_mma(float * d, unsigned long long a, unsigned long long b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
                   "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
                   "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
                   "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
                   "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
                   "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
                   "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
                   "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(1));
}

#endif

// The expansion of a group's blocks into f16 stage rows: CUDA code in every
// pass (declared for nvcc's host pass too, so bench/experiments/wgmma.cuh's
// templates can call it), emitted only where a kernel built for sm_90a uses
// it.
#if defined(TERNION_VENDOR_CUDA)
static __device__ __forceinline__ void g90_st4(unsigned a, unsigned x, unsigned y, unsigned z, unsigned w) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

// (t - off) · d on the f16 pairs of words, each step rounded once (.rn:
// never contracted), as the seed's dequantize computes each value.
static __device__ __forceinline__ unsigned g90_scale(unsigned t, unsigned off, unsigned d) {
    unsigned r;
    asm("{\nsub.rn.f16x2 %0, %1, %2;\nmul.rn.f16x2 %0, %0, %3;\n}\n" : "=r"(r) : "r"(t), "r"(off), "r"(d));
    return r;
}

// Word i (compile-time) of an array of uint4.
static __device__ __forceinline__ unsigned g90_word(const uint4 * c, int i) {
    const uint4 v = c[i >> 2];
    return (i & 3) == 0 ? v.x : (i & 3) == 1 ? v.y : (i & 3) == 2 ? v.z : v.w;
}

// The scale (f16 in both halves) and the NW words of quantized values of the
// block at byte o (compile-time) of the group in c (2-byte scale first).
template <int NW> static __device__ __forceinline__ unsigned g90_block(const uint4 * c, int o, unsigned * q) {
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

// Four low (HI false) or high nibbles of word w as (q - 8)·d in f16: the f16
// pairs of values (b0, b1) and (b2, b3).
template <bool HI> static __device__ __forceinline__ uint2 g90_nib4(unsigned w, unsigned d) {
    unsigned t0 = __byte_perm(w, 0, 0x4140), t1 = __byte_perm(w, 0, 0x4342);
    if (HI) {
        t0 >>= 4, t1 >>= 4;
    }
    t0 = (t0 & 0x000F000Fu) | 0x64006400u, t1 = (t1 & 0x000F000Fu) | 0x64006400u; // 1024 + q
    return make_uint2(g90_scale(t0, 0x64086408u, d), g90_scale(t1, 0x64086408u, d)); // - 1032 = q - 8
}

// Four int8 of word w as q·d in f16: the pairs of bytes (0, 1) and (2, 3).
static __device__ __forceinline__ uint2 g90_i8x4(unsigned w, unsigned d) {
    w ^= 0x80808080u; // q + 128, unsigned
    const unsigned t0 = __byte_perm(w, 0x64646464u, 0x5140), t1 = __byte_perm(w, 0x64646464u, 0x7362); // 1024 + q + 128
    return make_uint2(g90_scale(t0, 0x64806480u, d), g90_scale(t1, 0x64806480u, d));                 // - 1152
}

// Block b (compile-time, 0..7) of the group in c written as f16 chunks (8
// values, 16 bytes) pos0 … pos0+3 of row r of the A stage at as (swizzled).
static __device__ __forceinline__ void g90_expand(g90_q4_0, const uint4 * c, int b, unsigned as, int r, int pos0) {
    unsigned q[4];
    const unsigned d = g90_block<4>(c, 18 * b, q);
#pragma unroll
    for (int ch = 0; ch < 4; ch++) {
        // chunk 0: low nibbles of bytes 0..7 (values 0..7), 1: of bytes 8..15, 2, 3: the high nibbles (values 16..31)
        const unsigned w0 = q[(ch & 1) * 2], w1 = q[(ch & 1) * 2 + 1];
        const uint2 a = ch < 2 ? g90_nib4<false>(w0, d) : g90_nib4<true>(w0, d);
        const uint2 e = ch < 2 ? g90_nib4<false>(w1, d) : g90_nib4<true>(w1, d);
        g90_st4(as + r * 128 + (((pos0 + ch) ^ (r & 7)) << 4), a.x, a.y, e.x, e.y);
    }
}
static __device__ __forceinline__ void g90_expand(g90_q8_0, const uint4 * c, int b, unsigned as, int r, int pos0) {
    unsigned q[8];
    const unsigned d = g90_block<8>(c, 34 * b, q);
#pragma unroll
    for (int ch = 0; ch < 4; ch++) {
        const uint2 a = g90_i8x4(q[2 * ch], d), e = g90_i8x4(q[2 * ch + 1], d);
        g90_st4(as + r * 128 + (((pos0 + ch) ^ (r & 7)) << 4), a.x, a.y, e.x, e.y);
    }
}

// Byte o (compile-time) of the group in c.
static __device__ __forceinline__ unsigned g90_byte(const uint4 * c, int o) { return (g90_word(c, o >> 2) >> (8 * (o & 3))) & 0xffu; }

// Nibble byte i (compile-time) of word x (nibbles already in the low halves
// of its bytes) as d1·q - m1, the product exact in f32 and the difference
// rounded once (as the seed's dequantize, contracted or not): q is the
// float 2^23 + q (byte i under exponent byte 0x4B) minus 2^23.
static __device__ __forceinline__ float g90_k4(unsigned x, int i, float d1, float m1) {
    return __fmaf_rn(d1, __uint_as_float(__byte_perm(x, 0x4B000000u, 0x7650u | i)) - 8388608.0f, -m1);
}

// Sub-block b (compile-time, 0..7: 32 values) of the q4_K block in c (d,
// dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles: values of
// sub-block b in the low (b even) or high nibbles of bytes 32·(b/2) …) as
// f16 chunks pos0 … pos0+3 of row r of the A stage at as: (d·sc)·q -
// dmin·m in f32 (ggml's get_scale_min_k4 for sc, m), rounded once to f16.
static __device__ __forceinline__ void g90_expand(g90_q4_K, const uint4 * c, int b, unsigned as, int r, int pos0) {
    const unsigned dm = g90_word(c, 0);
    unsigned sc, m;
    if (b < 4) {
        sc = g90_byte(c, 4 + b) & 63, m = g90_byte(c, 8 + b) & 63;
    } else {
        sc = (g90_byte(c, 8 + b) & 15) | ((g90_byte(c, b) >> 6) << 4), m = (g90_byte(c, 8 + b) >> 4) | ((g90_byte(c, 4 + b) >> 6) << 4);
    }
    const float d1 = ternion_f16_to_f32((ternion_f16)(dm & 0xffffu)) * (float)sc, m1 = ternion_f16_to_f32((ternion_f16)(dm >> 16)) * (float)m;
#pragma unroll
    for (int ch = 0; ch < 4; ch++) {
        unsigned x[2] = {g90_word(c, 4 + 8 * (b >> 1) + 2 * ch), g90_word(c, 5 + 8 * (b >> 1) + 2 * ch)};
        unsigned h[4];
#pragma unroll
        for (int j = 0; j < 2; j++) {
            x[j] = ((b & 1) ? x[j] >> 4 : x[j]) & 0x0F0F0F0Fu;
            asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(h[2 * j]) : "f"(g90_k4(x[j], 0, d1, m1)), "f"(g90_k4(x[j], 1, d1, m1)));
            asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(h[2 * j + 1]) : "f"(g90_k4(x[j], 2, d1, m1)), "f"(g90_k4(x[j], 3, d1, m1)));
        }
        g90_st4(as + r * 128 + (((pos0 + ch) ^ (r & 7)) << 4), h[0], h[1], h[2], h[3]);
    }
}
#endif

// The multiplying warpgroups' part: thread t of the warpgroup for rows wm …
// wm + 63 of the tile multiplies them in each of the T k-tiles' stages (S of
// them at base, filled when full[s] completes) by B's 128 rows (wgmma
// m64n128k16, one commit group a k-tile; a stage released on empty[s] once the
// next tile's group is issued), then stores the 64 x 128 results into C
// [n][m] (column stride ldc) where row < M and column < N.
template <int S>
static __device__ __forceinline__ void g90_consume(unsigned base, unsigned long long * full, unsigned long long * empty, int T, int wm,
                                                   int t, float * C, long long ldc, int m0, int n0, int M, int N) {
#if TERNION_GEMM90
    const int w = t >> 5, l = t & 31;
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++) d[i] = 0.0f;
    for (int kt = 0; kt < T; kt++) {
        const int s = kt % S;
        ternion_mbar_wait(ternion_smem_u32(&full[s]), (kt / S) & 1);
        const unsigned as = base + s * GEMM90_STAGE + wm * 128, bs = base + s * GEMM90_STAGE + GEMM90_TILE_A;
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < 4; kk++) g90_mma(d, g90_desc(as + kk * 32), g90_desc(bs + kk * 32));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        if (kt > 0 && l == 0) g90_arrive(ternion_smem_u32(&empty[(kt - 1) % S]));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    const int r0 = m0 + wm + w * 16 + (l >> 2);
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int n = n0 + j * 8 + (l & 3) * 2;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int row = r0 + (e >> 1) * 8, col = n + (e & 1);
            if (row < M && col < N) C[(long long)col * ldc + row] = d[4 * j + e];
        }
    }
#else
    (void)base, (void)full, (void)empty, (void)T, (void)wm, (void)t, (void)C, (void)ldc, (void)m0, (void)n0, (void)M, (void)N;
#endif
}

// src1 (f32, rows of k packed, 16-byte aligned) into bt in the B stage order.
extern "C" __global__ void gemm90_b_f32(void * bt, ternion_tensor src1, ternion_i64 chunks) {
    TERNION_KERNEL_ENTRY();
#if TERNION_GEMM90
    const ternion_i64 q = TERNION_TID(); // chunk: column n = q / (k/8), values 8 (q % (k/8)) ...
    if (q >= chunks) return;
    const ternion_i64 K = src1.ne[0], N = src1.ne[1], kc = K / 8;
    const ternion_i64 n = q / kc, k = (q - n * kc) * 8;
    float4 a = make_float4(0, 0, 0, 0), b = a;
    if (n < N) {
        const float * x = (const float *)((const char *)src1.data + n * src1.nb[1]) + k;
        a = *(const float4 *)x, b = *(const float4 *)(x + 4);
    }
    const int r = (int)(n % GEMM90_BN), c = (int)((k % GEMM90_BK) / 8);
    const ternion_i64 o = ((n / GEMM90_BN) * (K / GEMM90_BK) + k / GEMM90_BK) * (GEMM90_BN * GEMM90_BK) + r * GEMM90_BK + ((c ^ (r & 7)) * 8);
    uint4 v;
    asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(v.x) : "f"(a.x), "f"(a.y));
    asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(v.y) : "f"(a.z), "f"(a.w));
    asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(v.z) : "f"(b.x), "f"(b.y));
    asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(v.w) : "f"(b.z), "f"(b.w));
    *(uint4 *)((ternion_f16 *)bt + o) = v;
#elif defined(TERNION_VENDOR_CUDA)
    __trap();
#endif
}

// dst [n][m] = src0 ({Q}) · bᵀ, one 128 x 128 tile a block (see the top).
template <typename Q> static __device__ __forceinline__ void gemm90_q(ternion_tensor dst, ternion_tensor src0, const void * bt) {
#if TERNION_GEMM90
    const unsigned char * B = (const unsigned char *)bt;
    constexpr int S = GEMM90_STAGES, RAW = GEMM90_RAW, GB = Q::GROUP, NQ = GB / 16, BM = GEMM90_BM, BN = GEMM90_BN, BK = GEMM90_BK;
    extern __shared__ unsigned char g90_dyn[];
    __shared__ __align__(8) unsigned long long full[S], empty[S], rawfull[RAW], rawempty[RAW];
    const int M = (int)src0.ne[1], K = (int)src0.ne[0], N = (int)dst.ne[1];
    const unsigned char * Aq = (const unsigned char *)src0.data;
    const long long arow = src0.nb[1];
    const unsigned base = (ternion_smem_u32(g90_dyn) + 1023) & ~1023u, raw = base + S * GEMM90_STAGE;
    const int tid = threadIdx.x, wg = tid >> 7, t = tid & 127, warp = tid >> 5, l = tid & 31;
    const int mt = (M + BM - 1) / BM, m0 = (int)(blockIdx.x % mt) * BM, nt = (int)(blockIdx.x / mt), n0 = nt * BN;
    const int T = K / BK, G = T / 4, rows = min(BM, M - m0);
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            g90_mbar_init(ternion_smem_u32(&full[s]), 128 + 1); // the expanding threads, and warp 12's arrival expecting B's bytes
            g90_mbar_init(ternion_smem_u32(&empty[s]), 8);      // lane 0 of each multiplying warp
        }
        for (int r = 0; r < RAW; r++) {
            g90_mbar_init(ternion_smem_u32(&rawfull[r]), 96);   // each lane of warps 13..15 (cp.async.mbarrier.arrive.noinc)
            g90_mbar_init(ternion_smem_u32(&rawempty[r]), 128); // the expanding threads, once they hold the group in registers
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 3) {
        if (warp == 12) { // B: one bulk copy a stage
            for (int kt = 0; kt < T; kt++) {
                const int s = kt % S;
                if (kt >= S) ternion_mbar_wait(ternion_smem_u32(&empty[s]), ((kt / S) - 1) & 1);
                if (l == 0) {
                    g90_bulk(base + s * GEMM90_STAGE + GEMM90_TILE_A, B + ((long long)nt * T + kt) * GEMM90_TILE_B, GEMM90_TILE_B,
                             ternion_smem_u32(&full[s]));
                }
                __syncwarp();
            }
            return;
        }
        for (int g = 0; g < G; g++) { // the rows' groups, by 16-byte cp.async
            const int r = g % RAW;
            if (g >= RAW) ternion_mbar_wait(ternion_smem_u32(&rawempty[r]), ((g / RAW) - 1) & 1);
            for (int q = (warp - 13) * 32 + l; q < 128 * NQ; q += 96) {
                const int row = q / NQ, ch = q % NQ;
                if (row < rows) {
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(raw + r * (128 * GB) + row * GB + ch * 16),
                                 "l"(Aq + (long long)(m0 + row) * arow + (long long)g * GB + ch * 16)
                                 : "memory");
                }
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ternion_smem_u32(&rawfull[r])) : "memory");
        }
        return;
    }
    if (wg == 0) { // expand row t of every k-tile
        for (int g = 0; g < G; g++) {
            const int r = g % RAW;
            ternion_mbar_wait(ternion_smem_u32(&rawfull[r]), (g / RAW) & 1);
            uint4 cur[NQ];
#pragma unroll
            for (int i = 0; i < NQ; i++) cur[i] = g90_ld4(raw + r * (128 * GB) + t * GB + 16 * i);
            g90_arrive(ternion_smem_u32(&rawempty[r]));
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int kt = 4 * g + u, s = kt % S;
                if (kt >= S) ternion_mbar_wait(ternion_smem_u32(&empty[s]), ((kt / S) - 1) & 1);
                const unsigned as = base + s * GEMM90_STAGE;
                g90_expand(Q(), cur, 2 * u, as, t, 0);
                g90_expand(Q(), cur, 2 * u + 1, as, t, 4);
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                g90_arrive(ternion_smem_u32(&full[s]));
            }
        }
        return;
    }
    // Warpgroups 1 and 2: rows 64 (wg - 1) … of the tile.
    g90_consume<S>(base, full, empty, T, (wg - 1) * 64, t, (float *)dst.data, dst.nb[1] / 4, m0, n0, M, N);
#elif defined(TERNION_VENDOR_CUDA)
    (void)dst, (void)src0, (void)bt;
    __trap();
#else
    (void)dst, (void)src0, (void)bt;
#endif
}
