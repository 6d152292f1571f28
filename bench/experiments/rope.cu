// rope.cu - a standalone nvcc program that times ROPE kernel variants for the
// two Wave 2 · 3/7 speed goals ternion missed on the H200 (ternion ops perf):
//   ROPE f32 ne_a=[128,32,512,1] n_dims=128 mode 0: 7.83 us (goal <= 7 us),
//   ROPE f16 same shape: 5.42 us = 1442 GiB/s (goal: f16 GiB/s >= f32's).
// "cur" is today's kernels/rope.cu algorithm (mode 0 path, its launch
// geometry from core/ops/rope.go's ropeGeometry), copied here; "flat" are
// candidates: each block takes a chunk of one token's contiguous heads as
// 8- or 16-byte vectors, every thread issues all its loads first (VPT of
// them, TPB apart, so a thread keeps one column of pairs and its cos/sin
// serve every vector it holds), then the angle: sc=sinf/cosf (today's),
// sincosf, __sincosf, or a per-token cos/sin table in shared memory; grid
// one block per chunk or grid-stride over SMs*k blocks. "copy" is a plain
// 16-byte copy of the same bytes (the ceiling).
// Each variant is checked against a float64 reference kernel (dst is first
// filled with NaN) and then timed three ways, 400 launches each, median of
// 5 repetitions:
//   eager: back-to-back <<<>>> launches on one stream, the same buffers
//          (L2-hot, as ternion ops perf runs; it adds its own CPU floor),
//   graph: the same launches captured in one CUDA graph (GPU time per launch,
//          without the CPU launch cost),
//   cold:  a graph rotating over buffer pairs of >= 160 MiB (not L2-resident).
// GiB/s counts src + dst bytes as ggml's test-backend-ops prints them.
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -o /tmp/rope bench/experiments/rope.cu && /tmp/rope
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <string>
#include <functional>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr int NE0 = 128, NE1 = 32, NE2 = 512, NCTX = 512, NDIMS = 128;
constexpr long NEL = (long)NE0 * NE1 * NE2;
constexpr float FREQ_BASE = 10000.0f;
constexpr int ITERS = 400;

typedef long long i64;
typedef unsigned int u32;
typedef unsigned short f16; // IEEE binary16 bits, as ternion_f16

static __device__ __forceinline__ float h2f(f16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static __device__ __forceinline__ f16 f2h(float f) {
    f16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
template <typename T> static __device__ __forceinline__ float ldf(const T * p);
template <> __device__ __forceinline__ float ldf<float>(const float * p) { return *p; }
template <> __device__ __forceinline__ float ldf<f16>(const f16 * p) { return h2f(*p); }

// The angle's constants, computed on the host as core/ops/rope.go does.
struct RopeArgs {
    float log2ts, freq_scale, ext_factor, mscale, low, high;
};

// cos/sin of pair p: SC 0 sinf+cosf (today's), 1 sincosf, 2 __sincosf.
template <int SC>
static __device__ __forceinline__ void yarn(float theta_extrap, int p, const RopeArgs & a, float & c, float & s) {
    float theta = a.freq_scale * theta_extrap;
    if (a.ext_factor != 0.0f) {
        const float y = ((float)p - a.low) / fmaxf(0.001f, a.high - a.low);
        const float mix = (1.0f - fminf(1.0f, fmaxf(0.0f, y))) * a.ext_factor;
        theta = theta * (1.0f - mix) + theta_extrap * mix;
    }
    if (SC == 0) {
        s = sinf(theta);
        c = cosf(theta);
    } else if (SC == 1) {
        sincosf(theta, &s, &c);
    } else {
        __sincosf(theta, &s, &c);
    }
    c *= a.mscale;
    s *= a.mscale;
}

// ---------------------------------------------------------------- reference
// One thread per pair, float64 angle and product.
template <typename T>
__global__ void ref_k(const T * src, double * out, const int * pos, float freq_scale, float mscale) {
    const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= NEL / 2) return;
    const int p = (int)(i % (NE0 / 2));
    const long row = i / (NE0 / 2);
    const int tok = (int)(row / NE1);
    const double theta = (double)freq_scale * pos[tok] * pow((double)FREQ_BASE, -2.0 * p / NDIMS);
    const double c = cos(theta) * mscale, s = sin(theta) * mscale;
    const double x0 = ldf<T>(src + row * NE0 + 2 * p), x1 = ldf<T>(src + row * NE0 + 2 * p + 1);
    out[row * NE0 + 2 * p] = x0 * c - x1 * s;
    out[row * NE0 + 2 * p + 1] = x0 * s + x1 * c;
}

template <typename T> __global__ void to_double(const T * d, double * o, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) o[i] = ldf<T>(d + i);
}

// ---------------------------------------------------------------- cur: today's kernels/rope.cu (mode 0 path)
struct cur_tensor {
    void * data;
    i64 ne[4];
    i64 nb[4];
};
struct cur_fastdiv {
    u32 mp, l, d;
};
static __device__ __forceinline__ u32 cur_div(u32 n, cur_fastdiv f) { return (__umulhi(n, f.mp) + n) >> f.l; }

template <typename T, bool V> struct cur_pair;
template <bool V> struct cur_pair<float, V> {
    static __device__ __forceinline__ float2 load(const char * r, i64 o0, i64 o1) {
        if (V) return *(const float2 *)(r + o0);
        return make_float2(*(const float *)(r + o0), *(const float *)(r + o1));
    }
    static __device__ __forceinline__ void store(char * r, i64 o0, i64 o1, float2 v) {
        if (V) {
            *(float2 *)(r + o0) = v;
        } else {
            *(float *)(r + o0) = v.x;
            *(float *)(r + o1) = v.y;
        }
    }
};
template <bool V> struct cur_pair<f16, V> {
    static __device__ __forceinline__ float2 load(const char * r, i64 o0, i64 o1) {
        if (V) {
            const u32 v = *(const u32 *)(r + o0);
            return make_float2(h2f((f16)(v & 0xffffu)), h2f((f16)(v >> 16)));
        }
        return make_float2(h2f(*(const f16 *)(r + o0)), h2f(*(const f16 *)(r + o1)));
    }
    static __device__ __forceinline__ void store(char * r, i64 o0, i64 o1, float2 v) {
        if (V) {
            *(u32 *)(r + o0) = (u32)f2h(v.x) | ((u32)f2h(v.y) << 16);
        } else {
            *(f16 *)(r + o0) = f2h(v.x);
            *(f16 *)(r + o1) = f2h(v.y);
        }
    }
};

#define CUR_UNROLL 4

template <typename T, bool V, bool R = true>
static __device__ __forceinline__ void cur_heads(char * d, const char * x, i64 dnb1, i64 snb1, int ne1, i64 so0, i64 so1,
                                                 i64 do0, i64 do1, float c, float s) {
    const int step = gridDim.y * blockDim.y;
    for (int h = blockIdx.y * blockDim.y + threadIdx.y; h < ne1; h += CUR_UNROLL * step) {
        float2 v[CUR_UNROLL];
#pragma unroll
        for (int u = 0; u < CUR_UNROLL; u++) {
            const int i1 = h + u * step;
            if (i1 < ne1) v[u] = cur_pair<T, V>::load(x + i1 * snb1, so0, so1);
        }
#pragma unroll
        for (int u = 0; u < CUR_UNROLL; u++) {
            const int i1 = h + u * step;
            if (i1 < ne1)
                cur_pair<T, V>::store(d + i1 * dnb1, do0, do1, R ? make_float2(v[u].x * c - v[u].y * s, v[u].x * s + v[u].y * c) : v[u]);
        }
    }
}

template <typename T, int SC>
__global__ void __launch_bounds__(256) cur_rope(cur_tensor dst, cur_tensor src, const int * pos, const float * ff, cur_fastdiv ne2,
                                                int n_dims, int sec0, int sec1, int sec2, int sec3, float log2_theta_scale,
                                                float freq_scale, float ext_factor, float mscale, float low, float high) {
    const RopeArgs a = {log2_theta_scale, freq_scale, ext_factor, mscale, low, high};
    const u32 ch = blockIdx.x;
    const u32 i3 = cur_div(ch, ne2);
    const u32 i2 = ch - i3 * ne2.d;
    const char * x = (const char *)src.data + i2 * src.nb[2] + i3 * src.nb[3];
    char * d = (char *)dst.data + i2 * dst.nb[2] + i3 * dst.nb[3];
    const i64 sz = (i64)sizeof(T);
    const i64 sn0 = src.nb[0], dn0 = dst.nb[0];
    const i64 amask = 2 * sz - 1;
    const bool packed = sn0 == sz && dn0 == sz &&
                        ((((i64)src.data | src.nb[1] | src.nb[2] | src.nb[3] | (i64)dst.data | dst.nb[1] | dst.nb[2] | dst.nb[3]) &
                          amask) == 0);
    const int npairs = (int)(dst.ne[0] / 2);
    const int ne1 = (int)dst.ne[1];
    const int nrot = n_dims / 2;
    for (int p = threadIdx.x; p < npairs; p += blockDim.x) {
        if (p >= nrot) {
            if (packed) {
                cur_heads<T, true, false>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sn0, 0, 2 * p * dn0, 0, 1.0f, 0.0f);
            } else {
                cur_heads<T, false, false>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sn0, (2 * p + 1) * sn0, 2 * p * dn0,
                                           (2 * p + 1) * dn0, 1.0f, 0.0f);
            }
            continue;
        }
        float theta = (float)pos[i2] * exp2f((float)p * log2_theta_scale);
        if (ff != 0) theta /= ff[p];
        float c, s;
        yarn<SC>(theta, p, a, c, s);
        if (packed) {
            cur_heads<T, true>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sz, 0, 2 * p * sz, 0, c, s);
        } else {
            cur_heads<T, false>(d, x, dst.nb[1], src.nb[1], ne1, 2 * p * sn0, (2 * p + 1) * sn0, 2 * p * dn0, (2 * p + 1) * dn0, c, s);
        }
    }
}

// core/ops/rope.go's ropeGeometry.
static void cur_geometry(long npairs, long ne1, long tokens, long elemSize, int sms, dim3 & grid, dim3 & block) {
    long bx = 1;
    while (bx < npairs && bx < 256) bx *= 2;
    long by = 256 / bx;
    while (by > 1 && by / 2 >= ne1) by /= 2;
    const long groups = (ne1 + by - 1) / by;
    const long want = 2 * elemSize * std::max(sms, 1);
    long gy = groups;
    while (gy > 1) {
        const long half = (gy + 1) / 2;
        if (tokens * half < want || (groups + half - 1) / half > 8) break;
        gy = half;
    }
    gy = std::min(gy, 65535L);
    grid = dim3((unsigned)tokens, (unsigned)gy);
    block = dim3((unsigned)bx, (unsigned)by);
}

// ---------------------------------------------------------------- flat candidates
// VB bytes of a vector as 32-bit words, unpacked to / packed from floats.
template <int VB> struct Raw {
    u32 w[VB / 4];
};
template <int VB> static __device__ __forceinline__ Raw<VB> ldv(const char * p) {
    Raw<VB> r;
    if (VB == 16) {
        const uint4 v = *(const uint4 *)p;
        r.w[0] = v.x; r.w[1 % (VB / 4)] = v.y; r.w[2 % (VB / 4)] = v.z; r.w[3 % (VB / 4)] = v.w;
    } else if (VB == 8) {
        const uint2 v = *(const uint2 *)p;
        r.w[0] = v.x; r.w[1 % (VB / 4)] = v.y;
    } else {
        r.w[0] = *(const u32 *)p;
    }
    return r;
}
template <int VB> static __device__ __forceinline__ void stv(char * p, const Raw<VB> & r) {
    if (VB == 16) {
        *(uint4 *)p = make_uint4(r.w[0], r.w[1 % (VB / 4)], r.w[2 % (VB / 4)], r.w[3 % (VB / 4)]);
    } else if (VB == 8) {
        *(uint2 *)p = make_uint2(r.w[0], r.w[1 % (VB / 4)]);
    } else {
        *(u32 *)p = r.w[0];
    }
}
// Element e of a vector of T as float, and back.
template <typename T, int VB> static __device__ __forceinline__ float getf(const Raw<VB> & r, int e) {
    if (sizeof(T) == 4) return __uint_as_float(r.w[e]);
    return h2f((f16)((e & 1) ? r.w[e / 2] >> 16 : r.w[e / 2] & 0xffffu));
}
template <typename T, int VB> static __device__ __forceinline__ void setf(Raw<VB> & r, int e, float v) {
    if (sizeof(T) == 4) {
        r.w[e] = __float_as_uint(v);
    } else if (e & 1) {
        r.w[e / 2] = (r.w[e / 2] & 0xffffu) | ((u32)f2h(v) << 16);
    } else {
        r.w[e / 2] = (u32)f2h(v);
    }
}

// Block b of a grid-stride loop takes chunks of TPB*VPT vectors (VB bytes,
// E = VB/sizeof(T) elements, E/2 pairs) of one token (the host checks that
// tokVecs divides by the chunk and rowVecs divides TPB, so a thread's column
// of pairs is the same for each of its VPT vectors). SC 0..2 as yarn; SC 3:
// a cos/sin table of the token's npairs pairs in shared memory (sincosf),
// computed while the loads are in flight. LF: loads before the angle.
template <typename T, int VB, int TPB, int VPT, int SC, bool LF>
__global__ void __launch_bounds__(TPB) flat(const char * __restrict__ src, char * __restrict__ dst, const int * __restrict__ pos,
                                            const float * __restrict__ ff, int rowVecs, int tokVecs, int nchunks, int npairs,
                                            RopeArgs a) {
    constexpr int E = VB / (int)sizeof(T), PP = E / 2, CH = TPB * VPT;
    __shared__ float2 tab[SC == 3 ? 256 : 1];
    const int col = threadIdx.x % rowVecs;
    for (int ch = blockIdx.x; ch < nchunks; ch += gridDim.x) {
        const i64 base = (i64)ch * CH;
        const int tok = (int)(base / tokVecs);
        Raw<VB> v[VPT];
        float c[PP], s[PP];
        if (LF) {
#pragma unroll
            for (int k = 0; k < VPT; k++) v[k] = ldv<VB>(src + (base + k * TPB + threadIdx.x) * VB);
        }
        const float position = (float)pos[tok];
        if (SC == 3) {
            __syncthreads(); // the previous chunk's readers are done
            for (int i = threadIdx.x; i < npairs; i += TPB) {
                float theta = position * exp2f((float)i * a.log2ts);
                if (ff) theta /= ff[i];
                float2 cs;
                yarn<1>(theta, i, a, cs.x, cs.y);
                tab[i] = cs;
            }
            __syncthreads();
#pragma unroll
            for (int j = 0; j < PP; j++) {
                const float2 cs = tab[col * PP + j];
                c[j] = cs.x;
                s[j] = cs.y;
            }
        } else {
#pragma unroll
            for (int j = 0; j < PP; j++) {
                const int p = col * PP + j;
                float theta = position * exp2f((float)p * a.log2ts);
                if (ff) theta /= ff[p];
                yarn<SC>(theta, p, a, c[j], s[j]);
            }
        }
        if (!LF) {
#pragma unroll
            for (int k = 0; k < VPT; k++) v[k] = ldv<VB>(src + (base + k * TPB + threadIdx.x) * VB);
        }
#pragma unroll
        for (int k = 0; k < VPT; k++) {
#pragma unroll
            for (int j = 0; j < PP; j++) {
                const float x0 = getf<T, VB>(v[k], 2 * j), x1 = getf<T, VB>(v[k], 2 * j + 1);
                setf<T, VB>(v[k], 2 * j, x0 * c[j] - x1 * s[j]);
                setf<T, VB>(v[k], 2 * j + 1, x0 * s[j] + x1 * c[j]);
            }
            stv<VB>(dst + (base + k * TPB + threadIdx.x) * VB, v[k]);
        }
    }
}

// ---------------------------------------------------------------- ceilings
// One-shot: each thread copies VPT uint4, TPB apart, all loads first.
template <int VPT> __global__ void __launch_bounds__(256) copy_once(const uint4 * __restrict__ s, uint4 * __restrict__ d, long n) {
    const long base = blockIdx.x * 256L * VPT + threadIdx.x;
    uint4 v[VPT];
#pragma unroll
    for (int k = 0; k < VPT; k++) if (base + k * 256 < n) v[k] = s[base + k * 256];
#pragma unroll
    for (int k = 0; k < VPT; k++) if (base + k * 256 < n) d[base + k * 256] = v[k];
}
__global__ void copy_gs(const uint4 * __restrict__ s, uint4 * __restrict__ d, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) d[i] = s[i];
}

// ---------------------------------------------------------------- harness
__global__ void init_f(float * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = (v & 0xffffff) / 8388608.0f - 1.0f;
    }
}
__global__ void init_h(f16 * p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = f2h((v & 0xffffff) / 8388608.0f - 1.0f);
    }
}

typedef std::function<void(cudaStream_t, const void *, void *)> Launch;

static cudaStream_t g_st;
static int * g_pos;
static RopeArgs g_args;
static int g_sms;
static const double GiB = 1024.0 * 1024 * 1024;

struct Bufs {
    size_t bytes; // one tensor
    std::vector<void *> src, dst;
    double * ref;   // float64 reference of src[0]
    double * out;   // a variant's dst[0] as float64
    std::vector<double> href, hout;
};

static float median(std::vector<float> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static float eager_us(const Launch & L, const Bufs & b) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int i = 0; i < 20; i++) L(g_st, b.src[0], b.dst[0]);
    std::vector<float> t;
    for (int rep = 0; rep < 5; rep++) {
        CK(cudaEventRecord(e0, g_st));
        for (int i = 0; i < ITERS; i++) L(g_st, b.src[0], b.dst[0]);
        CK(cudaEventRecord(e1, g_st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1000 / ITERS);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    return median(t);
}

// ITERS launches in one graph over npairs buffer pairs (1: L2-hot).
static float graph_us(const Launch & L, const Bufs & b, int npairs) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(g_st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < ITERS; i++) L(g_st, b.src[i % npairs], b.dst[i % npairs]);
    CK(cudaStreamEndCapture(g_st, &g));
    CK(cudaGraphInstantiateWithFlags(&ge, g, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    CK(cudaGraphLaunch(ge, g_st));
    std::vector<float> t;
    for (int rep = 0; rep < 5; rep++) {
        CK(cudaEventRecord(e0, g_st));
        CK(cudaGraphLaunch(ge, g_st));
        CK(cudaEventRecord(e1, g_st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1000 / ITERS);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    return median(t);
}

// Runs L once on NaN-filled dst[0], compares with the reference (not for a
// copy), then times it.
template <typename T>
static void run(const char * name, const Launch & L, Bufs & b, bool check = true) {
    double nmse = -1, maxerr = 0;
    long nan = 0;
    if (check) {
        CK(cudaMemsetAsync(b.dst[0], 0xff, b.bytes, g_st));
        L(g_st, b.src[0], b.dst[0]);
        CK(cudaStreamSynchronize(g_st));
        CK(cudaGetLastError());
        to_double<T><<<1024, 256, 0, g_st>>>((const T *)b.dst[0], b.out, NEL);
        CK(cudaMemcpyAsync(b.hout.data(), b.out, NEL * sizeof(double), cudaMemcpyDeviceToHost, g_st));
        CK(cudaStreamSynchronize(g_st));
        double num = 0, den = 0;
        for (long i = 0; i < NEL; i++) {
            const double e = b.hout[i] - b.href[i];
            if (std::isnan(e)) {
                nan++; // dst left unwritten (NaN fill) or a NaN result
                continue;
            }
            num += e * e;
            den += b.href[i] * b.href[i];
            maxerr = std::max(maxerr, fabs(e));
        }
        nmse = num / den;
    }
    const int cold_pairs = (int)b.src.size();
    const float ue = eager_us(L, b), ug = graph_us(L, b, 1), uc = graph_us(L, b, cold_pairs);
    const double by = 2.0 * b.bytes;
    const double lim = sizeof(T) == 4 ? 1e-7 : 1e-6;
    printf("%-46s %7.2f %7.0f | %7.2f %7.0f | %7.2f %7.0f |", name, ue, by / GiB / (ue * 1e-6), ug, by / GiB / (ug * 1e-6), uc,
           by / GiB / (uc * 1e-6));
    if (check) {
        printf(" %.2e %.1e %s", nmse, maxerr, nan == 0 && nmse < lim && maxerr < 1e-2 ? "ok" : "BAD");
        if (nan) printf(" (%ld NaN)", nan);
        printf("\n");
    } else {
        printf(" (copy)\n");
    }
    fflush(stdout);
}

template <typename T, int SC> static void add_cur(Bufs & b, int gydiv) {
    dim3 grid, block;
    const long sz = sizeof(T);
    cur_geometry(NE0 / 2, NE1, NE2, sz, g_sms, grid, block);
    grid.y = std::max(1u, grid.y / gydiv);
    cur_tensor t = {nullptr, {NE0, NE1, NE2, 1}, {sz, NE0 * sz, (i64)NE0 * NE1 * sz, (i64)NE0 * NE1 * NE2 * sz}};
    cur_fastdiv fd = {0, 0, NE2};
    while ((1u << fd.l) < fd.d) fd.l++;
    fd.mp = (u32)(((1ull << 32) * ((1ull << fd.l) - fd.d)) / fd.d + 1);
    const RopeArgs a = g_args;
    int * pos = g_pos;
    Launch L = [=](cudaStream_t st, const void * s, void * d) {
        cur_tensor ts = t, td = t;
        ts.data = (void *)s;
        td.data = d;
        cur_rope<T, SC><<<grid, block, 0, st>>>(td, ts, pos, nullptr, fd, NDIMS, 0, 0, 0, 0, a.log2ts, a.freq_scale, a.ext_factor,
                                                a.mscale, a.low, a.high);
    };
    char name[128];
    snprintf(name, sizeof name, "cur%s grid=%ux%u block=%ux%u%s", gydiv > 1 ? "/gy" : "", grid.x, grid.y, block.x, block.y,
             SC == 2 ? " __sincosf" : "");
    run<T>(name, L, b);
}

template <typename T, int VB, int TPB, int VPT, int SC, bool LF = true> static void add_flat(Bufs & b, int gridk = 0) {
    constexpr int E = VB / (int)sizeof(T);
    const int rowVecs = NE0 / E, tokVecs = rowVecs * NE1, chunk = TPB * VPT;
    const int nchunks = (int)(NEL / E / chunk);
    if (TPB % rowVecs != 0 || tokVecs % chunk != 0) {
        printf("flat vb=%d tpb=%d vpt=%d: shape does not fit, skipped\n", VB, TPB, VPT);
        return;
    }
    const int grid = gridk ? std::min(nchunks, g_sms * gridk) : nchunks;
    const RopeArgs a = g_args;
    int * pos = g_pos;
    Launch L = [=](cudaStream_t st, const void * s, void * d) {
        flat<T, VB, TPB, VPT, SC, LF><<<grid, TPB, 0, st>>>((const char *)s, (char *)d, pos, nullptr, rowVecs, tokVecs, nchunks, NE0 / 2, a);
    };
    static const char * scn[] = {"sinf/cosf", "sincosf", "__sincosf", "table"};
    char name[128];
    snprintf(name, sizeof name, "flat vb=%d tpb=%d vpt=%d %s%s grid=%d", VB, TPB, VPT, scn[SC], LF ? "" : " angle1st", grid);
    run<T>(name, L, b);
}

static void add_copies(Bufs & b) {
    const long n = (long)(b.bytes / 16);
    Launch L1 = [=](cudaStream_t st, const void * s, void * d) {
        copy_once<4><<<(unsigned)((n + 1023) / 1024), 256, 0, st>>>((const uint4 *)s, (uint4 *)d, n);
    };
    run<float>("copy 16B x4 per thread (one shot)", L1, b, false);
    const int sms = g_sms;
    Launch L2 = [=](cudaStream_t st, const void * s, void * d) {
        copy_gs<<<sms * 8, 256, 0, st>>>((const uint4 *)s, (uint4 *)d, n);
    };
    run<float>("copy 16B grid-stride SMs*8 blocks", L2, b, false);
}

template <typename T> static Bufs make_bufs() {
    Bufs b;
    b.bytes = NEL * sizeof(T);
    const int np = (int)((160L << 20) / (2 * b.bytes)) + 1;
    for (int i = 0; i < np; i++) {
        void *s, *d;
        CK(cudaMalloc(&s, b.bytes));
        CK(cudaMalloc(&d, b.bytes));
        if (sizeof(T) == 4) init_f<<<1024, 256>>>((float *)s, NEL, 7 + i);
        else init_h<<<1024, 256>>>((f16 *)s, NEL, 7 + i);
        b.src.push_back(s);
        b.dst.push_back(d);
    }
    CK(cudaMalloc(&b.ref, NEL * sizeof(double)));
    CK(cudaMalloc(&b.out, NEL * sizeof(double)));
    ref_k<T><<<(unsigned)((NEL / 2 + 255) / 256), 256>>>((const T *)b.src[0], b.ref, g_pos, g_args.freq_scale, g_args.mscale);
    CK(cudaDeviceSynchronize());
    b.href.resize(NEL);
    b.hout.resize(NEL);
    CK(cudaMemcpy(b.href.data(), b.ref, NEL * sizeof(double), cudaMemcpyDeviceToHost));
    return b;
}

static void free_bufs(Bufs & b) {
    for (void * p : b.src) CK(cudaFree(p));
    for (void * p : b.dst) CK(cudaFree(p));
    CK(cudaFree(b.ref));
    CK(cudaFree(b.out));
}

static void header(const char * t) {
    printf("\n== ROPE %s ne_a=[%d,%d,%d,1] n_dims=%d mode 0 (%s per tensor)\n", t, NE0, NE1, NE2, NDIMS,
           std::string(t) == "f32" ? "8 MiB" : "4 MiB");
    printf("%-46s %7s %7s | %7s %7s | %7s %7s | %s\n", "variant", "eager", "GiB/s", "graph", "GiB/s", "cold", "GiB/s",
           "nmse maxerr");
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("%s, %d SMs, L2 %d MiB; us per launch, median of 5 x %d launches\n", prop.name, g_sms, prop.l2CacheSize >> 20, ITERS);
    CK(cudaStreamCreateWithFlags(&g_st, cudaStreamNonBlocking));

    // test-backend-ops' ROPE perf case: fs=1, ef=0, af=1, n_ctx=512, positions in [0, n_ctx).
    std::vector<int> hpos(NE2);
    for (int i = 0; i < NE2; i++) hpos[i] = (int)(((unsigned)i * 2654435761u >> 7) % NCTX);
    CK(cudaMalloc(&g_pos, NE2 * sizeof(int)));
    CK(cudaMemcpy(g_pos, hpos.data(), NE2 * sizeof(int), cudaMemcpyHostToDevice));
    {
        const float fb = FREQ_BASE, bf = 32, bs = 1;
        auto dim = [&](float rot) { return (float)NDIMS * logf((float)NCTX / (rot * 2 * 3.14159265358979f)) / (2 * logf(fb)); };
        g_args.log2ts = (float)(-2.0 / NDIMS * log2((double)fb));
        g_args.freq_scale = 1;
        g_args.ext_factor = 0;
        g_args.mscale = 1;
        g_args.low = std::max(0.0f, floorf(dim(bf)));
        g_args.high = std::min((float)(NDIMS - 1), ceilf(dim(bs)));
    }

    {
        header("f32");
        Bufs b = make_bufs<float>();
        add_copies(b);
        add_cur<float, 0>(b, 1);               // today's kernel and geometry
        add_cur<float, 0>(b, 2);               // today's, one wave
        add_cur<float, 2>(b, 1);               // today's, __sincosf
        add_flat<float, 16, 256, 4, 0>(b);     // token per block, 512 blocks
        add_flat<float, 16, 256, 4, 0, false>(b);
        add_flat<float, 16, 256, 4, 1>(b);
        add_flat<float, 16, 256, 4, 2>(b);
        add_flat<float, 16, 256, 4, 3>(b);
        add_flat<float, 16, 128, 8, 2>(b);     // token per block, 128 threads
        add_flat<float, 16, 128, 4, 1>(b);     // half a token, 1024 blocks
        add_flat<float, 16, 128, 4, 2>(b);
        add_flat<float, 16, 128, 4, 3>(b);
        add_flat<float, 16, 256, 2, 1>(b);
        add_flat<float, 16, 256, 2, 2>(b);
        add_flat<float, 16, 256, 1, 2>(b);     // 2048 blocks, 1 vector a thread
        add_flat<float, 16, 256, 2, 2>(b, 4);  // grid-stride SMs*4
        add_flat<float, 16, 256, 4, 2>(b, 2);  // grid-stride SMs*2
        add_flat<float, 8, 256, 4, 1>(b);      // float2 (today's width), loads first
        add_flat<float, 8, 256, 4, 2>(b);
        add_flat<float, 8, 256, 8, 2>(b);
        free_bufs(b);
    }
    {
        header("f16");
        Bufs b = make_bufs<f16>();
        add_copies(b);
        add_cur<f16, 0>(b, 1);
        add_cur<f16, 0>(b, 2);
        add_cur<f16, 2>(b, 1);
        add_flat<f16, 16, 128, 4, 0>(b);       // token per block, 512 blocks, 4 pairs a thread
        add_flat<f16, 16, 128, 4, 0, false>(b);
        add_flat<f16, 16, 128, 4, 1>(b);
        add_flat<f16, 16, 128, 4, 2>(b);
        add_flat<f16, 16, 128, 4, 3>(b);
        add_flat<f16, 16, 256, 2, 1>(b);       // token per block, 256 threads
        add_flat<f16, 16, 256, 2, 2>(b);
        add_flat<f16, 16, 256, 2, 3>(b);
        add_flat<f16, 16, 64, 4, 2>(b);        // half a token, 1024 blocks
        add_flat<f16, 16, 128, 2, 2>(b);
        add_flat<f16, 16, 128, 2, 3>(b);
        add_flat<f16, 16, 256, 1, 3>(b);       // 1024 blocks, 1 vector a thread
        add_flat<f16, 16, 128, 4, 2>(b, 2);    // grid-stride SMs*2
        add_flat<f16, 8, 256, 4, 1>(b);        // 2 pairs a thread, token per block
        add_flat<f16, 8, 256, 4, 2>(b);
        add_flat<f16, 8, 256, 4, 3>(b);
        add_flat<f16, 8, 128, 4, 2>(b);        // half a token
        free_bufs(b);
    }
    return 0;
}
