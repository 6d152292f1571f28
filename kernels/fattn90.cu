// fattn90.cu - FLASH_ATTN_EXT prefill on Hopper's warpgroup tensor cores
// (wgmma, NVIDIA sm_90a only) for f32 Q, f16 K/V and hsk = hsv = D (128 or
// 256): fattn_mma's online softmax with wgmma's tiles.
//
//   fattn90_d{D}  block (x, y, z) = queries 128x..128x+127 of q head y, batch
//                 z; 256 threads, two warpgroups of 64 queries each. Q (f16,
//                 pre-scaled) sits in shared memory for the whole KV loop;
//                 K, V and the mask come in 64-position tiles through two
//                 stages filled by 16-byte cp.async (the next tile's copies
//                 in flight while this tile is multiplied). Every operand
//                 tile is stored as wgmma's 128-byte-swizzled layout: chunks
//                 of 64 values a row (128 bytes), 16-byte unit u of row r at
//                 u ^ (r % 8), 8-row groups 1024 bytes apart. Per tile and
//                 warpgroup: S = Q·Kᵀ by D/16 wgmma m64n64k16 (both operands
//                 K-major from shared memory), the log2-unit online softmax
//                 in the accumulators' registers, P rounded to f16 as the A
//                 register fragment (the accumulator layout of S is the
//                 fragment layout of A), O += P·V by 4 wgmma m64n{D}k16 with
//                 V read MN-major (transposed) from the same layout as K.
//                 After a tile's copies land each thread fences the async
//                 proxy (wgmma reads shared memory through it) before the
//                 block barrier; no thread fences with copies in flight.
//                 FA90_SHARED(D) bytes of dynamic shared memory.
//
// bench/experiments/fa90.cu checks and times it against fattn_mma. Built for
// any target other than sm_90a the kernels trap, so a launch there is an
// error, never a silent no-op (kernels.Family.ArchSpecific).
#include "fattn.h"
#include "wgmma.h"

#if defined(TERNION_VENDOR_CUDA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TERNION_FATTN90 1
#else
#define TERNION_FATTN90 0
#endif

// Queries a block, positions a tile, threads a block.
#define FA90_BQ 128
#define FA90_BK 64
#define FA90_THREADS 256
// Dynamic shared memory of fattn90_d{D}: Q (D/64 chunks of 128 rows of 128
// bytes), two stages of K and two of V (D/64 chunks of 64 rows each), two
// mask tiles (128 rows of 64 halves), and 1024 bytes to align the base to
// the swizzle's period.
#define FA90_SHARED(D) (256 * (D) + 4 * 128 * (D) + 2 * FA90_BQ * 128 + 1024)

// The helpers: CUDA code in every pass (declared for nvcc's host pass too,
// so bench/experiments/fa90.cu's kernels can call them), emitted only where
// a kernel built for sm_90a uses them.
#if defined(TERNION_VENDOR_CUDA)

// Byte offset of 16-byte unit u (8 values) of row r in a swizzled tile of
// rows rows a chunk.
static __device__ __forceinline__ ternion_u32 fa90_off(int r, int u, int rows) {
    return (ternion_u32)((u / 8) * rows * 128 + r * 128 + (((u % 8) ^ (r % 8)) * 16));
}

static __device__ __forceinline__ void fa90_cp16(ternion_u32 s, const void * g, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(g), "r"(bytes) : "memory");
}

// d (32 f32 accumulators of an m64n64 tile) += A (64 x 16, desc a) · Bᵀ (64 x
// 16, desc b), both K-major; acc 0: d starts from zero.
static __device__ __forceinline__ void fa90_qk(float * d, unsigned long long a, unsigned long long b, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " TERNION_WG_R32 ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : TERNION_WG_F32
                 : "l"(a), "l"(b), "r"(acc));
}

// d (N/2 f32 accumulators of an m64nN tile) += A (64 x 16: the register
// fragment a[0..3]) · B (16 x N, desc b: an MN-major operand, transposed).
template <int N> struct fa90_n {};
static __device__ __forceinline__ void fa90_pv(fa90_n<128>, float * d, const ternion_u32 * a, unsigned long long b) {
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " TERNION_WG_R64 ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
                 : TERNION_WG_F64
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
static __device__ __forceinline__ void fa90_pv(fa90_n<256>, float * d, const ternion_u32 * a, unsigned long long b) {
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " TERNION_WG_R128 ", {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n"
                 : TERNION_WG_F128
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

static __device__ __forceinline__ void fa90_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void fa90_commit_wait() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

// Starts copying positions t1..t1+63 of K and V (rows past nkv read as
// zero; FULL: the tile has none) into stage st, and of the block's mask rows
// (rows past nrows and positions past nkv zero) when mb is set; one commit
// group. Thread i copies 16-byte unit i % U of the K/V rows i / U + RS·j and
// unit i % 8 of the mask rows i / 8 + 32·j: rows whole 8-row groups apart,
// so every copy's shared offset is its first's plus whole rows (the swizzle
// the same), and its address its first's plus whole strides.
template <int D, bool FULL>
static __device__ __forceinline__ void fa90_load(ternion_u32 aK, ternion_u32 aV, ternion_u32 aM, const char * kb, const char * vb,
                                                 ternion_i64 knb1, ternion_i64 vnb1, const char * mb, ternion_i64 mnb1, int nrows,
                                                 ternion_i64 t1, ternion_i64 nkv) {
    constexpr int U = D / 8, RS = FA90_THREADS / U; // 16-byte units a row, rows a pass
    const int r = threadIdx.x / U, u = threadIdx.x % U;
    const ternion_u32 so = fa90_off(r, u, FA90_BK);
    const char * kp = kb + (t1 + r) * knb1 + u * 16;
    const char * vp = vb + (t1 + r) * vnb1 + u * 16;
#pragma unroll
    for (int i = 0; i < FA90_BK / RS; i++) {
        const bool in = FULL || t1 + r + i * RS < nkv;
        fa90_cp16(aK + so + i * RS * 128, in ? kp : kb, in ? 16 : 0);
        fa90_cp16(aV + so + i * RS * 128, in ? vp : vb, in ? 16 : 0);
        kp += RS * knb1;
        vp += RS * vnb1;
    }
    if (mb != nullptr) {
        const int mr = threadIdx.x / 8, mu = threadIdx.x % 8;
        const ternion_i64 left = nkv - (t1 + mu * 8);
        const int bytes = FULL || left >= 8 ? 16 : (left > 0 ? (int)left * 2 : 0);
        const ternion_u32 ms = aM + fa90_off(mr, mu, FA90_BQ);
        const char * mp = mb + mr * mnb1 + (t1 + mu * 8) * 2;
#pragma unroll
        for (int i = 0; i < FA90_BQ * 8 / FA90_THREADS; i++) {
            const int b = mr + i * (FA90_THREADS / 8) < nrows ? bytes : 0;
            fa90_cp16(ms + i * (FA90_THREADS / 8) * 128, b > 0 ? mp : mb, b);
            mp += (FA90_THREADS / 8) * mnb1;
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

#endif

template <int D>
static __device__ __forceinline__ void fattn90(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                               ternion_tensor mask, const float * sinks, float scale, float softcap,
                                               float max_bias, float m0, float m1, ternion_u32 n_head_log2, ternion_u32 gqa,
                                               ternion_u32 r3) {
#if TERNION_FATTN90
    typedef ternion_mma_type<ternion_f16> mma;
    constexpr int NC = D / 64;                         // 64-value chunks of a row
    constexpr ternion_u32 QC = FA90_BQ * 128;          // a Q chunk
    constexpr ternion_u32 KS = NC * FA90_BK * 128;     // a K or V stage
    constexpr ternion_u32 MS = FA90_BQ * 128;          // a mask stage
    extern __shared__ __align__(16) unsigned char fa90_smem[];
    const ternion_u32 raw = ternion_smem_u32(fa90_smem), base = (raw + 1023u) & ~1023u;
    unsigned char * sm = fa90_smem + (base - raw); // base as a pointer
    const ternion_u32 aQ = base, aK = aQ + NC * QC, aV = aK + 2 * KS, aM = aV + 2 * KS;

    const int tid = threadIdx.x, wg = tid / 128, w = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    // Scores in log2 units (fattn_prefill's qs, sc2, slope).
    const fattn_prefill b(q, k, v, mask, scale, softcap, max_bias, m0, m1, n_head_log2, gqa, r3, FA90_BQ);
    const ternion_i64 ntiles = (b.nkv + FA90_BK - 1) / FA90_BK;
    if (FA90_BK <= b.nkv) {
        fa90_load<D, true>(aK, aV, aM, b.kb, b.vb, k.nb[1], v.nb[1], b.mb, mask.nb[1], b.nrows, 0, b.nkv);
    } else {
        fa90_load<D, false>(aK, aV, aM, b.kb, b.vb, k.nb[1], v.nb[1], b.mb, mask.nb[1], b.nrows, 0, b.nkv);
    }

    // Q as f16, pre-scaled; rows past nrows zero.
    const char * qb = (const char *)q.data + b.h * q.nb[2] + b.iq3 * q.nb[3] + b.q0 * q.nb[1];
    for (int i = tid; i < FA90_BQ * D / 4; i += FA90_THREADS) {
        const int r = i / (D / 4), c = (i % (D / 4)) * 4;
        float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (r < b.nrows) {
            x = *(const float4 *)(qb + r * q.nb[1] + c * 4);
        }
        *(uint2 *)(sm + fa90_off(r, c / 8, FA90_BQ) + (c % 8) * 2) = make_uint2(mma::pack(x.x * b.qs, x.y * b.qs), mma::pack(x.z * b.qs, x.w * b.qs));
    }

    // This thread's rows of its warpgroup's 64: r0 and r0 + 8 (block rows
    // 64·wg + r0, + 8); its mask words (positions 8i + 2t, +1 of row r0) at
    // mk + ((i ^ g) · 16), row r0 + 8 at + 1024.
    const int r0 = 16 * w + g;
    const unsigned char * mk = sm + (aM - base) + (64 * wg + r0) * 128 + t * 4;
    float o[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; i++) {
        o[i] = 0.0f;
    }
    // Row maxima (log2 units; finite from the start, so no inf - inf) and
    // this thread's share of the row sums (reduced over the quad at the end).
    float mr[2] = {FATTN_DEC_EMPTY, FATTN_DEC_EMPTY}, lr[2] = {0.0f, 0.0f};

    asm volatile("cp.async.wait_all;" ::: "memory"); // tile 0
    for (ternion_i64 j = 0; j < ntiles; j++) {
        const int st = (int)(j & 1);
        const ternion_i64 t0 = j * FA90_BK;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // no copy in flight: tile j's have landed
        __syncthreads(); // tile j is in; every warpgroup is done with tile j - 1's stage
        // S = Q·Kᵀ for the warpgroup's 64 rows and the tile's 64 positions,
        // while this thread requests tile j + 1.
        float s[32];
        fa90_fence();
#pragma unroll
        for (int ks = 0; ks < D / 16; ks++) {
            fa90_qk(s, ternion_wg_desc(aQ + (ks / 4) * QC + wg * 64 * 128 + (ks % 4) * 32, 16),
                    ternion_wg_desc(aK + st * KS + (ks / 4) * (FA90_BK * 128) + (ks % 4) * 32, 16), ks);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        if (t0 + 2 * FA90_BK <= b.nkv) {
            fa90_load<D, true>(aK + (st ^ 1) * KS, aV + (st ^ 1) * KS, aM + (st ^ 1) * MS, b.kb, b.vb, k.nb[1], v.nb[1], b.mb, mask.nb[1],
                               b.nrows, t0 + FA90_BK, b.nkv);
        } else if (j + 1 < ntiles) {
            fa90_load<D, false>(aK + (st ^ 1) * KS, aV + (st ^ 1) * KS, aM + (st ^ 1) * MS, b.kb, b.vb, k.nb[1], v.nb[1], b.mb,
                                mask.nb[1], b.nrows, t0 + FA90_BK, b.nkv);
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        ternion_wg_pin<32>(s);
        // Logits of rows r0 (e = 0, 1) and r0 + 8 (e = 2, 3), positions
        // 8n + 2t + (e & 1).
        if (softcap != 0.0f) {
#pragma unroll
            for (int i = 0; i < 32; i++) {
                s[i] = b.sc2 * tanhf(s[i]);
            }
        }
        if (b.mb != nullptr) {
            const unsigned char * m = mk + st * MS;
#pragma unroll
            for (int n = 0; n < 8; n++) {
                const ternion_u32 m01 = *(const ternion_u32 *)(m + ((n ^ g) * 16)), m23 = *(const ternion_u32 *)(m + 1024 + ((n ^ g) * 16));
                s[4 * n + 0] = fmaf(b.slope, ternion_f16_to_f32((ternion_f16)(m01 & 0xffffu)), s[4 * n + 0]);
                s[4 * n + 1] = fmaf(b.slope, ternion_f16_to_f32((ternion_f16)(m01 >> 16)), s[4 * n + 1]);
                s[4 * n + 2] = fmaf(b.slope, ternion_f16_to_f32((ternion_f16)(m23 & 0xffffu)), s[4 * n + 2]);
                s[4 * n + 3] = fmaf(b.slope, ternion_f16_to_f32((ternion_f16)(m23 >> 16)), s[4 * n + 3]);
            }
        }
        if (t0 + FA90_BK > b.nkv) {
#pragma unroll
            for (int i = 0; i < 32; i++) {
                if (t0 + (i / 4) * 8 + 2 * t + (i & 1) >= b.nkv) {
                    s[i] = FATTN_NEG_INF;
                }
            }
        }
        ternion_u32 pa[4][4];
        fattn_softmax_tile<D / 2>(s, mr, lr, pa, o);
        // O += P·V: V's 16-position k-steps are 2048 bytes apart, its
        // 64-value chunks (along N) a chunk of the stage apart (LBO).
        fa90_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            fa90_pv(fa90_n<D>(), o, pa[kk], ternion_wg_desc(aV + st * KS + kk * 16 * 128, FA90_BK * 128));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("cp.async.wait_all;" ::: "memory"); // tile j + 1, while P·V runs
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        ternion_wg_pin<D / 2>(o);
    }

    // Sinks, normalisation, and the permuted store.
    b.finish<D>(dst, sinks, 64 * wg + r0, t, o, mr, lr);
#elif defined(TERNION_VENDOR_CUDA)
    (void)dst, (void)q, (void)k, (void)v, (void)mask, (void)sinks, (void)scale, (void)softcap, (void)max_bias, (void)m0, (void)m1;
    (void)n_head_log2, (void)gqa, (void)r3;
    __trap();
#else
    (void)dst, (void)q, (void)k, (void)v, (void)mask, (void)sinks, (void)scale, (void)softcap, (void)max_bias, (void)m0, (void)m1;
    (void)n_head_log2, (void)gqa, (void)r3;
#endif
}
