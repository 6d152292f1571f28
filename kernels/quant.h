// quant.h - ggml's quantized block formats on the device: for each format a
// tag type with its block size (QK values in BYTES bytes) and dq8, which
// decodes the 8 consecutive values j..j+7 (j a multiple of 8) of one block
// to float. The layouts are ggml's, byte for byte (quant/ holds the same
// formats in Go, bit-exact with ggml's CPU code; the host device's kernels
// use those). Every dq8 reads only bytes it needs: a thread decoding 8
// values of a 256-value block touches its scale and its 8 quants, not the
// whole block.
#pragma once
#include "vendor.h"
#include "quant_grids.h"
#include "quant_bits.h"

// The f16 at p (2-byte aligned: every block with an f16 has an even size).
static __device__ __forceinline__ float quant_f16(const unsigned char * p) {
    return ternion_f16_to_f32(*(const ternion_f16 *)p);
}

// 8 bytes at p as two little-endian words, read with loads of A bytes (A
// is the alignment p is known to have: 4, 2 or 1).
template <int A>
static __device__ __forceinline__ void quant_load8(const unsigned char * p, ternion_u32 & lo, ternion_u32 & hi) {
    if (A >= 4) {
        lo = ((const ternion_u32 *)p)[0];
        hi = ((const ternion_u32 *)p)[1];
    } else if (A == 2) {
        const unsigned short * h = (const unsigned short *)p;
        lo = h[0] | ((ternion_u32)h[1] << 16);
        hi = h[2] | ((ternion_u32)h[3] << 16);
    } else {
        lo = p[0] | (p[1] << 8) | (p[2] << 16) | ((ternion_u32)p[3] << 24);
        hi = p[4] | (p[5] << 8) | (p[6] << 16) | ((ternion_u32)p[7] << 24);
    }
}

// The alignment of every 8-byte run a format's dq8 reads when rows start
// 4-byte aligned (ggml's rows do; the planner checks): gcd(BYTES, 4).
#define QUANT_ALIGN(bytes) ((bytes) % 4 == 0 ? 4 : (bytes) % 2 == 0 ? 2 : 1)

// Byte i (0..7) of the pair (lo, hi).
static __device__ __forceinline__ ternion_u32 quant_byte(ternion_u32 lo, ternion_u32 hi, int i) {
    return ((i < 4 ? lo : hi) >> (8 * (i & 3))) & 0xffu;
}

// The little-endian u32 at p, read with loads of A bytes (A is the
// alignment p is known to have: 4, 2 or 1).
template <int A>
static __device__ __forceinline__ int quant_ld32(const unsigned char * p) {
    if (A >= 4) return *(const int *)p;
    if (A == 2) return (int)(((const unsigned short *)p)[0] | ((ternion_u32)((const unsigned short *)p)[1] << 16));
    return (int)(p[0] | (p[1] << 8) | (p[2] << 16) | ((ternion_u32)p[3] << 24));
}

// The items of mmvq8 and mmvq8t (integer dot products against src1
// quantized to 8 bits): item it of block b is its values 32·it … 32·it +
// 31 (0 <= it < QK/32). word(b, it, i) gives values 4i … 4i + 3 of the
// item as small integers (value 4i + j in byte j, signed bytes) and
// scales(b, it, sc, mn) their scales and offsets: value e = sc[h]·q_e -
// mn[h] with h = e/16 when SPLIT (the halves have their own scales), h = 0
// otherwise; MIN says which offsets there are: 0 none, 1 one for the item
// (mn[0]), 2 one per half. quant_q32 decodes a whole item; mmvq8t's threads
// take 2 of its 8 words each (the tensor cores' fragment layout).

// The 32 values of item it of block b as words (q[i] = word i) with their
// scales and offsets.
template <typename Q>
static __device__ __forceinline__ void quant_q32(const unsigned char * b, int it, int * q, float * sc, float * mn) {
    Q::scales(b, it, sc, mn);
#pragma unroll
    for (int i = 0; i < 8; i++) q[i] = Q::word(b, it, i);
}

// Nibbles 4i … 4i + 3 of a q4_0-style group of 16 bytes at p (low nibbles
// are values 0..15, high nibbles 16..31) in the low bits of 4 bytes.
template <int A>
static __device__ __forceinline__ int quant_nib(const unsigned char * p, int i) {
    return (quant_ld32<A>(p + 4 * (i & 3)) >> (4 * (i >> 2))) & 0x0f0f0f0f;
}

// q4_0: f16 d; u8 qs[16]: value j = d·((qs[j] & 15) - 8), value j+16 = d·((qs[j] >> 4) - 8).
struct ternion_q4_0 {
    static constexpr int QK = 32, BYTES = 18, A = QUANT_ALIGN(18);
    static constexpr int SPLIT = 0, MIN = 1;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float * mn) {
        sc[0] = quant_f16(b);
        mn[0] = 8.0f * sc[0];
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) { return quant_nib<A>(b + 2, i); }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const float d = quant_f16(b);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 2 + (j & 15), lo, hi);
        const int sh = j < 16 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = d * (float)((int)((quant_byte(lo, hi, i) >> sh) & 15u) - 8);
    }
};

// q4_1: f16 d, m; u8 qs[16]: value = d·q + m.
struct ternion_q4_1 {
    static constexpr int QK = 32, BYTES = 20, A = QUANT_ALIGN(20);
    static constexpr int SPLIT = 0, MIN = 1;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float * mn) {
        sc[0] = quant_f16(b);
        mn[0] = -quant_f16(b + 2);
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) { return quant_nib<A>(b + 4, i); }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const float d = quant_f16(b), m = quant_f16(b + 2);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 4 + (j & 15), lo, hi);
        const int sh = j < 16 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = d * (float)((quant_byte(lo, hi, i) >> sh) & 15u) + m;
    }
};

// The fifth bit of q5_0/q5_1 value j: bit j of the little-endian u32 qh.
static __device__ __forceinline__ ternion_u32 quant_qh(const unsigned char * p) {
    return p[0] | (p[1] << 8) | (p[2] << 16) | ((ternion_u32)p[3] << 24);
}

// Value e of a q5_0/q5_1 block: nibble i of the pair (lo, hi) at shift sh,
// with bit e of qh as its fifth bit.
static __device__ __forceinline__ ternion_u32 quant_q5(ternion_u32 lo, ternion_u32 hi, int i, int sh, ternion_u32 qh, int e) {
    return ((quant_byte(lo, hi, i) >> sh) & 15u) | (((qh >> e) & 1u) << 4);
}

// q5_0: f16 d; u32 qh; u8 qs[16]: value = d·((nibble | bit j of qh << 4) - 16).
struct ternion_q5_0 {
    static constexpr int QK = 32, BYTES = 22, A = QUANT_ALIGN(22);
    static constexpr int SPLIT = 0, MIN = 1;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float * mn) {
        sc[0] = quant_f16(b);
        mn[0] = 16.0f * sc[0];
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) {
        return quant_nib<A>(b + 6, i) | quant_bit4x4((ternion_u32)quant_ld32<A>(b + 2) >> (4 * i));
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const float d = quant_f16(b);
        const ternion_u32 qh = quant_qh(b + 2);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 6 + (j & 15), lo, hi);
        const int sh = j < 16 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = d * (float)((int)quant_q5(lo, hi, i, sh, qh, j + i) - 16);
    }
};

// q5_1: f16 d, m; u32 qh; u8 qs[16]: value = d·(nibble | bit j of qh << 4) + m.
struct ternion_q5_1 {
    static constexpr int QK = 32, BYTES = 24, A = QUANT_ALIGN(24);
    static constexpr int SPLIT = 0, MIN = 1;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float * mn) {
        sc[0] = quant_f16(b);
        mn[0] = -quant_f16(b + 2);
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) {
        return quant_nib<A>(b + 8, i) | quant_bit4x4((ternion_u32)quant_ld32<A>(b + 4) >> (4 * i));
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const float d = quant_f16(b), m = quant_f16(b + 2);
        const ternion_u32 qh = quant_qh(b + 4);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 8 + (j & 15), lo, hi);
        const int sh = j < 16 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = d * (float)quant_q5(lo, hi, i, sh, qh, j + i) + m;
    }
};

// v[i] = d·(8 signed bytes at p, loaded A bytes at a time)[i]: the 8-bit
// formats' groups.
template <int A>
static __device__ __forceinline__ void quant_i8x8(float d, const unsigned char * p, float * v) {
    ternion_u32 lo, hi;
    quant_load8<A>(p, lo, hi);
#pragma unroll
    for (int i = 0; i < 8; i++) v[i] = d * (float)(signed char)quant_byte(lo, hi, i);
}

// q8_0: f16 d; i8 qs[32]: value = d·qs[j].
struct ternion_q8_0 {
    static constexpr int QK = 32, BYTES = 34, A = QUANT_ALIGN(34);
    static constexpr int SPLIT = 0, MIN = 0;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float *) { sc[0] = quant_f16(b); }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) { return quant_ld32<A>(b + 2 + 4 * i); }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        quant_i8x8<A>(quant_f16(b), b + 2 + j, v);
    }
};

// q8_1: f16 d, s (d·Σqs); i8 qs[32]: value = d·qs[j].
struct ternion_q8_1 {
    static constexpr int QK = 32, BYTES = 36, A = QUANT_ALIGN(36);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        quant_i8x8<A>(quant_f16(b), b + 4 + j, v);
    }
};

// q2_K: u8 scales[16] (low nibble scale, high nibble min); u8 qs[64]; f16 d,
// dmin. Value e (n = e/128, s = (e%128)/32, l = e%32) is 2 bits at shift 2s
// of qs[32n + l], scaled by scales[8n + 2s + l/16].
struct ternion_q2_K {
    static constexpr int QK = 256, BYTES = 84, A = QUANT_ALIGN(84);
    static constexpr int SPLIT = 1, MIN = 2;
    static __device__ __forceinline__ void scales(const unsigned char * b, int it, float * sc, float * mn) {
        const int n = it / 4, s = it % 4;
        const float d = quant_f16(b + 80), dmin = quant_f16(b + 82);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int v = b[8 * n + 2 * s + h];
            sc[h] = d * (float)(v & 15);
            mn[h] = dmin * (float)(v >> 4);
        }
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int it, int i) {
        return (quant_ld32<A>(b + 16 + 32 * (it / 4) + 4 * i) >> (2 * (it % 4))) & 0x03030303;
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int n = j / 128, s = (j % 128) / 32, l = j % 32;
        const ternion_u32 sc = b[8 * n + 2 * s + l / 16];
        const float dl = quant_f16(b + 80) * (float)(sc & 15u), ml = quant_f16(b + 82) * (float)(sc >> 4);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 16 + 32 * n + l, lo, hi);
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = dl * (float)((quant_byte(lo, hi, i) >> (2 * s)) & 3u) - ml;
    }
};

// q3_K: u8 hmask[32]; u8 qs[64]; u8 scales[12] (16 six-bit scales); f16 d.
// Value e (n, s, l as q2_K) is 2 bits of qs[32n + l] minus 4 unless bit
// 4n + s of hmask[l] is set, times d·(scale[8n + 2s + l/16] - 32).
struct ternion_q3_K {
    static constexpr int QK = 256, BYTES = 110, A = QUANT_ALIGN(110);
    static constexpr int SPLIT = 1, MIN = 2;
    static __device__ __forceinline__ void scales(const unsigned char * b, int it, float * sc, float * mn) {
        const int n = it / 4, s = it % 4;
        const unsigned char * sb = b + 96;
        const float d = quant_f16(b + 108);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int is = 8 * n + 2 * s + h;
            const int lo4 = is < 8 ? (sb[is] & 15) : (sb[is - 8] >> 4);
            const int hi2 = (sb[8 + is % 4] >> (2 * (is / 4))) & 3;
            sc[h] = d * (float)((lo4 | (hi2 << 4)) - 32);
            mn[h] = 4.0f * sc[h];
        }
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int it, int i) {
        const int n = it / 4, s = it % 4;
        const int lo = (quant_ld32<A>(b + 32 + 32 * n + 4 * i) >> (2 * s)) & 0x03030303;
        return lo | (((quant_ld32<A>(b + 4 * i) >> (4 * n + s)) & 0x01010101) << 2);
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int n = j / 128, s = (j % 128) / 32, l = j % 32, is = 8 * n + 2 * s + l / 16;
        const unsigned char * scales = b + 96;
        const int lo4 = is < 8 ? (scales[is] & 15) : (scales[is - 8] >> 4);
        const int hi2 = (scales[8 + is % 4] >> (2 * (is / 4))) & 3;
        const float dl = quant_f16(b + 108) * (float)((lo4 | (hi2 << 4)) - 32);
        const int m = 1 << (4 * n + s);
        ternion_u32 lo, hi, hlo, hhi;
        quant_load8<A>(b + 32 + 32 * n + l, lo, hi);
        quant_load8<A>(b + l, hlo, hhi);
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int q = (int)((quant_byte(lo, hi, i) >> (2 * s)) & 3u) - ((quant_byte(hlo, hhi, i) & m) ? 0 : 4);
            v[i] = dl * (float)q;
        }
    }
};

// The 6-bit scale and min of sub-block is (0..7) of a q4_K/q5_K block as
// floats (quant_bits.h's quant_scale_min_k4u).
static __device__ __forceinline__ void quant_scale_min_k4(int is, const unsigned char * q, float & sc, float & m) {
    unsigned s, n;
    quant_scale_min_k4u(is, q, s, n);
    sc = (float)s;
    m = (float)n;
}

// q4_K: f16 d, dmin; u8 scales[12]; u8 qs[128]. Value e (c = e/64, r = e%64)
// is the low (r < 32) or high nibble of qs[32c + r%32], times d·sc - dmin·m
// of sub-block 2c + r/32.
struct ternion_q4_K {
    static constexpr int QK = 256, BYTES = 144, A = QUANT_ALIGN(144);
    static constexpr int SPLIT = 0, MIN = 1;
    static __device__ __forceinline__ void scales(const unsigned char * b, int it, float * sc, float * mn) {
        float s, m;
        quant_scale_min_k4(it, b + 4, s, m);
        sc[0] = quant_f16(b) * s;
        mn[0] = quant_f16(b + 2) * m;
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int it, int i) {
        return (quant_ld32<A>(b + 16 + 32 * (it / 2) + 4 * i) >> (4 * (it & 1))) & 0x0f0f0f0f;
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int c = j / 64, r = j % 64;
        float sc, m;
        quant_scale_min_k4(2 * c + r / 32, b + 4, sc, m);
        const float d = quant_f16(b) * sc, dm = quant_f16(b + 2) * m;
        ternion_u32 lo, hi;
        quant_load8<A>(b + 16 + 32 * c + r % 32, lo, hi);
        const int sh = r < 32 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = d * (float)((quant_byte(lo, hi, i) >> sh) & 15u) - dm;
    }
};

// q5_K: f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]: q4_K's nibble
// plus 16 when bit 2c + r/32 of qh[r%32] is set.
struct ternion_q5_K {
    static constexpr int QK = 256, BYTES = 176, A = QUANT_ALIGN(176);
    static constexpr int SPLIT = 0, MIN = 1;
    static __device__ __forceinline__ void scales(const unsigned char * b, int it, float * sc, float * mn) {
        ternion_q4_K::scales(b, it, sc, mn);
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int it, int i) {
        const int lo = (quant_ld32<A>(b + 48 + 32 * (it / 2) + 4 * i) >> (4 * (it & 1))) & 0x0f0f0f0f;
        return lo | (((quant_ld32<A>(b + 16 + 4 * i) >> it) & 0x01010101) << 4);
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int c = j / 64, r = j % 64, l = r % 32, bit = 2 * c + r / 32;
        float sc, m;
        quant_scale_min_k4(bit, b + 4, sc, m);
        const float d = quant_f16(b) * sc, dm = quant_f16(b + 2) * m;
        ternion_u32 lo, hi, hlo, hhi;
        quant_load8<A>(b + 48 + 32 * c + l, lo, hi);
        quant_load8<A>(b + 16 + l, hlo, hhi);
        const int sh = r < 32 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const ternion_u32 q = ((quant_byte(lo, hi, i) >> sh) & 15u) | (((quant_byte(hlo, hhi, i) >> bit) & 1u) << 4);
            v[i] = d * (float)q - dm;
        }
    }
};

// q6_K: u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d. Value e (n = e/128,
// g = (e%128)/32, l = e%32): 4 low bits from ql[64n + 32(g&1) + l] (high
// nibble when g >= 2), 2 high bits at shift 2g of qh[32n + l], minus 32,
// times d·scales[8n + 2g + l/16].
struct ternion_q6_K {
    static constexpr int QK = 256, BYTES = 210, A = QUANT_ALIGN(210);
    static constexpr int SPLIT = 1, MIN = 2;
    static __device__ __forceinline__ void scales(const unsigned char * b, int it, float * sc, float * mn) {
        const int n = it / 4, g = it % 4;
        const float d = quant_f16(b + 208);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            sc[h] = d * (float)(signed char)b[192 + 8 * n + 2 * g + h];
            mn[h] = 32.0f * sc[h];
        }
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int it, int i) {
        const int n = it / 4, g = it % 4;
        const int lo = (quant_ld32<A>(b + 64 * n + 32 * (g & 1) + 4 * i) >> (g >= 2 ? 4 : 0)) & 0x0f0f0f0f;
        return lo | (((quant_ld32<A>(b + 128 + 32 * n + 4 * i) >> (2 * g)) & 0x03030303) << 4);
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int n = j / 128, g = (j % 128) / 32, l = j % 32;
        const float d = quant_f16(b + 208) * (float)(signed char)b[192 + 8 * n + 2 * g + l / 16];
        ternion_u32 lo, hi, hlo, hhi;
        quant_load8<A>(b + 64 * n + 32 * (g & 1) + l, lo, hi);
        quant_load8<A>(b + 128 + 32 * n + l, hlo, hhi);
        const int sh = g >= 2 ? 4 : 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int q = (int)(((quant_byte(lo, hi, i) >> sh) & 15u) | (((quant_byte(hlo, hhi, i) >> (2 * g)) & 3u) << 4));
            v[i] = d * (float)(q - 32);
        }
    }
};

// q8_K: f32 d; i8 qs[256]; i16 bsums[16]: value = d·qs[j].
struct ternion_q8_K {
    static constexpr int QK = 256, BYTES = 292, A = QUANT_ALIGN(292);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        quant_i8x8<A>(*(const float *)b, b + 4 + j, v);
    }
};

// The 16 non-linear levels of iq4_nl and iq4_xs (ggml's kvalues_iq4nl).
static __device__ __forceinline__ float quant_iq4nl(ternion_u32 q) {
    const signed char levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    return (float)levels[q];
}

// v[i] = d·levels[nibble i] of the 8 bytes at p (low nibbles for sh 0,
// high for 4): iq4_nl's and iq4_xs's groups.
template <int A>
static __device__ __forceinline__ void quant_iq4x8(float d, const unsigned char * p, int sh, float * v) {
    ternion_u32 lo, hi;
    quant_load8<A>(p, lo, hi);
#pragma unroll
    for (int i = 0; i < 8; i++) v[i] = d * quant_iq4nl((quant_byte(lo, hi, i) >> sh) & 15u);
}

// Values 4i … 4i + 3 of an iq4_nl-style group of 16 bytes at p (q4_0's
// nibble order) as their signed levels.
template <int A>
static __device__ __forceinline__ int quant_iq4w(const unsigned char * p, int i) {
    const ternion_u32 levels[4] = QUANT_IQ4NL_WORDS;
    return quant_lut16((ternion_u32)quant_nib<A>(p, i), levels);
}

// iq4_nl: f16 d; u8 qs[16]: value = d·levels[nibble] (q4_0's nibble order).
struct ternion_iq4_nl {
    static constexpr int QK = 32, BYTES = 18, A = QUANT_ALIGN(18);
    static constexpr int SPLIT = 0, MIN = 0;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float *) { sc[0] = quant_f16(b); }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) { return quant_iq4w<A>(b + 2, i); }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        quant_iq4x8<A>(quant_f16(b), b + 2 + (j & 15), j < 16 ? 0 : 4, v);
    }
};

// iq4_xs: f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]. Sub-block ib =
// e/32 has the 6-bit scale ls (4 low bits from scales_l, 2 high from
// scales_h) and value d·(ls - 32)·levels[nibble of qs[16ib + e%16]].
struct ternion_iq4_xs {
    static constexpr int QK = 256, BYTES = 136, A = QUANT_ALIGN(136);
    static constexpr int SPLIT = 0, MIN = 0;
    static __device__ __forceinline__ void scales(const unsigned char * b, int it, float * sc, float *) {
        const ternion_u32 sh16 = b[2] | (b[3] << 8);
        const int ls = ((b[4 + it / 2] >> (4 * (it % 2))) & 15) | (((sh16 >> (2 * it)) & 3) << 4);
        sc[0] = quant_f16(b) * (float)(ls - 32);
    }
    static __device__ __forceinline__ int word(const unsigned char * b, int it, int i) { return quant_iq4w<A>(b + 8 + 16 * it, i); }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int ib = j / 32, r = j % 32;
        const ternion_u32 sh16 = b[2] | (b[3] << 8);
        const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 15) | (((sh16 >> (2 * ib)) & 3) << 4);
        quant_iq4x8<A>(quant_f16(b) * (float)(ls - 32), b + 8 + 16 * ib + (r & 15), r < 16 ? 0 : 4, v);
    }
};

// 2^(e - 128), the scale of an mxfp4 block with exponent byte e: a normal
// float for e >= 2, else the subnormal.
static __device__ __forceinline__ float mxfp4_scale(ternion_u32 e) {
    return e >= 2 ? __int_as_float((int)((e - 1) << 23)) : __int_as_float((int)(0x00200000u << e));
}

// mxfp4: u8 e (e8m0 exponent); u8 qs[16] of e2m1 values in q4_0's nibble
// order: value = levels[nibble]·2^(e - 128) with levels {0, 1, 2, 3, 4, 6,
// 8, 12} and their negatives (ggml's kvalues_mxfp4, doubled, and
// GGML_E8M0_TO_FP32_HALF).
struct ternion_mxfp4 {
    static constexpr int QK = 32, BYTES = 17, A = QUANT_ALIGN(17);
    static constexpr int SPLIT = 0, MIN = 0;
    static __device__ __forceinline__ void scales(const unsigned char * b, int, float * sc, float *) { sc[0] = mxfp4_scale(b[0]); }
    static __device__ __forceinline__ int word(const unsigned char * b, int, int i) {
        const ternion_u32 levels[4] = {0x03020100u, 0x0c080604u, 0xfdfeff00u, 0xf4f8fafcu}; // levels as bytes
        return quant_lut16((ternion_u32)quant_nib<A>(b + 1, i), levels);
    }
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const signed char levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
        const float d = mxfp4_scale(b[0]);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 1 + (j & 15), lo, hi);
        const int sh = j < 16 ? 0 : 4;
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = d * (float)levels[(quant_byte(lo, hi, i) >> sh) & 15u];
    }
};

// The grid i-quants and the ternary formats: 256 values a block, decoded
// 8 at a time (one grid point, or two of iq3's 4-value points, per 8
// values), as quant/iq.go and quant/tq.go do, operation for operation in
// float. Value e of a block is in group k = e/8 (dq8's j/8), sub-block ib =
// k/4 of 32 values, position l = k%4 in it.

// The little-endian u16 at p (2-byte aligned: these blocks have even sizes).
static __device__ __forceinline__ ternion_u32 quant_u16(const unsigned char * p) {
    return *(const unsigned short *)p;
}

// v[i] = scale·(byte i of grid), negated where bit i of signs is set
// (quant's putSignedGrid).
static __device__ __forceinline__ void quant_signed_grid(float scale, unsigned long long grid, ternion_u32 signs, float * v) {
    const ternion_u32 lo = (ternion_u32)grid, hi = (ternion_u32)(grid >> 32);
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const float x = scale * (float)quant_byte(lo, hi, i);
        v[i] = ((signs >> i) & 1u) ? -x : x;
    }
}

// v[i] = scale·((signed byte i of grid) + delta) (quant's putShiftedGrid):
// the iq1 formats, delta ±0.125 (IQ1S_DELTA).
static __device__ __forceinline__ void quant_shifted_grid(float scale, float delta, unsigned long long grid, float * v) {
    const ternion_u32 lo = (ternion_u32)grid, hi = (ternion_u32)(grid >> 32);
#pragma unroll
    for (int i = 0; i < 8; i++) v[i] = scale * ((float)(signed char)quant_byte(lo, hi, i) + delta);
}

// iq2_xxs: f16 d; 8 sub-blocks of 8 bytes: 4 iq2xxs_grid indices (one a
// group), then a u32 aux of four 7-bit ksigns indices (bits 7l..7l+6) and
// a 4-bit scale s (bits 28..31). Value = d·(0.5 + s)·0.25·grid byte·sign.
struct ternion_iq2_xxs {
    static constexpr int QK = 256, BYTES = 66, A = QUANT_ALIGN(66);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int ib = j / 32, l = (j / 8) % 4;
        const unsigned char * g = b + 2 + 8 * ib;
        const ternion_u32 aux = (ternion_u32)quant_ld32<A>(g + 4);
        const float db = quant_f16(b) * (0.5f + (float)(aux >> 28)) * 0.25f;
        quant_signed_grid(db, ternion_iq2xxs_grid[g[l]], ternion_ksigns_iq2xs[(aux >> (7 * l)) & 127u], v);
    }
};

// iq2_xs: f16 d; u16 qs[32] (one a group: a 9-bit iq2xs_grid index, bits
// 0..8, and a 7-bit ksigns index, bits 9..15); u8 scales[8] (the 4-bit s
// of a sub-block's first 16 values in the low nibble, of its last 16 in
// the high one). Value = d·(0.5 + s)·0.25·grid byte·sign.
struct ternion_iq2_xs {
    static constexpr int QK = 256, BYTES = 74, A = QUANT_ALIGN(74);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int k = j / 8, ib = k / 4, l = k % 4;
        const ternion_u32 sc = b[66 + ib], q = quant_u16(b + 2 + 2 * k);
        const float db = quant_f16(b) * (0.5f + (float)(l < 2 ? sc & 15u : sc >> 4)) * 0.25f;
        quant_signed_grid(db, ternion_iq2xs_grid[q & 511u], ternion_ksigns_iq2xs[q >> 9], v);
    }
};

// iq2_s: f16 d; u8 qs[32] (low 8 bits of a group's 10-bit iq2s_grid
// index); u8 signs[32] (a group's 8 sign bits); u8 qh[8] (bits 2l, 2l+1 of
// a sub-block's byte: the index's top bits of its group l); u8 scales[8]
// as iq2_xs. Value = d·(0.5 + s)·0.25·grid byte·sign.
struct ternion_iq2_s {
    static constexpr int QK = 256, BYTES = 82, A = QUANT_ALIGN(82);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int k = j / 8, ib = k / 4, l = k % 4;
        const ternion_u32 sc = b[74 + ib];
        const ternion_u32 idx = b[2 + k] | ((ternion_u32)b[66 + ib] << (8 - 2 * l) & 0x300u);
        const float db = quant_f16(b) * (0.5f + (float)(l < 2 ? sc & 15u : sc >> 4)) * 0.25f;
        quant_signed_grid(db, ternion_iq2s_grid[idx], b[34 + k], v);
    }
};

// iq3_xxs: f16 d; u8 qs[64] (an iq3xxs_grid index per 4 values); a u32 per
// sub-block as iq2_xxs's aux. Value = d·(0.5 + s)·0.5·grid byte·sign.
struct ternion_iq3_xxs {
    static constexpr int QK = 256, BYTES = 98, A = QUANT_ALIGN(98);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int k = j / 8, ib = k / 4, l = k % 4;
        const ternion_u32 aux = (ternion_u32)quant_ld32<A>(b + 66 + 4 * ib);
        const float db = quant_f16(b) * (0.5f + (float)(aux >> 28)) * 0.5f;
        const unsigned long long grid =
            ternion_iq3xxs_grid[b[2 + 2 * k]] | (unsigned long long)ternion_iq3xxs_grid[b[3 + 2 * k]] << 32;
        quant_signed_grid(db, grid, ternion_ksigns_iq2xs[(aux >> (7 * l)) & 127u], v);
    }
};

// iq3_s: f16 d; u8 qs[64] (low 8 bits of a 9-bit iq3s_grid index per 4
// values); u8 qh[8] (bit m of a sub-block's byte: the top index bit of its
// m-th 4 values); u8 signs[32]; u8 scales[4] (the 4-bit s of sub-block ib
// in nibble ib%2 of byte ib/2). Value = d·(1 + 2s)·grid byte·sign.
struct ternion_iq3_s {
    static constexpr int QK = 256, BYTES = 110, A = QUANT_ALIGN(110);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int k = j / 8, ib = k / 4, l = k % 4;
        const ternion_u32 qh = b[66 + ib];
        const float db = quant_f16(b) * (float)(1 + 2 * (int)((b[106 + ib / 2] >> (4 * (ib % 2))) & 15));
        const ternion_u32 i1 = b[2 + 2 * k] | (qh << (8 - 2 * l) & 256u), i2 = b[3 + 2 * k] | (qh << (7 - 2 * l) & 256u);
        const unsigned long long grid = ternion_iq3s_grid[i1] | (unsigned long long)ternion_iq3s_grid[i2] << 32;
        quant_signed_grid(db, grid, b[74 + k], v);
    }
};

// iq1_s: f16 d; u8 qs[32] (low 8 bits of a group's 11-bit iq1s_grid
// index); u16 qh[8], one a sub-block: bits 3l..3l+2 the index's top bits of
// group l, bits 12..14 a scale s, bit 15 the sign of delta. Value =
// d·(2s + 1)·(grid signed byte + delta), delta = ±0.125.
struct ternion_iq1_s {
    static constexpr int QK = 256, BYTES = 50, A = QUANT_ALIGN(50);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int k = j / 8, ib = k / 4, l = k % 4;
        const ternion_u32 qh = quant_u16(b + 34 + 2 * ib);
        const float dl = quant_f16(b) * (float)(2 * (int)((qh >> 12) & 7u) + 1);
        const float delta = (qh & 0x8000u) ? -0.125f : 0.125f;
        quant_shifted_grid(dl, delta, ternion_iq1s_grid[b[2 + k] | ((qh >> (3 * l)) & 7u) << 8], v);
    }
};

// iq1_m: u8 qs[32] (as iq1_s); u8 qh[16] (a nibble a group, low nibble
// first: bits 0..2 the index's top bits, bit 3 the sign of delta); u16
// sc[4]: bits 0..11 of word w the 3-bit scales s of values 64w..64w+63, 16
// values each, bits 12..15 of word w bits 4w..4w+3 of the f16 d. Value =
// d·(2s + 1)·(grid signed byte + delta), delta = ±0.125.
struct ternion_iq1_m {
    static constexpr int QK = 256, BYTES = 56, A = QUANT_ALIGN(56);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int k = j / 8, h = k / 2;
        ternion_u32 lo, hi;
        quant_load8<A>(b + 48, lo, hi); // sc[0], sc[1] in lo; sc[2], sc[3] in hi
        const ternion_u32 bits = (lo >> 12 & 0x000fu) | (lo >> 24 & 0x00f0u) | (hi >> 4 & 0x0f00u) | (hi >> 16 & 0xf000u);
        const float d = ternion_f16_to_f32((ternion_f16)bits);
        const ternion_u32 w = (h / 4 < 2 ? lo : hi) >> (16 * ((h / 4) % 2)); // sc[h/4] in the low 16 bits
        const float dl = d * (float)(2 * (int)((w >> (3 * (h % 4))) & 7u) + 1);
        const ternion_u32 nib = (ternion_u32)b[32 + k / 2] >> (4 * (k % 2));
        const float delta = (nib & 8u) ? -0.125f : 0.125f;
        quant_shifted_grid(dl, delta, ternion_iq1s_grid[b[k] | (nib & 7u) << 8], v);
    }
};

// Trit n (0 = most significant) of a tq1_0 byte x, minus 1: the byte times
// 3^n keeps trit n at the top (mod 256), read as ⌊3·byte/256⌋ (quant's
// trit): -1, 0 or +1 (2 for bytes no encoder writes).
static __device__ __forceinline__ int quant_trit(ternion_u32 x, int n) {
    const ternion_u32 pow3 = n == 0 ? 1u : n == 1 ? 3u : n == 2 ? 9u : n == 3 ? 27u : 81u;
    return (int)((((x * pow3) & 0xffu) * 3u) >> 8) - 1;
}

// tq1_0: u8 qs[32] (5 trits a byte: values m, m+32, …, m+128 in byte m);
// u8 qs2[16] (values 160+m, 160+m+16, …, 160+m+64 in byte 32+m); u8 qh[4]
// (4 trits a byte: values 240+j, 244+j, 248+j, 252+j in byte 48+j); f16 d.
// Value = (trit - 1)·d.
struct ternion_tq1_0 {
    static constexpr int QK = 256, BYTES = 54, A = QUANT_ALIGN(54);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const float d = quant_f16(b + 52);
        if (j >= 240) { // trits n0 and n0 + 1 of bytes 48..51
            const int n0 = (j - 240) / 4;
            const ternion_u32 x = quant_u16(b + 48) | (quant_u16(b + 50) << 16);
#pragma unroll
            for (int i = 0; i < 8; i++) v[i] = (float)quant_trit((x >> (8 * (i % 4))) & 0xffu, n0 + i / 4) * d;
            return;
        }
        // Trit n of the 8 bytes at p.
        const unsigned char * p = j < 160 ? b + j % 32 : b + 32 + (j - 160) % 16;
        const int n = j < 160 ? j / 32 : (j - 160) / 16;
        ternion_u32 lo, hi;
        quant_load8<A>(p, lo, hi);
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = (float)quant_trit(quant_byte(lo, hi, i), n) * d;
    }
};

// tq2_0: u8 qs[64] (value 128h + 32l + m in bits 2l, 2l+1 of byte 32h + m,
// as trit + 1); f16 d. Value = (q - 1)·d (the unused code 3 gives 2d).
struct ternion_tq2_0 {
    static constexpr int QK = 256, BYTES = 66, A = QUANT_ALIGN(66);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int j, float * v) {
        const int h = j / 128, l = (j % 128) / 32, m = j % 32;
        const float d = quant_f16(b + 64);
        ternion_u32 lo, hi;
        quant_load8<A>(b + 32 * h + m, lo, hi);
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = (float)((int)((quant_byte(lo, hi, i) >> (2 * l)) & 3u) - 1) * d;
    }
};

// Float "formats" for the kernels that take any src0 type (MUL_MAT_ID): 8
// values of f32, f16 or bf16 as one block.
struct ternion_qf32 {
    static constexpr int QK = 8, BYTES = 32, A = QUANT_ALIGN(32);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int, float * v) {
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = ((const float *)b)[i];
    }
};
struct ternion_qf16 {
    static constexpr int QK = 8, BYTES = 16, A = QUANT_ALIGN(16);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int, float * v) {
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = ternion_f16_to_f32(((const ternion_f16 *)b)[i]);
    }
};
struct ternion_qbf16 {
    static constexpr int QK = 8, BYTES = 16, A = QUANT_ALIGN(16);
    static __device__ __forceinline__ void dq8(const unsigned char * b, int, float * v) {
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = __int_as_float((int)((ternion_u32)((const unsigned short *)b)[i] << 16));
    }
};
