// gemm90.cu - MUL_MAT of q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, q4_K, q5_K and
// q6_K weights by many f32 columns on Hopper's warpgroup tensor cores (wgmma,
// NVIDIA sm_90a only), the weights expanded to f16 inside the gemm instead
// of dequantized into a temporary first.
//
//   gemm90_b_f32  src1 f32 [n][k] (rows packed, 16-byte aligned) -> f16 in the
//                 gemm's B stage order: tile (n-tile, k-tile) of 128 x 64
//                 values at ((n-tile · k/64) + k-tile) · 16 KB, row r's chunk c
//                 (8 values) at r·128 + (c ^ (r & 7))·16 bytes (the 128-byte
//                 swizzle wgmma's descriptors read); rows past n up to the
//                 next multiple of 128 are zeros. One chunk a thread.
//   gemm90_{q}    dst f32 [n][m] = src0 ({q}, [m][k], k % 256 == 0) · bᵀ: block
//                 b computes the 128 x 128 tile (m-tile b % mt, n-tile b / mt);
//                 384 threads, three warpgroups. 0 and 1 multiply rows 0..63
//                 and 64..127 of the tile: each thread expands the 32 values
//                 of a k-tile its wgmma register fragment of A holds (rows
//                 16w + l/4 and + 8 of its warpgroup's 64 for warp w, lane l;
//                 k 2(l%4), +1, +8, +9 of each k16 step: the m16n8k16 A
//                 layout) from the quantized rows in shared memory ((q - 8)·d,
//                 q·d and level·d each rounded once to f16, bit-identical to
//                 dequantizing to f16 first; q·d + m fused, rounded once;
//                 (d·sc)·q - dmin·m in f32, rounded once), into registers double-buffered
//                 across k-tiles, so expanding k-tile t+1 overlaps k-tile t's
//                 wgmma m64n128k16 (A from registers, B from the 128-byte-
//                 swizzled stage; one commit group a k-tile, a stage released
//                 once the next tile's group is issued). 2 fetches: its warp 0
//                 one 16 KB bulk copy of B a stage, warps 1..3 the quantized
//                 rows a group of 256 values (8 blocks of 32, or one q4_K or
//                 q5_K block; 4 k-tiles) ahead by 16-byte cp.async counted on the
//                 group's mbarrier. 4 stages of B, 2 group buffers; rows past m
//                 are not read, results past m or n not stored.
//                 GEMM90_SHARED(GEMM90_SLOT(group bytes)) of dynamic shared memory
//                 (core/ops' gemm90Shared).
//
// bench/README.md (sessions 26 to 28) has the forms this was measured against:
// a producer warpgroup expanding each k-tile into an f16 A stage in shared
// memory (session 27's kernel; the fence and barrier a tile cost more than
// the expansion: -15 % for q4_0 here), and bench/experiments/wgq.cu sweeps this
// kernel over shapes. The family is sm_90a code: kernels/internal/gen does not
// prebuild it, the run-time compiler builds it for compute capability 9.0
// (kernels.Family.ArchSpecific), and built for any other target the kernels
// trap, so a launch there is an error, never a silent no-op.
#include "quant_bits.h"
#include "wgmma.h"

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
#define GEMM90_THREADS 384
#define GEMM90_TILE_B (GEMM90_BN * GEMM90_BK * 2)
// The dynamic shared memory of gemm90_{q}: the B stages, the group buffers of
// 128 rows of a slot of gs bytes each, and 1024 bytes to align the stages to
// 1024.
#define GEMM90_SHARED(gs) (GEMM90_STAGES * GEMM90_TILE_B + GEMM90_RAW * 128 * (gs) + 1024)
// The bytes copied of a row's group of gb bytes: the group itself where every
// group starts 16-byte aligned (gb a multiple of 16), else the 16-byte
// chunks that cover a group starting 2-byte aligned (its start rounded down
// to 16 bytes, at most 14 bytes before it).
#define GEMM90_COVER(gb) ((gb) % 16 == 0 ? (gb) : ((gb) + 14 + 15) / 16 * 16)
// The slot of a row's group in shared memory, rows GEMM90_SLOT apart: the
// bytes copied, and 16 more where they are a multiple of 32, so that the 8
// rows a warp's lanes read at once (l / 4) start in 8 different groups of 4
// banks (a pitch of 4 mod 8 words; 160-, 192- and 224-byte pitches had 2, 4
// and 2 rows share banks: q4_1, q5_1, q6_K).
#define GEMM90_SLOT(gb) (GEMM90_COVER(gb) % 32 == 0 ? GEMM90_COVER(gb) + 16 : GEMM90_COVER(gb))

// The weight formats (g90_{q} for format q): GROUP, the bytes of a row's
// group of 256 values (4 k-tiles): 8 blocks of 32, or one K-quant block.
template <int G> struct g90_group {
    static constexpr int GROUP = G;
};
struct g90_q4_0 : g90_group<144> {};
struct g90_q4_1 : g90_group<160> {};
struct g90_q5_0 : g90_group<176> {};
struct g90_q5_1 : g90_group<192> {};
struct g90_q8_0 : g90_group<272> {};
struct g90_iq4_nl : g90_group<144> {};
struct g90_q4_K : g90_group<144> {};
struct g90_q5_K : g90_group<176> {};
struct g90_q6_K : g90_group<210> {}; // groups start 2-byte aligned: copied in the 16-byte chunks around them

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

// d (64 f32 accumulators of an m64n128 tile) += A (64 x 16: the register
// fragment a[0..3]) · Bᵀ (128 x 16, desc b).
static __device__ __forceinline__ void g90_mma(float * d, const unsigned * a, unsigned long long b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " TERNION_WG_R64 ", {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
                 : TERNION_WG_F64
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// Pins the accumulators (wgmma.h's ternion_wg_pin) or a fragment across a
// wgmma stage.
static __device__ __forceinline__ void g90_pin(float * d) { ternion_wg_pin<64>(d); }
static __device__ __forceinline__ void g90_pin(unsigned (&a)[4][4]) {
#pragma unroll
    for (int i = 0; i < 16; i++) asm volatile("" : "+r"(a[i / 4][i % 4])::"memory");
}

#endif

// The expansion of a row's values into f16 pairs: CUDA code in every pass
// (declared for nvcc's host pass too, so bench/experiments' templates can
// call it), emitted only where a kernel built for sm_90a uses it.
#if defined(TERNION_VENDOR_CUDA)
// (t - off) · d on the f16 pairs of words, each step rounded once (.rn:
// never contracted), as the seed's dequantize computes each value.
static __device__ __forceinline__ unsigned g90_scale(unsigned t, unsigned off, unsigned d) {
    unsigned r;
    asm("{\nsub.rn.f16x2 %0, %1, %2;\nmul.rn.f16x2 %0, %0, %3;\n}\n" : "=r"(r) : "r"(t), "r"(off), "r"(d));
    return r;
}

// (t - 1024) · d + m on the f16 pairs of words: the difference exact, the
// fused product and sum rounded once.
static __device__ __forceinline__ unsigned g90_affine(unsigned t, unsigned d, unsigned m) {
    unsigned r;
    asm("{\nsub.rn.f16x2 %0, %1, %2;\nfma.rn.f16x2 %0, %0, %3, %4;\n}\n" : "=r"(r) : "r"(t), "r"(0x64006400u), "r"(d), "r"(m));
    return r;
}

// The unsigned bytes of x as the f16 pairs 1024 + byte (exact: f16's step
// is 1 from 1024 to 2048): bytes (0, 1) and (2, 3).
static __device__ __forceinline__ uint2 g90_u8x4(unsigned x) {
    return make_uint2(__byte_perm(x, 0x64646464u, 0x5140), __byte_perm(x, 0x64646464u, 0x7362));
}

// The low (hi 0) or high (1) nibbles of the bytes of w, in the bytes' low
// halves.
static __device__ __forceinline__ unsigned g90_nibs(unsigned w, int hi) { return (w >> (4 * hi)) & 0x0F0F0F0Fu; }

// Four int8 of word w as q·d in f16: the pairs of bytes (0, 1) and (2, 3).
static __device__ __forceinline__ uint2 g90_i8x4(unsigned w, unsigned d) {
    const uint2 t = g90_u8x4(w ^ 0x80808080u); // 1024 + q + 128
    return make_uint2(g90_scale(t.x, 0x64806480u, d), g90_scale(t.y, 0x64806480u, d)); // - 1152
}

// Nibble byte i (compile-time) of word x (nibbles already in the low halves
// of its bytes) as d1·q - m1, the product exact in f32 and the difference
// rounded once (as the seed's dequantize, contracted or not): q is the
// float 2^23 + q (byte i under exponent byte 0x4B) minus 2^23.
static __device__ __forceinline__ float g90_k4(unsigned x, int i, float d1, float m1) {
    return __fmaf_rn(d1, __uint_as_float(__byte_perm(x, 0x4B000000u, 0x7650u | i)) - 8388608.0f, -m1);
}

// Byte i (compile-time) of word x, a 6-bit q6_K value q, as s·(q - 32) in
// f32 with c = -160·s: one fma of s and the float 128 + q (q in byte 2
// under exponent byte 0x43, bytes 0 and 1 zero), exact for s = d·sc (d f16,
// sc int8): s·(q - 32), s and 160·s need at most 23 significant bits, so
// the fma's one rounding changes nothing (every d, sc and q checked).
static __device__ __forceinline__ float g90_q6(unsigned x, int i, float s, float c) {
    return __fmaf_rn(s, __uint_as_float(__byte_perm(x, 0x43000000u, 0x7044u | (i << 8))), c);
}

// The two f32 values lo, hi as an f16 pair, each rounded once.
static __device__ __forceinline__ unsigned g90_pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));
    return r;
}

// The 2 bytes at shared-memory p (2-byte aligned), widened.
static __device__ __forceinline__ unsigned g90_ld16(const unsigned char * p) { return *(const unsigned short *)p; }

// The f16 at p twice (both halves of an f16 pair).
static __device__ __forceinline__ unsigned g90_dup(const unsigned char * p) { return g90_ld16(p) * 0x10001u; }

// The bytes o + 2c, +1, +8, +9 of a row at p: lane column c's four values of
// a 16-value step (the low or high nibbles of 32-value blocks).
static __device__ __forceinline__ unsigned g90_quad(const unsigned char * p, int o, int c) {
    return g90_ld16(p + o + 2 * c) | (g90_ld16(p + o + 8 + 2 * c) << 16);
}

// The fifth bits of values s, s + 1, s + 8, s + 9 of a q5 block (bit v of
// qh, the little-endian u32 at p, for value v) at bit 4 of bytes 0..3.
static __device__ __forceinline__ unsigned g90_q5hi(const unsigned char * p, int s) {
    const unsigned qh = (g90_ld16(p) | (g90_ld16(p + 2) << 16)) >> s;
    return (unsigned)quant_bit4x4((qh & 3u) | ((qh >> 6) & 12u));
}

// Stores the pairs of rows ra (x) and rb (y) into the fragment of one step.
static __device__ __forceinline__ void g90_put(unsigned (&f)[4], uint2 x, uint2 y) { f[0] = x.x, f[1] = y.x, f[2] = x.y, f[3] = y.y; }

// g90_frag(format, u, ra, rb, c, a): the register fragments of A for k-tile u
// (0..3, a constant where inlined) of a group, rows ra and rb (= ra + 8 rows: the raw
// group's rows in shared memory), lane column c = l % 4: a[kk] = the f16
// pairs {(ra, k0..k0+1), (rb, k0..), (ra, k0+8..), (rb, k0+8..)} of k16 step
// kk, k0 = 2c. The 32-value formats: k-tile u is blocks 2u and 2u + 1, step
// 2h + s block 2u + h's values 16s … (the low nibbles for s = 0, the high for
// 1 in the 4- and 5-bit formats: value j and j + 16 share byte j).
//
// The 4- and 5-bit formats: blocks of BYTES bytes, d at 0 (and m at 2: MIN),
// the fifth bits' u32 qh at QH (0: none), the nibbles at QS; the value (q -
// q0)·d (OFF the f16 pair 1024 + q0 twice) or q·d + m (MIN).
template <int BYTES, int QH, int QS, bool MIN, unsigned OFF>
static __device__ __forceinline__ void g90_frag_q45(int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int o = BYTES * (2 * u + h);
        const unsigned da = g90_dup(ra + o), db = g90_dup(rb + o), ma = MIN ? g90_dup(ra + o + 2) : 0u, mb = MIN ? g90_dup(rb + o + 2) : 0u;
        const unsigned wa = g90_quad(ra, o + QS, c), wb = g90_quad(rb, o + QS, c);
#pragma unroll
        for (int s = 0; s < 2; s++) {
            unsigned xa = g90_nibs(wa, s), xb = g90_nibs(wb, s);
            if (QH) xa |= g90_q5hi(ra + o + QH, 16 * s + 2 * c), xb |= g90_q5hi(rb + o + QH, 16 * s + 2 * c);
            const uint2 ta = g90_u8x4(xa), tb = g90_u8x4(xb);
            if (MIN) {
                g90_put(a[2 * h + s], make_uint2(g90_affine(ta.x, da, ma), g90_affine(ta.y, da, ma)),
                        make_uint2(g90_affine(tb.x, db, mb), g90_affine(tb.y, db, mb)));
            } else {
                g90_put(a[2 * h + s], make_uint2(g90_scale(ta.x, OFF, da), g90_scale(ta.y, OFF, da)),
                        make_uint2(g90_scale(tb.x, OFF, db), g90_scale(tb.y, OFF, db)));
            }
        }
    }
}
// q4_0 (d, 16 bytes of nibbles): (q - 8)·d.
static __device__ __forceinline__ void g90_frag(g90_q4_0, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    g90_frag_q45<18, 0, 2, false, 0x64086408u>(u, ra, rb, c, a);
}
// q4_1 (d, m, 16 bytes of nibbles): q·d + m.
static __device__ __forceinline__ void g90_frag(g90_q4_1, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    g90_frag_q45<20, 0, 4, true, 0u>(u, ra, rb, c, a);
}
// q5_0 (d, u32 qh of fifth bits, 16 bytes of nibbles): (q - 16)·d.
static __device__ __forceinline__ void g90_frag(g90_q5_0, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    g90_frag_q45<22, 2, 6, false, 0x64106410u>(u, ra, rb, c, a);
}
// q5_1 (d, m, u32 qh of fifth bits, 16 bytes of nibbles): q·d + m.
static __device__ __forceinline__ void g90_frag(g90_q5_1, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    g90_frag_q45<24, 4, 8, true, 0u>(u, ra, rb, c, a);
}
// q8_0 (d, 32 int8): q·d; step kk is values 16 (kk & 1) … of block 2u + kk/2.
static __device__ __forceinline__ void g90_frag(g90_q8_0, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
        const int o = 34 * (2 * u + kk / 2), q = o + 2 + 16 * (kk & 1);
        g90_put(a[kk], g90_i8x4(g90_quad(ra, q, c), g90_dup(ra + o)), g90_i8x4(g90_quad(rb, q, c), g90_dup(rb + o)));
    }
}
// iq4_nl (d, 16 bytes of nibbles indexing ggml's kvalues_iq4nl): level·d.
static __device__ __forceinline__ void g90_frag(g90_iq4_nl, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    const unsigned levels[4] = QUANT_IQ4NL_WORDS;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int o = 18 * (2 * u + h);
        const unsigned da = g90_dup(ra + o), db = g90_dup(rb + o), wa = g90_quad(ra, o + 2, c), wb = g90_quad(rb, o + 2, c);
        g90_put(a[2 * h], g90_i8x4(quant_lut16(g90_nibs(wa, 0), levels), da), g90_i8x4(quant_lut16(g90_nibs(wb, 0), levels), db));
        g90_put(a[2 * h + 1], g90_i8x4(quant_lut16(g90_nibs(wa, 1), levels), da), g90_i8x4(quant_lut16(g90_nibs(wb, 1), levels), db));
    }
}
// q4_K (d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles)
// and q5_K (the same, then 32 bytes of fifth bits qh before the nibbles):
// k-tile u is sub-blocks 2u (steps 0, 1: the low nibbles of bytes 32u +
// 0..15 and + 16..31 of the nibbles; the fifth bit bit 2u of qh's bytes 0..15
// and 16..31) and 2u + 1 (steps 2, 3: their high nibbles, bit 2u + 1); each
// value (d·sc)·q - dmin·m in f32 (quant_bits.h's quant_scale_min_k4u for sc,
// m), rounded once.
struct g90_k4_scales {
    float d1[2], m1[2]; // sub-blocks 2u, 2u + 1
    __device__ __forceinline__ g90_k4_scales(int u, const unsigned char * r) {
        const uint4 h = *(const uint4 *)r; // d, dmin, scales[12]: a row's group starts 16-byte aligned
        const unsigned char * scales = (const unsigned char *)&h + 4;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            unsigned sc, m;
            quant_scale_min_k4u(2 * u + j, scales, sc, m);
            d1[j] = ternion_f16_to_f32((ternion_f16)(h.x & 0xffffu)) * (float)sc;
            m1[j] = ternion_f16_to_f32((ternion_f16)(h.x >> 16)) * (float)m;
        }
    }
};
// The K-quant fragments from the nibbles at byte QS of a group (Q5: fifth
// bits at byte 16).
template <int QS, bool Q5>
static __device__ __forceinline__ void g90_frag_k(int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    const g90_k4_scales sa(u, ra), sb(u, rb);
#pragma unroll
    for (int half = 0; half < 2; half++) { // bytes 32u + 16 half + {2c, 2c+1, 2c+8, 2c+9}: steps half, half + 2
        const int q = QS + 32 * u + 16 * half;
        const unsigned wa = g90_quad(ra, q, c), wb = g90_quad(rb, q, c);
        const unsigned ha = Q5 ? g90_quad(ra, 16 + 16 * half, c) : 0u, hb = Q5 ? g90_quad(rb, 16 + 16 * half, c) : 0u;
#pragma unroll
        for (int j = 0; j < 2; j++) { // 0: low nibbles (sub-block 2u), 1: high (2u + 1)
            unsigned xa = g90_nibs(wa, j), xb = g90_nibs(wb, j);
            if (Q5) {
                xa |= ((ha >> (2 * u + j)) & 0x01010101u) << 4;
                xb |= ((hb >> (2 * u + j)) & 0x01010101u) << 4;
            }
            unsigned * f = a[half + 2 * j];
            f[0] = g90_pack(g90_k4(xa, 0, sa.d1[j], sa.m1[j]), g90_k4(xa, 1, sa.d1[j], sa.m1[j]));
            f[1] = g90_pack(g90_k4(xb, 0, sb.d1[j], sb.m1[j]), g90_k4(xb, 1, sb.d1[j], sb.m1[j]));
            f[2] = g90_pack(g90_k4(xa, 2, sa.d1[j], sa.m1[j]), g90_k4(xa, 3, sa.d1[j], sa.m1[j]));
            f[3] = g90_pack(g90_k4(xb, 2, sb.d1[j], sb.m1[j]), g90_k4(xb, 3, sb.d1[j], sb.m1[j]));
        }
    }
}
static __device__ __forceinline__ void g90_frag(g90_q4_K, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    g90_frag_k<16, false>(u, ra, rb, c, a);
}
static __device__ __forceinline__ void g90_frag(g90_q5_K, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    g90_frag_k<48, true>(u, ra, rb, c, a);
}
// q6_K (ql[128] low nibbles, qh[64] 2-bit pairs, int8 scales[16], d; rows at
// ra, rb only 2-byte aligned): k-tile u is values 64u …, half n = u/2 of the
// block, quarters g = 2(u%2) and + 1 (steps 0, 1 and 2, 3): value l of
// quarter g (l = 16s + 2c, +1, +8, +9 in step 2(g%2) + s) has its 4 low bits
// in ql[64n + 32(g%2) + l] (the high nibble in the odd k-tiles), 2 high bits
// at shift 2g of qh[32n + l]; value (d·scales[8n + 2g + s])·(q - 32) in
// f32 (the scale's product exact), rounded once more to f16 as the seed's
// dequantize to f16 rounds it.
static __device__ __forceinline__ void g90_frag(g90_q6_K, int u, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    const int n = u / 2, hi = u % 2;
    const float da = ternion_f16_to_f32(*(const ternion_f16 *)(ra + 208)), db = ternion_f16_to_f32(*(const ternion_f16 *)(rb + 208));
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
        const int g = 2 * hi + kk / 2, s = kk % 2, ql = 64 * n + 32 * (kk / 2) + 16 * s, qh = 128 + 32 * n + 16 * s;
        const unsigned xa = g90_nibs(g90_quad(ra, ql, c), hi) | (((g90_quad(ra, qh, c) >> (2 * g)) & 0x03030303u) << 4);
        const unsigned xb = g90_nibs(g90_quad(rb, ql, c), hi) | (((g90_quad(rb, qh, c) >> (2 * g)) & 0x03030303u) << 4);
        const float sa = da * (float)(signed char)ra[192 + 8 * n + 2 * g + s], sb = db * (float)(signed char)rb[192 + 8 * n + 2 * g + s];
        const float ca = -160.0f * sa, cb = -160.0f * sb;
        a[kk][0] = g90_pack(g90_q6(xa, 0, sa, ca), g90_q6(xa, 1, sa, ca));
        a[kk][1] = g90_pack(g90_q6(xb, 0, sb, cb), g90_q6(xb, 1, sb, cb));
        a[kk][2] = g90_pack(g90_q6(xa, 2, sa, ca), g90_q6(xa, 3, sa, ca));
        a[kk][3] = g90_pack(g90_q6(xb, 2, sb, cb), g90_q6(xb, 3, sb, cb));
    }
}
#endif

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

#if TERNION_GEMM90
// One k-tile kt (kt % 4 == U) of a multiplying thread: expand into a (one of
// the caller's two buffers, free since k-tile kt - 2's wgmma retired), wait
// for B's stage, multiply, retire k-tile kt - 1's wgmma and release its stage
// (and after the group's last k-tile, the group buffer).
template <typename Q, int U>
static __device__ __forceinline__ void g90_step(int kt, unsigned (&a)[4][4], float * d, const unsigned char * raw, unsigned bbase,
                                                unsigned long long * full, unsigned long long * empty, unsigned long long * rawfull,
                                                unsigned long long * rawempty, int lr, unsigned oa, unsigned ob, int c, int l) {
    constexpr int GB = Q::GROUP, GS = GEMM90_SLOT(GB), S = GEMM90_STAGES, RAW = GEMM90_RAW;
    const int g = kt >> 2, r = g % RAW;
    if (U == 0) ternion_mbar_wait(ternion_smem_u32(&rawfull[r]), (g / RAW) & 1);
    // Rows lr and lr + 8 in their slots: where groups are not 16-byte
    // aligned, at their start's offset from the 16 bytes below it (oa, ob:
    // the rows' starts' offsets).
    const unsigned char * ra = raw + r * (128 * GS) + lr * GS, * rb = ra + 8 * GS;
    if (GB % 16 != 0) ra += (oa + (unsigned)g * GB) & 15u, rb += (ob + (unsigned)g * GB) & 15u;
    g90_frag(Q(), U, ra, rb, c, a);
    if (U == 3) g90_arrive(ternion_smem_u32(&rawempty[r]));
    const int s = kt % S;
    ternion_mbar_wait(ternion_smem_u32(&full[s]), (kt / S) & 1);
    const unsigned bs = bbase + s * GEMM90_TILE_B;
    g90_pin(d);
    g90_pin(a);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < 4; kk++) g90_mma(d, a[kk], ternion_wg_desc(bs + kk * 32, 16));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    g90_pin(d);
    if (kt > 0 && l == 0) g90_arrive(ternion_smem_u32(&empty[(kt - 1) % S]));
}
#endif

// dst [n][m] = src0 ({Q}) · bᵀ, one 128 x 128 tile a block (see the top).
template <typename Q> static __device__ __forceinline__ void gemm90_q(ternion_tensor dst, ternion_tensor src0, const void * bt) {
#if TERNION_GEMM90
    constexpr int S = GEMM90_STAGES, RAW = GEMM90_RAW, GB = Q::GROUP, GS = GEMM90_SLOT(GB), NQ = GEMM90_COVER(GB) / 16, BM = GEMM90_BM, BN = GEMM90_BN,
                  BK = GEMM90_BK;
    const unsigned char * B = (const unsigned char *)bt;
    extern __shared__ unsigned char g90_dyn[];
    __shared__ __align__(8) unsigned long long full[S], empty[S], rawfull[RAW], rawempty[RAW];
    const int M = (int)src0.ne[1], K = (int)src0.ne[0], N = (int)dst.ne[1];
    const unsigned char * Aq = (const unsigned char *)src0.data;
    const long long arow = src0.nb[1];
    const unsigned base = (ternion_smem_u32(g90_dyn) + 1023) & ~1023u, raws = base + S * GEMM90_TILE_B;
    const unsigned char * raw = g90_dyn + (raws - ternion_smem_u32(g90_dyn));
    const int tid = threadIdx.x, wg = tid >> 7, warp = tid >> 5, l = tid & 31;
    const int mt = (M + BM - 1) / BM, m0 = (int)(blockIdx.x % mt) * BM, nt = (int)(blockIdx.x / mt), n0 = nt * BN;
    const int T = K / BK, G = T / 4, rows = min(BM, M - m0);
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            g90_mbar_init(ternion_smem_u32(&full[s]), 1);  // warp 8's arrival expecting B's bytes
            g90_mbar_init(ternion_smem_u32(&empty[s]), 8); // lane 0 of each multiplying warp
        }
        for (int r = 0; r < RAW; r++) {
            g90_mbar_init(ternion_smem_u32(&rawfull[r]), 96);   // each lane of warps 9..11 (cp.async.mbarrier.arrive.noinc)
            g90_mbar_init(ternion_smem_u32(&rawempty[r]), 256); // every multiplying thread, done with the group
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 2) {
        if (warp == 8) { // B: one bulk copy a stage
            for (int kt = 0; kt < T; kt++) {
                const int s = kt % S;
                if (kt >= S) ternion_mbar_wait(ternion_smem_u32(&empty[s]), ((kt / S) - 1) & 1);
                if (l == 0) {
                    g90_bulk(base + s * GEMM90_TILE_B, B + ((long long)nt * T + kt) * GEMM90_TILE_B, GEMM90_TILE_B, ternion_smem_u32(&full[s]));
                }
                __syncwarp();
            }
            return;
        }
        for (int g = 0; g < G; g++) { // the rows' groups, by 16-byte cp.async
            const int r = g % RAW;
            if (g >= RAW) ternion_mbar_wait(ternion_smem_u32(&rawempty[r]), ((g / RAW) - 1) & 1);
            for (int q = (warp - 9) * 32 + l; q < 128 * NQ; q += 96) {
                const int row = q / NQ, ch = q % NQ;
                if (row < rows) {
                    const unsigned char * src = Aq + (long long)(m0 + row) * arow + (long long)g * GB;
                    if (GB % 16 == 0) {
                        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(raws + r * (128 * GS) + row * GS + ch * 16),
                                     "l"(src + ch * 16)
                                     : "memory");
                    } else { // the chunks around the group, none read past its end (the rest of a chunk zero-filled)
                        const unsigned char * c16 = (const unsigned char *)((unsigned long long)src & ~15ull) + ch * 16;
                        const long long left = src + GB - c16;
                        const unsigned n = left <= 0 ? 0u : left >= 16 ? 16u : (unsigned)left;
                        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(raws + r * (128 * GS) + row * GS + ch * 16),
                                     "l"(n ? c16 : src), "r"(n)
                                     : "memory");
                    }
                }
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ternion_smem_u32(&rawfull[r])) : "memory");
        }
        return;
    }
    // Warpgroups 0 and 1: rows 64 wg … of the tile; this thread's rows lr and lr + 8.
    const int lr = wg * 64 + 16 * (warp & 3) + (l >> 2), c = l & 3;
    const unsigned oa = (unsigned)((unsigned long long)(Aq + (long long)(m0 + lr) * arow) & 15ull),
                   ob = (unsigned)((unsigned long long)(Aq + (long long)(m0 + lr + 8) * arow) & 15ull);
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++) d[i] = 0.0f;
    g90_pin(d);
    unsigned a0[4][4], a1[4][4];
    for (int kt = 0; kt < T; kt += 4) {
        g90_step<Q, 0>(kt, a0, d, raw, base, full, empty, rawfull, rawempty, lr, oa, ob, c, l);
        g90_step<Q, 1>(kt + 1, a1, d, raw, base, full, empty, rawfull, rawempty, lr, oa, ob, c, l);
        g90_step<Q, 2>(kt + 2, a0, d, raw, base, full, empty, rawfull, rawempty, lr, oa, ob, c, l);
        g90_step<Q, 3>(kt + 3, a1, d, raw, base, full, empty, rawfull, rawempty, lr, oa, ob, c, l);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    g90_pin(d);
    float * C = (float *)dst.data;
    const long long ldc = dst.nb[1] / 4;
    const int r0 = m0 + lr;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int n = n0 + j * 8 + c * 2;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int row = r0 + (e >> 1) * 8, col = n + (e & 1);
            if (row < M && col < N) C[(long long)col * ldc + row] = d[4 * j + e];
        }
    }
#elif defined(TERNION_VENDOR_CUDA)
    (void)dst, (void)src0, (void)bt;
    __trap();
#else
    (void)dst, (void)src0, (void)bt;
#endif
}
