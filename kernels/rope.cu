// rope.cu - ggml's ROPE: rotary position embedding of a = [head_dim, n_head,
// n_tokens, ne3] by token positions (i32), in the four modes the seed knows:
// normal (pairs (2i, 2i+1)), NeoX (pairs (i, i + n_dims/2)), multi-section
// (NeoX pairs, each pair's position taken from one of four position rows by
// its section) and vision (pairs (i, i + n_dims), positions and frequencies
// restarting in each section). Optional per-pair frequency factors and the
// YaRN ramp between interpolated and extrapolated angles.
//
// Launch: one block per token (blockIdx.x = i2 + ne2*i3); threads along x
// walk the pairs of a row, threads along y (and blocks along y) walk the
// heads. The angle of a pair depends on the token and the pair only, so each
// thread computes its cos/sin once and applies it to every head it visits;
// four heads' loads are issued before their stores.
#include "vendor.h"

// The modes (template argument M).
#define TERNION_ROPE_NORM 0
#define TERNION_ROPE_NEOX 1
#define TERNION_ROPE_MULTI 2
#define TERNION_ROPE_VISION 3

// The YaRN angle and magnitude of pair p: theta_extrap is the extrapolated
// angle (position times frequency over the pair's frequency factor).
static __device__ __forceinline__ void ternion_rope_yarn(float theta_extrap, int p, float freq_scale, float ext_factor,
                                                         float mscale, float low, float high, float & c, float & s) {
    float theta = freq_scale * theta_extrap;
    if (ext_factor != 0.0f) {
        const float y = ((float)p - low) / fmaxf(0.001f, high - low);
        const float mix = (1.0f - fminf(1.0f, fmaxf(0.0f, y))) * ext_factor;
        theta = theta * (1.0f - mix) + theta_extrap * mix;
    }
    s = sinf(theta);
    c = cosf(theta);
    c *= mscale;
    s *= mscale;
}

// Two elements of a row at byte offsets o0 and o1 as floats; V loads or
// stores them as one 2-element vector (o1 = o0 + element size, 2-element
// aligned).
template <typename T, bool V> struct ternion_rope_pair;

template <bool V> struct ternion_rope_pair<float, V> {
    static __device__ __forceinline__ float2 load(const char * r, ternion_i64 o0, ternion_i64 o1) {
        if (V) {
            return *(const float2 *)(r + o0);
        }
        return make_float2(*(const float *)(r + o0), *(const float *)(r + o1));
    }
    static __device__ __forceinline__ void store(char * r, ternion_i64 o0, ternion_i64 o1, float2 v) {
        if (V) {
            *(float2 *)(r + o0) = v;
        } else {
            *(float *)(r + o0) = v.x;
            *(float *)(r + o1) = v.y;
        }
    }
};

template <bool V> struct ternion_rope_pair<ternion_f16, V> {
    static __device__ __forceinline__ float2 load(const char * r, ternion_i64 o0, ternion_i64 o1) {
        if (V) {
            const ternion_u32 v = *(const ternion_u32 *)(r + o0);
            return make_float2(ternion_f16_to_f32((ternion_f16)(v & 0xffffu)), ternion_f16_to_f32((ternion_f16)(v >> 16)));
        }
        return make_float2(ternion_f16_to_f32(*(const ternion_f16 *)(r + o0)),
                           ternion_f16_to_f32(*(const ternion_f16 *)(r + o1)));
    }
    static __device__ __forceinline__ void store(char * r, ternion_i64 o0, ternion_i64 o1, float2 v) {
        if (V) {
            *(ternion_u32 *)(r + o0) = (ternion_u32)ternion_f32_to_f16(v.x) | ((ternion_u32)ternion_f32_to_f16(v.y) << 16);
        } else {
            *(ternion_f16 *)(r + o0) = ternion_f32_to_f16(v.x);
            *(ternion_f16 *)(r + o1) = ternion_f32_to_f16(v.y);
        }
    }
};

// Heads per unrolled step of the head loop.
#define TERNION_ROPE_UNROLL 4

// Rotates by (c, s) the element pair at byte offsets so0, so1 of src's rows
// (do0, do1 of dst's) of every head this thread visits, or copies it (!R).
template <typename T, bool V, bool R = true>
static __device__ __forceinline__ void ternion_rope_heads(char * d, const char * x, ternion_i64 dnb1, ternion_i64 snb1,
                                                          int ne1, ternion_i64 so0, ternion_i64 so1, ternion_i64 do0,
                                                          ternion_i64 do1, float c, float s) {
    const int step = gridDim.y * blockDim.y;
    for (int h = blockIdx.y * blockDim.y + threadIdx.y; h < ne1; h += TERNION_ROPE_UNROLL * step) {
        float2 v[TERNION_ROPE_UNROLL];
#pragma unroll
        for (int u = 0; u < TERNION_ROPE_UNROLL; u++) {
            const int i1 = h + u * step;
            if (i1 < ne1) {
                v[u] = ternion_rope_pair<T, V>::load(x + i1 * snb1, so0, so1);
            }
        }
#pragma unroll
        for (int u = 0; u < TERNION_ROPE_UNROLL; u++) {
            const int i1 = h + u * step;
            if (i1 < ne1) {
                ternion_rope_pair<T, V>::store(d + i1 * dnb1, do0, do1,
                                               R ? make_float2(v[u].x * c - v[u].y * s, v[u].x * s + v[u].y * c) : v[u]);
            }
        }
    }
}

// Copies the pair (2p, 2p+1) of every head this thread visits (the
// dimensions past n_dims).
template <typename T>
static __device__ __forceinline__ void ternion_rope_copy(char * d, const char * x, const ternion_tensor & dst,
                                                         const ternion_tensor & src, int ne1, int p, bool packed) {
    const ternion_i64 sn0 = src.nb[0], dn0 = dst.nb[0];
    if (packed) {
        ternion_rope_heads<T, true, false>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sn0, 0, 2 * p * dn0, 0, 1.0f, 0.0f);
    } else {
        ternion_rope_heads<T, false, false>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sn0, (2 * p + 1) * sn0, 2 * p * dn0,
                                            (2 * p + 1) * dn0, 1.0f, 0.0f);
    }
}

template <int M, typename T>
static __device__ __forceinline__ void rope(ternion_tensor dst, ternion_tensor src, const int * pos, const float * ff,
                                            ternion_fastdiv ne2, int n_dims, int sec0, int sec1, int sec2, int sec3,
                                            float log2_theta_scale, float freq_scale, float ext_factor, float mscale,
                                            float low, float high) {
    const ternion_u32 ch = blockIdx.x;
    const ternion_u32 i3 = ternion_fastdiv_div(ch, ne2);
    const ternion_u32 i2 = ch - i3 * ne2.d;
    const char * x = (const char *)src.data + i2 * src.nb[2] + i3 * src.nb[3];
    char * d = (char *)dst.data + i2 * dst.nb[2] + i3 * dst.nb[3];
    const ternion_i64 sz = (ternion_i64)sizeof(T);
    const ternion_i64 sn0 = src.nb[0], dn0 = dst.nb[0];
    // Pairs of neighbours load as one vector when both tensors pack their
    // rows and every row starts 2-element aligned.
    const ternion_i64 amask = 2 * sz - 1;
    const bool packed = sn0 == sz && dn0 == sz &&
                        ((((ternion_i64)src.data | src.nb[1] | src.nb[2] | src.nb[3] | (ternion_i64)dst.data | dst.nb[1] |
                           dst.nb[2] | dst.nb[3]) &
                          amask) == 0);

    const int npairs = (int)(dst.ne[0] / 2);
    const int ne1 = (int)dst.ne[1];
    const int nrot = M == TERNION_ROPE_VISION ? n_dims : n_dims / 2; // rotated pairs
    const int gap = M == TERNION_ROPE_VISION ? n_dims : n_dims / 2;  // x1 - x0 outside normal mode
    const int sect = sec0 + sec1 + sec2 + sec3;

    for (int p = threadIdx.x; p < npairs; p += blockDim.x) {
        if (p >= nrot) {
            // Past the rotated dimensions: the pair (2p, 2p+1) is copied.
            ternion_rope_copy<T>(d, x, dst, src, ne1, p, packed);
            continue;
        }
        float position;
        int e = p; // the power of theta_scale
        if (M == TERNION_ROPE_NORM || M == TERNION_ROPE_NEOX) {
            position = (float)pos[i2];
        } else {
            const int sector = p % sect;
            int k = 0, start = 0;
            if (sector >= sec0 + sec1 + sec2) {
                k = 3;
                start = sec0 + sec1 + sec2;
            } else if (sector >= sec0 + sec1) {
                k = 2;
                start = sec0 + sec1;
            } else if (sector >= sec0) {
                k = 1;
                start = sec0;
            }
            position = (float)pos[i2 + k * ne2.d];
            if (M == TERNION_ROPE_VISION) {
                e = sector - start;
            }
        }
        float theta = position * exp2f((float)e * log2_theta_scale);
        if (ff != 0) {
            theta /= ff[p];
        }
        float c, s;
        ternion_rope_yarn(theta, p, freq_scale, ext_factor, mscale, low, high, c, s);
        if (M != TERNION_ROPE_NORM) {
            ternion_rope_heads<T, false>(d, x, dst.nb[1], src.nb[1], ne1, p * sn0, (p + gap) * sn0, p * dn0,
                                         (p + gap) * dn0, c, s);
        } else if (packed) {
            ternion_rope_heads<T, true>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sz, 0, 2 * p * sz, 0, c, s);
        } else {
            ternion_rope_heads<T, false>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sn0, (2 * p + 1) * sn0, 2 * p * dn0,
                                         (2 * p + 1) * dn0, c, s);
        }
    }
}
