// shape.cu - ggml's ops that make a tensor of another shape from their
// sources: REPEAT (src tiled into dst), CONCAT (two tensors joined along one
// dim), PAD (zeros around src), UPSCALE (nearest or bilinear resampling),
// ARANGE (no source: start + i*step) and TIMESTEP_EMBEDDING (cos/sin
// features of a vector of timesteps).
//
// The copying ops (REPEAT, CONCAT, PAD) move storage units T without
// converting them: 2- and 4-byte elements of any type (b16, b32), or 16-byte
// vectors (b128) when the host describes packed rows whose lengths, offsets
// and strides are multiples of 16 bytes as rows of 16-byte units (ne[0] in
// units, nb[0] = 16). The kernels walk dst row by row: blocks (x) and threads
// (y) take rows, threads (x) the units of a row, four units in flight per
// thread, so the stores of a row are coalesced. Entry points are generated
// from the catalog's templates (kernels/shape_family.go).
#include "index.h"

// Units a thread has in flight along a row before it stores any.
#define SHAPE_UNROLL 4

// The row loop of a launch: row = blockIdx.x*blockDim.y + threadIdx.y,
// stepping gridDim.x*blockDim.y.
#define SHAPE_FOR_ROWS(row, nrows)                                                          \
    for (ternion_i64 row = (ternion_i64)blockIdx.x * blockDim.y + threadIdx.y; row < (nrows); \
         row += (ternion_i64)gridDim.x * blockDim.y)

// shape_fill_row writes ne0 units of dst row d (stride dnb0) with m.load(i0):
// SHAPE_UNROLL loads per thread before the stores (dst never aliases a
// source, but the compiler cannot know it).
template <typename T, typename Map>
static __device__ __forceinline__ void shape_fill_row(char * d, ternion_i64 dnb0, ternion_i64 ne0, const Map & m) {
    for (ternion_i64 j0 = threadIdx.x; j0 < ne0; j0 += SHAPE_UNROLL * (ternion_i64)blockDim.x) {
        T v[SHAPE_UNROLL];
#pragma unroll
        for (int u = 0; u < SHAPE_UNROLL; u++) {
            const ternion_i64 i0 = j0 + u * (ternion_i64)blockDim.x;
            if (i0 < ne0) v[u] = m.load(i0);
        }
#pragma unroll
        for (int u = 0; u < SHAPE_UNROLL; u++) {
            const ternion_i64 i0 = j0 + u * (ternion_i64)blockDim.x;
            if (i0 < ne0) *(T *)(d + i0 * dnb0) = v[u];
        }
    }
}

// shape_row_ptr is the address of row (i1, i2, i3) of t.
static __device__ __forceinline__ char * shape_row_ptr(const ternion_tensor & t, ternion_u32 i1, ternion_u32 i2, ternion_u32 i3) {
    return (char *)t.data + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Unit i0 of a source row: s + i0*nb0.
template <typename T> struct shape_map_row {
    const char * s;
    ternion_i64 nb0;
    __device__ __forceinline__ T load(ternion_i64 i0) const { return *(const T *)(s + i0 * nb0); }
};

// Unit i0 % ne0 of a source row (REPEAT along dim 0).
template <typename T> struct shape_map_tile {
    const char * s;
    ternion_i64 nb0;
    ternion_fastdiv ne0;
    __device__ __forceinline__ T load(ternion_i64 i0) const {
        return *(const T *)(s + ternion_fastdiv_mod((ternion_u32)i0, ne0) * nb0);
    }
};

// Unit i0 of src0's row for i0 < n0, else unit i0 - n0 of src1's (CONCAT
// along dim 0).
template <typename T> struct shape_map_join {
    const char * a;
    const char * b;
    ternion_i64 anb0, bnb0, n0;
    __device__ __forceinline__ T load(ternion_i64 i0) const {
        return i0 < n0 ? *(const T *)(a + i0 * anb0) : *(const T *)(b + (i0 - n0) * bnb0);
    }
};

// Unit i0 - lp of a source row of n units, zero outside it (PAD along dim 0).
template <typename T> struct shape_map_pad {
    const char * s;
    ternion_i64 nb0, lp, n;
    __device__ __forceinline__ T load(ternion_i64 i0) const {
        const ternion_i64 j = i0 - lp;
        return j >= 0 && j < n ? *(const T *)(s + j * nb0) : T();
    }
};

// Zero everywhere (PAD rows outside src).
template <typename T> struct shape_map_zero {
    __device__ __forceinline__ T load(ternion_i64) const { return T(); }
};

// REPEAT: dst row (i1, i2, i3) is src row (i1 % ne01, i2 % ne02, i3 % ne03),
// its unit i0 src's unit i0 % ne00. dne1, dne2 divide dst's rows; sne0..3
// are src's ne; nrows = dst's rows < 2^31.
template <typename T>
static __device__ __forceinline__ void shape_repeat(ternion_tensor dst, ternion_tensor src, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                                    ternion_fastdiv sne0, ternion_fastdiv sne1, ternion_fastdiv sne2,
                                                    ternion_fastdiv sne3, ternion_i64 nrows) {
    SHAPE_FOR_ROWS(row, nrows) {
        ternion_u32 i1, i2, i3;
        ternion_row_index((ternion_u32)row, dne1, dne2, i1, i2, i3);
        const char * s = shape_row_ptr(src, ternion_fastdiv_mod(i1, sne1), ternion_fastdiv_mod(i2, sne2), ternion_fastdiv_mod(i3, sne3));
        char * d = shape_row_ptr(dst, i1, i2, i3);
        if (src.ne[0] == dst.ne[0]) {
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0], shape_map_row<T>{s, src.nb[0]});
        } else {
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0], shape_map_tile<T>{s, src.nb[0], sne0});
        }
    }
}

// REPEAT of a small dst, one unit a thread: unit i < n of dst (packed, in
// row-major order; dne0..2 divide by its ne[0..2]) is src's unit (i0 % ne00,
// i1 % ne01, i2 % ne02, i3 % ne03). A short index chain instead of the row
// walk's: a tiny REPEAT costs its launch and one load's latency.
template <typename T>
static __device__ __forceinline__ void shape_repeat_flat(ternion_tensor dst, ternion_tensor src, ternion_fastdiv dne0, ternion_fastdiv dne1,
                                                         ternion_fastdiv dne2, ternion_fastdiv sne0, ternion_fastdiv sne1,
                                                         ternion_fastdiv sne2, ternion_fastdiv sne3, ternion_i64 n) {
    for (ternion_i64 t = TERNION_TID(); t < n; t += TERNION_NTHREADS()) {
        const ternion_u32 i = (ternion_u32)t, r = ternion_fastdiv_div(i, dne0);
        ternion_u32 i1, i2, i3;
        ternion_row_index(r, dne1, dne2, i1, i2, i3);
        const char * s = (const char *)src.data + ternion_fastdiv_mod(i - r * dne0.d, sne0) * src.nb[0] +
                         ternion_fastdiv_mod(i1, sne1) * src.nb[1] + ternion_fastdiv_mod(i2, sne2) * src.nb[2] +
                         ternion_fastdiv_mod(i3, sne3) * src.nb[3];
        ((T *)dst.data)[t] = *(const T *)s;
    }
}

// CONCAT of src0 and src1 along dim (0..3): dst index i reads src0 at i where
// i[dim] < src0.ne[dim], else src1 at i with i[dim] - src0.ne[dim].
template <typename T>
static __device__ __forceinline__ void shape_concat(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, int dim,
                                                    ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows) {
    SHAPE_FOR_ROWS(row, nrows) {
        ternion_u32 i1, i2, i3;
        ternion_row_index((ternion_u32)row, dne1, dne2, i1, i2, i3);
        char * d = shape_row_ptr(dst, i1, i2, i3);
        if (dim == 0) {
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0],
                              shape_map_join<T>{shape_row_ptr(src0, i1, i2, i3), shape_row_ptr(src1, i1, i2, i3), src0.nb[0],
                                                src1.nb[0], src0.ne[0]});
            continue;
        }
        // The row lies in src1 when its index along dim is past src0's extent.
        const ternion_u32 k = dim == 1 ? i1 : (dim == 2 ? i2 : i3);
        const ternion_u32 n = (ternion_u32)(dim == 1 ? src0.ne[1] : (dim == 2 ? src0.ne[2] : src0.ne[3]));
        if (k < n) {
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0], shape_map_row<T>{shape_row_ptr(src0, i1, i2, i3), src0.nb[0]});
        } else {
            const char * s = shape_row_ptr(src1, i1 - (dim == 1 ? n : 0), i2 - (dim == 2 ? n : 0), i3 - (dim == 3 ? n : 0));
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0], shape_map_row<T>{s, src1.nb[0]});
        }
    }
}

// CONCAT of a small dst, one unit a thread: unit i < n of dst (packed, in
// row-major order; dne0..2 divide by its ne[0..2]) is src0's unit at the
// same index where its index along dim is below src0.ne[dim], else src1's
// with src0.ne[dim] taken off that index (sources any strides). The short
// index chain of shape_repeat_flat instead of the row walk.
template <typename T>
static __device__ __forceinline__ void shape_concat_flat(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, int dim,
                                                         ternion_fastdiv dne0, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                                         ternion_i64 n) {
    for (ternion_i64 t = TERNION_TID(); t < n; t += TERNION_NTHREADS()) {
        const ternion_u32 i = (ternion_u32)t, r = ternion_fastdiv_div(i, dne0);
        ternion_u32 i0 = i - r * dne0.d, i1, i2, i3;
        ternion_row_index(r, dne1, dne2, i1, i2, i3);
        const ternion_u32 k = dim == 0 ? i0 : dim == 1 ? i1 : dim == 2 ? i2 : i3;
        const ternion_u32 n0 = (ternion_u32)(dim == 0 ? src0.ne[0] : dim == 1 ? src0.ne[1] : dim == 2 ? src0.ne[2] : src0.ne[3]);
        const char * s;
        if (k < n0) {
            s = (const char *)src0.data + i0 * src0.nb[0] + i1 * src0.nb[1] + i2 * src0.nb[2] + i3 * src0.nb[3];
        } else {
            i0 -= dim == 0 ? n0 : 0u, i1 -= dim == 1 ? n0 : 0u, i2 -= dim == 2 ? n0 : 0u, i3 -= dim == 3 ? n0 : 0u;
            s = (const char *)src1.data + i0 * src1.nb[0] + i1 * src1.nb[1] + i2 * src1.nb[2] + i3 * src1.nb[3];
        }
        ((T *)dst.data)[t] = *(const T *)s;
    }
}

// PAD: dst index i reads src at i - (lp0, lp1, lp2, lp3) where that lies in
// src, and is zero elsewhere (ggml_pad_ext; ggml_pad has lp = 0).
template <typename T>
static __device__ __forceinline__ void shape_pad(ternion_tensor dst, ternion_tensor src, int lp0, int lp1, int lp2, int lp3,
                                                 ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows) {
    SHAPE_FOR_ROWS(row, nrows) {
        ternion_u32 i1, i2, i3;
        ternion_row_index((ternion_u32)row, dne1, dne2, i1, i2, i3);
        char * d = shape_row_ptr(dst, i1, i2, i3);
        const ternion_i64 j1 = (ternion_i64)i1 - lp1, j2 = (ternion_i64)i2 - lp2, j3 = (ternion_i64)i3 - lp3;
        if (j1 < 0 || j1 >= src.ne[1] || j2 < 0 || j2 >= src.ne[2] || j3 < 0 || j3 >= src.ne[3]) {
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0], shape_map_zero<T>{});
        } else {
            shape_fill_row<T>(d, dst.nb[0], dst.ne[0],
                              shape_map_pad<T>{shape_row_ptr(src, (ternion_u32)j1, (ternion_u32)j2, (ternion_u32)j3), src.nb[0],
                                               lp0, src.ne[0]});
        }
    }
}

// shape_nearest is ggml's nearest source index of dst index i at scale sf
// (dst size / src size): i / sf truncated, clamped to the n source indices.
static __device__ __forceinline__ ternion_u32 shape_nearest(ternion_u32 i, float sf, ternion_i64 n) {
    const ternion_i64 j = (ternion_i64)((float)i / sf);
    return (ternion_u32)(j < n ? j : n - 1);
}

// Dim 0 of UPSCALE nearest: unit i0 of the row reads unit i0 / sf0.
struct shape_map_nearest {
    const char * s;
    ternion_i64 nb0, n;
    float sf0;
    __device__ __forceinline__ float load(ternion_i64 i0) const {
        return *(const float *)(s + shape_nearest((ternion_u32)i0, sf0, n) * nb0);
    }
};

// UPSCALE, nearest: dst (f32, any strides) index i reads src (f32, any
// strides) at (i0/sf0, i1/sf1, i2/sf2, i3/sf3) truncated.
extern "C" __global__ void upscale_nearest_f32(ternion_tensor dst, ternion_tensor src, float sf0, float sf1, float sf2,
                                                             float sf3, ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 nrows) {
    TERNION_KERNEL_ENTRY();
    SHAPE_FOR_ROWS(row, nrows) {
        ternion_u32 i1, i2, i3;
        ternion_row_index((ternion_u32)row, dne1, dne2, i1, i2, i3);
        const char * s = shape_row_ptr(src, shape_nearest(i1, sf1, src.ne[1]), shape_nearest(i2, sf2, src.ne[2]),
                                       shape_nearest(i3, sf3, src.ne[3]));
        shape_fill_row<float>(shape_row_ptr(dst, i1, i2, i3), dst.nb[0], dst.ne[0],
                              shape_map_nearest{s, src.nb[0], src.ne[0], sf0});
    }
}

// shape_lerp_index is ggml's bilinear source position of dst index i: p =
// (i + off)/sf - off, its neighbours floor(p) and floor(p)+1 clamped to the
// n source indices, and the weight of the second, p - clamped floor(p),
// clamped to [0, 1].
static __device__ __forceinline__ void shape_lerp_index(ternion_u32 i, float sf, float off, ternion_i64 n, ternion_i64 & k0,
                                                        ternion_i64 & k1, float & w) {
    const float p = ((float)i + off) / sf - off;
    k0 = (ternion_i64)floorf(p);
    k1 = k0 + 1;
    k0 = k0 < 0 ? 0 : (k0 > n - 1 ? n - 1 : k0);
    k1 = k1 < 0 ? 0 : (k1 > n - 1 ? n - 1 : k1);
    w = p - (float)k0;
    w = w < 0.0f ? 0.0f : (w > 1.0f ? 1.0f : w);
}

// Dim 0 of UPSCALE bilinear: rows r0 (weight 1 - dy) and r1 (weight dy).
struct shape_map_bilinear {
    const char * r0;
    const char * r1;
    ternion_i64 nb0, n;
    float sf0, off, dy;
    __device__ __forceinline__ float load(ternion_i64 i0) const {
        ternion_i64 x0, x1;
        float dx;
        shape_lerp_index((ternion_u32)i0, sf0, off, n, x0, x1, dx);
        const float a = *(const float *)(r0 + x0 * nb0), b = *(const float *)(r0 + x1 * nb0);
        const float c = *(const float *)(r1 + x0 * nb0), d = *(const float *)(r1 + x1 * nb0);
        return a * (1 - dx) * (1 - dy) + b * dx * (1 - dy) + c * (1 - dx) * dy + d * dx * dy;
    }
};

// UPSCALE, bilinear: dims 0 and 1 interpolated between the four nearest
// source elements (shape_lerp_index with pixel offset off: 0.5, or 0 with
// align corners), dims 2 and 3 nearest.
extern "C" __global__ void upscale_bilinear_f32(ternion_tensor dst, ternion_tensor src, float sf0, float sf1, float sf2,
                                                              float sf3, float off, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                                              ternion_i64 nrows) {
    TERNION_KERNEL_ENTRY();
    SHAPE_FOR_ROWS(row, nrows) {
        ternion_u32 i1, i2, i3;
        ternion_row_index((ternion_u32)row, dne1, dne2, i1, i2, i3);
        ternion_i64 y0, y1;
        float dy;
        shape_lerp_index(i1, sf1, off, src.ne[1], y0, y1, dy);
        const ternion_u32 j2 = shape_nearest(i2, sf2, src.ne[2]), j3 = shape_nearest(i3, sf3, src.ne[3]);
        shape_fill_row<float>(shape_row_ptr(dst, i1, i2, i3), dst.nb[0], dst.ne[0],
                              shape_map_bilinear{shape_row_ptr(src, (ternion_u32)y0, j2, j3), shape_row_ptr(src, (ternion_u32)y1, j2, j3),
                                                 src.nb[0], src.ne[0], sf0, off, dy});
    }
}

// ARANGE: dst[i] = start + i*step (one rounding: fmaf) for i < n, grid-stride.
extern "C" __global__ void arange_f32(float * dst, float start, float step, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = fmaf(step, (float)i, start);
    }
}

// TIMESTEP_EMBEDDING: row i of dst (f32, ne0 = dim) holds, for timestep t =
// src[i] and j < half = dim/2, cos(t*f_j) at j and sin(t*f_j) at j + half
// with f_j = exp(-log(max_period)*j/half), and 0 at 2*half when dim is odd.
// Rows by blocks (x) and threads (y), j by threads (x); nrows = src.ne[0].
extern "C" __global__ void tsembd_f32(ternion_tensor dst, ternion_tensor src, int dim, int max_period, ternion_i64 nrows) {
    TERNION_KERNEL_ENTRY();
    const int half = dim / 2;
    const float lmp = -logf((float)max_period);
    SHAPE_FOR_ROWS(row, nrows) {
        const float t = *(const float *)((const char *)src.data + row * src.nb[0]);
        char * d = (char *)dst.data + row * dst.nb[1];
        for (int j = threadIdx.x; j < half; j += blockDim.x) {
            const float freq = expf(lmp * (float)j / (float)half);
            const float arg = t * freq;
            *(float *)(d + j * dst.nb[0]) = cosf(arg);
            *(float *)(d + (j + half) * dst.nb[0]) = sinf(arg);
        }
        if ((dim & 1) && threadIdx.x == 0) *(float *)(d + 2 * half * dst.nb[0]) = 0.0f;
    }
}
