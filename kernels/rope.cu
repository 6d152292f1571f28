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
//
// rope_flat (normal and NeoX, src and dst contiguous and 8-byte aligned): a
// flat 1D launch over 8-byte vectors of the rows (2 f32 or 4 f16 elements);
// each thread loads its TERNION_ROPE_FLAT_VPT vectors, blockDim.x apart,
// before it computes an angle, and reuses a vector's cos/sin for the next
// when both sit at the same column of the same token (on the H200 for
// [128,32,512]: f32 7.96 -> 4.73 µs, f16 5.58 -> 3.9 µs, bench/experiments/rope.cu).
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
    sincosf(theta, &s, &c); // accurate: positions reach 128K, where __sincosf's error grows with the angle
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

// Vectors a thread of rope_flat handles, blockDim.x apart.
#define TERNION_ROPE_FLAT_VPT 4

// 8 bytes as E = 8/sizeof(T) floats, and back.
template <typename T> static __device__ __forceinline__ void ternion_rope_unpack(uint2 w, float * f) {
    if (sizeof(T) == 4) {
        f[0] = __uint_as_float(w.x);
        f[1] = __uint_as_float(w.y);
    } else {
        f[0] = ternion_f16_to_f32((ternion_f16)(w.x & 0xffffu));
        f[1] = ternion_f16_to_f32((ternion_f16)(w.x >> 16));
        f[2 % (8 / sizeof(T))] = ternion_f16_to_f32((ternion_f16)(w.y & 0xffffu));
        f[3 % (8 / sizeof(T))] = ternion_f16_to_f32((ternion_f16)(w.y >> 16));
    }
}
template <typename T> static __device__ __forceinline__ uint2 ternion_rope_pack(const float * f) {
    if (sizeof(T) == 4) {
        return make_uint2(__float_as_uint(f[0]), __float_as_uint(f[1]));
    }
    return make_uint2((ternion_u32)ternion_f32_to_f16(f[0]) | ((ternion_u32)ternion_f32_to_f16(f[1]) << 16),
                      (ternion_u32)ternion_f32_to_f16(f[2 % (8 / sizeof(T))]) |
                          ((ternion_u32)ternion_f32_to_f16(f[3 % (8 / sizeof(T))]) << 16));
}

// Normal and NeoX modes on contiguous rows of ne0 = (upr + hv) * E elements.
// Unit q of nunits is row q / upr, column u = q % upr of the row; the row is
// token row / ne1, i2 = token % ne2. Normal (hv = 0): unit u is the vector
// at element e0 = u*E, its E/2 pairs rotated below n_dims, copied past it.
// NeoX: hv = n_dims/2/E; unit u < hv is the vector at e0 = u*E and its
// partner at e0 + n_dims/2 (pairs e0+j), unit u >= hv the vector at
// (u + hv)*E, copied.
template <int M, typename T>
static __device__ __forceinline__ void rope_flat(char * dst, const char * src, const int * pos, const float * ff,
                                                 int nunits, ternion_fastdiv upr, int hv, ternion_fastdiv ne1,
                                                 ternion_fastdiv ne2, int n_dims, float log2_theta_scale, float freq_scale,
                                                 float ext_factor, float mscale, float low, float high) {
    constexpr int E = 8 / (int)sizeof(T);
    constexpr int VPT = TERNION_ROPE_FLAT_VPT;
    const ternion_u32 ne0 = (upr.d + (ternion_u32)hv) * E;
    const ternion_u32 half = (ternion_u32)(n_dims / 2); // NeoX partner distance in elements
    const ternion_u32 chunk = blockDim.x * VPT;
    for (ternion_u32 base = blockIdx.x * chunk; base < (ternion_u32)nunits; base += gridDim.x * chunk) {
        uint2 a[VPT], b[VPT];
        ternion_u32 off[VPT], col[VPT], tok[VPT];
        bool rot[VPT];
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            const ternion_u32 q = base + k * blockDim.x + threadIdx.x;
            rot[k] = false;
            if (q < (ternion_u32)nunits) {
                const ternion_u32 row = ternion_fastdiv_div(q, upr);
                const ternion_u32 u = q - row * upr.d;
                const ternion_u32 e0 = (u + (u >= (ternion_u32)hv ? (ternion_u32)hv : 0u)) * E;
                off[k] = row * ne0 + e0;
                col[k] = e0;
                tok[k] = ternion_fastdiv_div(row, ne1);
                rot[k] = e0 < (ternion_u32)n_dims;
                a[k] = *(const uint2 *)(src + (ternion_i64)off[k] * sizeof(T));
                if (M == TERNION_ROPE_NEOX && rot[k]) {
                    b[k] = *(const uint2 *)(src + ((ternion_i64)off[k] + half) * sizeof(T));
                }
            }
        }
        float c[E], s[E];
        ternion_u32 ctok = 0xffffffffu, ccol = 0xffffffffu; // whose cos/sin c and s hold
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            const ternion_u32 q = base + k * blockDim.x + threadIdx.x;
            if (q >= (ternion_u32)nunits) {
                continue;
            }
            char * d = dst + (ternion_i64)off[k] * sizeof(T);
            if (!rot[k]) {
                *(uint2 *)d = a[k];
                continue;
            }
            if (tok[k] != ctok || col[k] != ccol) {
                ctok = tok[k];
                ccol = col[k];
                const ternion_u32 i3 = ternion_fastdiv_div(ctok, ne2);
                const float position = (float)pos[ctok - i3 * ne2.d];
                constexpr int NP = M == TERNION_ROPE_NEOX ? E : E / 2; // pairs of a unit
#pragma unroll
                for (int j = 0; j < NP; j++) {
                    const int p = (int)(M == TERNION_ROPE_NEOX ? ccol : ccol / 2) + j;
                    float theta = position * exp2f((float)p * log2_theta_scale);
                    if (ff != 0) {
                        theta /= ff[p];
                    }
                    ternion_rope_yarn(theta, p, freq_scale, ext_factor, mscale, low, high, c[j], s[j]);
                }
            }
            float x[E];
            ternion_rope_unpack<T>(a[k], x);
            if (M == TERNION_ROPE_NEOX) {
                float y[E];
                ternion_rope_unpack<T>(b[k], y);
#pragma unroll
                for (int j = 0; j < E; j++) {
                    const float x0 = x[j], x1 = y[j];
                    x[j] = x0 * c[j] - x1 * s[j];
                    y[j] = x0 * s[j] + x1 * c[j];
                }
                *(uint2 *)(d + (ternion_i64)half * sizeof(T)) = ternion_rope_pack<T>(y);
            } else {
#pragma unroll
                for (int j = 0; j < E / 2; j++) {
                    const float x0 = x[2 * j], x1 = x[2 * j + 1];
                    x[2 * j] = x0 * c[j] - x1 * s[j];
                    x[2 * j + 1] = x0 * s[j] + x1 * c[j];
                }
            }
            *(uint2 *)d = ternion_rope_pack<T>(x);
        }
    }
}
