// mmv.cu - the matrix-vector product of ggml's MUL_MAT for one src1 column
// (ne11 == 1): dst[row] = Σ_k src0[row][k]·src1[k] with f32, f16 or bf16
// src0 and f32 src1 and dst, batched over dims 2 and 3 with src0 broadcast
// by division (i02 = i12 / r2). The entry points are generated from the
// catalog's templates: mmv_{t} (any row start) and mmvv_{t} (16-byte vector
// loads: rows a multiple of 16 bytes long and 16-byte aligned in src0 and
// src1).
#include "vendor.h"

// The sums of v[0..R) over the block's threads, returned to thread 0
// (blockDim.x a multiple of the warp size, at most 1024).
template <int R>
static __device__ __forceinline__ void ternion_block_sums(float * v) {
    __shared__ float partial[R][1024 / 32];
    const int warp = threadIdx.x / TERNION_WARP_SIZE, lane = threadIdx.x % TERNION_WARP_SIZE;
#pragma unroll
    for (int r = 0; r < R; r++) {
        for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) v[r] += TERNION_SHFL_XOR(v[r], m);
        if (lane == 0) partial[r][warp] = v[r];
    }
    __syncthreads();
    const int nwarps = blockDim.x / TERNION_WARP_SIZE;
#pragma unroll
    for (int r = 0; r < R; r++) {
        v[r] = threadIdx.x < nwarps ? partial[r][threadIdx.x] : 0.0f;
        if (warp == 0) {
            for (int m = TERNION_WARP_SIZE / 2; m > 0; m >>= 1) v[r] += TERNION_SHFL_XOR(v[r], m);
        }
    }
}

// mmv_rows points x at rows R·blockIdx.x … R·blockIdx.x + R − 1 of matrix
// (i02, i03) of src0 (each clamped to the last row) and returns the first
// row.
template <int R>
static __device__ __forceinline__ ternion_u32 mmv_rows(const ternion_tensor & src0, ternion_u32 i02, ternion_u32 i03, const char * (&x)[R]) {
    const ternion_u32 row0 = blockIdx.x * R;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const ternion_i64 row = min((ternion_i64)(row0 + r), src0.ne[1] - 1);
        x[r] = (const char *)src0.data + row * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3];
    }
    return row0;
}

// mmv_store sums the block's partial dot products of rows row0 … row0 + R −
// 1 and writes those below ne01 to dst (column 0 of matrix (i12, i13)).
template <int R>
static __device__ __forceinline__ void mmv_store(float (&sum)[R], ternion_tensor dst, ternion_i64 ne01, ternion_u32 row0, ternion_u32 i12,
                                                 ternion_u32 i13) {
    ternion_block_sums<R>(sum);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (row0 + r < ne01) *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + i12 * dst.nb[2] + i13 * dst.nb[3]) = sum[r];
        }
    }
}

// Block (x, y, z) computes row x of matrix (y, z): its threads stride over
// k one value at a time.
template <typename T, int V, int R>
static __device__ __forceinline__ void mmv(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                           ternion_fastdiv r3) {
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const char * x[R];
    const ternion_u32 row0 = mmv_rows<R>(src0, i02, i03, x);
    const float * y = (const float *)((const char *)src1.data + i12 * src1.nb[2] + i13 * src1.nb[3]);
    float sum[R];
#pragma unroll
    for (int r = 0; r < R; r++) sum[r] = 0.0f;
    for (ternion_i64 i = threadIdx.x; i < src0.ne[0]; i += blockDim.x) {
#pragma unroll
        for (int r = 0; r < R; r++) sum[r] += ternion_load((const T *)x[r] + i) * y[i];
    }
    mmv_store<R>(sum, dst, src0.ne[1], row0, i12, i13);
}

// sum += the products of the V values of T in raw (one 16-byte load) with
// f's, four at a time.
template <typename T, int V>
static __device__ __forceinline__ void mmv_fma16(float & sum, const uint4 & raw, const float4 (&f)[V / 4]) {
    const T * e = (const T *)&raw;
#pragma unroll
    for (int j = 0; j < V / 4; j++) {
        sum += ternion_load(e + 4 * j) * f[j].x + ternion_load(e + 4 * j + 1) * f[j].y + ternion_load(e + 4 * j + 2) * f[j].z +
               ternion_load(e + 4 * j + 3) * f[j].w;
    }
}

// sum[r] += the products of raw[r]'s V values of T with f's (mmv_fma16).
template <typename T, int V, int R>
static __device__ __forceinline__ void mmvv_fma(float (&sum)[R], const uint4 (&raw)[R], const float4 (&f)[V / 4]) {
#pragma unroll
    for (int r = 0; r < R; r++) mmv_fma16<T, V>(sum[r], raw[r], f);
}

// mmvv (Deferred): block (x, y, z) computes rows R·x … R·x + R − 1 of
// matrix (y, z) (those below ne01) with 16-byte loads of V values of T,
// each loaded group of src1 values serving the R rows (one row a block read
// 2 bytes of f32 src1 from L1 for every byte of f16 weights). With early
// set, each thread requests its first 16 bytes of each row before the
// kernel waits for the kernels before it (core sets it only where no kernel
// that may still run writes src0: core/ops/early.go), so a graph's next
// product streams weights while the one before it ends.
template <typename T, int V, int R>
static __device__ __forceinline__ void mmvv(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                            ternion_fastdiv r3, int early) {
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const char * x[R];
    const ternion_u32 row0 = mmv_rows<R>(src0, i02, i03, x);
    const ternion_i64 n = src0.ne[0] / V;
    const bool any = threadIdx.x < n;
    uint4 raw[R];
    if (early && any) {
#pragma unroll
        for (int r = 0; r < R; r++) raw[r] = ((const uint4 *)x[r])[threadIdx.x];
    }
    TERNION_KERNEL_ENTRY();
    const float4 * yv = (const float4 *)((const char *)src1.data + i12 * src1.nb[2] + i13 * src1.nb[3]);
    float sum[R];
#pragma unroll
    for (int r = 0; r < R; r++) sum[r] = 0.0f;
    if (any) {
        if (!early) {
#pragma unroll
            for (int r = 0; r < R; r++) raw[r] = ((const uint4 *)x[r])[threadIdx.x];
        }
        float4 f[V / 4];
#pragma unroll
        for (int j = 0; j < V / 4; j++) f[j] = yv[threadIdx.x * (V / 4) + j];
        mmvv_fma<T, V, R>(sum, raw, f);
    }
#pragma unroll 4
    for (ternion_i64 i = threadIdx.x + blockDim.x; i < n; i += blockDim.x) {
        float4 f[V / 4];
#pragma unroll
        for (int j = 0; j < V / 4; j++) f[j] = yv[i * (V / 4) + j];
        uint4 w[R];
#pragma unroll
        for (int r = 0; r < R; r++) w[r] = ((const uint4 *)x[r])[i];
        mmvv_fma<T, V, R>(sum, w, f);
    }
    mmv_store<R>(sum, dst, src0.ne[1], row0, i12, i13);
}

// Rows R·blockIdx.x … of mmvn for NC columns (see mmvn).
template <typename T, int V, int R, int NC>
static __device__ __forceinline__ void mmvn_cols(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_u32 i02,
                                                 ternion_u32 i03, ternion_u32 i12, ternion_u32 i13) {
    const ternion_u32 row0 = blockIdx.x * R;
    const uint4 * x[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const ternion_i64 row = min((ternion_i64)(row0 + r), src0.ne[1] - 1);
        x[r] = (const uint4 *)((const char *)src0.data + row * src0.nb[1] + i02 * src0.nb[2] + i03 * src0.nb[3]);
    }
    const float4 * y[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) y[c] = (const float4 *)((const char *)src1.data + c * src1.nb[1] + i12 * src1.nb[2] + i13 * src1.nb[3]);
    float sum[R * NC];
#pragma unroll
    for (int i = 0; i < R * NC; i++) sum[i] = 0.0f;
#pragma unroll 2
    for (ternion_i64 i = threadIdx.x; i < src0.ne[0] / V; i += blockDim.x) {
        uint4 raw[R];
#pragma unroll
        for (int r = 0; r < R; r++) raw[r] = x[r][i];
#pragma unroll
        for (int c = 0; c < NC; c++) {
            float4 f[V / 4];
#pragma unroll
            for (int j = 0; j < V / 4; j++) f[j] = y[c][i * (V / 4) + j];
#pragma unroll
            for (int r = 0; r < R; r++) mmv_fma16<T, V>(sum[r * NC + c], raw[r], f);
        }
    }
    ternion_block_sums<R * NC>(sum);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (row0 + r >= src0.ne[1]) continue;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                *(float *)((char *)dst.data + (row0 + r) * dst.nb[0] + c * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3]) = sum[r * NC + c];
            }
        }
    }
}

// MUL_MAT for 2 to 8 f32 src1 columns (ncols) with mmvv's 16-byte loads:
// block (x, y, z) computes rows R·x … R·x + R - 1 of matrix (y, z) for
// every column; each 16-byte load of weights serves the ncols columns and
// each load of src1 the R rows.
template <typename T, int V, int R>
static __device__ __forceinline__ void mmvn(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                            ternion_fastdiv r3, int ncols) {
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    switch (ncols) {
    case 2: mmvn_cols<T, V, R, 2>(dst, src0, src1, i02, i03, i12, i13); break;
    case 3: mmvn_cols<T, V, R, 3>(dst, src0, src1, i02, i03, i12, i13); break;
    case 4: mmvn_cols<T, V, R, 4>(dst, src0, src1, i02, i03, i12, i13); break;
    case 5: mmvn_cols<T, V, R, 5>(dst, src0, src1, i02, i03, i12, i13); break;
    case 6: mmvn_cols<T, V, R, 6>(dst, src0, src1, i02, i03, i12, i13); break;
    case 7: mmvn_cols<T, V, R, 7>(dst, src0, src1, i02, i03, i12, i13); break;
    default: mmvn_cols<T, V, R, 8>(dst, src0, src1, i02, i03, i12, i13); break;
    }
}

// The pointer arrays of a batched gemm (ggml's k_compute_batched_ptrs): for
// batch i = i12 + i13*ne12 < ne12*ne13, out[i] = a + (i12/r2)*nba2 +
// (i13/r3)*nba3, out[n + i] = b + i12*nbb2 + i13*nbb3, out[2n + i] = c +
// i12*nbc2 + i13*nbc3 (n = ne12*ne13; grid-stride loop).
extern "C" __global__ void batched_ptrs(ternion_i64 * out, ternion_i64 a, ternion_i64 b, ternion_i64 c, ternion_i64 ne12,
                                        ternion_i64 ne13, ternion_i64 nba2, ternion_i64 nba3, ternion_i64 nbb2, ternion_i64 nbb3,
                                        ternion_i64 nbc2, ternion_i64 nbc3, ternion_i64 r2, ternion_i64 r3) {
    TERNION_KERNEL_ENTRY();
    const ternion_i64 n = ne12 * ne13;
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const ternion_i64 i12 = i % ne12, i13 = i / ne12;
        out[i] = a + (i12 / r2) * nba2 + (i13 / r3) * nba3;
        out[n + i] = b + i12 * nbb2 + i13 * nbb3;
        out[2 * n + i] = c + i12 * nbc2 + i13 * nbc3;
    }
}

// mmvt: MUL_MAT of f16 or bf16 src0 by 2..8 f32 src1 columns on the tensor
// cores (mma.sync m16n8k16, f32 accumulators; TERNION_SM80, elsewhere an
// empty body that core never plans). A block takes 16
// rows (the mma's M) and the 8 column slots (its N); its MMVT_WARPS warps
// split k in groups of MMVT_GROUP steps of 32 values. Inside every step k
// is permuted so that a lane (g = lane/4, c = lane%4) loads 16 contiguous
// bytes of rows g and g + 8 (values 8c … 8c + 7: the A fragments of two
// mmas) and the same 8 values of column g (converted to f16 or bf16 pairs:
// their B fragments); a sum does not care in which order k is added. A
// group's loads are issued before the previous group's mmas (registers
// double-buffered), so every warp keeps 2·MMVT_GROUP 16-byte weight loads
// in flight. Measured on the H200 (m=4096 k=14336, bench/experiments/
// mmvt.cu): 8 columns 32.5 µs against cuBLAS's 34.4 with src1 already f16.
#define MMVT_ROWS 16
#define MMVT_WARPS 8
#define MMVT_GROUP 4

#if TERNION_SM80
// 16 bytes at p, streamed (no L1 allocation), as a volatile asm so that a
// group's loads stay ahead of the mmas in program order.
static __device__ __forceinline__ uint4 mmvt_ldw(const void * p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// 16 bytes of src1 at p (through L1: the other rows' blocks read them too).
static __device__ __forceinline__ float4 mmvt_ldx(const void * p) {
    float4 v;
    asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

// Step i of mmvt's loads (32 values from value i; the lane's own 8c are in
// x): the lane's 16 bytes of rows x[2r] and x[2r + 1] of each of the R row
// tiles (a[2r], a[2r + 1]). CHECK: the step may pass k; kl is k less the
// lane's offset 8c, and a step from i < kl is in (k is a multiple of 8, so
// a lane's 8 values are all in or all out; those out read as zero).
template <typename T, int R, bool CHECK>
static __device__ __forceinline__ void mmvt_step_w(const char * const (&x)[2 * R], ternion_i64 i, ternion_i64 kl, uint4 (&a)[2 * R]) {
    const bool in = !CHECK || i < kl;
    const ternion_i64 o = in ? i : 0;
#pragma unroll
    for (int h = 0; h < 2 * R; h++) {
        a[h] = mmvt_ldw(x[h] + o * (ternion_i64)sizeof(T));
    }
    if (!in) {
#pragma unroll
        for (int h = 0; h < 2 * R; h++) {
            a[h] = make_uint4(0, 0, 0, 0);
        }
    }
}

// Step i's 8 values of column y as 4 pairs (b; zero where col is false: a
// column slot past ncols, or past k as mmvt_step_w).
template <typename T, bool CHECK>
static __device__ __forceinline__ void mmvt_step_y(const float * y, bool col, ternion_i64 i, ternion_i64 kl, ternion_u32 (&b)[4]) {
    const bool in = !CHECK || i < kl;
    const ternion_i64 o = in ? i : 0;
    float4 f0 = mmvt_ldx(y + o), f1 = mmvt_ldx(y + o + 4);
    if (!in || !col) f0 = f1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    b[0] = ternion_mma_type<T>::pack(f0.x, f0.y), b[1] = ternion_mma_type<T>::pack(f0.z, f0.w);
    b[2] = ternion_mma_type<T>::pack(f1.x, f1.y), b[3] = ternion_mma_type<T>::pack(f1.z, f1.w);
}

// One group of mmvt's loads from value k0 (MMVT_GROUP steps of 32 values):
// each step's weights, then its column values. W: the weights only; Y: the
// column values only (the first group of a kernel that requests its
// weights before it waits).
template <typename T, int R, bool CHECK, bool W = true, bool Y = true>
static __device__ __forceinline__ void mmvt_load(const char * const (&x)[2 * R], const float * y, bool col, ternion_i64 k0, ternion_i64 kl,
                                                 uint4 (*a)[2 * R], ternion_u32 (*b)[4]) {
#pragma unroll
    for (int s = 0; s < MMVT_GROUP; s++) {
        if (W) mmvt_step_w<T, R, CHECK>(x, k0 + 32 * s, kl, a[s]);
        if (Y) mmvt_step_y<T, CHECK>(y, col, k0 + 32 * s, kl, b[s]);
    }
}

// mmvt_load of the first group of a warp, from k0: whole says it lies
// within k (no checks).
template <typename T, int R, bool W, bool Y>
static __device__ __forceinline__ void mmvt_first(bool whole, const char * const (&x)[2 * R], const float * y, bool col, ternion_i64 k0,
                                                  ternion_i64 kl, uint4 (*a)[2 * R], ternion_u32 (*b)[4]) {
    if (whole) {
        mmvt_load<T, R, false, W, Y>(x, y, col, k0, kl, a, b);
    } else {
        mmvt_load<T, R, true, W, Y>(x, y, col, k0, kl, a, b);
    }
}
#endif

// Block (x, y, z) computes rows 16·R·x … 16·R·x + 16·R − 1 (R row tiles of
// the mma's 16: mmvt_{t} R = 1, two blocks a multiprocessor; mmvt2_{t} R =
// 2, whose warps load each src1 fragment once for both tiles, half the
// src1 reads from L2) of matrix (y, z) for the ncols (2..8) columns: src0
// of T with 16-byte aligned rows (k a multiple of 8), src1 f32 with 16-byte
// aligned rows, MMVT_WARPS·32 threads. With early set, each warp requests
// its first group of weights before the kernel waits for the kernels before
// it (core sets it only where no kernel that may still run writes src0:
// core/ops/early.go).
template <typename T, int R>
static __device__ __forceinline__ void mmvt(ternion_tensor dst, ternion_tensor src0, ternion_tensor src1, ternion_fastdiv r2,
                                            ternion_fastdiv r3, int ncols, int early) {
#if !TERNION_SM80
    TERNION_KERNEL_ENTRY(); // an empty body, never planned
#else
    constexpr int ROWS = MMVT_ROWS * R;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, c = lane % 4;
    const ternion_u32 i12 = blockIdx.y, i13 = blockIdx.z;
    const ternion_u32 i02 = ternion_fastdiv_div(i12, r2), i03 = ternion_fastdiv_div(i13, r3);
    const ternion_i64 row0 = (ternion_i64)blockIdx.x * ROWS, k = src0.ne[0];
    const char * base = (const char *)src0.data + i02 * src0.nb[2] + i03 * src0.nb[3] + 8 * c * (ternion_i64)sizeof(T);
    // rows g and g + 8 of each tile (h = 2·tile, 2·tile + 1), clamped to
    // the last row
    const char * x[2 * R];
#pragma unroll
    for (int h = 0; h < 2 * R; h++) {
        x[h] = base + min(row0 + g + 8 * h, src0.ne[1] - 1) * src0.nb[1];
    }
    const bool col = g < ncols;
    const float * y = (const float *)((const char *)src1.data + (col ? g : 0) * src1.nb[1] + i12 * src1.nb[2] + i13 * src1.nb[3]) + 8 * c;
    // The warp's groups of steps: [gb, ge) of ceil(k/32/MMVT_GROUP) in all.
    const ternion_i64 span = 32 * MMVT_GROUP, groups = (k + span - 1) / span, per = (groups + MMVT_WARPS - 1) / MMVT_WARPS;
    const ternion_i64 gb = min(groups, warp * per), ge = min(groups, gb + per), full = k / span, kl = k - 8 * c;
    float acc[R][4];
#pragma unroll
    for (int r = 0; r < R; r++) {
        acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.0f;
    }
    uint4 a[MMVT_GROUP][2 * R];
    ternion_u32 b[MMVT_GROUP][4];
    // The first group: its weights requested before the kernel waits for
    // the kernels before it when early (core: no kernel that may still run
    // writes src0), its column values after.
    const bool any = gb < ge, whole = gb < full;
    if (early && any) {
        mmvt_first<T, R, true, false>(whole, x, y, col, gb * span, kl, a, b);
    }
    TERNION_KERNEL_ENTRY();
    if (early && any) {
        mmvt_first<T, R, false, true>(whole, x, y, col, gb * span, kl, a, b);
    } else if (any) {
        mmvt_first<T, R, true, true>(whole, x, y, col, gb * span, kl, a, b);
    }
    for (ternion_i64 gi = gb; gi < ge; gi++) {
        uint4 an[MMVT_GROUP][2 * R];
        ternion_u32 bn[MMVT_GROUP][4];
        if (gi + 1 < ge) {
            if (gi + 1 < full) {
                mmvt_load<T, R, false>(x, y, col, (gi + 1) * span, kl, an, bn);
            } else {
                mmvt_load<T, R, true>(x, y, col, (gi + 1) * span, kl, an, bn);
            }
        }
#pragma unroll
        for (int s = 0; s < MMVT_GROUP; s++) {
#pragma unroll
            for (int r = 0; r < R; r++) {
                // values 8c … 8c + 3 of rows g and g + 8 of tile r, then 8c + 4 … 8c + 7
                const ternion_u32 lo[4] = {a[s][2 * r].x, a[s][2 * r + 1].x, a[s][2 * r].y, a[s][2 * r + 1].y};
                const ternion_u32 hi[4] = {a[s][2 * r].z, a[s][2 * r + 1].z, a[s][2 * r].w, a[s][2 * r + 1].w};
                ternion_mma_type<T>::mma16816(acc[r], lo, b[s][0], b[s][1]);
                ternion_mma_type<T>::mma16816(acc[r], hi, b[s][2], b[s][3]);
            }
        }
#pragma unroll
        for (int s = 0; s < MMVT_GROUP; s++) {
#pragma unroll
            for (int h = 0; h < 2 * R; h++) a[s][h] = an[s][h];
#pragma unroll
            for (int j = 0; j < 4; j++) b[s][j] = bn[s][j];
        }
    }
    // acc[r]: rows 16r + g and 16r + g + 8, columns 2c and 2c + 1. The
    // warps' partial sums meet in shared memory; thread t < ROWS·8 writes
    // row t / 8, column t % 8.
    __shared__ float part[MMVT_WARPS][ROWS][8];
#pragma unroll
    for (int r = 0; r < R; r++) {
        part[warp][16 * r + g][2 * c] = acc[r][0], part[warp][16 * r + g][2 * c + 1] = acc[r][1];
        part[warp][16 * r + g + 8][2 * c] = acc[r][2], part[warp][16 * r + g + 8][2 * c + 1] = acc[r][3];
    }
    __syncthreads();
    const int t = threadIdx.x, rr = t / 8, cc = t % 8;
    if (t < ROWS * 8 && cc < ncols && row0 + rr < src0.ne[1]) {
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < MMVT_WARPS; w++) sum += part[w][rr][cc];
        *(float *)((char *)dst.data + (row0 + rr) * dst.nb[0] + cc * dst.nb[1] + i12 * dst.nb[2] + i13 * dst.nb[3]) = sum;
    }
#endif
}
