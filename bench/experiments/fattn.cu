// fattn.cu - a standalone nvcc program that times FLASH_ATTN_EXT decode designs
// for the speed goal ternion missed (79.8 us against a 19 us goal):
//   hsk = hsv = 128, 32 q heads over 8 kv heads (GQA 4), kv = 16384, 1 query,
//   f32 Q, f16 K/V (contiguous [D, kv, head]), f16 mask row, scale 1/sqrt(128).
// K + V are 67,108,864 bytes; every TB/s below is those bytes over the time of
// the main kernel plus its combine kernel (what a graph node costs).
//
// Variants, each checked against a simple reference kernel (NMSE, ggml's
// FLASH_ATTN_EXT threshold 5e-4) and then timed with cudaEvents over many
// back-to-back launches:
//   cur      today's kernels/fattn.cu fattn_vec_d128_r4 logic and grid (64 KV
//            chunks x 1 x 8 kv heads, 128 threads, 16-lane groups, 64-position
//            tiles with three __syncthreads each) + today's fattn_combine.
//   dec      new design: block (chunk, kv head) of W warps; each warp walks its
//            own steps of 2U KV rows with its own online softmax for all 4 GQA
//            q heads (K/V read once); lanes across the head dim (16 lanes x
//            16 B = one 256 B row, a warp two rows per load: coalesced 512 B);
//            scores reduced over 16 lanes by shuffles; exp2 with log2e folded
//            into Q and mask; no __syncthreads in the KV loop. At the end the
//            block merges its warps and writes one partial per q head.
//            MODE reg: K/V loads of a step issued together before its math.
//            MODE pf : same, plus the next step's K/V loaded into registers
//                      before this step's math.
//            MODE cpa: cp.async ring of NS stages per warp in shared memory
//                      (each lane reads back exactly the bytes it copied, so no
//                      warp or block sync), NS-1 steps in flight during math.
//            comb: combine kernel, grid (32 heads, 4 slices of 32 dims).
//            fused: no combine kernel; the last block of a kv head (atomic
//            counter) merges that head's partials.
//   tc       dec's block/warp/ring/merge structure with 16-row warp steps on
//            tensor cores (mma.sync m16n8k16: the 4 GQA heads are rows 0-3 of
//            the A tile, K/V by ldmatrix from a swizzled cp.async ring, P
//            stays in registers); ~7x fewer instructions per KV row than dec.
//   read     plain 16-byte-load read of the same 67 MB: the ceiling.
// grid AxB: A KV chunks of L rows x B kv heads; occN/SM: resident blocks per
// SM at that shared memory; nc 0 in main() = one full wave at that occupancy.
// Note: K+V (67 MB) is larger than the 50 MB L2 but back-to-back runs still
// find part of it in L2, as test-backend-ops' perf runs do; read shows that.
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -o /tmp/fattn bench/experiments/fattn.cu && /tmp/fattn
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr int D = 128, HKV = 8, GQA = 4, NH = HKV * GQA, KV = 16384;
constexpr float SCALE = 0.08838834764831845f; // 1/sqrt(128)
constexpr float LOG2E = 1.4426950408889634f;
constexpr double KV_BYTES = 2.0 * HKV * KV * D * 2;
constexpr int MAX_NC = 512; // most KV chunks per kv head any variant uses

#define NEG_INF (-__int_as_float(0x7f800000))

// ---------------------------------------------------------------- reference
// s[h][j] = scale * q_h . k_j + mask_j
__global__ void ref_scores(const float * q, const half * k, const half * mask, float * s) {
    const int h = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    const half * kr = k + ((long)(h / GQA) * KV + j) * D;
    float acc = 0.0f;
    for (int d = 0; d < D; d++) acc += q[h * D + d] * __half2float(kr[d]);
    s[(long)h * KV + j] = acc * SCALE + __half2float(mask[j]);
}

// out[h][d] = sum_j softmax(s[h])_j v_j[d]; block h, thread d.
__global__ void ref_out(const float * s, const half * v, float * out) {
    const int h = blockIdx.x, d = threadIdx.x;
    const float * sr = s + (long)h * KV;
    float M = NEG_INF;
    for (int j = 0; j < KV; j++) M = fmaxf(M, sr[j]);
    double S = 0, o = 0;
    for (int j = 0; j < KV; j++) {
        const double p = expf(sr[j] - M);
        S += p;
        o += p * __half2float(v[((long)(h / GQA) * KV + j) * D + d]);
    }
    out[h * D + d] = (float)(o / S);
}

// ---------------------------------------------------------------- cur: today's kernel
// A port of kernels/fattn.cu fattn_vec<128, 4> for this case (softcap 0, no
// ALiBi, no sinks, nq 1, ne3 1): same geometry, loops and syncs; strides and
// scale stay runtime values as in the real kernel.
#define CUR_THREADS 128
#define CUR_TILE 64

static __device__ __forceinline__ float cur_logit(float x, float softcap, const half * mrow, long j, float slope) {
    if (softcap != 0.0f) x = softcap * tanhf(x);
    if (mrow != nullptr) x += slope * __half2float(mrow[j]);
    return x;
}

static __device__ __forceinline__ void cur_unpack8(const uint4 raw, float * f) {
    const half * h = (const half *)&raw;
#pragma unroll
    for (int e = 0; e < 8; e++) f[e] = __half2float(h[e]);
}

template <int R>
__global__ void cur_vec(const float * q, const half * k, const half * v, const half * mask, float * part, float * out,
                        long knb1, long knb2, long vnb1, long vnb2, float scale, float softcap, unsigned gqa, unsigned chunk,
                        long nkv, unsigned nhkv) {
    constexpr int C = D / 8, G = 16, NC = 1, NG = CUR_THREADS / G, T = CUR_TILE;
    __shared__ float sP[R][T];
    __shared__ float sRed[NG][D];
    __shared__ float sM[R], sS[R], sF[R], sSlope[R];
    __shared__ const half * sMrow[R];

    const int tid = threadIdx.x, lane = tid % G, gi = tid / G;
    const unsigned nq = 1, nrows = gqa * nq;
    const unsigned ik2 = blockIdx.z % nhkv;
    unsigned h[R], iq1[R];
    bool valid[R];
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
        const unsigned gr0 = blockIdx.y * R + rr;
        valid[rr] = gr0 < nrows;
        const unsigned gr = valid[rr] ? gr0 : nrows - 1;
        h[rr] = ik2 * gqa + gr / nq;
        iq1[rr] = gr % nq;
    }
    if (tid < R) {
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            if (rr == tid) {
                sM[rr] = NEG_INF;
                sS[rr] = 0.0f;
                sSlope[rr] = 1.0f;
                sMrow[rr] = mask + iq1[rr] * nkv;
            }
        }
    }
    float qr[R][NC][8];
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
        const float * qrow = q + h[rr] * D;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const int ch = lane + c * G;
#pragma unroll
            for (int e = 0; e < 8; e++) qr[rr][c][e] = ch < C ? qrow[ch * 8 + e] * scale : 0.0f;
        }
    }
    float acc[R][NC][8];
#pragma unroll
    for (int rr = 0; rr < R; rr++)
#pragma unroll
        for (int c = 0; c < NC; c++)
#pragma unroll
            for (int e = 0; e < 8; e++) acc[rr][c][e] = 0.0f;
    __syncthreads();

    const char * kb = (const char *)k + ik2 * knb2;
    const char * vb = (const char *)v + ik2 * vnb2;
    const long c0 = (long)blockIdx.x * chunk;
    const long c1 = c0 + chunk < nkv ? c0 + chunk : nkv;
    for (long t0 = c0; t0 < c1; t0 += T) {
        const int n = c1 - t0 < T ? (int)(c1 - t0) : T;
#pragma unroll
        for (int it = 0; it < T / NG; it++) {
            const int jj = gi + it * NG;
            float s[R];
#pragma unroll
            for (int rr = 0; rr < R; rr++) s[rr] = 0.0f;
            if (jj < n) {
                const char * krow = kb + (t0 + jj) * knb1;
#pragma unroll
                for (int c = 0; c < NC; c++) {
                    const int ch = lane + c * G;
                    if (ch < C) {
                        float kf[8];
                        cur_unpack8(*(const uint4 *)(krow + ch * 16), kf);
#pragma unroll
                        for (int rr = 0; rr < R; rr++)
#pragma unroll
                            for (int e = 0; e < 8; e++) s[rr] += qr[rr][c][e] * kf[e];
                    }
                }
            }
#pragma unroll
            for (int rr = 0; rr < R; rr++)
#pragma unroll
                for (int m = G / 2; m > 0; m >>= 1) s[rr] += __shfl_xor_sync(0xffffffffu, s[rr], m);
            if (lane == 0) {
#pragma unroll
                for (int rr = 0; rr < R; rr++) sP[rr][jj] = jj < n ? cur_logit(s[rr], softcap, sMrow[rr], t0 + jj, sSlope[rr]) : NEG_INF;
            }
        }
        __syncthreads();
        for (int rr = tid / 32; rr < R; rr += CUR_THREADS / 32) {
            const int l = tid % 32;
            const float x0 = sP[rr][l], x1 = sP[rr][l + 32];
            const float mold = sM[rr];
            float mt = fmaxf(x0, x1);
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, m));
            const float mnew = fmaxf(mold, mt);
            const bool none = mnew == NEG_INF;
            const float p0 = none ? 0.0f : expf(x0 - mnew), p1 = none ? 0.0f : expf(x1 - mnew);
            const float f = none ? 1.0f : expf(mold - mnew);
            float sum = p0 + p1;
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, m);
            sP[rr][l] = p0;
            sP[rr][l + 32] = p1;
            if (l == 0) {
                sM[rr] = mnew;
                sS[rr] = sS[rr] * f + sum;
                sF[rr] = f;
            }
        }
        __syncthreads();
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            const float f = sF[rr];
#pragma unroll
            for (int c = 0; c < NC; c++)
#pragma unroll
                for (int e = 0; e < 8; e++) acc[rr][c][e] *= f;
        }
#pragma unroll
        for (int it = 0; it < T / NG; it++) {
            const int jj = gi + it * NG;
            if (jj < n) {
                const char * vrow = vb + (t0 + jj) * vnb1;
#pragma unroll
                for (int c = 0; c < NC; c++) {
                    const int ch = lane + c * G;
                    if (ch < C) {
                        float vf[8];
                        cur_unpack8(*(const uint4 *)(vrow + ch * 16), vf);
#pragma unroll
                        for (int rr = 0; rr < R; rr++) {
                            const float p = sP[rr][jj];
#pragma unroll
                            for (int e = 0; e < 8; e++) acc[rr][c][e] += p * vf[e];
                        }
                    }
                }
            }
        }
        __syncthreads();
    }

    const bool single = gridDim.x == 1;
#pragma unroll
    for (int rr = 0; rr < R; rr++) {
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const int ch = lane + c * G;
            if (ch < C) {
#pragma unroll
                for (int e = 0; e < 8; e++) sRed[gi][ch * 8 + e] = acc[rr][c][e];
            }
        }
        __syncthreads();
        if (valid[rr]) {
            const float M = sM[rr], S = sS[rr];
            const float inv = S == 0.0f ? 0.0f : 1.0f / S;
            float * prow = part + ((long)blockIdx.x * NH + h[rr]) * (D + 2);
            float * orow = out + h[rr] * D;
            for (int d = tid; d < D; d += CUR_THREADS) {
                float o = 0.0f;
#pragma unroll
                for (int g = 0; g < NG; g++) o += sRed[g][d];
                if (single) orow[d] = o * inv;
                else prow[2 + d] = o;
            }
            if (!single && tid == 0) {
                prow[0] = M;
                prow[1] = S;
            }
        }
        __syncthreads();
    }
}

// Today's fattn_combine (no sinks): block x = output row.
__global__ void cur_combine(float * out, const float * part, unsigned nchunks, unsigned nrows) {
    const unsigned row = blockIdx.x;
    const long stride = (long)nrows * (D + 2);
    const float * p = part + (long)row * (D + 2);
    float M = NEG_INF;
    for (unsigned c = 0; c < nchunks; c++) M = fmaxf(M, p[c * stride]);
    float S = 0.0f;
    if (M != NEG_INF) {
        for (unsigned c = 0; c < nchunks; c++) {
            const float mc = p[c * stride];
            if (mc != NEG_INF) S += p[c * stride + 1] * expf(mc - M);
        }
    }
    float * orow = out + row * D;
    for (unsigned d = threadIdx.x; d < D; d += blockDim.x) {
        float o = 0.0f;
        if (S != 0.0f) {
            for (unsigned c = 0; c < nchunks; c++) {
                const float mc = p[c * stride];
                if (mc != NEG_INF) o += p[c * stride + 2 + d] * expf(mc - M);
            }
            o /= S;
        }
        orow[d] = o;
    }
}

// ---------------------------------------------------------------- dec: new designs
enum Mode { REG = 0, PF = 1, CPA = 2 };
static const char * mode_name[] = {"reg", "pf ", "cpa"};

static __device__ __forceinline__ void cp_async16(void * smem, const void * gmem) {
    const unsigned sa = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem) : "memory");
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> static __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
static __device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// One step of a warp: rows 2u + hf (u < U) of the step; lane holds 16 B
// (dims 8c..8c+7) of its row's K and V. msk: the step's mask (log2 units).
template <int U>
static __device__ __forceinline__ void dec_step(const uint4 (&kr)[U], const uint4 (&vr)[U], const float * msk, int hf,
                                                const float (&qr)[GQA][8], float (&acc)[GQA][8], float (&m)[GQA],
                                                float (&l)[GQA]) {
    float s[U][GQA];
#pragma unroll
    for (int u = 0; u < U; u++) {
        const half2 * kh = (const half2 *)&kr[u];
#pragma unroll
        for (int h = 0; h < GQA; h++) s[u][h] = 0.0f;
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const float2 f = __half22float2(kh[p]);
#pragma unroll
            for (int h = 0; h < GQA; h++) {
                s[u][h] = fmaf(qr[h][2 * p], f.x, s[u][h]);
                s[u][h] = fmaf(qr[h][2 * p + 1], f.y, s[u][h]);
            }
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const float mk = msk[2 * u + hf];
#pragma unroll
        for (int h = 0; h < GQA; h++) {
#pragma unroll
            for (int o = 8; o > 0; o >>= 1) s[u][h] += __shfl_xor_sync(0xffffffffu, s[u][h], o);
            s[u][h] += mk;
        }
    }
#pragma unroll
    for (int h = 0; h < GQA; h++) {
        float mx = s[0][h];
#pragma unroll
        for (int u = 1; u < U; u++) mx = fmaxf(mx, s[u][h]);
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
        const float mn = fmaxf(m[h], mx); // m starts finite (-1e30): no inf - inf
        const float f = exp2f(m[h] - mn);
        m[h] = mn;
        l[h] *= f;
#pragma unroll
        for (int e = 0; e < 8; e++) acc[h][e] *= f;
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const half2 * vh = (const half2 *)&vr[u];
        float p[GQA];
#pragma unroll
        for (int h = 0; h < GQA; h++) {
            p[h] = exp2f(s[u][h] - m[h]);
            l[h] += p[h];
        }
#pragma unroll
        for (int q2 = 0; q2 < 4; q2++) {
            const float2 f = __half22float2(vh[q2]);
#pragma unroll
            for (int h = 0; h < GQA; h++) {
                acc[h][2 * q2] = fmaf(p[h], f.x, acc[h][2 * q2]);
                acc[h][2 * q2 + 1] = fmaf(p[h], f.y, acc[h][2 * q2 + 1]);
            }
        }
    }
}

// The end of a dec block, once every warp has put its unnormalised
// accumulator and (max, sum) per q head into body ([W][GQA][D] floats, then
// [W][GQA][2]): merge the warps, write the block's partial, and with FUSED let
// the last block of the kv head merge all partials into out.
template <int W, bool FUSED>
static __device__ __forceinline__ void dec_finish(unsigned char * body, int kvh, int nc, float * __restrict__ pm,
                                                  float * __restrict__ pl, float * __restrict__ pacc,
                                                  float * __restrict__ out, unsigned * __restrict__ counter) {
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const float * sAcc = (const float *)body;
    const float * sMl = sAcc + W * GQA * D;
    __syncthreads();
    for (int idx = tid; idx < GQA * D; idx += W * 32) {
        const int h = idx / D, d = idx % D, hq = kvh * GQA + h;
        float M = -1e30f;
#pragma unroll
        for (int ww = 0; ww < W; ww++) M = fmaxf(M, sMl[(ww * GQA + h) * 2]);
        float o = 0.0f, Ls = 0.0f;
#pragma unroll
        for (int ww = 0; ww < W; ww++) {
            const float f = exp2f(sMl[(ww * GQA + h) * 2] - M);
            o += f * sAcc[(ww * GQA + h) * D + d];
            Ls += f * sMl[(ww * GQA + h) * 2 + 1];
        }
        pacc[((long)blockIdx.x * NH + hq) * D + d] = o;
        if (d == 0) {
            pm[blockIdx.x * NH + hq] = M;
            pl[blockIdx.x * NH + hq] = Ls;
        }
    }
    if (!FUSED) return;

    // Fused combine: the last block of this kv head merges its nc partials.
    __shared__ unsigned sLast;
    __threadfence();
    __syncthreads();
    if (tid == 0) sLast = atomicAdd(counter + kvh, 1u) == (unsigned)nc - 1;
    __syncthreads();
    if (!sLast) return;
    if (tid == 0) counter[kvh] = 0; // ready for the next launch
    __threadfence();
    float * sW = (float *)body; // [GQA][nc]: exp2(m - M) / S
    for (int hh = w; hh < GQA; hh += W) { // warp hh: q head kvh·GQA + hh
        const int hq = kvh * GQA + hh;
        float M = -1e30f;
        for (int cc = lane; cc < nc; cc += 32) M = fmaxf(M, __ldcg(pm + cc * NH + hq));
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
        float S = 0.0f;
        for (int cc = lane; cc < nc; cc += 32) {
            const float f = exp2f(__ldcg(pm + cc * NH + hq) - M);
            sW[hh * nc + cc] = f;
            S += f * __ldcg(pl + cc * NH + hq);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) S += __shfl_xor_sync(0xffffffffu, S, o);
        const float inv = S == 0.0f ? 0.0f : 1.0f / S;
        __syncwarp();
        for (int cc = lane; cc < nc; cc += 32) sW[hh * nc + cc] *= inv;
    }
    __syncthreads();
    constexpr int PER = GQA * D / (W * 32); // outputs per thread
    float o[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) o[i] = 0.0f;
    int cc = 0;
    for (; cc + 8 <= nc; cc += 8) {
        float x[8][PER];
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int i = 0; i < PER; i++) {
                const int idx = tid + i * W * 32, h = idx / D, d = idx % D;
                x[j][i] = __ldcg(pacc + ((long)(cc + j) * NH + kvh * GQA + h) * D + d);
            }
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int i = 0; i < PER; i++) o[i] += sW[((tid + i * W * 32) / D) * nc + cc + j] * x[j][i];
    }
    for (; cc < nc; cc++)
#pragma unroll
        for (int i = 0; i < PER; i++) {
            const int idx = tid + i * W * 32, h = idx / D, d = idx % D;
            o[i] += sW[h * nc + cc] * __ldcg(pacc + ((long)cc * NH + kvh * GQA + h) * D + d);
        }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int idx = tid + i * W * 32, h = idx / D, d = idx % D;
        out[(kvh * GQA + h) * D + d] = o[i];
    }
}

// Dynamic shared memory of dec: the chunk's mask (L floats), then the union
// of the cp.async rings and the warp-merge buffers (also the fused combine's
// weights).
template <int W, int U, int MODE, int NS>
static size_t dec_smem(int L) {
    const size_t mask = ((size_t)L * 4 + 15) / 16 * 16;
    size_t body = (size_t)W * GQA * D * 4 + (size_t)W * GQA * 2 * 4;
    if (MODE == CPA) body = std::max(body, (size_t)W * NS * 64 * U * 16);
    body = std::max(body, (size_t)GQA * MAX_NC * 4);
    return mask + body;
}

// Block (chunk x, kv head y) of W warps over KV rows [x·L, min((x+1)·L, KV)).
// Partials: pm/pl [chunk][q head] (max in log2 units, sum), pacc [chunk][q
// head][D] (unnormalised). FUSED: the last block of a kv head writes out.
template <int W, int U, int MODE, int NS, bool FUSED>
__global__ void __launch_bounds__(W * 32) dec(const float * __restrict__ q, const half * __restrict__ k,
                                              const half * __restrict__ v, const half * __restrict__ mask,
                                              float * __restrict__ pm, float * __restrict__ pl, float * __restrict__ pacc,
                                              float * __restrict__ out, unsigned * __restrict__ counter, int L) {
    extern __shared__ __align__(16) unsigned char dsm[];
    float * sMask = (float *)dsm;
    unsigned char * body = dsm + ((size_t)L * 4 + 15) / 16 * 16;
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, hf = lane >> 4, c = lane & 15;
    const int kvh = blockIdx.y, nc = gridDim.x;
    const long c0 = (long)blockIdx.x * L;
    const int nrow = (int)min((long)L, KV - c0);
    const int nsteps = nrow / (2 * U);
    const uint4 * kb4 = (const uint4 *)(k + ((long)kvh * KV + c0) * D);
    const uint4 * vb4 = (const uint4 *)(v + ((long)kvh * KV + c0) * D);

    // Step s, u: uint4 s·32U + u·32 + lane (row s·2U + 2u + hf, chunk c).
    uint4 kr[U], vr[U];
    uint4 * ring = (uint4 *)body + w * NS * 64 * U; // stage st: K at st·64U, V at st·64U + 32U
    if (MODE == CPA) {
#pragma unroll
        for (int i = 0; i < NS - 1; i++) {
            const int s = w + i * W;
            if (s < nsteps) {
#pragma unroll
                for (int u = 0; u < U; u++) {
                    cp_async16(ring + i * 64 * U + u * 32 + lane, kb4 + (long)s * 32 * U + u * 32 + lane);
                    cp_async16(ring + i * 64 * U + 32 * U + u * 32 + lane, vb4 + (long)s * 32 * U + u * 32 + lane);
                }
            }
            cp_async_commit();
        }
    } else if (MODE == PF) {
        if (w < nsteps) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                kr[u] = __ldg(kb4 + (long)w * 32 * U + u * 32 + lane);
                vr[u] = __ldg(vb4 + (long)w * 32 * U + u * 32 + lane);
            }
        }
    }

    float qr[GQA][8], acc[GQA][8], m[GQA], l[GQA];
#pragma unroll
    for (int h = 0; h < GQA; h++) {
        const float4 * qp = (const float4 *)(q + (kvh * GQA + h) * D + c * 8);
        const float4 a = qp[0], b = qp[1];
        const float sc = SCALE * LOG2E;
        qr[h][0] = a.x * sc; qr[h][1] = a.y * sc; qr[h][2] = a.z * sc; qr[h][3] = a.w * sc;
        qr[h][4] = b.x * sc; qr[h][5] = b.y * sc; qr[h][6] = b.z * sc; qr[h][7] = b.w * sc;
#pragma unroll
        for (int e = 0; e < 8; e++) acc[h][e] = 0.0f;
        m[h] = -1e30f;
        l[h] = 0.0f;
    }
    for (int i = tid; i < nrow; i += W * 32) sMask[i] = __half2float(mask[c0 + i]) * LOG2E;
    __syncthreads();

    if (MODE == REG) {
        for (int s = w; s < nsteps; s += W) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                kr[u] = __ldg(kb4 + (long)s * 32 * U + u * 32 + lane);
                vr[u] = __ldg(vb4 + (long)s * 32 * U + u * 32 + lane);
            }
            dec_step<U>(kr, vr, sMask + s * 2 * U, hf, qr, acc, m, l);
        }
    } else if (MODE == PF) {
        for (int s = w; s < nsteps; s += W) {
            uint4 kn[U], vn[U];
            const int sn = s + W;
            if (sn < nsteps) {
#pragma unroll
                for (int u = 0; u < U; u++) {
                    kn[u] = __ldg(kb4 + (long)sn * 32 * U + u * 32 + lane);
                    vn[u] = __ldg(vb4 + (long)sn * 32 * U + u * 32 + lane);
                }
            }
            dec_step<U>(kr, vr, sMask + s * 2 * U, hf, qr, acc, m, l);
#pragma unroll
            for (int u = 0; u < U; u++) {
                kr[u] = kn[u];
                vr[u] = vn[u];
            }
        }
    } else {
        int i = 0;
        for (int s = w; s < nsteps; s += W, i++) {
            // Refill the stage read last iteration (this lane's own bytes,
            // already consumed), then wait for this step's stage.
            const int sn = s + (NS - 1) * W, stn = (i + NS - 1) % NS;
            if (sn < nsteps) {
#pragma unroll
                for (int u = 0; u < U; u++) {
                    cp_async16(ring + stn * 64 * U + u * 32 + lane, kb4 + (long)sn * 32 * U + u * 32 + lane);
                    cp_async16(ring + stn * 64 * U + 32 * U + u * 32 + lane, vb4 + (long)sn * 32 * U + u * 32 + lane);
                }
            }
            cp_async_commit();
            cp_async_wait<NS - 1>();
            const int st = i % NS;
#pragma unroll
            for (int u = 0; u < U; u++) {
                kr[u] = ring[st * 64 * U + u * 32 + lane];
                vr[u] = ring[st * 64 * U + 32 * U + u * 32 + lane];
            }
            dec_step<U>(kr, vr, sMask + s * 2 * U, hf, qr, acc, m, l);
        }
        cp_async_wait_all();
    }

    // Merge the two half-warps, then the block's warps.
#pragma unroll
    for (int h = 0; h < GQA; h++) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 16);
#pragma unroll
        for (int e = 0; e < 8; e++) acc[h][e] += __shfl_xor_sync(0xffffffffu, acc[h][e], 16);
    }
    float * sAcc = (float *)body;            // [W][GQA][D]
    float * sMl = sAcc + W * GQA * D;        // [W][GQA][2]
    __syncthreads();                         // every warp is done with its ring
    if (lane < 16) {
#pragma unroll
        for (int h = 0; h < GQA; h++) {
            float4 * dp = (float4 *)(sAcc + (w * GQA + h) * D + c * 8);
            dp[0] = make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
            dp[1] = make_float4(acc[h][4], acc[h][5], acc[h][6], acc[h][7]);
        }
    }
    if (lane == 0) {
#pragma unroll
        for (int h = 0; h < GQA; h++) {
            sMl[(w * GQA + h) * 2] = m[h];
            sMl[(w * GQA + h) * 2 + 1] = l[h];
        }
    }
    dec_finish<W, FUSED>(body, kvh, nc, pm, pl, pacc, out, counter);
}

// ---------------------------------------------------------------- tc: tensor-core decode
// Like dec (block = chunk x kv head, independent warps, per-warp cp.async ring,
// the same merge), but a warp step is 16 KV rows done with mma.sync
// m16n8k16: S = Q·Kᵀ with the 4 GQA heads as rows 0-3 of the 16-row A tile
// (Q pre-scaled, f16), K rows from shared memory by ldmatrix; P (f16) stays in
// registers as the A tile of O += P·V, V by ldmatrix.trans. 75% of the MMA
// rows are padding, but a step costs ~150 warp instructions instead of ~1100
// for 16 rows of the SIMT dec. Shared rows are 256 B with the 16-byte chunk
// index XOR (row & 7) so ldmatrix is conflict-free.
static __device__ __forceinline__ void tc_mma(float * c, const unsigned * a, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void tc_ldsm_x4(unsigned * r, const void * p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
}
static __device__ __forceinline__ void tc_ldsm_x4_trans(unsigned * r, const void * p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
}
static __device__ __forceinline__ unsigned tc_pack(float lo, float hi) {
    const half2 h = __floats2half2_rn(lo, hi);
    return *(const unsigned *)&h;
}
// Byte offset of 16-byte chunk ch of row r in a swizzled 16-row tile.
static __device__ __forceinline__ int tc_off(int r, int ch) { return r * 256 + ((ch ^ (r & 7)) << 4); }

template <int W, int NS>
static size_t tc_smem(int L) {
    const size_t mask = ((size_t)L * 4 + 15) / 16 * 16;
    size_t body = std::max((size_t)W * NS * 8192, (size_t)W * GQA * D * 4 + (size_t)W * GQA * 2 * 4);
    body = std::max(body, (size_t)GQA * MAX_NC * 4);
    return mask + body;
}

template <int W, int NS, bool FUSED>
__global__ void __launch_bounds__(W * 32) dtc(const float * __restrict__ q, const half * __restrict__ k,
                                              const half * __restrict__ v, const half * __restrict__ mask,
                                              float * __restrict__ pm, float * __restrict__ pl, float * __restrict__ pacc,
                                              float * __restrict__ out, unsigned * __restrict__ counter, int L) {
    extern __shared__ __align__(16) unsigned char dsm[];
    float * sMask = (float *)dsm;
    unsigned char * body = dsm + ((size_t)L * 4 + 15) / 16 * 16;
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;
    const int lmat = lane >> 3, lrow = lane & 7;
    const int kvh = blockIdx.y, nc = gridDim.x;
    const long c0 = (long)blockIdx.x * L;
    const int nrow = (int)min((long)L, KV - c0);
    const int nsteps = nrow / 16;
    const uint4 * kb4 = (const uint4 *)(k + ((long)kvh * KV + c0) * D);
    const uint4 * vb4 = (const uint4 *)(v + ((long)kvh * KV + c0) * D);
    unsigned char * ring = body + w * NS * 8192; // stage st: K at st·8192, V at st·8192 + 4096

    // Lane copies chunk lane%16 of rows 2u + lane/16 (u < 8) of a step.
    const int crow = lane >> 4, cch = lane & 15;
#pragma unroll
    for (int i = 0; i < NS - 1; i++) {
        const int s = w + i * W;
        if (s < nsteps) {
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const int off = tc_off(2 * u + crow, cch);
                cp_async16(ring + i * 8192 + off, kb4 + (long)s * 256 + u * 32 + lane);
                cp_async16(ring + i * 8192 + 4096 + off, vb4 + (long)s * 256 + u * 32 + lane);
            }
        }
        cp_async_commit();
    }

    // A fragments of Q: lane (g, t) with g < 4 holds head g, dims 16ks + 2t, +1
    // (qa[ks][0]) and 16ks + 8 + 2t, +1 (qa[ks][1]); rows 4-15 are zero.
    unsigned qa[8][2];
    {
        const float sc = SCALE * LOG2E;
        const float * qrow = q + (kvh * GQA + (g < GQA ? g : 0)) * D;
#pragma unroll
        for (int ks = 0; ks < 8; ks++) {
            qa[ks][0] = g < GQA ? tc_pack(qrow[16 * ks + 2 * t] * sc, qrow[16 * ks + 2 * t + 1] * sc) : 0u;
            qa[ks][1] = g < GQA ? tc_pack(qrow[16 * ks + 8 + 2 * t] * sc, qrow[16 * ks + 9 + 2 * t] * sc) : 0u;
        }
    }
    float o[16][4];
#pragma unroll
    for (int n = 0; n < 16; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m = -1e30f, l = 0.0f; // of head g (lanes g < 4)
    for (int i = tid; i < nrow; i += W * 32) sMask[i] = __half2float(mask[c0 + i]) * LOG2E;
    __syncthreads();

    int i = 0;
    for (int s = w; s < nsteps; s += W, i++) {
        const int sn = s + (NS - 1) * W, stn = (i + NS - 1) % NS;
        if (sn < nsteps) {
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const int off = tc_off(2 * u + crow, cch);
                cp_async16(ring + stn * 8192 + off, kb4 + (long)sn * 256 + u * 32 + lane);
                cp_async16(ring + stn * 8192 + 4096 + off, vb4 + (long)sn * 256 + u * 32 + lane);
            }
        }
        cp_async_commit();
        cp_async_wait<NS - 1>();
        __syncwarp();
        const unsigned char * sK = ring + (i % NS) * 8192;
        const unsigned char * sV = sK + 4096;
        // S (16 heads x 16 rows, rows 0-3 real): n-tiles 0 and 1.
        float sc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
        for (int ks = 0; ks < 8; ks++) {
            const unsigned a[4] = {qa[ks][0], 0u, qa[ks][1], 0u};
            unsigned b[4];
            const int r = (lmat >> 1) * 8 + lrow;
            tc_ldsm_x4(b, sK + tc_off(r, 2 * ks + (lmat & 1)));
            tc_mma(sc[0], a, b[0], b[1]);
            tc_mma(sc[1], a, b[2], b[3]);
        }
        // Head g, rows 2t, 2t+1, 8+2t, 9+2t of the step.
        const float * msk = sMask + s * 16;
        float x[4] = {sc[0][0] + msk[2 * t], sc[0][1] + msk[2 * t + 1], sc[1][0] + msk[8 + 2 * t], sc[1][1] + msk[9 + 2 * t]};
        float mx = fmaxf(fmaxf(x[0], x[1]), fmaxf(x[2], x[3]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float mn = fmaxf(m, mx);
        const float f = exp2f(m - mn);
        m = mn;
        float p[4];
#pragma unroll
        for (int e = 0; e < 4; e++) p[e] = exp2f(x[e] - m);
        l = l * f + (p[0] + p[1]) + (p[2] + p[3]);
#pragma unroll
        for (int n = 0; n < 16; n++) {
            o[n][0] *= f;
            o[n][1] *= f;
        }
        const unsigned pa[4] = {tc_pack(p[0], p[1]), 0u, tc_pack(p[2], p[3]), 0u};
        const int r = lrow + (lmat & 1) * 8;
#pragma unroll
        for (int n = 0; n < 16; n += 2) {
            unsigned b[4];
            tc_ldsm_x4_trans(b, sV + tc_off(r, n + (lmat >> 1)));
            tc_mma(o[n], pa, b[0], b[1]);
            tc_mma(o[n + 1], pa, b[2], b[3]);
        }
        __syncwarp(); // every lane is done with this stage before it is refilled
    }
    cp_async_wait_all();
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    float * sAcc = (float *)body;
    float * sMl = sAcc + W * GQA * D;
    __syncthreads(); // every warp is done with its ring
    if (g < GQA) {
#pragma unroll
        for (int n = 0; n < 16; n++) {
            sAcc[(w * GQA + g) * D + n * 8 + 2 * t] = o[n][0];
            sAcc[(w * GQA + g) * D + n * 8 + 2 * t + 1] = o[n][1];
        }
        if (t == 0) {
            sMl[(w * GQA + g) * 2] = m;
            sMl[(w * GQA + g) * 2 + 1] = l;
        }
    }
    dec_finish<W, FUSED>(body, kvh, nc, pm, pl, pacc, out, counter);
}

// Combine for dec: block (q head, 32-dim slice), 4 warps over the chunks.
__global__ void __launch_bounds__(128) dec_combine(const float * __restrict__ pm, const float * __restrict__ pl,
                                                   const float * __restrict__ pacc, float * __restrict__ out, int nc) {
    __shared__ float sW[MAX_NC];
    __shared__ float sRed[4][32];
    __shared__ float sMS[2];
    const int h = blockIdx.x, tid = threadIdx.x, lane = tid & 31, w = tid >> 5, d = blockIdx.y * 32 + lane;
    if (w == 0) {
        float M = -1e30f;
        for (int c = lane; c < nc; c += 32) M = fmaxf(M, pm[c * NH + h]);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
        float S = 0.0f;
        for (int c = lane; c < nc; c += 32) S += pl[c * NH + h] * exp2f(pm[c * NH + h] - M);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) S += __shfl_xor_sync(0xffffffffu, S, o);
        if (lane == 0) {
            sMS[0] = M;
            sMS[1] = S == 0.0f ? 0.0f : 1.0f / S;
        }
    }
    __syncthreads();
    for (int c = tid; c < nc; c += 128) sW[c] = exp2f(pm[c * NH + h] - sMS[0]) * sMS[1];
    __syncthreads();
    float o = 0.0f;
#pragma unroll 8
    for (int c = w; c < nc; c += 4) o += sW[c] * pacc[((long)c * NH + h) * D + d];
    sRed[w][lane] = o;
    __syncthreads();
    if (w == 0) out[h * D + d] = sRed[0][lane] + sRed[1][lane] + sRed[2][lane] + sRed[3][lane];
}

// ---------------------------------------------------------------- ceiling
template <int UN>
__global__ void read4(const uint4 * __restrict__ s, long n, unsigned * out) {
    unsigned acc = 0;
    const long stride = (long)gridDim.x * blockDim.x;
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    for (; i + (UN - 1) * stride < n; i += UN * stride) {
        uint4 x[UN];
#pragma unroll
        for (int u = 0; u < UN; u++) x[u] = __ldg(s + i + u * stride);
#pragma unroll
        for (int u = 0; u < UN; u++) acc ^= x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
    }
    for (; i < n; i += stride) {
        const uint4 x = __ldg(s + i);
        acc ^= x.x ^ x.y ^ x.z ^ x.w;
    }
    if (acc == 0x12345678u) *out = acc;
}

// ---------------------------------------------------------------- harness
template <typename F>
static float time_us(F launch, int iters = 100) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 10; i++) launch();
    std::vector<float> t;
    for (int rep = 0; rep < 5; rep++) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < iters; i++) launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000 / iters);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[2];
}

struct Bufs {
    float *q, *out, *pm, *pl, *pacc, *part;
    half *kv, *k, *v, *mask;
    unsigned * counter;
    std::vector<float> want;
    int sms;
};

static double nmse(Bufs & b) {
    std::vector<float> g(NH * D);
    CK(cudaMemcpy(g.data(), b.out, sizeof(float) * g.size(), cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < g.size(); i++) {
        const double e = (double)g[i] - b.want[i];
        num += e * e;
        den += (double)b.want[i] * b.want[i];
    }
    return std::isfinite(num) ? num / den : INFINITY;
}

static void report(const char * name, float main_us, float comb_us, float total_us, double err) {
    printf("%-44s main %7.2f us  combine %6.2f us  total %7.2f us  %5.2f TB/s  nmse %.1e %s\n", name, main_us, comb_us,
           total_us, KV_BYTES / 1e12 / (total_us * 1e-6), err, err < 5e-4 ? "ok" : "BAD");
}

static void run_cur(Bufs & b) {
    const unsigned nchunks = 64, chunk = 256; // fattnVecGeometry for this case on 132 SMs
    const dim3 grid(nchunks, 1, HKV);
    auto main_k = [&] {
        cur_vec<4><<<grid, CUR_THREADS>>>(b.q, b.k, b.v, b.mask, b.part, b.out, D * 2, (long)KV * D * 2, D * 2,
                                          (long)KV * D * 2, SCALE, 0.0f, GQA, chunk, KV, HKV);
    };
    auto comb_k = [&] { cur_combine<<<NH, CUR_THREADS>>>(b.out, b.part, nchunks, NH); };
    CK(cudaMemset(b.out, 0xff, NH * D * 4));
    main_k();
    comb_k();
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    const double err = nmse(b);
    const float tm = time_us(main_k), tc = time_us(comb_k), tt = time_us([&] { main_k(); comb_k(); });
    report("cur  grid 64x1x8 (today's fattn_vec_d128_r4)", tm, tc, tt, err);
}

// nc: KV chunks per kv head (0: as many as fill every SM once at the kernel's
// occupancy; negative -n: n times that).
template <int W, int U, int MODE, int NS, bool FUSED>
static void run_dec(Bufs & b, int nc) {
    auto kern = dec<W, U, MODE, NS, FUSED>;
    // L for the occupancy query: the largest any nc here gives.
    const size_t smax = dec_smem<W, U, MODE, NS>(KV / 16);
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smax));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, W * 32, dec_smem<W, U, MODE, NS>(KV / 64)));
    if (occ == 0) {
        printf("dec %s W%d U%d NS%d: does not fit on an SM, skipped\n", mode_name[MODE], W, U, NS);
        return;
    }
    if (nc <= 0) nc = std::max(16, occ * b.sms * std::max(1, -nc) / HKV);
    nc = std::min(nc, MAX_NC);
    const int L = ((KV + nc - 1) / nc + 2 * U - 1) / (2 * U) * (2 * U); // rows a chunk, a multiple of 2U
    const int ncr = (KV + L - 1) / L;
    const size_t smem = dec_smem<W, U, MODE, NS>(L);
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, W * 32, smem));
    const dim3 grid(ncr, HKV);
    auto main_k = [&] { kern<<<grid, W * 32, smem>>>(b.q, b.k, b.v, b.mask, b.pm, b.pl, b.pacc, b.out, b.counter, L); };
    auto comb_k = [&] {
        if (!FUSED) dec_combine<<<dim3(NH, D / 32), 128>>>(b.pm, b.pl, b.pacc, b.out, ncr);
    };
    CK(cudaMemset(b.out, 0xff, NH * D * 4));
    main_k();
    comb_k();
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    const double err = nmse(b);
    const float tm = time_us(main_k), tc = FUSED ? 0.0f : time_us(comb_k), tt = time_us([&] { main_k(); comb_k(); });
    char name[128];
    snprintf(name, sizeof name, "dec %s W%d U%d%s%s grid %dx%d L%d occ%d/SM", mode_name[MODE], W, U,
             MODE == CPA ? (NS == 2 ? " NS2" : NS == 3 ? " NS3" : NS == 4 ? " NS4" : " NS8") : "", FUSED ? " fused" : "", ncr,
             HKV, L, occ);
    report(name, tm, tc, tt, err);
}

template <int W, int NS, bool FUSED>
static void run_tc(Bufs & b, int nc) {
    auto kern = dtc<W, NS, FUSED>;
    const size_t smax = tc_smem<W, NS>(KV / 16);
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smax));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, W * 32, tc_smem<W, NS>(KV / 64)));
    if (occ == 0) {
        printf("tc W%d NS%d: does not fit on an SM, skipped\n", W, NS);
        return;
    }
    if (nc <= 0) nc = std::max(16, occ * b.sms * std::max(1, -nc) / HKV);
    nc = std::min(nc, MAX_NC);
    const int L = ((KV + nc - 1) / nc + 15) / 16 * 16; // rows a chunk, a multiple of 16
    const int ncr = (KV + L - 1) / L;
    const size_t smem = tc_smem<W, NS>(L);
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, W * 32, smem));
    const dim3 grid(ncr, HKV);
    auto main_k = [&] { kern<<<grid, W * 32, smem>>>(b.q, b.k, b.v, b.mask, b.pm, b.pl, b.pacc, b.out, b.counter, L); };
    auto comb_k = [&] {
        if (!FUSED) dec_combine<<<dim3(NH, D / 32), 128>>>(b.pm, b.pl, b.pacc, b.out, ncr);
    };
    CK(cudaMemset(b.out, 0xff, NH * D * 4));
    main_k();
    comb_k();
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    const double err = nmse(b);
    const float tm = time_us(main_k), tc = FUSED ? 0.0f : time_us(comb_k), tt = time_us([&] { main_k(); comb_k(); });
    char name[128];
    snprintf(name, sizeof name, "tc  mma W%d NS%d%s grid %dx%d L%d occ%d/SM", W, NS, FUSED ? " fused" : "", ncr, HKV, L, occ);
    report(name, tm, tc, tt, err);
}

__global__ void init_f(float * p, long n, unsigned seed, float lo, float hi) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
        p[i] = lo + (hi - lo) * ((x & 0xffffff) / 16777216.0f);
    }
}
__global__ void init_h(half * p, long n, unsigned seed, float lo, float hi, int neg_every) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
        float f = lo + (hi - lo) * ((x & 0xffffff) / 16777216.0f);
        if (neg_every > 0 && i % neg_every == 3) f = -INFINITY;
        p[i] = __float2half(f);
    }
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    Bufs b;
    b.sms = prop.multiProcessorCount;
    printf("%s, %d SMs, L2 %d MB; FLASH_ATTN_EXT decode D=%d, %d q heads / %d kv heads, kv=%d, K+V %.1f MB\n", prop.name,
           b.sms, prop.l2CacheSize >> 20, D, NH, HKV, KV, KV_BYTES / 1e6);
    const long nkv = (long)HKV * KV * D;
    CK(cudaMalloc(&b.kv, 2 * nkv * 2));
    b.k = b.kv;
    b.v = b.kv + nkv;
    CK(cudaMalloc(&b.q, NH * D * 4));
    CK(cudaMalloc(&b.out, NH * D * 4));
    CK(cudaMalloc(&b.mask, KV * 2));
    CK(cudaMalloc(&b.pm, MAX_NC * NH * 4));
    CK(cudaMalloc(&b.pl, MAX_NC * NH * 4));
    CK(cudaMalloc(&b.pacc, (long)MAX_NC * NH * D * 4));
    CK(cudaMalloc(&b.part, 64L * NH * (D + 2) * 4));
    CK(cudaMalloc(&b.counter, HKV * 4));
    CK(cudaMemset(b.counter, 0, HKV * 4));
    init_f<<<64, 256>>>(b.q, NH * D, 1, -1.0f, 1.0f);
    init_h<<<1024, 256>>>(b.k, nkv, 2, -1.0f, 1.0f, 0);
    init_h<<<1024, 256>>>(b.v, nkv, 3, -1.0f, 1.0f, 0);
    init_h<<<64, 256>>>(b.mask, KV, 4, -1.0f, 1.0f, 7); // every 7th position masked (-inf)
    float * s;
    CK(cudaMalloc(&s, (long)NH * KV * 4));
    ref_scores<<<dim3(KV / 128, NH), 128>>>(b.q, b.k, b.mask, s);
    ref_out<<<NH, D>>>(s, b.v, b.out);
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    b.want.resize(NH * D);
    CK(cudaMemcpy(b.want.data(), b.out, NH * D * 4, cudaMemcpyDeviceToHost));
    CK(cudaFree(s));

    unsigned * sink;
    CK(cudaMalloc(&sink, 4));
    for (int per : {4, 8, 16}) {
        const int blocks = b.sms * per;
        float us = time_us([&] { read4<1><<<blocks, 256>>>((const uint4 *)b.kv, 2 * nkv / 8, sink); });
        printf("read uint4 x1, %4d blocks of 256 (ceiling)                     %7.2f us  %5.2f TB/s\n", blocks, us,
               KV_BYTES / 1e12 / (us * 1e-6));
        us = time_us([&] { read4<4><<<blocks, 256>>>((const uint4 *)b.kv, 2 * nkv / 8, sink); });
        printf("read uint4 x4, %4d blocks of 256 (ceiling)                     %7.2f us  %5.2f TB/s\n", blocks, us,
               KV_BYTES / 1e12 / (us * 1e-6));
    }

    run_cur(b);

    // Register-direct loads, 4 warps: grid at occupancy and at 64 / 128 chunks.
    run_dec<4, 4, REG, 1, false>(b, 0);
    run_dec<4, 4, REG, 1, false>(b, 64);
    run_dec<4, 4, REG, 1, false>(b, 128);
    run_dec<4, 2, REG, 1, false>(b, 64);
    run_dec<4, 2, REG, 1, false>(b, 128);
    // Register prefetch of the next step.
    run_dec<4, 2, PF, 1, false>(b, 0);
    run_dec<4, 2, PF, 1, false>(b, 64);
    run_dec<4, 4, PF, 1, false>(b, 0);
    run_dec<4, 4, PF, 1, false>(b, 64);
    run_dec<8, 2, PF, 1, false>(b, 0);
    // cp.async rings.
    run_dec<4, 4, CPA, 3, false>(b, 0);
    run_dec<4, 4, CPA, 3, false>(b, 64);
    run_dec<4, 4, CPA, 4, false>(b, 0);
    run_dec<4, 4, CPA, 4, false>(b, 32);
    run_dec<4, 4, CPA, 4, false>(b, -2);
    run_dec<4, 2, CPA, 4, false>(b, 0);
    run_dec<4, 2, CPA, 8, false>(b, 0);
    run_dec<8, 2, CPA, 4, false>(b, 0);
    run_dec<8, 4, CPA, 3, false>(b, 0);
    // Fused combine (no second kernel).
    run_dec<4, 4, REG, 1, true>(b, 64);
    run_dec<4, 2, PF, 1, true>(b, 0);
    run_dec<4, 4, CPA, 3, true>(b, 0);
    run_dec<4, 4, CPA, 4, true>(b, 0);
    run_dec<8, 4, CPA, 3, true>(b, 0);
    // Tensor-core steps of 16 rows.
    run_tc<4, 3, false>(b, 0);
    run_tc<4, 3, false>(b, 64);
    run_tc<4, 2, false>(b, 0);
    run_tc<4, 4, false>(b, 0);
    run_tc<2, 4, false>(b, 0);
    run_tc<8, 2, false>(b, 0);
    run_tc<4, 3, false>(b, -2);
    run_tc<4, 3, true>(b, 0);
    run_tc<2, 4, true>(b, 0);
    return 0;
}
