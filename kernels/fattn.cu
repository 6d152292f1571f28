// fattn.cu - ggml's FLASH_ATTN_EXT: out = softmax(scale·Q·Kᵀ (softcapped) +
// slope·mask, with an optional sink logit per head) · V, for f32 Q, f16 K and
// V of one head size D (hsk = hsv), GQA (q head h reads kv head h / gqa, q
// batch i3 reads kv batch i3 / r3), the mask broadcast over heads and batches
// by modulo. The output is ggml's permuted [D, n_head, n_q, ne3] f32.
//
// Four paths, chosen by core/ops (fattnChoose):
//   - fattn_dect_d{D}_r{R} (NVIDIA, arch >= 8.0; D = 64, 128, 256): one
//     query on the tensor cores, GQA ratio <= R; see the comment above
//     fattn_dect.
//   - fattn_dec_d{D}_r{R} (any vendor): one query, GQA ratio <= R; see the
//     comment above fattn_dec. The partials of both one-query kernels are
//     merged by the last block of each tile (kv head, batch) to finish, which
//     it finds on the device's tile counters (fattn_dec_fold), or, without
//     counters, by fattn_dec_combine.
//   - fattn_vec_d{D}_r{R} (any vendor): flash-decoding. Block (x, y, z) takes
//     KV chunk x, R query rows (GQA heads × query columns of one kv head) of
//     row group y, kv head and batch z. 128 threads in groups of G lanes, each
//     lane holding 16 bytes of a K or V row (uint4 loads); tiles of 64 KV
//     positions: scores into shared memory, an online-softmax update per row,
//     then P·V accumulated in registers. With one chunk the block writes the
//     output; with several it writes its max, sum and unnormalised
//     accumulator to a partial buffer that fattn_combine merges.
//   - fattn_mma_d{D}, fattn_mma_w8_d{D} (NVIDIA, arch >= 8.0): tensor-core
//     prefill with mma.sync m16n8k16 (f16 in, f32 accumulate). Block (x, y,
//     z) takes 16·W queries (W = 4 warps, or 8 for _w8: 16 queries a warp) of
//     q head y, batch z; the Q tile (pre-scaled, f16) lives in shared memory,
//     K and V tiles of 64 positions stream through shared memory with
//     cp.async (V(i) loads while S = Q·K(i)ᵀ is computed, K(i+1) and its mask
//     tile while P·V(i) is), the online softmax stays in registers. W = 8
//     shares each K/V tile among twice the queries (half the L2 reads) at one
//     block a multiprocessor. Elsewhere (older archs, HIP, MUSA) its body is
//     empty and the planner never launches it.
#include "fattn.h"

#define FATTN_THREADS 128
#define FATTN_TILE 64

// The scaled (and softcapped) score x plus the masked bias of position j.
static __device__ __forceinline__ float fattn_logit(float x, float softcap, const ternion_f16 * mrow, ternion_i64 j, float slope) {
    if (softcap != 0.0f) {
        x = softcap * tanhf(x);
    }
    if (mrow != nullptr) {
        x += slope * ternion_f16_to_f32(mrow[j]);
    }
    return x;
}

// Position j0 of mask row iq1 for q head h, batch iq3 (dimensions 2 and 3
// broadcast by modulo); nullptr without a mask.
static __device__ __forceinline__ const ternion_f16 * fattn_mask_row(ternion_tensor mask, ternion_i64 iq1, ternion_u32 h,
                                                                     ternion_u32 iq3, ternion_i64 j0) {
    if (mask.data == nullptr) {
        return nullptr;
    }
    return (const ternion_f16 *)((const char *)mask.data + iq1 * mask.nb[1] + (h % (ternion_u32)mask.ne[2]) * mask.nb[2] +
                                 (iq3 % (ternion_u32)mask.ne[3]) * mask.nb[3]) +
           j0;
}

// The 8 halves of a uint4 as floats.
static __device__ __forceinline__ void fattn_unpack8(const uint4 raw, float * f) {
    const ternion_f16 * h = (const ternion_f16 *)&raw;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        f[e] = ternion_f16_to_f32(h[e]);
    }
}

// Lanes of a vector-kernel group for K head size DK and V head size DV: 16
// bytes (8 halves) of a row each, 8, 16 or 32 lanes.
template <int DK, int DV> struct fattn_vec_geometry {
    static constexpr int CK = DK / 8, CV = DV / 8;                  // 16-byte chunks of a K and a V row
    static constexpr int C = CK > CV ? CK : CV;
    static constexpr int G = C >= 32 ? 32 : (C > 8 ? 16 : 8);       // lanes per group
    static constexpr int NCK = (CK + G - 1) / G, NCV = (CV + G - 1) / G; // chunks per lane
    static constexpr int NG = FATTN_THREADS / G;                   // groups per block
};

template <int DK, int DV, int R>
static __device__ __forceinline__ void fattn_vec(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                                 ternion_tensor mask, const float * sinks, float * part, float scale,
                                                 float softcap, float max_bias, float m0, float m1, ternion_u32 n_head_log2,
                                                 ternion_u32 gqa, ternion_u32 r3, ternion_u32 chunk) {
    typedef fattn_vec_geometry<DK, DV> geo;
    constexpr int CK = geo::CK, CV = geo::CV, G = geo::G, NCK = geo::NCK, NCV = geo::NCV, NG = geo::NG;
    constexpr int T = FATTN_TILE;
    __shared__ float sP[R][T];
    __shared__ float sRed[NG][DV];
    __shared__ float sM[R], sS[R], sF[R], sSlope[R];
    __shared__ const ternion_f16 * sMrow[R];

    const int tid = threadIdx.x, lane = tid % G, gi = tid / G;
    const ternion_u32 nq = (ternion_u32)q.ne[1], n_head = (ternion_u32)q.ne[2], nhkv = (ternion_u32)k.ne[2];
    const ternion_u32 nrows = gqa * nq;
    const ternion_u32 ik2 = blockIdx.z % nhkv, iq3 = blockIdx.z / nhkv, ik3 = iq3 / r3;
    const ternion_i64 nkv = k.ne[1];

    // Row rr of the block is query column iq1 of q head h (rows past the
    // end repeat the last row and write nothing).
    ternion_u32 h[R], iq1[R];
    bool valid[R];
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
        const ternion_u32 gr0 = blockIdx.y * R + rr;
        valid[rr] = gr0 < nrows;
        const ternion_u32 gr = valid[rr] ? gr0 : nrows - 1;
        h[rr] = ik2 * gqa + gr / nq;
        iq1[rr] = gr % nq;
    }
    if (tid < R) {
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            if (rr == tid) {
                sM[rr] = FATTN_NEG_INF;
                sS[rr] = 0.0f;
                sSlope[rr] = fattn_slope(max_bias, m0, m1, n_head_log2, h[rr]);
                sMrow[rr] = fattn_mask_row(mask, iq1[rr], h[rr], iq3, 0);
            }
        }
    }

    // This lane's 8·NCK elements of each query row, scaled.
    float qr[R][NCK][8];
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
        const float * qrow = (const float *)((const char *)q.data + iq1[rr] * q.nb[1] + h[rr] * q.nb[2] + iq3 * q.nb[3]);
#pragma unroll
        for (int c = 0; c < NCK; c++) {
            const int ch = lane + c * G;
#pragma unroll
            for (int e = 0; e < 8; e++) {
                qr[rr][c][e] = ch < CK ? qrow[ch * 8 + e] * scale : 0.0f;
            }
        }
    }
    float acc[R][NCV][8];
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
#pragma unroll
        for (int c = 0; c < NCV; c++) {
#pragma unroll
            for (int e = 0; e < 8; e++) {
                acc[rr][c][e] = 0.0f;
            }
        }
    }
    __syncthreads();

    const char * kb = (const char *)k.data + ik2 * k.nb[2] + ik3 * k.nb[3];
    const char * vb = (const char *)v.data + ik2 * v.nb[2] + ik3 * v.nb[3];
    const ternion_i64 c0 = (ternion_i64)blockIdx.x * chunk;
    const ternion_i64 c1 = c0 + chunk < nkv ? c0 + chunk : nkv;
    for (ternion_i64 t0 = c0; t0 < c1; t0 += T) {
        const int n = c1 - t0 < T ? (int)(c1 - t0) : T;
        // Scores: group gi takes positions gi, gi+NG, ... of the tile.
#pragma unroll
        for (int it = 0; it < T / NG; it++) {
            const int jj = gi + it * NG;
            float s[R];
#pragma unroll
            for (int rr = 0; rr < R; rr++) {
                s[rr] = 0.0f;
            }
            if (jj < n) {
                const char * krow = kb + (t0 + jj) * k.nb[1];
#pragma unroll
                for (int c = 0; c < NCK; c++) {
                    const int ch = lane + c * G;
                    if (ch < CK) {
                        float kf[8];
                        fattn_unpack8(*(const uint4 *)(krow + ch * 16), kf);
#pragma unroll
                        for (int rr = 0; rr < R; rr++) {
#pragma unroll
                            for (int e = 0; e < 8; e++) {
                                s[rr] += qr[rr][c][e] * kf[e];
                            }
                        }
                    }
                }
            }
#pragma unroll
            for (int rr = 0; rr < R; rr++) {
#pragma unroll
                for (int m = G / 2; m > 0; m >>= 1) {
                    s[rr] += TERNION_SHFL_XOR(s[rr], m);
                }
            }
            if (lane == 0) {
#pragma unroll
                for (int rr = 0; rr < R; rr++) {
                    sP[rr][jj] = jj < n ? fattn_logit(s[rr], softcap, sMrow[rr], t0 + jj, sSlope[rr]) : FATTN_NEG_INF;
                }
            }
        }
        __syncthreads();
        // Online softmax: 32 lanes per row, two positions a lane.
        for (int rr = tid / 32; rr < R; rr += FATTN_THREADS / 32) {
            const int l = tid % 32;
            const float x0 = sP[rr][l], x1 = sP[rr][l + 32];
            const float mold = sM[rr];
            float mt = fmaxf(x0, x1);
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) {
                mt = fmaxf(mt, TERNION_SHFL_XOR(mt, m));
            }
            const float mnew = fmaxf(mold, mt);
            const bool none = mnew == FATTN_NEG_INF;
            const float p0 = none ? 0.0f : expf(x0 - mnew), p1 = none ? 0.0f : expf(x1 - mnew);
            const float f = none ? 1.0f : expf(mold - mnew);
            float sum = p0 + p1;
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) {
                sum += TERNION_SHFL_XOR(sum, m);
            }
            sP[rr][l] = p0;
            sP[rr][l + 32] = p1;
            if (l == 0) {
                sM[rr] = mnew;
                sS[rr] = sS[rr] * f + sum;
                sF[rr] = f;
            }
        }
        __syncthreads();
        // P·V: group gi accumulates positions gi, gi+NG, ... of the tile.
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            const float f = sF[rr];
#pragma unroll
            for (int c = 0; c < NCV; c++) {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    acc[rr][c][e] *= f;
                }
            }
        }
#pragma unroll
        for (int it = 0; it < T / NG; it++) {
            const int jj = gi + it * NG;
            if (jj < n) {
                const char * vrow = vb + (t0 + jj) * v.nb[1];
#pragma unroll
                for (int c = 0; c < NCV; c++) {
                    const int ch = lane + c * G;
                    if (ch < CV) {
                        float vf[8];
                        fattn_unpack8(*(const uint4 *)(vrow + ch * 16), vf);
#pragma unroll
                        for (int rr = 0; rr < R; rr++) {
                            const float p = sP[rr][jj];
#pragma unroll
                            for (int e = 0; e < 8; e++) {
                                acc[rr][c][e] += p * vf[e];
                            }
                        }
                    }
                }
            }
        }
        __syncthreads();
    }

    // Sum the groups' accumulators row by row, then finish the row: the
    // output (one chunk) or the chunk's partial (max, sum, accumulator).
    const bool single = gridDim.x == 1;
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
#pragma unroll
        for (int c = 0; c < NCV; c++) {
            const int ch = lane + c * G;
            if (ch < CV) {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    sRed[gi][ch * 8 + e] = acc[rr][c][e];
                }
            }
        }
        __syncthreads();
        if (valid[rr]) {
            float M = sM[rr], S = sS[rr], f = 1.0f;
            if (single && sinks != nullptr) {
                const float sink = sinks[h[rr]];
                const float mn = fmaxf(M, sink);
                f = expf(M - mn);
                S = S * f + expf(sink - mn);
            }
            const float inv = S == 0.0f ? 0.0f : f / S;
            float * prow = part + ((ternion_i64)blockIdx.x * nq * n_head * (gridDim.z / nhkv) +
                                   ((ternion_i64)iq3 * n_head + h[rr]) * nq + iq1[rr]) *
                                      (DV + 2);
            float * orow = (float *)((char *)dst.data + h[rr] * dst.nb[1] + iq1[rr] * dst.nb[2] + iq3 * dst.nb[3]);
            for (int d = tid; d < DV; d += FATTN_THREADS) {
                float o = 0.0f;
#pragma unroll
                for (int g = 0; g < NG; g++) {
                    o += sRed[g][d];
                }
                if (single) {
                    orow[d] = o * inv;
                } else {
                    prow[2 + d] = o;
                }
            }
            if (!single && tid == 0) {
                prow[0] = M;
                prow[1] = S;
            }
        }
        __syncthreads();
    }
}

// Merges the nchunks partials of fattn_vec: block x is output row x = (iq3·
// n_head + h)·nq + iq1 of nrows; threads stride over the D values.
extern "C" __global__ void fattn_combine(ternion_tensor dst, const float * part, const float * sinks, ternion_u32 nchunks,
                                         ternion_u32 nrows) {
    TERNION_KERNEL_ENTRY();
    const ternion_u32 row = blockIdx.x;
    const ternion_u32 D = (ternion_u32)dst.ne[0], nq = (ternion_u32)dst.ne[2], n_head = (ternion_u32)dst.ne[1];
    const ternion_u32 iq1 = row % nq, h = (row / nq) % n_head, iq3 = row / (nq * n_head);
    const ternion_i64 stride = (ternion_i64)nrows * (D + 2);
    const float * p = part + (ternion_i64)row * (D + 2);
    float M = sinks != nullptr ? sinks[h] : FATTN_NEG_INF;
    for (ternion_u32 c = 0; c < nchunks; c++) {
        M = fmaxf(M, p[c * stride]);
    }
    float S = 0.0f;
    if (M != FATTN_NEG_INF) {
        for (ternion_u32 c = 0; c < nchunks; c++) {
            const float mc = p[c * stride];
            if (mc != FATTN_NEG_INF) {
                S += p[c * stride + 1] * expf(mc - M);
            }
        }
        if (sinks != nullptr) {
            S += expf(sinks[h] - M);
        }
    }
    float * orow = (float *)((char *)dst.data + h * dst.nb[1] + iq1 * dst.nb[2] + iq3 * dst.nb[3]);
    for (ternion_u32 d = threadIdx.x; d < D; d += blockDim.x) {
        float o = 0.0f;
        if (S != 0.0f) {
            for (ternion_u32 c = 0; c < nchunks; c++) {
                const float mc = p[c * stride];
                if (mc != FATTN_NEG_INF) {
                    o += p[c * stride + 2 + d] * expf(mc - M);
                }
            }
            o /= S;
        }
        orow[d] = o;
    }
}

// ---- fattn_dec: one-query flash-decoding with independent warps.
// Block (x, y, z) = KV chunk x of kv head y, batch z; its 4 warps take steps
// of 2 loads of 32/G KV rows each (G lanes a row, 16 bytes a lane), warp w
// steps w, w+4, ... of the chunk with its own online softmax for all R q
// heads of the kv head (K/V read once), the next step's K/V loaded into
// registers before this step's math, no block sync in the KV loop. Scores
// are in log2 units (exp2). The block merges its warps at the end.
#define FATTN_DEC_WARPS 4
#define FATTN_DEC_U 2
// Accumulators of a fattn_dec_combine lane held in registers (chunks w, w+4, ...).
#define FATTN_DEC_PF 16

// Merges a partial softmax (max m, sum s; log2 units) into (M, S).
static __device__ __forceinline__ void fattn_merge_ms(float & M, float & S, float m, float s) {
    const float mn = fmaxf(M, m);
    S = S * exp2f(M - mn) + s * exp2f(m - mn);
    M = mn;
}

// Lanes per KV row (G), rows per warp load (RW) and per warp step (SR).
template <int D> struct fattn_dec_geometry {
    static constexpr int C = D / 8;
    static constexpr int G = C > 16 ? 32 : (C > 8 ? 16 : 8);
    static constexpr int RW = 32 / G;
    static constexpr int SR = FATTN_DEC_U * RW;
};

// K and V of step s for this lane (row s·SR + u·RW + hf, 16-byte chunk of
// kb/vb); rows at or past nrow, and lanes past the row, read zeros.
template <int SR, int RW>
static __device__ __forceinline__ void fattn_dec_load(uint4 (&kd)[FATTN_DEC_U], uint4 (&vd)[FATTN_DEC_U], const char * kb,
                                                      const char * vb, ternion_i64 knb, ternion_i64 vnb, int s, int hf,
                                                      int nrow, bool cin) {
#pragma unroll
    for (int u = 0; u < FATTN_DEC_U; u++) {
        const int j = s * SR + u * RW + hf;
        if (cin && j < nrow) {
            kd[u] = *(const uint4 *)(kb + j * knb);
            vd[u] = *(const uint4 *)(vb + j * vnb);
        } else {
            kd[u] = make_uint4(0u, 0u, 0u, 0u);
            vd[u] = make_uint4(0u, 0u, 0u, 0u);
        }
    }
}

// fattn_dec_fold: a split one-query launch's merge without
// fattn_dec_combine. Every thread of a block calls it after the block
// wrote its partials (rows h0 … h0 + rows − 1 of batch iq3); with
// counters (one zeroed word a tile: kv head y, batch z) the last block of
// the tile to get there merges the tile's partials into dst as
// fattn_dec_combine does and returns the word to zero for the next launch
// (a replay's included). Without counters, or with one chunk, it does
// nothing. The block's stores are published by its barrier and thread 0's
// release-acquire increment (ternion_count_acq_rel), the pattern of
// CUTLASS's semaphores; the last block reads the partials through L2 in one
// round trip a FATTN_FOLD_B chunks: a thread takes 4 dims of a row and
// loads every chunk's (max, sum) and accumulators before it uses any.
#define FATTN_FOLD_B 16
template <int R, int D>
static __device__ __forceinline__ void fattn_dec_fold(ternion_tensor dst, const float * part, const float * sinks,
                                                      unsigned int * counters, ternion_u32 h0, ternion_u32 rows, ternion_u32 iq3,
                                                      ternion_u32 n_head, ternion_u32 nrows) {
    static_assert(D % 4 == 0, "fattn_dec_fold: 4 dims a thread");
    constexpr int B = FATTN_FOLD_B;
    __shared__ int sLast;
    if (counters == nullptr || gridDim.x == 1) {
        return;
    }
    ternion_publish();
    __syncthreads(); // every thread's partials precede thread 0's release
    if (threadIdx.x == 0) {
        unsigned int * ctr = counters + blockIdx.y + gridDim.y * blockIdx.z;
        const int last = ternion_count_acq_rel(ctr) == gridDim.x - 1;
        if (last) {
            *ctr = 0u; // every block of the tile has counted
        }
        sLast = last;
    }
    __syncthreads();
    if (!sLast) {
        return;
    }
    const ternion_u32 nchunks = gridDim.x;
    const ternion_i64 stride = (ternion_i64)nrows * (D + 2);
    const float * base = part + ((ternion_i64)iq3 * n_head + h0) * (D + 2);
    for (int i = (int)threadIdx.x; i < (int)rows * (D / 4); i += (int)blockDim.x) {
        const int r = i / (D / 4), d = 4 * (i % (D / 4));
        const float * p = base + r * (D + 2);
        float M = FATTN_DEC_EMPTY, S = 0.0f, o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (ternion_u32 c0 = 0; c0 < nchunks; c0 += B) {
            float2 ms[B], a[B][2];
#pragma unroll
            for (int b = 0; b < B; b++) {
                const float * q = p + (ternion_i64)(c0 + b) * stride; // (D + 2)·4-byte rows: 8-byte aligned
                const bool in = c0 + b < nchunks;
                ms[b] = in ? ternion_ld_cg2(q) : make_float2(FATTN_DEC_EMPTY, 0.0f);
                a[b][0] = in ? ternion_ld_cg2(q + 2 + d) : make_float2(0.0f, 0.0f);
                a[b][1] = in ? ternion_ld_cg2(q + 4 + d) : make_float2(0.0f, 0.0f);
            }
            float Mn = M;
#pragma unroll
            for (int b = 0; b < B; b++) {
                Mn = fmaxf(Mn, ms[b].x);
            }
            const float f = exp2f(M - Mn); // M starts finite: never inf - inf
            S *= f;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                o[e] *= f;
            }
#pragma unroll
            for (int b = 0; b < B; b++) {
                const float w = exp2f(ms[b].x - Mn);
                S += w * ms[b].y;
                o[0] += w * a[b][0].x;
                o[1] += w * a[b][0].y;
                o[2] += w * a[b][1].x;
                o[3] += w * a[b][1].y;
            }
            M = Mn;
        }
        if (sinks != nullptr) {
            const float sink = sinks[h0 + r] * FATTN_LOG2E, Mn = fmaxf(M, sink), f = exp2f(M - Mn);
            S = S * f + exp2f(sink - Mn);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                o[e] *= f;
            }
        }
        const float inv = S == 0.0f ? 0.0f : 1.0f / S;
        float * orow = (float *)((char *)dst.data + (h0 + r) * dst.nb[1] + iq3 * dst.nb[3]);
#pragma unroll
        for (int e = 0; e < 4; e++) {
            orow[d + e] = o[e] * inv;
        }
    }
}

template <int D, int R>
static __device__ __forceinline__ void fattn_dec(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                                 ternion_tensor mask, const float * sinks, float * part, float scale,
                                                 float softcap, float max_bias, float m0, float m1, ternion_u32 n_head_log2,
                                                 ternion_u32 gqa, ternion_u32 r3, ternion_u32 chunk, unsigned int * counters) {
    typedef fattn_dec_geometry<D> geo;
    constexpr int C = geo::C, G = geo::G, RW = geo::RW, SR = geo::SR, U = FATTN_DEC_U, W = FATTN_DEC_WARPS;
    __shared__ float sAcc[W][D];
    __shared__ float sMl[W][2];

    const int tid = threadIdx.x, lane = tid % 32, w = tid / 32, c = lane % G, hf = lane / G;
    const bool cin = c < C;
    const ternion_u32 n_head = (ternion_u32)q.ne[2], ik2 = blockIdx.y, iq3 = blockIdx.z, ik3 = iq3 / r3;
    const ternion_i64 nkv = k.ne[1], c0 = (ternion_i64)blockIdx.x * chunk;
    const int nrow = (int)(nkv - c0 < (ternion_i64)chunk ? nkv - c0 : (ternion_i64)chunk);
    const int nsteps = (nrow + SR - 1) / SR;
    const char * kb = (const char *)k.data + ik2 * k.nb[2] + ik3 * k.nb[3] + c0 * k.nb[1] + c * 16;
    const char * vb = (const char *)v.data + ik2 * v.nb[2] + ik3 * v.nb[3] + c0 * v.nb[1] + c * 16;

    uint4 kr[U], vr[U];
    fattn_dec_load<SR, RW>(kr, vr, kb, vb, k.nb[1], v.nb[1], w, hf, nrow, cin);

    // Row r is q head ik2·gqa + r (rows past gqa repeat the last head and
    // write nothing). Q is scaled, and in log2 units without a softcap.
    const float qs = softcap == 0.0f ? scale * FATTN_LOG2E : scale, sc2 = softcap * FATTN_LOG2E;
    float qr[R][8], acc[R][8], m[R], l[R], sl[R];
    const ternion_f16 * mrow[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const ternion_u32 h = ik2 * gqa + ((ternion_u32)r < gqa ? (ternion_u32)r : gqa - 1);
        const float * qrow = (const float *)((const char *)q.data + h * q.nb[2] + iq3 * q.nb[3]);
#pragma unroll
        for (int e = 0; e < 8; e++) {
            qr[r][e] = cin ? qrow[c * 8 + e] * qs : 0.0f;
            acc[r][e] = 0.0f;
        }
        m[r] = FATTN_DEC_EMPTY;
        l[r] = 0.0f;
        sl[r] = fattn_slope(max_bias, m0, m1, n_head_log2, h) * FATTN_LOG2E;
        mrow[r] = fattn_mask_row(mask, 0, h, iq3, c0);
    }

    const bool mone = mask.data != nullptr && mask.ne[2] == 1; // one mask row for every head: read it once
    for (int s = w; s < nsteps; s += W) {
        uint4 kn[U], vn[U];
        fattn_dec_load<SR, RW>(kn, vn, kb, vb, k.nb[1], v.nb[1], s + W, hf, nrow, cin);
        float sc[U][R];
#pragma unroll
        for (int u = 0; u < U; u++) {
            float kf[8];
            fattn_unpack8(kr[u], kf);
#pragma unroll
            for (int r = 0; r < R; r++) {
                float x = 0.0f;
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    x += qr[r][e] * kf[e];
                }
#pragma unroll
                for (int o = G / 2; o > 0; o >>= 1) {
                    x += TERNION_SHFL_XOR(x, o);
                }
                sc[u][r] = x;
            }
            const int j = s * SR + u * RW + hf;
            const bool in = j < nrow;
            const float mk0 = in && mone ? ternion_f16_to_f32(mrow[0][j]) : 0.0f;
#pragma unroll
            for (int r = 0; r < R; r++) {
                float x = sc[u][r];
                if (softcap != 0.0f) {
                    x = sc2 * tanhf(x);
                }
                if (in && mrow[r] != nullptr) {
                    x += sl[r] * (mone ? mk0 : ternion_f16_to_f32(mrow[r][j]));
                }
                sc[u][r] = in ? x : FATTN_NEG_INF;
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            float mx = sc[0][r];
#pragma unroll
            for (int u = 1; u < U; u++) {
                mx = fmaxf(mx, sc[u][r]);
            }
#pragma unroll
            for (int o = 16; o >= G; o >>= 1) {
                mx = fmaxf(mx, TERNION_SHFL_XOR(mx, o));
            }
            // mx is the same in every lane of the warp (the shuffles above
            // span it), so is this branch: once the row's maximum settles,
            // steps skip the rescale. m starts finite: never inf - inf.
            if (mx > m[r]) {
                const float f = fattn_exp2(m[r] - mx);
                m[r] = mx;
                l[r] *= f;
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    acc[r][e] *= f;
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            float vf[8];
            fattn_unpack8(vr[u], vf);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const float p = fattn_exp2(sc[u][r] - m[r]);
                l[r] += p;
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    acc[r][e] += p * vf[e];
                }
            }
            kr[u] = kn[u];
            vr[u] = vn[u];
        }
    }

    // Merge the warp's row groups, then the block's warps, row by row; one
    // chunk writes dst, several write partials [max (log2), sum, acc[D]].
    const ternion_u32 nrows = n_head * gridDim.z;
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int o = 16; o >= G; o >>= 1) {
            l[r] += TERNION_SHFL_XOR(l[r], o);
#pragma unroll
            for (int e = 0; e < 8; e++) {
                acc[r][e] += TERNION_SHFL_XOR(acc[r][e], o);
            }
        }
        if (hf == 0 && cin) {
#pragma unroll
            for (int e = 0; e < 8; e++) {
                sAcc[w][c * 8 + e] = acc[r][e];
            }
        }
        if (lane == 0) {
            sMl[w][0] = m[r];
            sMl[w][1] = l[r];
        }
        __syncthreads();
        if ((ternion_u32)r < gqa) {
            const ternion_u32 h = ik2 * gqa + r;
            float M = FATTN_DEC_EMPTY;
#pragma unroll
            for (int ww = 0; ww < W; ww++) {
                M = fmaxf(M, sMl[ww][0]);
            }
            float L = 0.0f, fw[W];
#pragma unroll
            for (int ww = 0; ww < W; ww++) {
                fw[ww] = exp2f(sMl[ww][0] - M);
                L += fw[ww] * sMl[ww][1];
            }
            float fs = 1.0f, inv = 0.0f;
            if (gridDim.x == 1) {
                if (sinks != nullptr) {
                    const float sink = sinks[h] * FATTN_LOG2E, mn = fmaxf(M, sink);
                    fs = exp2f(M - mn);
                    L = L * fs + exp2f(sink - mn);
                }
                inv = L == 0.0f ? 0.0f : fs / L;
            }
            float * orow = (float *)((char *)dst.data + h * dst.nb[1] + iq3 * dst.nb[3]);
            float * prow = part + ((ternion_i64)blockIdx.x * nrows + (ternion_i64)iq3 * n_head + h) * (D + 2);
            for (int d = tid; d < D; d += W * 32) {
                float o = 0.0f;
#pragma unroll
                for (int ww = 0; ww < W; ww++) {
                    o += fw[ww] * sAcc[ww][d];
                }
                if (gridDim.x == 1) {
                    orow[d] = o * inv;
                } else {
                    prow[2 + d] = o;
                }
            }
            if (gridDim.x != 1 && tid == 0) {
                prow[0] = M;
                prow[1] = L;
            }
        }
        __syncthreads();
    }
    fattn_dec_fold<R, D>(dst, part, sinks, counters, ik2 * gqa, gqa < (ternion_u32)R ? gqa : (ternion_u32)R, iq3, n_head, nrows);
}

// Merges the nchunks partials of fattn_dec: block (x, y) = output row x =
// iq3·n_head + h of nrows, dims 32y..32y+31; 4 warps over the chunks.
extern "C" __global__ void fattn_dec_combine(ternion_tensor dst, const float * part, const float * sinks, ternion_u32 nchunks,
                                             ternion_u32 nrows) {
    TERNION_KERNEL_ENTRY();
    // One memory round trip: every warp loads its chunks' accumulators
    // (the first FATTN_DEC_PF of them into registers) and, at the same
    // time, every chunk's (max, sum) pair, merged online into the row's
    // (M, S) by each warp itself, so no block barrier comes before the
    // weighted sum.
    constexpr int W = 4, PF = FATTN_DEC_PF;
    __shared__ float sRed[W][32];
    const ternion_u32 row = blockIdx.x, D = (ternion_u32)dst.ne[0], n_head = (ternion_u32)dst.ne[1];
    const ternion_u32 h = row % n_head, iq3 = row / n_head;
    const int tid = threadIdx.x, lane = tid % 32, w = tid / 32;
    const ternion_u32 d = blockIdx.y * 32 + lane;
    const bool din = d < D;
    const ternion_i64 stride = (ternion_i64)nrows * (D + 2);
    const float * p = part + (ternion_i64)row * (D + 2);
    float a[PF];
#pragma unroll
    for (int i = 0; i < PF; i++) {
        const ternion_u32 c = (ternion_u32)(w + W * i);
        a[i] = din && c < nchunks ? p[c * stride + 2 + d] : 0.0f;
    }
    float M = FATTN_DEC_EMPTY, S = 0.0f;
    for (ternion_u32 c = lane; c < nchunks; c += 32) {
        const float2 ms = *(const float2 *)(p + c * stride); // (D + 2)·4 bytes a row: 8-byte aligned
        fattn_merge_ms(M, S, ms.x, ms.y);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float Mo = TERNION_SHFL_XOR(M, o), So = TERNION_SHFL_XOR(S, o);
        fattn_merge_ms(M, S, Mo, So);
    }
    if (sinks != nullptr) {
        fattn_merge_ms(M, S, sinks[h] * FATTN_LOG2E, 1.0f);
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    float o = 0.0f;
#pragma unroll
    for (int i = 0; i < PF; i++) {
        const ternion_u32 c = (ternion_u32)(w + W * i);
        if (c < nchunks) {
            o += exp2f(p[c * stride] - M) * a[i];
        }
    }
    for (ternion_u32 c = (ternion_u32)(w + W * PF); din && c < nchunks; c += W) {
        o += exp2f(p[c * stride] - M) * p[c * stride + 2 + d];
    }
    sRed[w][lane] = o * inv;
    __syncthreads();
    if (w == 0 && din) {
        float * orow = (float *)((char *)dst.data + h * dst.nb[1] + iq3 * dst.nb[3]);
        orow[d] = (sRed[0][lane] + sRed[1][lane]) + (sRed[2][lane] + sRed[3][lane]);
    }
}

#if TERNION_SM80

// The prefill kernel's mask tile: a row of FATTN_MMA_MS halves for each of
// the block's queries (64 positions and a 16-byte pad: the rows of a lane
// group's reads fall in different banks).
#define FATTN_MMA_MS (FATTN_TILE + 8)

// A thread's share of copying a 64-row K or V tile of head size D with NT
// threads: 16-byte chunk c of rows r, r + RS, ... when the C = D/8 chunks of
// a row divide the threads (EVEN), a strided loop otherwise.
template <int D, int NT> struct fattn_mma_copy {
    static constexpr int C = D / 8;
    static constexpr bool EVEN = NT % C == 0;
    static constexpr int RS = EVEN ? NT / C : 1;
};

// Starts copying rows t0..t0+63 of a K or V head (base: its row 0, rows nb1
// bytes apart, D halves a row) to shared address s (rows of D+8 halves);
// PARTIAL (the last tile): rows at or past nkv read as zero.
template <int D, int NT, bool PARTIAL>
static __device__ __forceinline__ void fattn_mma_tile(ternion_u32 s, const char * base, ternion_i64 nb1, ternion_i64 t0,
                                                      ternion_i64 nkv) {
    typedef fattn_mma_copy<D, NT> cp;
    constexpr int SD = D + 8;
    if (cp::EVEN) {
        const int r = threadIdx.x / cp::C, c = threadIdx.x % cp::C;
        const char * g = base + (t0 + r) * nb1 + c * 16;
        const ternion_u32 sa = s + (r * SD + c * 8) * 2;
#pragma unroll
        for (int i = 0; i < FATTN_TILE / cp::RS; i++) {
            const bool in = !PARTIAL || t0 + r + i * cp::RS < nkv;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sa + i * cp::RS * SD * 2), "l"(in ? g : base),
                         "r"(in ? 16 : 0));
            g += cp::RS * nb1;
        }
    } else {
        for (int i = threadIdx.x; i < FATTN_TILE * cp::C; i += NT) {
            const int r = i / cp::C, c = i % cp::C;
            const bool in = !PARTIAL || t0 + r < nkv;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s + (r * SD + c * 8) * 2),
                         "l"(base + (in ? (t0 + r) * nb1 : 0) + c * 16), "r"(in ? 16 : 0));
        }
    }
}

// Copies positions t0..t0+63 of mask rows 0..BQ-1 (mrow: row 0 at position 0,
// rows nb1 bytes apart; rows at or past nrows and positions at or past nkv
// read as zero) to shared memory at s (rows of FATTN_MMA_MS halves): 16-byte
// cp.async pieces when the rows are 16-byte aligned (ASYNC), else loads and
// stores.
template <int BQ, int NT, bool PARTIAL, bool ASYNC>
static __device__ __forceinline__ void fattn_mma_mask(ternion_f16 * s, const char * mrow, ternion_i64 nb1, int nrows,
                                                      ternion_i64 t0, ternion_i64 nkv) {
    if (ASYNC) {
        const int r = threadIdx.x / 8, c = threadIdx.x % 8; // NT/8 rows a pass
        const ternion_i64 left = nkv - (t0 + c * 8);
        const int bytes = !PARTIAL || left >= 8 ? 16 : (left > 0 ? (int)left * 2 : 0);
        const char * g = mrow + r * nb1 + (t0 + c * 8) * 2;
        const ternion_u32 sa = ternion_smem_u32(s + r * FATTN_MMA_MS + c * 8);
#pragma unroll
        for (int i = 0; i < BQ / (NT / 8); i++) {
            const bool in = r + NT / 8 * i < nrows && bytes > 0;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sa + NT / 8 * i * FATTN_MMA_MS * 2),
                         "l"(in ? g : mrow), "r"(in ? bytes : 0));
            g += NT / 8 * nb1;
        }
    } else {
        for (int i = threadIdx.x; i < BQ * FATTN_TILE; i += NT) {
            const int r = i / FATTN_TILE, j = i % FATTN_TILE;
            s[r * FATTN_MMA_MS + j] = r < nrows && t0 + j < nkv ? ((const ternion_f16 *)(mrow + r * nb1))[t0 + j] : (ternion_f16)0;
        }
    }
}

static __device__ __forceinline__ void fattn_mma_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
static __device__ __forceinline__ void fattn_wait_tiles() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Four 8×8 b16 matrices from shared address p: lane l gives the address of
// row l%8 of matrix l/8 and receives, of matrix i, register r[i] = its row
// l/4, columns 2(l%4) and 2(l%4)+1 (trans: column l/4, rows 2(l%4) and
// 2(l%4)+1).
static __device__ __forceinline__ void fattn_ldsm_x4(ternion_u32 * r, ternion_u32 p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(p));
}
static __device__ __forceinline__ void fattn_ldsm_x4_trans(ternion_u32 * r, ternion_u32 p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(p));
}

// fattn_bool carries a compile-time flag into a generic lambda.
template <bool B> struct fattn_bool {
    static constexpr bool value = B;
};
#endif

template <int D, int W>
static __device__ __forceinline__ void fattn_mma(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                                 ternion_tensor mask, const float * sinks, float scale, float softcap,
                                                 float max_bias, float m0, float m1, ternion_u32 n_head_log2, ternion_u32 gqa,
                                                 ternion_u32 r3) {
#if TERNION_SM80
    typedef ternion_mma_type<ternion_f16> mma;
    constexpr int SD = D + 8; // shared row stride in halves (16-byte pad: conflict-free ldmatrix)
    constexpr int BQ = 16 * W, NT = 32 * W; // queries and threads a block
    extern __shared__ __align__(16) ternion_f16 fattn_smem[];
    ternion_f16 * sQ = fattn_smem;
    ternion_f16 * sM = sQ + (BQ + 2 * FATTN_TILE) * SD;
    const ternion_u32 aQ = ternion_smem_u32(sQ), aK = aQ + BQ * SD * 2, aV = aK + FATTN_TILE * SD * 2;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
    const int lmat = lane >> 3, lrow = lane & 7; // ldmatrix: this lane's matrix and row
    const fattn_prefill b(q, k, v, mask, scale, softcap, max_bias, m0, m1, n_head_log2, gqa, r3, BQ);
    const ternion_u32 h = b.h, iq3 = b.iq3;
    const ternion_i64 nkv = b.nkv, q0 = b.q0;
    const int nrows = b.nrows;
    const float qs = b.qs, sc2 = b.sc2, slope = b.slope;
    const char *kb = b.kb, *vb = b.vb, *mb = b.mb;
    // The mask tile lives in shared memory when the launch gave room for it
    // (core/ops fattnMMAShared: always up to head size 128; a device of 99
    // KiB a block has none at 256); else (GM) each thread reads its mask
    // values from global memory.
    constexpr bool GM = D > 128;
    ternion_u32 dsmem;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsmem));
    const bool mtile = mb != nullptr && (!GM || dsmem >= (ternion_u32)(((BQ + 2 * FATTN_TILE) * SD + BQ * FATTN_MMA_MS) * 2));
    const bool masync = mtile && (((unsigned long long)mb | (unsigned long long)mask.nb[1]) & 15) == 0;
    // K(t) and its mask tile, one commit group.
    const auto loadK = [&](ternion_i64 t1) {
        const bool partial = t1 + FATTN_TILE > nkv;
        if (partial) {
            fattn_mma_tile<D, NT, true>(aK, kb, k.nb[1], t1, nkv);
        } else {
            fattn_mma_tile<D, NT, false>(aK, kb, k.nb[1], t1, nkv);
        }
        if (masync) {
            if (partial) {
                fattn_mma_mask<BQ, NT, true, true>(sM, mb, mask.nb[1], nrows, t1, nkv);
            } else {
                fattn_mma_mask<BQ, NT, false, true>(sM, mb, mask.nb[1], nrows, t1, nkv);
            }
        } else if (mtile) {
            fattn_mma_mask<BQ, NT, true, false>(sM, mb, mask.nb[1], nrows, t1, nkv);
        }
        fattn_mma_commit();
    };

    loadK(0);
    for (int i = tid; i < BQ * D; i += NT) {
        const int r = i / D, c = i % D;
        float x = 0.0f;
        if (r < nrows) {
            x = *(const float *)((const char *)q.data + (q0 + r) * q.nb[1] + h * q.nb[2] + iq3 * q.nb[3] + c * 4) * qs;
        }
        sQ[r * SD + c] = ternion_f32_to_f16(x);
    }

    // This thread's rows of the warp's 16: r0 + g and r0 + g + 8.
    const int r0 = warp * 16;
    // ldmatrix addresses: the Q rows of A (matrices (r0.., kk), (r0+8.., kk),
    // (r0.., kk+8), (r0+8.., kk+8)); the K rows of B for n-tiles n, n+1
    // (matrices (n·8.., kk), (n·8.., kk+8), ((n+1)·8.., kk), ((n+1)·8.., kk+8));
    // the V rows of B for d-tiles n, n+1, transposed (matrices (kk.., n·8),
    // (kk+8.., n·8), (kk.., (n+1)·8), (kk+8.., (n+1)·8)).
    const ternion_u32 lq = aQ + ((r0 + lrow + (lmat & 1) * 8) * SD + (lmat >> 1) * 8) * 2;
    const ternion_u32 lk = aK + (((lmat >> 1) * 8 + lrow) * SD + (lmat & 1) * 8) * 2;
    const ternion_u32 lv = aV + ((lrow + (lmat & 1) * 8) * SD + (lmat >> 1) * 8) * 2;
    const ternion_f16 * mk = sM + (r0 + g) * FATTN_MMA_MS + 2 * t; // this thread's mask pairs, row g
    // Without the tile: this thread's mask rows r0 + g and r0 + g + 8 (none past nrows).
    const ternion_f16 * mg[2] = {nullptr, nullptr};
    if (GM && mb != nullptr && !mtile) {
#pragma unroll
        for (int i = 0; i < 2; i++) {
            if (r0 + g + 8 * i < nrows) {
                mg[i] = (const ternion_f16 *)(mb + (r0 + g + 8 * i) * mask.nb[1]);
            }
        }
    }

    float o[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; n++) {
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    }
    // Row maxima (log2 units; finite from the start, so no inf - inf) and
    // this thread's share of the row sums (reduced over the quad at the end).
    float mr[2] = {FATTN_DEC_EMPTY, FATTN_DEC_EMPTY}, lr[2] = {0.0f, 0.0f};
    fattn_wait_tiles();
    __syncthreads();

    ternion_i64 t0 = 0;
    const auto step = [&](auto partial_tag) {
        constexpr bool PARTIAL = decltype(partial_tag)::value;
        if (PARTIAL) {
            fattn_mma_tile<D, NT, true>(aV, vb, v.nb[1], t0, nkv);
        } else {
            fattn_mma_tile<D, NT, false>(aV, vb, v.nb[1], t0, nkv);
        }
        fattn_mma_commit();
        // S = Q·Kᵀ for the warp's 16 rows and the tile's 64 positions.
        float s[8][4];
#pragma unroll
        for (int n = 0; n < 8; n++) {
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
        }
        // Fragments one k-step ahead of the mma that use them (an ldmatrix
        // result is not consumed by the next instruction).
        ternion_u32 a[2][4], b[2][4][4];
        const auto loadQK = [&](int kk, int buf) {
            fattn_ldsm_x4(a[buf], lq + kk * 2);
#pragma unroll
            for (int n = 0; n < 4; n++) {
                fattn_ldsm_x4(b[buf][n], lk + (2 * n * 8 * SD + kk) * 2);
            }
        };
        loadQK(0, 0);
#pragma unroll
        for (int ks = 0; ks < D / 16; ks++) {
            if (ks + 1 < D / 16) {
                loadQK((ks + 1) * 16, (ks + 1) % 2);
            }
#pragma unroll
            for (int n = 0; n < 4; n++) {
                mma::mma16816(s[2 * n], a[ks % 2], b[ks % 2][n][0], b[ks % 2][n][1]);
                mma::mma16816(s[2 * n + 1], a[ks % 2], b[ks % 2][n][2], b[ks % 2][n][3]);
            }
        }
        // Logits of rows g (e = 0, 1) and g + 8 (e = 2, 3), positions
        // n·8 + 2t + (e & 1) (each condition tested once a tile); the online
        // softmax in log2 units.
        if (softcap != 0.0f) {
#pragma unroll
            for (int n = 0; n < 8; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[n][e] = sc2 * tanhf(s[n][e]);
                }
            }
        }
        if (mtile) {
#pragma unroll
            for (int n = 0; n < 8; n++) {
                const ternion_u32 m01 = *(const ternion_u32 *)(mk + n * 8), m23 = *(const ternion_u32 *)(mk + 8 * FATTN_MMA_MS + n * 8);
                s[n][0] = fmaf(slope, ternion_f16_to_f32((ternion_f16)(m01 & 0xffffu)), s[n][0]);
                s[n][1] = fmaf(slope, ternion_f16_to_f32((ternion_f16)(m01 >> 16)), s[n][1]);
                s[n][2] = fmaf(slope, ternion_f16_to_f32((ternion_f16)(m23 & 0xffffu)), s[n][2]);
                s[n][3] = fmaf(slope, ternion_f16_to_f32((ternion_f16)(m23 >> 16)), s[n][3]);
            }
        } else if (GM && mb != nullptr) {
#pragma unroll
            for (int n = 0; n < 8; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const ternion_i64 j = t0 + n * 8 + 2 * t + (e & 1);
                    const ternion_f16 * m = mg[e >> 1];
                    if (m != nullptr && (!PARTIAL || j < nkv)) {
                        s[n][e] = fmaf(slope, ternion_f16_to_f32(m[j]), s[n][e]);
                    }
                }
            }
        }
        if (PARTIAL) {
#pragma unroll
            for (int n = 0; n < 8; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    if (t0 + n * 8 + 2 * t + (e & 1) >= nkv) {
                        s[n][e] = FATTN_NEG_INF;
                    }
                }
            }
        }
        // P rounded to f16 as the A fragments of O += P·V (two n-tiles a k-step).
        ternion_u32 pa[4][4];
        fattn_softmax_tile<D / 2>(&s[0][0], mr, lr, pa, &o[0][0]);
        fattn_wait_tiles();
        __syncthreads(); // V(t0) is in; every warp is done with K(t0) and the mask tile
        if (!PARTIAL && t0 + FATTN_TILE < nkv) {
            loadK(t0 + FATTN_TILE);
        }
        // O += P·V, V fragments two steps (k-step j, d-tiles 2i, 2i+1) ahead.
        constexpr int NV = D / 16, STEPS = FATTN_TILE / 16 * NV;
        ternion_u32 bv[3][4];
        const auto loadV = [&](int idx) { fattn_ldsm_x4_trans(bv[idx % 3], lv + (16 * (idx / NV) * SD + (idx % NV) * 16) * 2); };
        loadV(0);
        loadV(1);
#pragma unroll
        for (int idx = 0; idx < STEPS; idx++) {
            if (idx + 2 < STEPS) {
                loadV(idx + 2);
            }
            const int j = idx / NV, n = (idx % NV) * 2;
            mma::mma16816(o[n], pa[j], bv[idx % 3][0], bv[idx % 3][1]);
            mma::mma16816(o[n + 1], pa[j], bv[idx % 3][2], bv[idx % 3][3]);
        }
        fattn_wait_tiles();
        __syncthreads(); // K(t0+64) is in; every warp is done with V(t0)
    };
    for (; t0 + FATTN_TILE <= nkv; t0 += FATTN_TILE) {
        step(fattn_bool<false>());
    }
    if (t0 < nkv) {
        step(fattn_bool<true>());
    }

    // Sinks, normalisation, and the permuted store.
    b.finish<D>(dst, sinks, r0 + g, t, &o[0][0], mr, lr);
#endif
}

// fattn_dect: the one-query decode on the tensor cores (NVIDIA, arch >= 8.0;
// an empty body elsewhere, never launched). The gqa <= R q heads of a kv head
// are the rows of one 16-row mma tile (R = 8: rows 8..15 are zero and their
// halves of the fragments skipped; R = 16: row g and g + 8 of each lane).
// Block (x, y, z) = KV chunk x of chunk positions, kv head y, batch z; its W
// warps (FATTN_DECT_WARPS, the catalog's; bench/experiments/fattn_tl.cu
// times others) walk their own 16-position steps w, w+W, ... with their own online
// softmax and their own ring of FATTN_DECT_NS stages (a 16-row K tile then a
// 16-row V tile, rows padded or swizzled as fattn_dect_off says so ldmatrix
// reads are conflict-free; filled by cp.async, a lane waiting for its own
// copies, or by bulk copies on a warp's mbarrier, then __syncwarp, so no
// block barrier runs in the KV loop). S = Q·Kᵀ by mma.sync m16n8k16
// with Q pre-scaled (log2 units without a softcap) in f16 A fragments held in
// registers; P rounded to f16 stays in registers as the A fragment of O +=
// P·V, V read by ldmatrix.trans. The block merges its warps at the end and
// writes dst (one chunk) or a partial for fattn_dec_combine (max in log2
// units, sum, accumulator). K/V rows 16-byte aligned; head size 64, 128 or
// 256 (8, 16 or 32 chunks a row, so the swizzle stays inside a row).
#define FATTN_DECT_WARPS 4
#define FATTN_DECT_NS 3

// FATTN_DECT_MARK(e) marks event e of a warp of fattn_dect: 0 its start,
// 1 + i its i-th step's K/V landed, -1 its loop done, -2 the block's end
// (its merge included).
// Empty in the tree; bench/experiments/fattn_tl.cu defines it to record
// %globaltimer, the timeline of a launch.
#ifndef FATTN_DECT_MARK
#define FATTN_DECT_MARK(e)
#endif

// FATTN_DECT_PAD: code for sm_90 and later keeps a tile's f16 rows D·2 + 16
// bytes apart (16 bytes of padding: the bulk copy engine writes whole rows
// and cannot swizzle); older code swizzles rows of D·2 bytes, so that head
// size 128 fits sm_86's 99 KiB (core's fattnDectShared counts the same).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FATTN_DECT_PAD 1
#else
#define FATTN_DECT_PAD 0
#endif

// KV is the K/V format: 0 f16, 1 q8_0, 2 q4_0 (read as stored and expanded
// to f16 in shared memory).
template <int D, int KV = 0> struct fattn_dect_geometry {
    static_assert(D == 64 || D == 128 || D == 256, "fattn_dect: head size 64, 128 or 256");
    static constexpr int CH = D / 8;         // 16-byte chunks a row
    static constexpr int RP = 32 / CH;       // rows one warp-wide copy covers
    static constexpr int PASSES = 16 / RP;   // copies a 16-row tile takes
    static constexpr int RS = D * 2 + 16 * FATTN_DECT_PAD; // bytes a row takes in shared memory
    static constexpr int TILE = 16 * RS;     // bytes of a K or V tile
    static constexpr int STAGE = 2 * TILE;   // the K tile, then the V tile
    // Quantized K/V (D a multiple of 128, so rows are 8-byte multiples): raw
    // rows of D/32 blocks of BB bytes, a raw stage of K then V tiles, and
    // the 8-byte copies a raw tile takes.
    static constexpr int BB = KV == 2 ? 18 : 34, NB = D / 32, RB = NB * BB, RTILE = 16 * RB, RSTAGE = 2 * RTILE,
                         RCOPIES = RTILE / 8;
    // Shared memory a warp: the ring (f16 tiles, or raw tiles plus the f16
    // tiles they are expanded to). The block's FATTN_DECT_WARPS rings are
    // followed by each warp's FATTN_DECT_NS 8-byte mbarriers (the bulk
    // copies complete on them).
    static constexpr int WARP = KV == 0 ? FATTN_DECT_NS * STAGE : FATTN_DECT_NS * RSTAGE + STAGE;
};

// FATTN_DECT_BULK: fattn_dect's f16 K/V stages are filled by the bulk copy
// engine (cp.async.bulk, one row a lane, completing on an mbarrier: sm_90
// and PTX 8.0, so nvcc or NVRTC 12 and later), else by 16-byte cp.async.
// Only where the build defines TERNION_FATTN_BULK (scripts/h200-pending.sh
// 4 does) until a device run has tested it: bench/README.md, session 20.
#if TERNION_SM80 && __CUDA_ARCH__ >= 900 && defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12 && \
    defined(TERNION_FATTN_BULK)
#define FATTN_DECT_BULK 1
#else
#define FATTN_DECT_BULK 0
#endif

#if TERNION_SM80
// Byte offset of 16-byte chunk ch of row r in a tile of D halves a row:
// rows padded (FATTN_DECT_PAD) or chunks XOR-swizzled by row, either way
// the 8 rows an ldmatrix reads at one chunk fall in 8 different bank
// groups, and chunk ch + 8c of a row sits 128·c bytes after chunk ch.
template <int D> static __device__ __forceinline__ ternion_u32 fattn_dect_off(int r, int ch) {
    return (ternion_u32)(r * fattn_dect_geometry<D>::RS + (FATTN_DECT_PAD ? ch << 4 : (ch ^ (r & 7)) << 4));
}

// Starts copying step s (rows 16s..16s+15 of the chunk) of K and V into the
// stage at shared address sa: kl/vl point at this lane's chunk of the
// chunk's row rr (its row in every copy pass); rows at or past nrow read as
// zeros (and nothing from global memory). Commits one group. K, V: which of
// the two it copies; C: whether it commits (a step copied in two calls, K
// before the kernel waits and V after, commits once, in the second).
template <int D, bool K = true, bool V = true, bool C = true>
static __device__ __forceinline__ void fattn_dect_copy(ternion_u32 sa, const char * kl, const char * vl, ternion_i64 knb,
                                                       ternion_i64 vnb, int s, int nrow, int cc, int rr) {
    typedef fattn_dect_geometry<D> geo;
    const char * kp = kl + (ternion_i64)(s * 16) * knb;
    const char * vp = vl + (ternion_i64)(s * 16) * vnb;
#pragma unroll
    for (int p = 0; p < geo::PASSES; p++) {
        const int r = p * geo::RP + rr;
        const bool in = s * 16 + r < nrow;
        const ternion_u32 off = sa + fattn_dect_off<D>(r, cc);
        if (K) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(off), "l"(in ? kp : kl), "r"(in ? 16 : 0));
        if (V) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(off + geo::TILE), "l"(in ? vp : vl),
                            "r"(in ? 16 : 0));
        kp += geo::RP * knb;
        vp += geo::RP * vnb;
    }
    if (C) asm volatile("cp.async.commit_group;" ::: "memory");
}

#if FATTN_DECT_BULK
// Starts copying step s (rows 16s..16s+15 of the chunk) of K and V into the
// stage at shared address sa with the bulk copy engine: lane l < 16 copies
// K row l, lane l >= 16 V row l - 16 (D·2 bytes, completing on the mbarrier
// at bar, which lane 0 first arms with the bytes to come); kb/vb point at
// the chunk's first row; rows at or past nrow are zeroed by their lane.
template <int D>
static __device__ __forceinline__ void fattn_dect_bulk(ternion_u32 sa, ternion_u32 bar, const char * kb, const char * vb,
                                                       ternion_i64 knb, ternion_i64 vnb, int s, int nrow, int lane) {
    typedef fattn_dect_geometry<D> geo;
    const int r = lane & 15, j = s * 16 + r;
    if (lane == 0) {
        const int rows = nrow - s * 16 < 16 ? nrow - s * 16 : 16;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(2 * rows * D * 2) : "memory");
    }
    __syncwarp();
    const ternion_u32 dst = sa + (lane >> 4) * geo::TILE + r * geo::RS;
    if (j < nrow) {
        const char * src = lane < 16 ? kb + (ternion_i64)j * knb : vb + (ternion_i64)j * vnb;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // this stage's earlier reads come first
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                     "l"(src), "r"(D * 2), "r"(bar)
                     : "memory");
    } else {
#pragma unroll
        for (int c = 0; c < geo::CH; c++) {
            asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};" ::"r"(dst + 16 * c), "r"(0u) : "memory");
        }
    }
}

#endif

// Quantized K/V: starts copying step s of K and V as raw rows (8-byte
// pieces) into the raw stage at shared address sa; kb/vb point at the
// chunk's first row; rows at or past nrow read as zeros. Commits one group.
// K, V, C: as fattn_dect_copy's.
template <int D, int KV, bool K = true, bool V = true, bool C = true>
static __device__ __forceinline__ void fattn_dect_copy_raw(ternion_u32 sa, const char * kb, const char * vb, ternion_i64 knb,
                                                           ternion_i64 vnb, int s, int nrow, int lane) {
    typedef fattn_dect_geometry<D, KV> geo;
#pragma unroll
    for (int i = 0; i < (geo::RCOPIES + 31) / 32; i++) {
        const int idx = lane + 32 * i, r = idx / (geo::RB / 8), off = idx % (geo::RB / 8) * 8;
        if (idx < geo::RCOPIES) {
            const int j = s * 16 + r;
            const bool in = j < nrow;
            const ternion_u32 dst = sa + r * geo::RB + off;
            if (K) asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(dst),
                                "l"(in ? kb + (ternion_i64)j * knb + off : kb), "r"(in ? 8 : 0));
            if (V) asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(dst + geo::RTILE),
                                "l"(in ? vb + (ternion_i64)j * vnb + off : vb), "r"(in ? 8 : 0));
        }
    }
    if (C) asm volatile("cp.async.commit_group;" ::: "memory");
}

// Four unsigned bytes (a word, first value in the low byte) minus the
// offset whose f16 pair is off2 (1024 + the format's zero point), times the
// f16 scale pair d2, as two f16 pairs, exactly rounded: a byte in the low
// mantissa bits of 1024 is exact, so is the subtraction, then one rounding.
static __device__ __forceinline__ void fattn_u8_f16x4(ternion_u32 u, ternion_u32 off2, ternion_u32 d2, ternion_u32 & lo,
                                                      ternion_u32 & hi) {
    lo = __byte_perm(u, 0x64646464u, 0x5140);
    hi = __byte_perm(u, 0x64646464u, 0x5342);
    asm("sub.rn.f16x2 %0, %0, %1;" : "+r"(lo) : "r"(off2));
    asm("sub.rn.f16x2 %0, %0, %1;" : "+r"(hi) : "r"(off2));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(lo) : "r"(d2));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(hi) : "r"(d2));
}

// Expands the raw K and V tiles at shared address raw into f16 tiles at
// f16 (the swizzled layout fattn_dect_copy fills), this lane's NB/2 blocks
// of each. q8_0: d, then 32 int8 (value + 128 = byte ^ 0x80, zero point
// 1152 - 1024 = 128); q4_0: d, then 16 bytes holding values j (low nibble)
// and j + 16 (high nibble) with zero point 8.
template <int D, int KV>
static __device__ __forceinline__ void fattn_dect_expand(ternion_u32 raw, ternion_u32 f16, int lane) {
    typedef fattn_dect_geometry<D, KV> geo;
    constexpr int WORDS = KV == 2 ? 5 : 9; // aligned words covering a block and its misalignment
#pragma unroll
    for (int t = 0; t < 2; t++) {
#pragma unroll
        for (int i = 0; i < geo::NB / 2; i++) {
            const int blk = lane + 32 * i, r = blk / geo::NB, b = blk % geo::NB;
            const ternion_u32 src = raw + t * geo::RTILE + r * geo::RB + b * geo::BB, base = src & ~3u, sh = (src & 3u) * 8;
            ternion_u32 a[WORDS];
#pragma unroll
            for (int k = 0; k < WORDS; k++) {
                asm volatile("ld.shared.b32 %0, [%1];" : "=r"(a[k]) : "r"(base + 4 * k));
            }
            const ternion_u32 d = (a[0] >> sh) & 0xffffu, d2 = d | (d << 16);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                ternion_u32 o[4], u0, u1;
                if (KV == 2) { // values 8c..8c+7: low nibbles of bytes 8(c%2).., high nibbles for c >= 2
                    const int k0 = 2 * (c % 2), shift = c >= 2 ? 4 : 0;
                    u0 = (__funnelshift_rc(a[k0], a[k0 + 1], sh + 16) >> shift) & 0x0f0f0f0fu;
                    u1 = (__funnelshift_rc(a[k0 + 1], a[k0 + 2], sh + 16) >> shift) & 0x0f0f0f0fu;
                } else {
                    u0 = __funnelshift_rc(a[2 * c], a[2 * c + 1], sh + 16) ^ 0x80808080u;
                    u1 = __funnelshift_rc(a[2 * c + 1], a[2 * c + 2], sh + 16) ^ 0x80808080u;
                }
                const ternion_u32 off2 = KV == 2 ? 0x64086408u : 0x64806480u; // 1032, 1152
                fattn_u8_f16x4(u0, off2, d2, o[0], o[1]);
                fattn_u8_f16x4(u1, off2, d2, o[2], o[3]);
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(f16 + t * geo::TILE + fattn_dect_off<D>(r, 4 * b + c)),
                             "r"(o[0]), "r"(o[1]), "r"(o[2]), "r"(o[3])
                             : "memory");
            }
        }
    }
}

// Loads the mask values (f16 as stored, 0 without a mask or past nrow) of
// this lane's four positions 2t, 2t+1, 8+2t, 9+2t of step s; converted
// where they are used, steps later, so that nothing waits for the load.
static __device__ __forceinline__ void fattn_dect_mask(ternion_f16 (&mk)[4], const ternion_f16 * mrow, int s, int t, int nrow) {
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int j = s * 16 + (e >> 1) * 8 + 2 * t + (e & 1);
        mk[e] = mrow != nullptr && j < nrow ? mrow[j] : (ternion_f16)0;
    }
}
#endif

template <int D, int R, int KV, int W = FATTN_DECT_WARPS>
static __device__ __forceinline__ void fattn_dect(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                                  ternion_tensor mask, const float * sinks, float * part, float scale,
                                                  float softcap, float max_bias, float m0, float m1, ternion_u32 n_head_log2,
                                                  ternion_u32 gqa, ternion_u32 r3, ternion_u32 chunk, unsigned int * counters,
                                                  int early) {
#if !TERNION_SM80
    TERNION_KERNEL_ENTRY(); // an empty body, never planned
#else
    typedef fattn_dect_geometry<D, KV> geo;
    typedef ternion_mma_type<ternion_f16> mma;
    constexpr int NS = FATTN_DECT_NS, H = R / 8, KS = D / 16;
    static_assert(R == 8 || R == 16, "fattn_dect: 8 or 16 rows");
    static_assert(KV == 0 || D % 128 == 0, "fattn_dect, quantized K/V: rows of a multiple of 8 bytes (D a multiple of 128)");
    constexpr bool Q = KV != 0, BULK = !Q && FATTN_DECT_BULK;
    extern __shared__ __align__(16) unsigned char fattn_dect_smem[];

    const int tid = threadIdx.x, lane = tid % 32, w = tid / 32, g = lane >> 2, t = lane & 3;
    FATTN_DECT_MARK(0);
    const int lmat = lane >> 3, lrow = lane & 7; // ldmatrix: this lane's matrix and row
    const int cc = lane % geo::CH, rr = lane / geo::CH; // this lane's copy chunk and row
    const ternion_u32 n_head = (ternion_u32)q.ne[2], ik2 = blockIdx.y, iq3 = blockIdx.z, ik3 = iq3 / r3;
    const ternion_i64 nkv = k.ne[1], c0 = (ternion_i64)blockIdx.x * chunk;
    const int nrow = (int)(nkv - c0 < (ternion_i64)chunk ? nkv - c0 : (ternion_i64)chunk);
    const int nsteps = (nrow + 15) / 16;
    // f16 by cp.async: this lane's chunk of its copy row; else the chunk's
    // first row.
    constexpr bool ROW = Q || BULK;
    const char * kl = (const char *)k.data + ik2 * k.nb[2] + ik3 * k.nb[3] + (c0 + (ROW ? 0 : rr)) * k.nb[1] + (ROW ? 0 : cc * 16);
    const char * vl = (const char *)v.data + ik2 * v.nb[2] + ik3 * v.nb[3] + (c0 + (ROW ? 0 : rr)) * v.nb[1] + (ROW ? 0 : cc * 16);
    // The warp's ring of NS stages (f16 tiles, or raw quantized tiles
    // followed by the f16 tiles they expand to).
    constexpr int STAGE = Q ? geo::RSTAGE : geo::STAGE;
    const ternion_u32 ring = ternion_smem_u32(fattn_dect_smem) + w * geo::WARP;
    const ternion_u32 bars = ternion_smem_u32(fattn_dect_smem) + W * geo::WARP + w * NS * 8; // this warp's mbarriers
    if (BULK) {
#if FATTN_DECT_BULK
        if (lane == 0) {
#pragma unroll
            for (int st = 0; st < NS; st++) {
                asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bars + 8 * st), "r"(1) : "memory");
            }
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        __syncwarp();
#endif
    }
    const auto copy = [&](int st, int s) {
        if (Q) {
            fattn_dect_copy_raw<D, KV>(ring + st * STAGE, kl, vl, k.nb[1], v.nb[1], s, nrow, lane);
        } else if (BULK) {
#if FATTN_DECT_BULK
            fattn_dect_bulk<D>(ring + st * STAGE, bars + 8 * st, kl, vl, k.nb[1], v.nb[1], s, nrow, lane);
#endif
        } else {
            fattn_dect_copy<D>(ring + st * STAGE, kl, vl, k.nb[1], v.nb[1], s, nrow, cc, rr);
        }
    };

    // The first NS - 1 steps: where early says so (bit 0 K, bit 1 V: core
    // sets a bit only where no kernel still running writes that tensor,
    // core/ops/early.go), K, or K and V, requested before the kernel waits
    // for the kernels before it, the rest after (V alone, or bulk copies:
    // everything after).
    const int eb = BULK || (early & 1) == 0 ? 0 : early & 3; // 0, 1 or 3
    const auto prologue = [&](bool k_only, bool v_only) {
#pragma unroll
        for (int i = 0; i < NS - 1; i++) {
            const int s = w + i * W;
            const ternion_u32 sa = ring + i * STAGE;
            if (s >= nsteps) {
                if (!k_only) asm volatile("cp.async.commit_group;" ::: "memory");
            } else if (!k_only && !v_only) {
                copy(i, s);
            } else if (Q) {
                if (k_only) fattn_dect_copy_raw<D, KV, true, false, false>(sa, kl, vl, k.nb[1], v.nb[1], s, nrow, lane);
                if (v_only) fattn_dect_copy_raw<D, KV, false, true, true>(sa, kl, vl, k.nb[1], v.nb[1], s, nrow, lane);
            } else {
                if (k_only) fattn_dect_copy<D, true, false, false>(sa, kl, vl, k.nb[1], v.nb[1], s, nrow, cc, rr);
                if (v_only) fattn_dect_copy<D, false, true, true>(sa, kl, vl, k.nb[1], v.nb[1], s, nrow, cc, rr);
            }
        }
    };
    if (eb != 0) {
        prologue(eb == 1, false);
    }
    TERNION_KERNEL_ENTRY();
    if (eb != 3) {
        prologue(false, eb == 1);
    }

    // Rows g and g + 8 (H = 2) of the tile: q head ik2·gqa + row (rows past
    // gqa repeat the last head with Q zero and write nothing).
    const float qs = softcap == 0.0f ? scale * FATTN_LOG2E : scale, sc2 = softcap * FATTN_LOG2E;
    ternion_u32 qa[KS][H][2];
    float sl[H], m[H], l[H];
    const ternion_f16 * mrow[H];
#pragma unroll
    for (int hh = 0; hh < H; hh++) {
        const ternion_u32 row = (ternion_u32)(g + 8 * hh), h = ik2 * gqa + (row < gqa ? row : gqa - 1);
        const float * qrow = (const float *)((const char *)q.data + h * q.nb[2] + iq3 * q.nb[3]);
        const float f = row < gqa ? qs : 0.0f;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            qa[ks][hh][0] = mma::pack(qrow[16 * ks + 2 * t] * f, qrow[16 * ks + 2 * t + 1] * f);
            qa[ks][hh][1] = mma::pack(qrow[16 * ks + 8 + 2 * t] * f, qrow[16 * ks + 9 + 2 * t] * f);
        }
        sl[hh] = fattn_slope(max_bias, m0, m1, n_head_log2, h) * FATTN_LOG2E;
        mrow[hh] = fattn_mask_row(mask, 0, h, iq3, c0);
        m[hh] = FATTN_DEC_EMPTY;
        l[hh] = 0.0f;
    }
    float o[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; n++) {
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    }

    // ldmatrix offsets in a stage: K chunk 2ks + (lmat & 1) of row
    // (lmat >> 1)·8 + lrow is kof[ks % 4] + (ks / 4)·128, V chunk n +
    // (lmat >> 1) of row lrow + (lmat & 1)·8 is vof[(n / 2) % 4] + (n / 8)·128.
    ternion_u32 kof[4], vof[4];
#pragma unroll
    for (int c = 0; c < 4; c++) {
        kof[c] = fattn_dect_off<D>((lmat >> 1) * 8 + lrow, 2 * c + (lmat & 1));
        vof[c] = fattn_dect_off<D>(lrow + (lmat & 1) * 8, 2 * c + (lmat >> 1));
    }

    // Step s, the warp's i-th (its stage i % NS, a compile-time constant
    // below): mkc holds its mask values as stored, mkn receives those of
    // step s + (NS - 1)·W. The loop runs the step NS times an iteration, so
    // that a mask load has NS - 1 steps to land before its values are used
    // (as K and V have) and no register is copied for it.
    const auto step = [&](int s, int i, const ternion_f16 (&mkc)[H][4], ternion_f16 (&mkn)[H][4]) {
        const int sn = s + (NS - 1) * W;
        if (sn < nsteps) {
            copy((i + NS - 1) % NS, sn);
        } else {
            asm volatile("cp.async.commit_group;" ::: "memory");
        }
#pragma unroll
        for (int hh = 0; hh < H; hh++) {
            fattn_dect_mask(mkn[hh], mrow[hh], sn, t, nrow);
        }
        if (BULK) {
#if FATTN_DECT_BULK
            ternion_mbar_wait(bars + 8 * (i % NS), (ternion_u32)(i / NS) & 1u);
#endif
        } else {
            asm volatile("cp.async.wait_group %0;" ::"n"(NS - 1) : "memory");
        }
        __syncwarp();
        FATTN_DECT_MARK(1 + i);
        ternion_u32 sK = ring + (i % NS) * STAGE;
        if (Q) {
            const ternion_u32 f16 = ring + NS * STAGE;
            fattn_dect_expand<D, KV>(sK, f16, lane);
            __syncwarp();
            sK = f16;
        }
        const ternion_u32 sV = sK + geo::TILE;

        // S: positions 0-7 (sc[0]) and 8-15 (sc[1]) of the step; c0, c1 are
        // row g, c2, c3 row g + 8. Even and odd k-steps accumulate apart
        // (two chains of KS/2 dependent mma, not one of KS), K fragments
        // are loaded PD k-steps ahead of the mma that use them, and the
        // first PD V fragments before the softmax (at head size 256 the
        // accumulators leave no registers for either: one chain, PD = 0).
        constexpr int PD = D > 128 ? 0 : 2, NP = D > 128 ? 1 : 2;
        float sc[2][4], sp[NP][2][4] = {};
        ternion_u32 kf[PD + 1][4], vf[PD + 1][4];
        const auto loadK = [&](int ks) { fattn_ldsm_x4(kf[ks % (PD + 1)], sK + kof[ks % 4] + (ks / 4) * 128); };
        const auto loadV = [&](int n2) { fattn_ldsm_x4_trans(vf[n2 % (PD + 1)], sV + vof[n2 % 4] + (n2 / 4) * 128); };
#pragma unroll
        for (int ks = 0; ks < PD; ks++) {
            loadK(ks);
        }
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            if (ks + PD < KS) {
                loadK(ks + PD);
            }
            const ternion_u32 a[4] = {qa[ks][0][0], H > 1 ? qa[ks][H - 1][0] : 0u, qa[ks][0][1],
                                      H > 1 ? qa[ks][H - 1][1] : 0u};
            mma::mma16816(sp[ks % NP][0], a, kf[ks % (PD + 1)][0], kf[ks % (PD + 1)][1]);
            mma::mma16816(sp[ks % NP][1], a, kf[ks % (PD + 1)][2], kf[ks % (PD + 1)][3]);
        }
#pragma unroll
        for (int n2 = 0; n2 < PD; n2++) {
            loadV(n2);
        }
#pragma unroll
        for (int x = 0; x < 2; x++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                sc[x][e] = NP > 1 ? sp[0][x][e] + sp[NP - 1][x][e] : sp[0][x][e];
            }
        }

        // Logits and the online softmax of each row: this lane holds
        // positions 2t, 2t+1, 8+2t, 9+2t; the quad (t = 0..3) the whole step.
        ternion_u32 pa[4] = {0u, 0u, 0u, 0u};
        float f[H];
#pragma unroll
        for (int hh = 0; hh < H; hh++) {
            float x[4] = {sc[0][2 * hh], sc[0][2 * hh + 1], sc[1][2 * hh], sc[1][2 * hh + 1]};
            float mx = FATTN_NEG_INF;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                if (softcap != 0.0f) {
                    x[e] = sc2 * tanhf(x[e]);
                }
                const int j = s * 16 + (e >> 1) * 8 + 2 * t + (e & 1);
                x[e] = j < nrow ? x[e] + sl[hh] * ternion_f16_to_f32(mkc[hh][e]) : FATTN_NEG_INF;
                mx = fmaxf(mx, x[e]);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float mn = fmaxf(m[hh], mx); // m starts finite: never inf - inf
            f[hh] = fattn_exp2(m[hh] - mn);
            m[hh] = mn;
            float p[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                p[e] = fattn_exp2(x[e] - mn);
            }
            l[hh] = l[hh] * f[hh] + ((p[0] + p[1]) + (p[2] + p[3]));
            pa[hh] = mma::pack(p[0], p[1]);
            pa[hh + 2] = mma::pack(p[2], p[3]);
        }
        // Rescale only when some row's maximum moved in this step.
        bool moved = f[0] != 1.0f;
        if (H > 1) {
            moved = moved || f[H - 1] != 1.0f;
        }
        if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
            for (int n = 0; n < D / 8; n++) {
                o[n][0] *= f[0];
                o[n][1] *= f[0];
                if (H > 1) { // rows 8..15 stay zero with R = 8
                    o[n][2] *= f[H - 1];
                    o[n][3] *= f[H - 1];
                }
            }
        }
        // O += P·V; B of d-tiles 2·n2, 2·n2+1 transposed from V's rows:
        // matrices (pos 0-7, d-tile 2·n2), (8-15, 2·n2), (0-7, 2·n2+1), (8-15, 2·n2+1),
        // PD ahead of their mma.
#pragma unroll
        for (int n2 = 0; n2 < D / 16; n2++) {
            if (n2 + PD < D / 16) {
                loadV(n2 + PD);
            }
            mma::mma16816(o[2 * n2], pa, vf[n2 % (PD + 1)][0], vf[n2 % (PD + 1)][1]);
            mma::mma16816(o[2 * n2 + 1], pa, vf[n2 % (PD + 1)][2], vf[n2 % (PD + 1)][3]);
        }
        __syncwarp(); // every lane is done with this stage before it is refilled
    };
    static_assert(NS == 3, "fattn_dect: the step loop is unrolled for 3 stages");
    ternion_f16 mk[NS][H][4]; // the mask values of steps s, s + W, s + 2W
#pragma unroll
    for (int hh = 0; hh < H; hh++) {
        fattn_dect_mask(mk[0][hh], mrow[hh], w, t, nrow);
        fattn_dect_mask(mk[1][hh], mrow[hh], w + W, t, nrow);
    }
    for (int s = w, i = 0; s < nsteps; s += NS * W, i += NS) {
        step(s, i, mk[0], mk[2]);
        if (s + W >= nsteps) {
            break;
        }
        step(s + W, i + 1, mk[1], mk[0]);
        if (s + 2 * W >= nsteps) {
            break;
        }
        step(s + 2 * W, i + 2, mk[2], mk[1]);
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    FATTN_DECT_MARK(-1);

    // Merge: each warp's rows into shared memory (over the rings), then the
    // block's warps row by row; one chunk writes dst, several write partials
    // [max (log2), sum, acc[D]].
    float * sAcc = (float *)fattn_dect_smem; // [W][R][D]
    float * sMl = sAcc + W * R * D;          // [W][R][2]
    __syncthreads();
#pragma unroll
    for (int hh = 0; hh < H; hh++) {
        l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 1);
        l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 2);
        const int row = g + 8 * hh;
        float * acc = sAcc + (w * R + row) * D;
#pragma unroll
        for (int n = 0; n < D / 8; n++) {
            *(float2 *)(acc + n * 8 + 2 * t) = make_float2(o[n][2 * hh], o[n][2 * hh + 1]);
        }
        if (t == 0) {
            sMl[(w * R + row) * 2] = m[hh];
            sMl[(w * R + row) * 2 + 1] = l[hh];
        }
    }
    __syncthreads();
    const ternion_u32 rows = gqa < (ternion_u32)R ? gqa : (ternion_u32)R, nrows = n_head * gridDim.z;
    for (int idx = tid; idx < (int)rows * D; idx += W * 32) {
        const int row = idx / D, d = idx % D;
        const ternion_u32 h = ik2 * gqa + row;
        float M = FATTN_DEC_EMPTY;
#pragma unroll
        for (int ww = 0; ww < W; ww++) {
            M = fmaxf(M, sMl[(ww * R + row) * 2]);
        }
        float L = 0.0f, acc = 0.0f;
#pragma unroll
        for (int ww = 0; ww < W; ww++) {
            const float fw = exp2f(sMl[(ww * R + row) * 2] - M);
            L += fw * sMl[(ww * R + row) * 2 + 1];
            acc += fw * sAcc[(ww * R + row) * D + d];
        }
        if (gridDim.x == 1) {
            float fs = 1.0f;
            if (sinks != nullptr) {
                const float sink = sinks[h] * FATTN_LOG2E, mn = fmaxf(M, sink);
                fs = exp2f(M - mn);
                L = L * fs + exp2f(sink - mn);
            }
            float * orow = (float *)((char *)dst.data + h * dst.nb[1] + iq3 * dst.nb[3]);
            orow[d] = L == 0.0f ? 0.0f : acc * fs / L;
        } else {
            float * prow = part + ((ternion_i64)blockIdx.x * nrows + (ternion_i64)iq3 * n_head + h) * (D + 2);
            prow[2 + d] = acc;
            if (d == 0) {
                prow[0] = M;
                prow[1] = L;
            }
        }
    }
    fattn_dec_fold<R, D>(dst, part, sinks, counters, ik2 * gqa, rows, iq3, n_head, nrows);
    FATTN_DECT_MARK(-2);
#endif
}
