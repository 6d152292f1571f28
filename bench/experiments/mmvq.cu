// mmvq.cu - a standalone nvcc program that times variants of the one-column
// quantized matrix-vector product (MUL_MAT q4_0 / q8_0 / q4_K x f32,
// m=4096 k=14336, n=1: Wave 2 · 4/7's goals 9 / 17 / 10 us) against the
// tree's mmvq8 kernels in the same run, before one goes into kernels/quant.cu.
//
// The variants (mmvr): a warp takes one row; its lanes take groups of 256
// values (q4_0 and q8_0: 8 blocks, 144 and 272 bytes; q4_K: one block of
// 144 bytes), so every group starts 16-byte aligned and a lane decodes its
// blocks from whole words (funnel shifts where a block starts at 2 mod 4)
// instead of 2-byte loads. x reaches the lane either through a per-warp ring
// of C shared-memory chunks of 32 groups filled by cp.async (XR 0), or
// straight into registers with 16-byte loads, the next group's in flight
// while this one is computed (XR 1). src1 is the tree's q8y output (int8
// values + float4 (d, d*sum, ...) per 32); YS 1 stages it once a block in
// shared memory, swizzled so that the 8 lanes of a 16-byte load phase hit
// 8 different bank groups; YS 0 reads it through L1. The 4-bit formats
// multiply the high nibbles in place (q & 0xf0f0f0f0, unsigned x signed
// dp4a) and shift the sum by 4 (exact: it is a multiple of 16).
//
// mmvp is mmvr with a grid of at most one block a multiprocessor (warp wg
// of the grid takes rows wg, wg + nw, ... as one sequence of (row, chunk)
// units through its ring), timed also with programmatic dependent launch of
// q8y and mmvp (cudaLaunchKernelEx); FUSE quantizes f32 y in every block
// instead of reading q8y's output; EARLY queues the first chunks of x before
// griddepcontrol.wait (x is not written by q8y, the kernel before it).
// kernels/quant.cu's mmvq8w is mmvp with FUSE and EARLY off.
//
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/mmvq bench/experiments/mmvq.cu && /tmp/mmvq
#include "quant.cu"
#include "harness.cuh"

constexpr int M = 4096, K = 14336;

// ---- the tree's kernels (baseline) ----
extern "C" __global__ void base_q4_0(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2, ternion_fastdiv r3) {
    TERNION_KERNEL_ENTRY();
    mmvq8<ternion_q4_0, 1>(dst, src0, ternion_ptr{yq}, ternion_ptr{yd}, r2, r3, 1);
}
extern "C" __global__ void base_q8_0(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2, ternion_fastdiv r3) {
    TERNION_KERNEL_ENTRY();
    mmvq8<ternion_q8_0, 1>(dst, src0, ternion_ptr{yq}, ternion_ptr{yd}, r2, r3, 1);
}
extern "C" __global__ void base_q4_K(ternion_tensor dst, ternion_tensor src0, void * yq, void * yd, ternion_fastdiv r2, ternion_fastdiv r3) {
    TERNION_KERNEL_ENTRY();
    mmvq8<ternion_q4_K, 1>(dst, src0, ternion_ptr{yq}, ternion_ptr{yd}, r2, r3, 1);
}

// ---- helpers ----
template <int U> static __device__ __forceinline__ unsigned wd(const uint4 (&x)[U], int i) {
    const uint4 & v = x[i / 4];
    return i % 4 == 0 ? v.x : i % 4 == 1 ? v.y : i % 4 == 2 ? v.z : v.w;
}
// bytes o..o+3 of the group (o even)
template <int U> static __device__ __forceinline__ unsigned ld32(const uint4 (&x)[U], int o) {
    return o % 4 == 0 ? wd(x, o / 4) : __funnelshift_r(wd(x, o / 4), wd(x, o / 4 + 1), 16);
}
template <int U> static __device__ __forceinline__ float h16(const uint4 (&x)[U], int o) {
    const unsigned w = wd(x, o / 4);
    return __half2float(__ushort_as_half((unsigned short)(o % 4 == 0 ? w & 0xffffu : w >> 16)));
}
static __device__ __forceinline__ int dp4a_us(unsigned a, int b, int c) {
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

// src1 of one group: 16 units of values (unit u at q[u ^ sw]) and 8 float4
// scales (entry j at d[j ^ sw]).
struct ygroup {
    const int4 * q;
    const float4 * d;
    int sw;
    __device__ __forceinline__ void get(int j, int (&w)[8], float & dy, float & sy) const {
        const int4 a = q[(2 * j) ^ sw], b = q[(2 * j + 1) ^ sw];
        w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
        const float4 e = d[j ^ sw];
        dy = e.x, sy = e.y;
    }
};

struct f_q4_0 {
    static constexpr int GB = 144, BYTES = 18, QK = 32;
    template <int U> static __device__ __forceinline__ float dot(const uint4 (&x)[U], const ygroup & y) {
        float acc = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int yw[8];
            float dy, sy;
            y.get(j, yw, dy, sy);
            int lo = 0, hi = 0;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const unsigned q = ld32(x, 18 * j + 2 + 4 * i);
                lo = dp4a_us(q & 0x0f0f0f0fu, yw[i], lo);
                hi = dp4a_us(q & 0xf0f0f0f0u, yw[4 + i], hi);
            }
            acc += h16(x, 18 * j) * (dy * (float)(lo + (hi >> 4)) - 8.0f * sy);
        }
        return acc;
    }
    static __host__ __device__ float deq(const unsigned char * b, int i) {
        const float d = __half2float(*(const __half *)b);
        const int q = i < 16 ? (b[2 + i] & 15) : (b[2 + i - 16] >> 4);
        return d * (q - 8);
    }
};

struct f_q8_0 {
    static constexpr int GB = 272, BYTES = 34, QK = 32;
    template <int U> static __device__ __forceinline__ float dot(const uint4 (&x)[U], const ygroup & y) {
        float acc = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int yw[8];
            float dy, sy;
            y.get(j, yw, dy, sy);
            int s = 0;
#pragma unroll
            for (int i = 0; i < 8; i++) s = __dp4a((int)ld32(x, 34 * j + 2 + 4 * i), yw[i], s);
            acc += h16(x, 34 * j) * dy * (float)s;
        }
        return acc;
    }
    static __host__ __device__ float deq(const unsigned char * b, int i) { return __half2float(*(const __half *)b) * (signed char)b[2 + i]; }
};

struct f_q4_K {
    static constexpr int GB = 144, BYTES = 144, QK = 256;
    template <int U> static __device__ __forceinline__ float dot(const uint4 (&x)[U], const ygroup & y) {
        const unsigned s0 = wd(x, 1), s1 = wd(x, 2), s2 = wd(x, 3);
        const unsigned sc[2] = {s0 & 0x3f3f3f3fu, (s2 & 0x0f0f0f0fu) | ((s0 & 0xc0c0c0c0u) >> 2)};
        const unsigned mn[2] = {s1 & 0x3f3f3f3fu, ((s2 >> 4) & 0x0f0f0f0fu) | ((s1 & 0xc0c0c0c0u) >> 2)};
        float a = 0.0f, b = 0.0f;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            int ya[8], yb[8];
            float da, sa, db, sb;
            y.get(2 * c, ya, da, sa);
            y.get(2 * c + 1, yb, db, sb);
            int lo = 0, hi = 0;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const unsigned q = wd(x, 4 + 8 * c + i);
                lo = dp4a_us(q & 0x0f0f0f0fu, ya[i], lo);
                hi = dp4a_us(q & 0xf0f0f0f0u, yb[i], hi);
            }
            const int ia = 2 * c, ib = 2 * c + 1;
            const float sca = (float)((sc[ia / 4] >> (8 * (ia % 4))) & 0xffu), scb = (float)((sc[ib / 4] >> (8 * (ib % 4))) & 0xffu);
            const float mna = (float)((mn[ia / 4] >> (8 * (ia % 4))) & 0xffu), mnb = (float)((mn[ib / 4] >> (8 * (ib % 4))) & 0xffu);
            a += sca * da * (float)lo + scb * db * (float)(hi >> 4);
            b += mna * sa + mnb * sb;
        }
        return h16(x, 0) * a - h16(x, 2) * b;
    }
    static __host__ __device__ float deq(const unsigned char * b, int i) {
        const float d = __half2float(*(const __half *)b), dmin = __half2float(*(const __half *)(b + 2));
        const unsigned char * s = b + 4;
        const int j = i / 32; // sub-block
        int sc, m;
        if (j < 4) {
            sc = s[j] & 63, m = s[j + 4] & 63;
        } else {
            sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
            m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
        }
        const int l = i % 32, c = i / 64;
        const unsigned char q = b[16 + 32 * c + l];
        const int v = (j % 2 == 0) ? (q & 15) : (q >> 4);
        return d * sc * v - dmin * m;
    }
};

static __device__ __forceinline__ void cp16(void * s, const void * g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(s)), "l"(g));
}
static __device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> static __device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <typename F, int U>
static __device__ __forceinline__ void ldg_group(uint4 (&x)[U], const unsigned char * p) {
#pragma unroll
    for (int u = 0; u < U; u++) x[u] = __ldg((const uint4 *)p + u);
}

// dst[row] = x[row] . y for one column; x rows of k values (k % 256 == 0),
// xs bytes apart (16-byte aligned); yq/yd the tree's q8y layout.
template <typename F, int W, int C, bool YS, bool XR>
__global__ void __launch_bounds__(32 * W) mmvr(const unsigned char * x, long xs, int m, int k, const signed char * yq,
                                               const float4 * yd, float * dst) {
    extern __shared__ uint4 smem[];
    constexpr int U = F::GB / 16;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row = blockIdx.x * W + warp;
    const int ngroups = k / 256;
    const bool active = row < m;
    const unsigned char * xrow = x + (long)row * xs;
    uint4 * ysq = smem, * ysd = smem + k / 16;
    uint4 * xb = YS ? smem + k / 16 + k / 32 : smem;
    auto yg = [&](int g) {
        ygroup r;
        if (YS) {
            r.q = (const int4 *)(ysq + 16 * g), r.d = (const float4 *)(ysd + 8 * g), r.sw = g & 7;
        } else {
            r.q = (const int4 *)(yq + 256 * (long)g), r.d = yd + 8 * g, r.sw = 0;
        }
        return r;
    };
    if (YS) {
        for (int u = threadIdx.x; u < k / 16; u += 32 * W) cp16(ysq + 16 * (u / 16) + ((u % 16) ^ ((u / 16) & 7)), yq + 16 * (long)u);
        for (int u = threadIdx.x; u < k / 32; u += 32 * W) cp16(ysd + 8 * (u / 8) + ((u % 8) ^ ((u / 8) & 7)), yd + u);
        commit();
    }
    float acc = 0.0f;
    if (!XR) {
        uint4 * buf = xb + warp * C * 32 * U;
        const int nch = (ngroups + 31) / 32;
        auto stage = [&](int c) {
            if (active && c < nch) {
                const int ng = min(32, ngroups - 32 * c);
                uint4 * d = buf + (c % C) * 32 * U;
                const uint4 * s = (const uint4 *)(xrow + (long)32 * c * F::GB);
                for (int u = lane; u < ng * U; u += 32) cp16(d + u, s + u);
            }
            commit();
        };
#pragma unroll
        for (int c = 0; c < C; c++) stage(c);
        if (YS) {
            wait_group<C - 1>();
            __syncthreads();
        }
        for (int c = 0; c < nch; c++) {
            wait_group<C - 1>();
            __syncwarp();
            const int g = 32 * c + lane;
            if (active && g < ngroups) {
                uint4 xr[U];
                const uint4 * p = buf + (c % C) * 32 * U + lane * U;
#pragma unroll
                for (int u = 0; u < U; u++) xr[u] = p[u];
                acc += F::dot(xr, yg(g));
            }
            __syncwarp();
            stage(c + C);
        }
    } else {
        if (YS) {
            wait_group<0>();
            __syncthreads();
        }
        if (active) {
            uint4 cur[U], nxt[U];
            int g = lane;
            if (g < ngroups) ldg_group<F>(cur, xrow + (long)g * F::GB);
            for (; g < ngroups; g += 64) {
                const bool more = g + 32 < ngroups;
                if (more) ldg_group<F>(nxt, xrow + (long)(g + 32) * F::GB);
                acc += F::dot(cur, yg(g));
                if (!more) break;
                if (g + 64 < ngroups) ldg_group<F>(cur, xrow + (long)(g + 64) * F::GB);
                acc += F::dot(nxt, yg(g + 32));
            }
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (active && lane == 0) dst[row] = acc;
}


// Quantizes f32 y (k values) into the swizzled shared layout of mmvr's YS
// (ysq: values, ysd: float4 (d, d*sum) per 32), bit-exact with q8y: 8
// threads a 32-value block, 4 values each.
template <int NT>
static __device__ __forceinline__ void quant_y_smem(const float * y, int k, uint4 * ysq, uint4 * ysd) {
    const int part = threadIdx.x % 8;
    for (int t = threadIdx.x; t < k / 4; t += NT) {
        const int b = t / 8, g = b / 8, j = b % 8;
        const float4 v = __ldg((const float4 *)y + t);
        float amax = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
#pragma unroll
        for (int o = 4; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
        const float d = amax / 127.0f;
        const int q0 = amax == 0.0f ? 0 : (int)roundf(v.x / d), q1 = amax == 0.0f ? 0 : (int)roundf(v.y / d);
        const int q2 = amax == 0.0f ? 0 : (int)roundf(v.z / d), q3 = amax == 0.0f ? 0 : (int)roundf(v.w / d);
        int sum = q0 + q1 + q2 + q3;
#pragma unroll
        for (int o = 4; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const unsigned w = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((unsigned)(q3 & 0xff) << 24);
        ((unsigned *)(ysq + 16 * g + ((2 * j + part / 4) ^ (g & 7))))[part % 4] = w;
        if (part == 0) ((float4 *)ysd)[8 * g + (j ^ (g & 7))] = make_float4(d, d * (float)sum, 0.0f, 0.0f);
    }
}

// quant_y_smem with every thread's loads issued first (up to 8 float4 a
// thread in flight, then the quantization of the 8): the loop of
// quant_y_smem waits for one load of y per iteration.
template <int NT>
static __device__ __forceinline__ void quant_y_smem2(const float * y, int k, uint4 * ysq, uint4 * ysd) {
    const int part = threadIdx.x % 8;
    for (int t0 = 0; t0 < k / 4; t0 += 8 * NT) {
        float4 v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int t = t0 + i * NT + threadIdx.x;
            v[i] = t < k / 4 ? __ldg((const float4 *)y + t) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < 8; i++) {
            if (t0 + i * NT >= k / 4) break; // whole warps of 8-thread groups: NT and k/4 are multiples of 8
            const int t = t0 + i * NT + threadIdx.x;
            const int b = t / 8, g = b / 8, j = b % 8;
            float amax = fmaxf(fmaxf(fabsf(v[i].x), fabsf(v[i].y)), fmaxf(fabsf(v[i].z), fabsf(v[i].w)));
#pragma unroll
            for (int o = 4; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
            const float d = amax / 127.0f;
            const int q0 = amax == 0.0f ? 0 : (int)roundf(v[i].x / d), q1 = amax == 0.0f ? 0 : (int)roundf(v[i].y / d);
            const int q2 = amax == 0.0f ? 0 : (int)roundf(v[i].z / d), q3 = amax == 0.0f ? 0 : (int)roundf(v[i].w / d);
            int sum = q0 + q1 + q2 + q3;
#pragma unroll
            for (int o = 4; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
            if (t < k / 4) {
                const unsigned w = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((unsigned)(q3 & 0xff) << 24);
                ((unsigned *)(ysq + 16 * g + ((2 * j + part / 4) ^ (g & 7))))[part % 4] = w;
                if (part == 0) ((float4 *)ysd)[8 * g + (j ^ (g & 7))] = make_float4(d, d * (float)sum, 0.0f, 0.0f);
            }
        }
    }
}

// mmvr with a grid of at most one block a multiprocessor: warp wg of the
// grid takes rows wg, wg + nw, ... as one sequence of (row, chunk) units
// through a ring of C chunk buffers; FUSE quantizes f32 y in the block
// instead of reading q8y's output.
template <typename F, int W, int C, int FUSE, bool EARLY = false>
__global__ void __launch_bounds__(32 * W, 1) mmvp(const unsigned char * x, long xs, int m, int k, const signed char * yq,
                                                  const float4 * yd, const float * yf, float * dst) {
    if (!EARLY) TERNION_KERNEL_ENTRY();
    extern __shared__ uint4 smem[];
    constexpr int U = F::GB / 16;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wg = blockIdx.x * W + warp, nw = gridDim.x * W;
    const int ngroups = k / 256, nch = (ngroups + 31) / 32;
    const int nrows = wg < m ? (m - wg + nw - 1) / nw : 0, nu = nrows * nch;
    uint4 * ysq = smem, * ysd = smem + k / 16;
    uint4 * buf = smem + k / 16 + k / 32 + warp * C * 32 * U;
    auto stage = [&](int u) {
        if (u < nu) {
            const int row = wg + (u / nch) * nw, c = u % nch;
            const int ng = min(32, ngroups - 32 * c);
            uint4 * d = buf + (u % C) * 32 * U;
            const uint4 * s = (const uint4 *)(x + (long)row * xs + (long)32 * c * F::GB);
            for (int i = lane; i < ng * U; i += 32) cp16(d + i, s + i);
        }
        commit();
    };
    auto stage_y = [&] {
        for (int u = threadIdx.x; u < k / 16; u += 32 * W) cp16(ysq + 16 * (u / 16) + ((u % 16) ^ ((u / 16) & 7)), yq + 16 * (long)u);
        for (int u = threadIdx.x; u < k / 32; u += 32 * W) cp16(ysd + 8 * (u / 8) + ((u % 8) ^ ((u / 8) & 7)), yd + u);
        commit();
    };
    if (!FUSE && !EARLY) stage_y();
#pragma unroll
    for (int u = 0; u < C; u++) stage(u);
    if (EARLY) {
        // src0 is not written by the kernel before this one (q8y), and every
        // kernel before that one completed before q8y began: x may be read
        // before the wait; y only after it.
        TERNION_KERNEL_ENTRY();
        stage_y();
        wait_group<0>();
    }
    if (FUSE == 1) quant_y_smem<32 * W>(yf, k, ysq, ysd);
    if (FUSE == 2) quant_y_smem2<32 * W>(yf, k, ysq, ysd);
    wait_group<C - 1>();
    __syncthreads();
    float acc = 0.0f;
    for (int u = 0; u < nu; u++) {
        wait_group<C - 1>();
        __syncwarp();
        const int c = u % nch, g = 32 * c + lane;
        if (g < ngroups) {
            uint4 xr[U];
            const uint4 * p = buf + (u % C) * 32 * U + lane * U;
#pragma unroll
            for (int i = 0; i < U; i++) xr[i] = p[i];
            ygroup yg;
            yg.q = (const int4 *)(ysq + 16 * g), yg.d = (const float4 *)(ysd + 8 * g), yg.sw = g & 7;
            acc += F::dot(xr, yg);
        }
        __syncwarp();
        stage(u + C);
        if (c == nch - 1) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
            if (lane == 0) dst[wg + (u / nch) * nw] = acc;
            acc = 0.0f;
        }
    }
}

// ---- reference ----
template <typename F>
__global__ void ref(const unsigned char * x, long xs, int k, const float * y, float * dst) {
    const int r = blockIdx.x;
    float s = 0;
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
        const unsigned char * b = x + r * xs + (i / F::QK) * F::BYTES;
        // F::deq is host+device by being a plain static function compiled for both
        s += F::deq(b, i % F::QK) * y[i];
    }
    __shared__ float p[256];
    p[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) p[threadIdx.x] += p[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) dst[r] = p[0];
}

template <typename F>
static void run(const char * name, void (*base)(ternion_tensor, ternion_tensor, void *, void *, ternion_fastdiv, ternion_fastdiv)) {
    const long xs = (long)K / F::QK * F::BYTES, nbytes = xs * M;
    unsigned char * x;
    float *y, *dst, *dref;
    signed char * yq;
    float4 * yd;
    CK(cudaMalloc(&x, nbytes));
    CK(cudaMalloc(&y, K * 4));
    CK(cudaMalloc(&dst, M * 4));
    CK(cudaMalloc(&dref, M * 4));
    CK(cudaMalloc(&yq, K));
    CK(cudaMalloc(&yd, K / 32 * 16));
    fill_bytes<<<1024, 256>>>(x, nbytes, 17);
    fix_scales<<<1024, 256>>>(x, nbytes / F::BYTES, F::BYTES, 0, 0.001f, 0.01f, 5);
    if (F::QK == 256) fix_scales<<<1024, 256>>>(x, nbytes / F::BYTES, F::BYTES, 2, 0.001f, 0.01f, 7);
    fill_f32<<<64, 256>>>(y, K, 3);
    ref<F><<<M, 256>>>(x, xs, K, y, dref);
    CK(cudaDeviceSynchronize());
    std::vector<float> want(M), got(M), basev(M);
    CK(cudaMemcpy(want.data(), dref, M * 4, cudaMemcpyDeviceToHost));

    ternion_tensor ty = {y, {K, 1, 1, 1}, {4, 4L * K, 4L * K, 4L * K}};
    ternion_tensor tx = {x, {K, M, 1, 1}, {F::BYTES, xs, xs * M, xs * M}};
    ternion_tensor td = {dst, {M, 1, 1, 1}, {4, 4L * M, 4L * M, 4L * M}};
    const ternion_fastdiv one = fastdiv(1), blocks = fastdiv(K / 32);
    auto quant = [&](cudaStream_t st) { q8y<<<56, 256, 0, st>>>(ty, yq, yd, blocks, one, one, K / 32); };
    unsigned * sink;
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&sink, 4));
    printf("== %s: %.1f MB of weights\n", name, nbytes / 1e6);
    printf("read ceiling (4 a thread, 132*8 blocks of 256): %.2f us\n",
           timeit([&](cudaStream_t st) { readall<4><<<132 * 8, 256, 0, st>>>((const uint4 *)x, nbytes / 16, sink); }));
    printf("q8y alone: %.2f us\n", timeit(quant));
    auto bl = [&](cudaStream_t st) { base<<<M / 4, 128, 0, st>>>(td, tx, yq, yd, one, one); };
    quant(0);
    CK(cudaMemset(dst, 0xff, M * 4));
    bl(0);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(basev.data(), dst, M * 4, cudaMemcpyDeviceToHost));
    printf("tree mmvq8: %.2f us alone, %.2f with q8y; nmse vs f32 ref %.2e\n", timeit(bl),
           timeit([&](cudaStream_t st) { quant(st); bl(st); }), nmse(basev, want));
#define V(W, C, YS, XR)                                                                                                           \
    {                                                                                                                             \
        auto kern = mmvr<F, W, C, YS, XR>;                                                                                        \
        const int sm = (YS ? (K / 16 + K / 32) * 16 : 0) + (XR ? 0 : W * C * 32 * F::GB);                                          \
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));                                          \
        auto f = [&](cudaStream_t st) { kern<<<(M + W - 1) / W, 32 * W, sm, st>>>(x, xs, M, K, yq, yd, dst); };                   \
        CK(cudaMemset(dst, 0xff, M * 4));                                                                                         \
        f(0);                                                                                                                     \
        CK(cudaDeviceSynchronize());                                                                                              \
        CK(cudaMemcpy(got.data(), dst, M * 4, cudaMemcpyDeviceToHost));                                                           \
        printf("mmvr W=%2d C=%d YS=%d XR=%d smem %6d: %.2f us alone, %.2f with q8y; nmse vs ref %.2e vs tree %.2e\n", W, C, YS, \
               XR, sm, timeit(f), timeit([&](cudaStream_t st) { quant(st); f(st); }), nmse(got, want), nmse(got, basev));       \
    }
    V(16, 1, true, false)
#undef V
#define P(W, C, FUSE, EARLY)                                                                                                           \
    {                                                                                                                             \
        auto kern = mmvp<F, W, C, FUSE, EARLY>;                                                                                          \
        const int sm = (K / 16 + K / 32) * 16 + W * C * 32 * F::GB;                                                               \
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));                                          \
        const int grid = std::min((M + W - 1) / W, nsm);                                                                          \
        auto f = [&](cudaStream_t st, bool pdl) {                                                                                 \
            launch(pdl, kern, dim3(grid), dim3(32 * W), sm, st, (const unsigned char *)x, xs, M, K, (const signed char *)yq,      \
                   (const float4 *)yd, (const float *)y, dst);                                                                    \
        };                                                                                                                        \
        auto qp = [&](cudaStream_t st, bool pdl) {                                                                                \
            launch(pdl, q8y, dim3(56), dim3(256), 0, st, ty, (void *)yq, (void *)yd, blocks, one, one, (ternion_i64)(K / 32));    \
        };                                                                                                                        \
        CK(cudaMemset(dst, 0xff, M * 4));                                                                                         \
        quant(0);                                                                                                                 \
        f(0, false);                                                                                                              \
        CK(cudaDeviceSynchronize());                                                                                              \
        CK(cudaMemcpy(got.data(), dst, M * 4, cudaMemcpyDeviceToHost));                                                           \
        const float t1 = timeit([&](cudaStream_t st) { f(st, false); });                                                          \
        const float t2 = FUSE ? 0.0f : timeit([&](cudaStream_t st) { qp(st, false); f(st, false); });                            \
        const float t3 = FUSE ? 0.0f : timeit([&](cudaStream_t st) { qp(st, true); f(st, true); });                              \
        const float t4 = timeit([&](cudaStream_t st) { f(st, true); });                                                           \
        if (!FUSE && !EARLY && (W == 16 || F::GB != 144))                                                                         \
            printf("  as ops perf times it (graphs of 853 pairs, mean of 30 with sync): tree mmvq8 pair %.2f, this pair (pdl) %.2f\n", \
                   timeit_mean([&](cudaStream_t st) { quant(st); bl(st); }), timeit_mean([&](cudaStream_t st) { qp(st, true); f(st, true); })); \
        printf("mmvp W=%2d C=%d FUSE=%d EARLY=%d grid %d smem %6d: %.2f us alone (%.2f pdl), q8y+mmvp %.2f, both pdl %.2f; nmse vs ref %.2e vs tree %.2e\n", \
               W, C, FUSE, EARLY, grid, sm, t1, t4, t2, t3, nmse(got, want), nmse(got, basev));                                          \
    }
    if (F::GB == 144) {
        P(16, 2, 0, false)
    } else {
        P(8, 2, 0, false)
    }
#undef P
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(dst));
    CK(cudaFree(dref));
    CK(cudaFree(yq));
    CK(cudaFree(yd));
    CK(cudaFree(sink));
}

int main() {
    run<f_q4_0>("q4_0", base_q4_0);
    run<f_q4_K>("q4_K", base_q4_K);
    run<f_q8_0>("q8_0", base_q8_0);
    return 0;
}
