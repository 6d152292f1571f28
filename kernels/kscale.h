// kscale.h - the 6-bit scale and min of a sub-block of ggml's q4_K and q5_K
// blocks (ggml's get_scale_min_k4), shared by quant.h's decoders and
// gemm90's expansion of q4_K.
#pragma once

// The scale sc and min m (0..63) of sub-block is (0..7) from the block's 12
// scale bytes q: sub-blocks 0..3 in the low 6 bits of q[is] and q[is + 4],
// 4..7 in a nibble of q[is + 4] and the top 2 bits of q[is - 4] and q[is].
static __device__ __forceinline__ void kscale_k4(int is, const unsigned char * q, unsigned & sc, unsigned & m) {
    if (is < 4) {
        sc = q[is] & 63u;
        m = q[is + 4] & 63u;
    } else {
        sc = (q[is + 4] & 15u) | ((q[is - 4] >> 6) << 4);
        m = (q[is + 4] >> 4) | ((q[is] >> 6) << 4);
    }
}
