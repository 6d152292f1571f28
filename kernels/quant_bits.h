// quant_bits.h - bit manipulations of ggml's quantized blocks that both
// quant.h's decoders and gemm90.cu's expansion into wgmma fragments use:
// q4_K/q5_K's packed 6-bit scales and mins, q5's fifth bits, and 16-entry
// byte tables (iq4_nl's levels).
#pragma once
#include "vendor.h"

// The scale sc and min m (0..63) of sub-block is (0..7) of a q4_K/q5_K
// block from its 12 scale bytes q (ggml's get_scale_min_k4): sub-blocks
// 0..3 in the low 6 bits of q[is] and q[is + 4], 4..7 in a nibble of
// q[is + 4] and the top 2 bits of q[is - 4] and q[is].
static __device__ __forceinline__ void quant_scale_min_k4u(int is, const unsigned char * q, unsigned & sc, unsigned & m) {
    if (is < 4) {
        sc = q[is] & 63u;
        m = q[is + 4] & 63u;
    } else {
        sc = (q[is + 4] & 15u) | ((q[is - 4] >> 6) << 4);
        m = (q[is + 4] >> 4) | ((q[is] >> 6) << 4);
    }
}

// Bits 0..3 of b at bit 4 of bytes 0..3: the fifth bits of 4 q5 values.
static __device__ __forceinline__ int quant_bit4x4(ternion_u32 b) {
    return (int)(((b << 4) & 0x10u) | ((b << 11) & 0x1000u) | ((b << 18) & 0x100000u) | ((b << 25) & 0x10000000u));
}

// Byte i of the result = t's byte (byte i of idx), for idx bytes 0..15 and
// a 16-byte table t (two byte permutes, picked per byte by bit 3 of idx).
static __device__ __forceinline__ int quant_lut16(ternion_u32 idx, const ternion_u32 * t) {
    const ternion_u32 n = idx | (idx >> 4);                    // idx0 | idx1 << 4 in byte 0, idx2 | idx3 << 4 in byte 2
    const ternion_u32 s = (n & 0xffu) | ((n >> 8) & 0xff00u); // the 4 indices as nibbles
    const ternion_u32 m = ((idx >> 3) & 0x01010101u) * 0xffu;  // 0xff in the bytes whose index is >= 8
    return (int)((ternion_byte_perm(t[0], t[1], s) & ~m) | (ternion_byte_perm(t[2], t[3], s) & m));
}

// iq4_nl's 16 levels (ggml's kvalues_iq4nl) as signed bytes in 4 words: a
// quant_lut16 table.
#define QUANT_IQ4NL_WORDS {0xbfad9881u, 0xf6eaddcfu, 0x26190d01u, 0x71594535u}
