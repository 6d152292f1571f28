// norm.cu - ggml's NORM, RMS_NORM and L2_NORM along rows (NORM and RMS_NORM
// also with an optional ADD fused in front (the norm's input is src + add, add broadcast,
// and that sum is written to sum when other nodes read it) and an optional
// MUL (by mul, broadcast) and ADD (of post, broadcast) fused behind, as
// ggml-cuda fuses RMS_NORM→MUL→ADD; and GROUP_NORM. The entry points are
// generated from the catalog's templates: norm_{op}_f32 (any strides) and
// norm4_{op}_f32 (float4 loads and stores), group_norm_f32 and
// group_norm4_f32; norm_fused_{op}_f32 and norm4_fused_{op}_f32 (NORM and
// RMS_NORM) read the fused operands, the others do not.
//
// A row is read from memory once: each thread keeps up to NORM_CACHE(V)
// units of its row in registers between the reduction and the write (8
// floats, or 4 float4); longer rows read the rest again (from L2).
#include "index.h"

// Units of a row each thread keeps in registers (V floats a unit).
#define NORM_CACHE(V) ((V) == 4 ? 4 : 8)

// The row ops (the catalog's {op} axis).
#define NORM_OP_NORM 0
#define NORM_OP_RMS 1
#define NORM_OP_L2 2

static __device__ __forceinline__ float norm_hsum(float v) { return v; }
static __device__ __forceinline__ float norm_hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
static __device__ __forceinline__ float norm_hsq(float v) { return v * v; }
static __device__ __forceinline__ float norm_hsq(float4 v) { return (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w); }
static __device__ __forceinline__ float norm_hdev(float v, float m) { return (v - m) * (v - m); }
static __device__ __forceinline__ float norm_hdev(float4 v, float m) {
    return (norm_hdev(v.x, m) + norm_hdev(v.y, m)) + (norm_hdev(v.z, m) + norm_hdev(v.w, m));
}
static __device__ __forceinline__ float norm_add(float a, float b) { return a + b; }
static __device__ __forceinline__ float4 norm_add(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
static __device__ __forceinline__ float norm_mul(float a, float b) { return a * b; }
static __device__ __forceinline__ float4 norm_mul(float4 a, float4 b) { return make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w); }
// (v - m) * s.
static __device__ __forceinline__ float norm_affine(float v, float m, float s) { return (v - m) * s; }
static __device__ __forceinline__ float4 norm_affine(float4 v, float m, float s) {
    return make_float4((v.x - m) * s, (v.y - m) * s, (v.z - m) * s, (v.w - m) * s);
}
static __device__ __forceinline__ void norm_zero(float & v) { v = 0.0f; }
static __device__ __forceinline__ void norm_zero(float4 & v) { v = make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

// Unit k of a row at p: a float at p + k*nb0 (V = 1, any element stride) or
// the float4 at p + 16k (V = 4, packed rows).
template <int V> struct norm_unit;
template <> struct norm_unit<1> {
    typedef float T;
    static __device__ __forceinline__ T load(const char * p, ternion_i64 k, ternion_i64 nb0) { return *(const float *)(p + k * nb0); }
    static __device__ __forceinline__ void store(char * p, ternion_i64 k, ternion_i64 nb0, T v) { *(float *)(p + k * nb0) = v; }
};
template <> struct norm_unit<4> {
    typedef float4 T;
    static __device__ __forceinline__ T load(const char * p, ternion_i64 k, ternion_i64) { return ((const float4 *)p)[k]; }
    static __device__ __forceinline__ void store(char * p, ternion_i64 k, ternion_i64, T v) { ((float4 *)p)[k] = v; }
};

// Sum of v over the threads (x) that share a row; every one of them gets it.
// blockDim.x is a multiple of the warp size, at most 1024; every thread of
// the block calls it (it synchronises the block when a row has several warps).
static __device__ __forceinline__ float norm_row_sum(float v) {
#pragma unroll
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        v += TERNION_SHFL_XOR(v, m);
    }
    if (blockDim.x <= TERNION_WARP_SIZE) {
        return v;
    }
    __shared__ float partial[1024 / TERNION_WARP_SIZE];
    const int nw = blockDim.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
    __syncthreads(); // the previous sum's readers are done with partial
    if (lane == 0) {
        partial[threadIdx.y * nw + threadIdx.x / TERNION_WARP_SIZE] = v;
    }
    __syncthreads();
    v = lane < nw ? partial[threadIdx.y * nw + lane] : 0.0f;
#pragma unroll
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        v += TERNION_SHFL_XOR(v, m);
    }
    return v;
}

// One broadcast operand's row: its first byte, element stride and the fast
// division of a column (in units) by its row length in units.
struct norm_operand {
    const char * p; // nullptr: no operand
    ternion_i64 nb0;
    ternion_fastdiv n0;
};

// The row of t (broadcast into the dst row (i1, i2, i3) by modulo).
static __device__ __forceinline__ norm_operand norm_operand_row(const ternion_tensor & t, ternion_fastdiv n0, ternion_fastdiv n1,
                                                                ternion_fastdiv n2, ternion_fastdiv n3, ternion_u32 i1, ternion_u32 i2,
                                                                ternion_u32 i3) {
    norm_operand o;
    o.p = nullptr;
    o.nb0 = t.nb[0];
    o.n0 = n0;
    if (t.data != nullptr) {
        o.p = (const char *)t.data + ternion_fastdiv_mod(i1, n1) * t.nb[1] + ternion_fastdiv_mod(i2, n2) * t.nb[2] +
              ternion_fastdiv_mod(i3, n3) * t.nb[3];
    }
    return o;
}

template <int V>
static __device__ __forceinline__ typename norm_unit<V>::T norm_operand_load(const norm_operand & o, ternion_i64 k) {
    return norm_unit<V>::load(o.p, ternion_fastdiv_mod((ternion_u32)k, o.n0), o.nb0);
}

// Row r of dst, for r < nrows (rows of dims 1..3 split by ne1, ne2): with
// x = src + add (add broadcast; x = src without add), written to sum when
// sum is given (FUSED only: otherwise add, mul, post and sum are not read),
//   NORM:    y = (x - mean(x)) / sqrt(var(x) + eps)   (population variance)
//   RMS:     y = x / sqrt(mean(x²) + eps)
//   L2:      y = x / max(|x|, eps)
// then y *= mul and y += post when given (broadcast), stored to dst.
// Absent operands have a null data pointer. V = 4: every tensor's rows are
// packed, 16-byte aligned and a multiple of 4 long, and the operands' fast
// divisions divide by their row length / 4. Blocks (x) and threads (y) walk
// rows, threads (x) share a row (blockDim.x a multiple of the warp size).
template <int OP, int V, bool FUSED>
static __device__ __forceinline__ void norm_rows(ternion_tensor dst, ternion_tensor src, ternion_tensor add, ternion_tensor mul,
                                                 ternion_tensor post, ternion_tensor sum, ternion_fastdiv ne1, ternion_fastdiv ne2,
                                                 ternion_fastdiv add0, ternion_fastdiv add1, ternion_fastdiv add2, ternion_fastdiv add3,
                                                 ternion_fastdiv mul0, ternion_fastdiv mul1, ternion_fastdiv mul2, ternion_fastdiv mul3,
                                                 ternion_fastdiv post0, ternion_fastdiv post1, ternion_fastdiv post2,
                                                 ternion_fastdiv post3, float eps, ternion_i64 nrows) {
    typedef norm_unit<V> U;
    typedef typename U::T T;
    const int C = NORM_CACHE(V);
    const ternion_i64 n = src.ne[0] / V; // units per row
    const ternion_i64 tx = threadIdx.x, nt = blockDim.x;
    const float inv_ne0 = 1.0f / (float)src.ne[0];
    // The loop is uniform across the block (norm_row_sum synchronises it);
    // a thread past the last row only takes part in the sums.
    for (ternion_i64 base = (ternion_i64)blockIdx.x * blockDim.y; base < nrows; base += (ternion_i64)gridDim.x * blockDim.y) {
        const ternion_i64 row = base + threadIdx.y;
        const bool live = row < nrows;
        ternion_u32 i1 = 0, i2 = 0, i3 = 0;
        if (live) {
            ternion_row_index((ternion_u32)row, ne1, ne2, i1, i2, i3);
        }
        const char * x = (const char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
        char * y = (char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3];
        // Without FUSED every operand pointer is a constant null: the
        // compiler drops their code (and registers).
        char * s = !FUSED || sum.data == nullptr ? nullptr : (char *)sum.data + i1 * sum.nb[1] + i2 * sum.nb[2] + i3 * sum.nb[3];
        const norm_operand none = {nullptr, 0, ne1};
        const norm_operand a = FUSED ? norm_operand_row(add, add0, add1, add2, add3, i1, i2, i3) : none;
        const norm_operand m = FUSED ? norm_operand_row(mul, mul0, mul1, mul2, mul3, i1, i2, i3) : none;
        const norm_operand p = FUSED ? norm_operand_row(post, post0, post1, post2, post3, i1, i2, i3) : none;

        // x's unit k, the first time it is read (writing sum) and again
        // (from sum once written: sum may be src's memory).
        auto first = [&](ternion_i64 k) -> T {
            T v = U::load(x, k, src.nb[0]);
            if (a.p != nullptr) {
                v = norm_add(v, norm_operand_load<V>(a, k));
                if (s != nullptr) {
                    U::store(s, k, sum.nb[0], v);
                }
            }
            return v;
        };
        auto again = [&](ternion_i64 k) -> T {
            if (s != nullptr) {
                return U::load(s, k, sum.nb[0]);
            }
            T v = U::load(x, k, src.nb[0]);
            if (a.p != nullptr) {
                v = norm_add(v, norm_operand_load<V>(a, k));
            }
            return v;
        };

        T v[C];
        float acc = 0.0f; // Σx for NORM, Σx² otherwise
#pragma unroll
        for (int u = 0; u < C; u++) {
            const ternion_i64 k = tx + u * nt;
            norm_zero(v[u]);
            if (live && k < n) {
                v[u] = first(k);
                acc += OP == NORM_OP_NORM ? norm_hsum(v[u]) : norm_hsq(v[u]);
            }
        }
        for (ternion_i64 k = tx + C * nt; live && k < n; k += nt) {
            const T e = first(k);
            acc += OP == NORM_OP_NORM ? norm_hsum(e) : norm_hsq(e);
        }
        acc = norm_row_sum(acc);

        float mean = 0.0f, scale;
        if (OP == NORM_OP_NORM) {
            mean = acc * inv_ne0;
            float dev = 0.0f;
#pragma unroll
            for (int u = 0; u < C; u++) {
                const ternion_i64 k = tx + u * nt;
                if (live && k < n) {
                    dev += norm_hdev(v[u], mean);
                }
            }
            for (ternion_i64 k = tx + C * nt; live && k < n; k += nt) {
                dev += norm_hdev(again(k), mean);
            }
            dev = norm_row_sum(dev);
            scale = rsqrtf(dev * inv_ne0 + eps);
        } else if (OP == NORM_OP_RMS) {
            scale = rsqrtf(acc * inv_ne0 + eps);
        } else {
            scale = rsqrtf(fmaxf(acc, eps * eps));
        }

        auto out = [&](ternion_i64 k, T e) {
            T r = norm_affine(e, mean, scale);
            if (m.p != nullptr) {
                r = norm_mul(r, norm_operand_load<V>(m, k));
            }
            if (p.p != nullptr) {
                r = norm_add(r, norm_operand_load<V>(p, k));
            }
            U::store(y, k, dst.nb[0], r);
        };
#pragma unroll
        for (int u = 0; u < C; u++) {
            const ternion_i64 k = tx + u * nt;
            if (live && k < n) {
                out(k, v[u]);
            }
        }
        for (ternion_i64 k = tx + C * nt; live && k < n; k += nt) {
            out(k, again(k));
        }
    }
}

// The units (floats, or float4s when V = 4) a thread of group_norm holds in
// registers: a group of at most GROUP_NORM_HELD·blockDim.x units is read
// once (a larger one three times: the mean, the variance, the output).
#define GROUP_NORM_HELD 4

// ggml's GROUP_NORM of contiguous f32 src into contiguous dst: block (x, y)
// normalises the channels [x*cpg, min((x+1)*cpg, ne2)) of sample y (mean and
// population variance over those channels' ne0*ne1 elements, then
// (x - mean)/sqrt(var + eps)); blocks past the last channel do nothing. One
// block row (blockDim.y = 1) of a multiple of the warp size threads. V = 4:
// ne0*ne1 is a multiple of 4 and both tensors are 16-byte aligned.
template <int V>
static __device__ __forceinline__ void group_norm(ternion_tensor dst, ternion_tensor src, ternion_i64 cpg, float eps) {
    typedef norm_unit<V> U;
    const ternion_i64 c0 = (ternion_i64)blockIdx.x * cpg;
    const ternion_i64 c1 = c0 + cpg < src.ne[2] ? c0 + cpg : src.ne[2];
    if (c0 >= c1) {
        return; // uniform across the block
    }
    const ternion_i64 count = (c1 - c0) * src.ne[0] * src.ne[1];
    const ternion_i64 n = count / V;
    const char * x = (const char *)src.data + blockIdx.y * src.nb[3] + c0 * src.nb[2];
    char * y = (char *)dst.data + blockIdx.y * dst.nb[3] + c0 * dst.nb[2];
    const float inv = 1.0f / (float)count;
    if (n <= GROUP_NORM_HELD * (ternion_i64)blockDim.x) {
        // The group in registers: one read of every element, all of a
        // thread's loads in flight at once (uniform across the block).
        typename U::T v[GROUP_NORM_HELD];
#pragma unroll
        for (int u = 0; u < GROUP_NORM_HELD; u++) {
            const ternion_i64 k = threadIdx.x + u * (ternion_i64)blockDim.x;
            if (k < n) v[u] = U::load(x, k, 4);
        }
        float acc = 0.0f;
#pragma unroll
        for (int u = 0; u < GROUP_NORM_HELD; u++) {
            if (threadIdx.x + u * (ternion_i64)blockDim.x < n) acc += norm_hsum(v[u]);
        }
        const float mean = norm_row_sum(acc) * inv;
        float dev = 0.0f;
#pragma unroll
        for (int u = 0; u < GROUP_NORM_HELD; u++) {
            if (threadIdx.x + u * (ternion_i64)blockDim.x < n) dev += norm_hdev(v[u], mean);
        }
        const float scale = rsqrtf(norm_row_sum(dev) * inv + eps);
#pragma unroll
        for (int u = 0; u < GROUP_NORM_HELD; u++) {
            const ternion_i64 k = threadIdx.x + u * (ternion_i64)blockDim.x;
            if (k < n) U::store(y, k, 4, norm_affine(v[u], mean, scale));
        }
        return;
    }
    float acc = 0.0f;
    for (ternion_i64 k = threadIdx.x; k < n; k += blockDim.x) {
        acc += norm_hsum(U::load(x, k, 4));
    }
    const float mean = norm_row_sum(acc) * inv;
    float dev = 0.0f;
    for (ternion_i64 k = threadIdx.x; k < n; k += blockDim.x) {
        dev += norm_hdev(U::load(x, k, 4), mean);
    }
    const float scale = rsqrtf(norm_row_sum(dev) * inv + eps);
    for (ternion_i64 k = threadIdx.x; k < n; k += blockDim.x) {
        U::store(y, k, 4, norm_affine(U::load(x, k, 4), mean, scale));
    }
}
