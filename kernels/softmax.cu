// softmax.cu - ggml's SOFT_MAX (scale, mask, ALiBi slopes, sinks) and
// DIAG_MASK_INF.
//
// SOFT_MAX of a row: w = x*scale + slope*mask, y = exp(w - max) / Σ exp(w -
// max), the sink (one logit per head, when given) entering the max and the
// sum but giving no output. Two ways to run it:
//  - softmax_rows: blockDim.x threads share a row held in registers (K
//    vectors of V floats a thread), blockDim.y rows a block, blocks walking
//    the rows grid-stride: one read and one write of every element. Its
//    streaming form (CS) reads src and writes dst with evict-first hints,
//    for wide rows, one a block.
//  - softmax_part + softmax_norm, for few long rows: the row is cut into
//    chunks, one block a chunk (grid x), rows grid-stride (grid y); the first
//    launch writes each chunk's max and Σ exp(w - max) to partial, the second
//    combines a row's partials (online-softmax rescaling) and normalises its
//    chunk, so a single row uses the whole GPU.
//  - softmax_cl (NVIDIA arch 9.0 and later, unless
//    TERNION_NO_SOFTMAX_CLUSTER): most of the split's rows in one launch, a
//    thread-block cluster of 8 blocks a row holding it in registers and
//    agreeing on max and sum through distributed shared memory.
#include "index.h"

#define SOFTMAX_NEG_INF (-__int_as_float(0x7f800000))

// softmax_exp is the exponential of the row terms: the fast hardware form
// (ggml-cuda builds with fast math; its error is far inside SOFT_MAX's
// NMSE bound). exp(-inf) is 0.
static __device__ __forceinline__ float softmax_exp(float x) { return __expf(x); }

// softmax_nomask is the mask type of a SOFT_MAX without a mask.
struct softmax_nomask {
    unsigned char unused;
};

template <typename M> struct softmax_mask_traits {
    static const bool has = true;
};
template <> struct softmax_mask_traits<softmax_nomask> {
    static const bool has = false;
};

// softmax_ld loads v elements at p (16-byte f32 vectors, 8-byte f16
// vectors when v is 4; v is a constant of the inlined caller) as floats;
// cs: an f32 vector streams (read once, evict first).
static __device__ __forceinline__ void softmax_ld(const float * p, float * o, int v, bool cs = false) {
    if (v == 4) {
        const float4 q = cs ? ternion_ldcs((const float4 *)p) : *(const float4 *)p;
        o[0] = q.x;
        o[1] = q.y;
        o[2] = q.z;
        o[3] = q.w;
    } else {
        o[0] = *p;
    }
}
static __device__ __forceinline__ void softmax_ld(const ternion_f16 * p, float * o, int v) {
    if (v == 4) {
        const uint2 q = *(const uint2 *)p;
        o[0] = ternion_f16_to_f32((ternion_f16)(q.x & 0xffffu));
        o[1] = ternion_f16_to_f32((ternion_f16)(q.x >> 16));
        o[2] = ternion_f16_to_f32((ternion_f16)(q.y & 0xffffu));
        o[3] = ternion_f16_to_f32((ternion_f16)(q.y >> 16));
    } else {
        o[0] = ternion_f16_to_f32(*p);
    }
}
static __device__ __forceinline__ void softmax_ld(const softmax_nomask *, float * o, int v) {
    for (int e = 0; e < v; e++) {
        o[e] = 0.0f;
    }
}

// softmax_st stores v floats at p (a 16-byte vector when v is 4, streamed
// with an evict-first hint when cs).
static __device__ __forceinline__ void softmax_st(float * p, const float * o, int v, bool cs = false) {
    if (v == 4) {
        const float4 q = make_float4(o[0], o[1], o[2], o[3]);
        if (cs) {
            ternion_stcs((float4 *)p, q);
        } else {
            *(float4 *)p = q;
        }
    } else {
        *p = o[0];
    }
}

// softmax_reduce returns the max (MAX) or sum of v over the blockDim.x
// threads of the block row threadIdx.y, to each of them. Every thread of the
// block calls it (it synchronises when a row spans several warps).
template <bool MAX> static __device__ __forceinline__ float softmax_reduce(float v) {
    __shared__ float part[1024 / 32];
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        const float o = TERNION_SHFL_XOR(v, m);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    if (blockDim.x <= TERNION_WARP_SIZE) {
        return v;
    }
    const int wpr = blockDim.x / TERNION_WARP_SIZE;
    const int warp = threadIdx.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
    __syncthreads(); // part may still be read by a previous call
    if (lane == 0) {
        part[threadIdx.y * wpr + warp] = v;
    }
    __syncthreads();
    v = lane < wpr ? part[threadIdx.y * wpr + lane] : (MAX ? SOFTMAX_NEG_INF : 0.0f);
    for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) {
        const float o = TERNION_SHFL_XOR(v, m);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    return v;
}

// softmax_rescale is s*exp(m - to), exactly s when m is to (so two -inf
// maxima of empty sums merge to 0, not NaN).
static __device__ __forceinline__ float softmax_rescale(float s, float m, float to) {
    return m == to ? s : s * expf(m - to);
}

// softmax_row is one row of a SOFT_MAX: its source, destination and mask
// row, its ALiBi slope and its sink (-inf for none).
template <typename MT> struct softmax_row {
    const float * x;
    float * y;
    const MT * m;
    float slope;
    float sink;
};

// softmax_row_at locates row row (< 2^31; ne1, ne2 divide it into i1, i2,
// i3): mask row i1 of matrix (i2 % mne2, i3 % mne3); head i2's slope is
// m0^(i2+1) below n_head_log2, m1^(2(i2-n_head_log2)+1) above, 1 when
// max_bias is 0.
template <typename MT>
static __device__ __forceinline__ softmax_row<MT> softmax_row_at(ternion_u32 row, const ternion_tensor & dst, const ternion_tensor & src,
                                                                 const ternion_tensor & mask, const float * sinks,
                                                                 ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_fastdiv mne2,
                                                                 ternion_fastdiv mne3, float max_bias, float m0, float m1,
                                                                 int n_head_log2) {
    ternion_u32 i1, i2, i3;
    ternion_row_index(row, ne1, ne2, i1, i2, i3);
    softmax_row<MT> r;
    r.x = (const float *)((const char *)src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3]);
    r.y = (float *)((char *)dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]);
    r.m = (const MT *)((const char *)mask.data + i1 * mask.nb[1] + ternion_fastdiv_mod(i2, mne2) * mask.nb[2] +
                       ternion_fastdiv_mod(i3, mne3) * mask.nb[3]);
    r.slope = 1.0f;
    if (max_bias > 0.0f) {
        const int h = (int)i2;
        r.slope = h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_head_log2) + 1));
    }
    r.sink = sinks != 0 ? sinks[i2] : SOFTMAX_NEG_INF;
    return r;
}

// softmax_scale turns the V values x of a vector of row r, loaded into w,
// into w = x*scale + slope*mask (mv: the vector's mask values, unread
// without a mask).
template <typename MT, int V>
static __device__ __forceinline__ void softmax_scale(const softmax_row<MT> & r, float * w, const float * mv, float scale) {
#pragma unroll
    for (int e = 0; e < V; e++) {
        w[e] = softmax_mask_traits<MT>::has ? w[e] * scale + r.slope * mv[e] : w[e] * scale;
    }
}

// softmax_w loads vector j (V elements) of row r as w = x*scale + slope*mask
// (x streamed when CS; the mask, shared by heads, is not).
template <typename MT, int V, bool CS = false>
static __device__ __forceinline__ void softmax_w(const softmax_row<MT> & r, ternion_i64 j, float scale, float * w) {
    float mv[V];
    softmax_ld(r.x + j * V, w, V, CS);
    if (softmax_mask_traits<MT>::has) {
        softmax_ld(r.m + j * V, mv, V);
    }
    softmax_scale<MT, V>(r, w, mv, scale);
}

// softmax_rows: SOFT_MAX of the nrows rows of src (f32, rows of ne0 <=
// K*V*blockDim.x elements; V = 4: ne0 % 4 == 0, rows, mask rows 16-byte
// (f32) or 8-byte (f16) aligned) into dst, each row read once into
// registers; CS: src read and dst written as streams.
template <typename MT, int V, int K, bool CS>
static __device__ __forceinline__ void softmax_rows(ternion_tensor dst, ternion_tensor src, ternion_tensor mask, const float * sinks,
                                                   ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_fastdiv mne2,
                                                   ternion_fastdiv mne3, ternion_i64 nrows, float scale, float max_bias, float m0,
                                                   float m1, int n_head_log2) {
    const int nv = (int)(src.ne[0] / V);
    for (ternion_i64 base = (ternion_i64)blockIdx.x * blockDim.y; base < nrows; base += (ternion_i64)gridDim.x * blockDim.y) {
        const ternion_i64 row = base + threadIdx.y;
        const bool ok = row < nrows;
        float w[K][V];
        float mx = SOFTMAX_NEG_INF;
        softmax_row<MT> r;
        r.sink = SOFTMAX_NEG_INF;
        if (ok) {
            r = softmax_row_at<MT>((ternion_u32)row, dst, src, mask, sinks, ne1, ne2, mne2, mne3, max_bias, m0, m1, n_head_log2);
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int j = threadIdx.x + u * blockDim.x;
                if (j < nv) {
                    softmax_w<MT, V, CS>(r, j, scale, w[u]);
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        mx = fmaxf(mx, w[u][e]);
                    }
                }
            }
        }
        mx = fmaxf(softmax_reduce<true>(mx), r.sink);
        float sum = 0.0f;
        if (ok) {
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int j = threadIdx.x + u * blockDim.x;
                if (j < nv) {
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        w[u][e] = softmax_exp(w[u][e] - mx);
                        sum += w[u][e];
                    }
                }
            }
        }
        sum = softmax_reduce<false>(sum);
        if (ok) {
            if (sinks != 0) {
                sum += softmax_exp(r.sink - mx);
            }
            const float inv = 1.0f / sum;
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int j = threadIdx.x + u * blockDim.x;
                if (j < nv) {
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        w[u][e] *= inv;
                    }
                    softmax_st(r.y + (ternion_i64)j * V, w[u], V, CS);
                }
            }
        }
    }
}

// softmax_online adds the V values w to a running (max m, Σ exp(w - m)).
template <int V> static __device__ __forceinline__ void softmax_online(const float * w, float & m, float & s) {
    float bm = w[0];
#pragma unroll
    for (int e = 1; e < V; e++) {
        bm = fmaxf(bm, w[e]);
    }
    if (bm > m) {
        s = softmax_rescale(s, m, bm);
        m = bm;
    }
    if (m != SOFTMAX_NEG_INF) {
#pragma unroll
        for (int e = 0; e < V; e++) {
            s += softmax_exp(w[e] - m);
        }
    }
}

// softmax_out writes y = exp(w - mx)*inv for vector j of row r.
template <typename MT, int V>
static __device__ __forceinline__ void softmax_out(const softmax_row<MT> & r, ternion_i64 j, float * w, float mx, float inv) {
#pragma unroll
    for (int e = 0; e < V; e++) {
        w[e] = softmax_exp(w[e] - mx) * inv;
    }
    softmax_st(r.y + j * V, w, V);
}

// softmax_part: for chunk blockIdx.x (elements [blockIdx.x*chunk, +chunk)
// of ne0; chunk a multiple of 4) of each row (rows grid-stride over grid
// y), partial[2*(row*nchunks + chunk)] = the chunk's max of w, and [+1] = Σ
// exp(w - max). blockDim.y is 1; each thread has two vectors in flight.
template <typename MT, int V>
static __device__ __forceinline__ void softmax_part(ternion_tensor dst, ternion_tensor src, ternion_tensor mask, const float * sinks,
                                                   ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_fastdiv mne2,
                                                   ternion_fastdiv mne3, ternion_i64 nrows, float scale, float max_bias, float m0,
                                                   float m1, int n_head_log2, float * partial, ternion_i64 chunk, int nchunks) {
    const ternion_i64 ne0 = src.ne[0];
    const ternion_i64 j0 = (ternion_i64)blockIdx.x * chunk / V;
    const ternion_i64 end = (ternion_i64)(blockIdx.x + 1) * chunk;
    const ternion_i64 j1 = (end < ne0 ? end : ne0) / V;
    const ternion_i64 bd = blockDim.x;
    for (ternion_i64 row = blockIdx.y; row < nrows; row += gridDim.y) {
        const softmax_row<MT> r =
            softmax_row_at<MT>((ternion_u32)row, dst, src, mask, sinks, ne1, ne2, mne2, mne3, max_bias, m0, m1, n_head_log2);
        float m = SOFTMAX_NEG_INF, s = 0.0f;
        for (ternion_i64 j = j0 + threadIdx.x; j < j1; j += 2 * bd) {
            float a[V], b[V];
            const bool two = j + bd < j1;
            softmax_w<MT, V>(r, j, scale, a);
            if (two) {
                softmax_w<MT, V>(r, j + bd, scale, b);
            }
            softmax_online<V>(a, m, s);
            if (two) {
                softmax_online<V>(b, m, s);
            }
        }
        const float bm = softmax_reduce<true>(m);
        const float bs = softmax_reduce<false>(softmax_rescale(s, m, bm));
        if (threadIdx.x == 0) {
            partial[2 * (row * nchunks + blockIdx.x)] = bm;
            partial[2 * (row * nchunks + blockIdx.x) + 1] = bs;
        }
    }
}

// softmax_norm: combines the nchunks partials of each row (and its sink)
// into the row's max and sum, then writes y = exp(w - max)/sum for chunk
// blockIdx.x, as softmax_part cut it. Each thread loads its first two
// vectors before it reads the partials, so the loads overlap.
template <typename MT, int V>
static __device__ __forceinline__ void softmax_norm(ternion_tensor dst, ternion_tensor src, ternion_tensor mask, const float * sinks,
                                                   ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_fastdiv mne2,
                                                   ternion_fastdiv mne3, ternion_i64 nrows, float scale, float max_bias, float m0,
                                                   float m1, int n_head_log2, const float * partial, ternion_i64 chunk,
                                                   int nchunks) {
    const ternion_i64 ne0 = src.ne[0];
    const ternion_i64 j0 = (ternion_i64)blockIdx.x * chunk / V;
    const ternion_i64 end = (ternion_i64)(blockIdx.x + 1) * chunk;
    const ternion_i64 j1 = (end < ne0 ? end : ne0) / V;
    const ternion_i64 bd = blockDim.x;
    for (ternion_i64 row = blockIdx.y; row < nrows; row += gridDim.y) {
        const softmax_row<MT> r =
            softmax_row_at<MT>((ternion_u32)row, dst, src, mask, sinks, ne1, ne2, mne2, mne3, max_bias, m0, m1, n_head_log2);
        const ternion_i64 ja = j0 + threadIdx.x, jb = ja + bd;
        float a[V], b[V];
        if (ja < j1) {
            softmax_w<MT, V>(r, ja, scale, a);
        }
        if (jb < j1) {
            softmax_w<MT, V>(r, jb, scale, b);
        }
        const float * p = partial + 2 * row * nchunks;
        float m = SOFTMAX_NEG_INF, s = 0.0f;
        for (int c = threadIdx.x; c < nchunks; c += blockDim.x) {
            const float pm = p[2 * c], ps = p[2 * c + 1];
            const float nm = fmaxf(m, pm);
            s = softmax_rescale(s, m, nm) + softmax_rescale(ps, pm, nm);
            m = nm;
        }
        float mx = softmax_reduce<true>(m);
        float sum = softmax_reduce<false>(softmax_rescale(s, m, mx));
        if (sinks != 0) {
            const float nm = fmaxf(mx, r.sink);
            sum = softmax_rescale(sum, mx, nm) + softmax_exp(r.sink - nm);
            mx = nm;
        }
        const float inv = 1.0f / sum;
        if (ja < j1) {
            softmax_out<MT, V>(r, ja, a, mx, inv);
        }
        if (jb < j1) {
            softmax_out<MT, V>(r, jb, b, mx, inv);
        }
        for (ternion_i64 j = jb + bd; j < j1; j += bd) {
            float w[V];
            softmax_w<MT, V>(r, j, scale, w);
            softmax_out<MT, V>(r, j, w, mx, inv);
        }
    }
}

// The blocks of a softmax_cl cluster (one row a cluster) and its threads a
// block.
#define SOFTMAX_CL_BLOCKS 8
#define SOFTMAX_CL_THREADS 256

#if TERNION_SM90
// softmax_cl_all combines v, the value of this block (rank r of the
// cluster), with every block's: each block stores its value in its slot
// (shared), the cluster waits at its barrier, then each thread reads the
// SOFTMAX_CL_BLOCKS slots through distributed shared memory.
template <bool MAX> static __device__ __forceinline__ float softmax_cl_all(float v, float * slot) {
    if (threadIdx.x == 0) {
        *slot = v;
    }
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
    const ternion_u32 local = (ternion_u32)__cvta_generic_to_shared(slot);
    float all = MAX ? SOFTMAX_NEG_INF : 0.0f;
#pragma unroll
    for (int c = 0; c < SOFTMAX_CL_BLOCKS; c++) {
        ternion_u32 remote;
        float o;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(c));
        asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(o) : "r"(remote) : "memory");
        all = MAX ? fmaxf(all, o) : all + o;
    }
    return all;
}
#endif

// softmax_cl: SOFT_MAX of long rows (V = 4: ne0 % 4 == 0, rows and mask
// rows aligned as softmax_rows' v4) with one thread-block cluster of
// SOFTMAX_CL_BLOCKS blocks a row (cluster blockIdx.x / SOFTMAX_CL_BLOCKS;
// NVIDIA arch 9.0 and later, an empty body elsewhere): the cluster's blocks
// hold the row in registers (block rank c: vectors c·K·256 + u·256 + tid),
// agree on its max and Σ through distributed shared memory (no partials in
// global memory, one launch) and write it: one read and one write of every
// element. ne0 <= SOFTMAX_CL_BLOCKS·SOFTMAX_CL_THREADS·K·4.
template <typename MT, int K>
static __device__ __forceinline__ void softmax_cl(ternion_tensor dst, ternion_tensor src, ternion_tensor mask, const float * sinks,
                                                 ternion_fastdiv ne1, ternion_fastdiv ne2, ternion_fastdiv mne2,
                                                 ternion_fastdiv mne3, ternion_i64 nrows, float scale, float max_bias, float m0,
                                                 float m1, int n_head_log2) {
#if TERNION_SM90
    constexpr int V = 4;
    __shared__ float slot_m, slot_s;
    ternion_u32 rank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const ternion_i64 row = blockIdx.x / SOFTMAX_CL_BLOCKS; // the grid has a cluster a row
    const int nv = (int)(src.ne[0] / V);
    const softmax_row<MT> r =
        softmax_row_at<MT>((ternion_u32)row, dst, src, mask, sinks, ne1, ne2, mne2, mne3, max_bias, m0, m1, n_head_log2);
    const int j0 = (int)rank * K * SOFTMAX_CL_THREADS + threadIdx.x;
    // Every load before any use (w = x·scale + slope·mask per vector, as
    // softmax_w, would have ptxas wait for each load before it issues the
    // next: K round trips instead of one).
    float w[K][V], mv[K][V];
#pragma unroll
    for (int u = 0; u < K; u++) {
        const int j = j0 + u * SOFTMAX_CL_THREADS;
        if (j < nv) {
            softmax_ld(r.x + (ternion_i64)j * V, w[u], V);
            if (softmax_mask_traits<MT>::has) {
                softmax_ld(r.m + (ternion_i64)j * V, mv[u], V);
            }
        }
    }
    float mx = SOFTMAX_NEG_INF;
#pragma unroll
    for (int u = 0; u < K; u++) {
        if (j0 + u * SOFTMAX_CL_THREADS < nv) {
            softmax_scale<MT, V>(r, w[u], mv[u], scale);
#pragma unroll
            for (int e = 0; e < V; e++) {
                mx = fmaxf(mx, w[u][e]);
            }
        }
    }
    mx = fmaxf(softmax_cl_all<true>(softmax_reduce<true>(mx), &slot_m), r.sink);
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < K; u++) {
        if (j0 + u * SOFTMAX_CL_THREADS < nv) {
#pragma unroll
            for (int e = 0; e < V; e++) {
                w[u][e] = softmax_exp(w[u][e] - mx);
                sum += w[u][e];
            }
        }
    }
    sum = softmax_cl_all<false>(softmax_reduce<false>(sum), &slot_s);
    // Every block has read the others' slots once it passes this arrival
    // (release by default; the wait acquires); the wait before the exit
    // keeps each block's shared memory alive until then.
    asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
    if (sinks != 0) {
        sum += softmax_exp(r.sink - mx);
    }
    const float inv = 1.0f / sum;
#pragma unroll
    for (int u = 0; u < K; u++) {
        const int j = j0 + u * SOFTMAX_CL_THREADS;
        if (j < nv) {
#pragma unroll
            for (int e = 0; e < V; e++) {
                w[u][e] *= inv;
            }
            softmax_st(r.y + (ternion_i64)j * V, w[u], V);
        }
    }
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

// diag_mask_inf_f32: dst = src (f32, one shape, any strides) with element
// (i0, i1, ...) set to -inf where i0 > n_past + i1, for the n < 2^31
// elements; ne0, ne1, ne2 divide an element number into indices.
extern "C" __global__ void diag_mask_inf_f32(ternion_tensor dst, ternion_tensor src, ternion_fastdiv ne0, ternion_fastdiv ne1,
                                             ternion_fastdiv ne2, int n_past, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const ternion_u32 q0 = ternion_fastdiv_div((ternion_u32)i, ne0);
        const ternion_u32 i0 = (ternion_u32)i - q0 * ne0.d;
        ternion_u32 i1, i2, i3;
        ternion_row_index(q0, ne1, ne2, i1, i2, i3);
        const float v = *(const float *)((const char *)src.data + i0 * src.nb[0] + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3]);
        *(float *)((char *)dst.data + i0 * dst.nb[0] + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]) =
            (ternion_i64)i0 > (ternion_i64)n_past + i1 ? SOFTMAX_NEG_INF : v;
    }
}
