// wgrs.cu - a standalone nvcc program (sm_90a): gemm90 with the weights
// expanded by the multiplying warpgroups themselves, straight into wgmma's
// register fragment of A (wgmma.mma_async with A from registers, B from the
// swizzled shared-memory stage), against kernels/gemm90.cu's form (a producer
// warpgroup expands each k-tile into an f16 A stage in shared memory, fences
// the async proxy and arrives; the multiplying warpgroups wait for it) and the
// tree's dq -> f16, src1 -> f16, cublasGemmEx.
//
// Why: gemm90_q4_0 at m=4096 k=14336 n=512 took ~143 us of kernel time on the
// H100 (~1170 cycles a 128x128x64 k-tile, where the tensor cores need ~512 and
// cuBLAS's f16 gemm takes ~690): one expanding warp a scheduler, and every
// k-tile's 16 KB of f16 written to shared memory, fenced and read back by
// wgmma. Here each of the 256 multiplying threads expands the 32 values of
// its two rows a k-tile needs (rows 16w + l/4 and + 8 of its warpgroup's 64;
// k 2(l%4), +1, +8, +9 of each k16 step: the m16n8k16 A layout, CuTe's
// ALayout_64x16) from the raw rows in shared memory (2-byte loads, no bank
// conflicts: rows 144 or 272 bytes apart), into registers double-buffered
// across k-tiles, so expanding k-tile t+1 overlaps the wgmma of k-tile t; no
// A stage, no proxy fence, no producer barrier. 384 threads: warpgroups 0, 1
// multiply (rows 0..63, 64..127 of the tile), warpgroup 2 fetches (warp 8: one
// 16 KB bulk copy of B a stage; warps 9..11: the quantized rows by 16-byte
// cp.async a group of 256 values ahead). Same B layout (gemm90_b_f32), same
// epilogue.
//
// Formats q4_0, q8_0 and q4_K (k-tile U of a q4_K block: sub-blocks 2U, 2U + 1
// in f32, as gemm90.cu), m x k x n over the issue-10 shape and its neighbours.
//
// Build and run (device tool, repo root; CUDA 12+):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/wgrs \
//       bench/experiments/wgrs.cu -lcublas && /tmp/wgrs
#include "quant.cu"
#include "harness.cuh"
#include "wgmma.cuh" // includes kernels/gemm90.cu

template <typename Q>
__global__ void __launch_bounds__(GEMM90_THREADS, 1) g90(ternion_tensor dst, ternion_tensor src0, const void * bt) {
    gemm90_q<Q>(dst, src0, bt);
}

// d (64 f32 of an m64n128 tile) += A (the m64k16 fragment in a[0..3]) · Bᵀ (128 x 16, desc b).
static __device__ __forceinline__ void rs_mma(float * d, const unsigned * a, unsigned long long b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// Pins registers across the wgmma pipeline (as CUTLASS's
// warpgroup_fence_operand): no copy of them may be made between the stage's
// start and end, which would make ptxas serialize the wgmmas.
static __device__ __forceinline__ void rs_pin(float * d) {
#pragma unroll
    for (int i = 0; i < 64; i++) asm volatile("" : "+f"(d[i])::"memory");
}
static __device__ __forceinline__ void rs_pin(unsigned (&a)[4][4]) {
#pragma unroll
    for (int i = 0; i < 16; i++) asm volatile("" : "+r"(a[i / 4][i % 4])::"memory");
}

static __device__ __forceinline__ unsigned ld16(const unsigned char * p) { return *(const unsigned short *)p; }

// The fragments of k-tile U (0..3, compile-time) of a group for rows a and b
// (raw rows in shared memory), lane column c = l % 4: a[kk] = {(a, k0..k0+1),
// (b, k0..), (a, k0+8..), (b, k0+8..)} of k16 step kk, k0 = 2c.
template <int U>
static __device__ __forceinline__ void rs_expand(g90_q4_0, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
#pragma unroll
    for (int h = 0; h < 2; h++) { // block 2U + h: steps 2h (low nibbles, values 0..15) and 2h + 1 (high, 16..31)
        const int o = 18 * (2 * U + h);
        unsigned da = ld16(ra + o), db = ld16(rb + o);
        da |= da << 16, db |= db << 16;
        const unsigned wa = ld16(ra + o + 2 + 2 * c) | (ld16(ra + o + 10 + 2 * c) << 16);
        const unsigned wb = ld16(rb + o + 2 + 2 * c) | (ld16(rb + o + 10 + 2 * c) << 16);
        const uint2 la = g90_nib4<false>(wa, da), lb = g90_nib4<false>(wb, db), ha = g90_nib4<true>(wa, da), hb = g90_nib4<true>(wb, db);
        a[2 * h][0] = la.x, a[2 * h][1] = lb.x, a[2 * h][2] = la.y, a[2 * h][3] = lb.y;
        a[2 * h + 1][0] = ha.x, a[2 * h + 1][1] = hb.x, a[2 * h + 1][2] = ha.y, a[2 * h + 1][3] = hb.y;
    }
}
template <int U>
static __device__ __forceinline__ void rs_expand(g90_q8_0, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
#pragma unroll
    for (int kk = 0; kk < 4; kk++) { // block 2U + kk/2, values 16 (kk & 1) ...
        const int o = 34 * (2 * U + kk / 2), q = o + 2 + 16 * (kk & 1) + 2 * c;
        unsigned da = ld16(ra + o), db = ld16(rb + o);
        da |= da << 16, db |= db << 16;
        const uint2 xa = g90_i8x4(ld16(ra + q) | (ld16(ra + q + 8) << 16), da), xb = g90_i8x4(ld16(rb + q) | (ld16(rb + q + 8) << 16), db);
        a[kk][0] = xa.x, a[kk][1] = xb.x, a[kk][2] = xa.y, a[kk][3] = xb.y;
    }
}
// q4_K (one block a group): k-tile U is sub-blocks 2U (steps 0, 1: low
// nibbles of bytes 32U + 0..15, + 16..31) and 2U + 1 (steps 2, 3: their high
// nibbles), each value (d·sc)·q - dmin·m in f32 rounded once to f16.
template <int U> struct rs_k4 {
    float d1[2], m1[2]; // sub-blocks 2U, 2U + 1
    __device__ __forceinline__ rs_k4(const unsigned char * r) {
        const uint4 h = *(const uint4 *)r; // d, dmin, scales[12]
        const uint4 * hp = &h;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int b = 2 * U + j;
            unsigned sc, m;
            if (b < 4) {
                sc = g90_byte(hp, 4 + b) & 63, m = g90_byte(hp, 8 + b) & 63;
            } else {
                sc = (g90_byte(hp, 8 + b) & 15) | ((g90_byte(hp, b) >> 6) << 4), m = (g90_byte(hp, 8 + b) >> 4) | ((g90_byte(hp, 4 + b) >> 6) << 4);
            }
            d1[j] = ternion_f16_to_f32((ternion_f16)(h.x & 0xffffu)) * (float)sc, m1[j] = ternion_f16_to_f32((ternion_f16)(h.x >> 16)) * (float)m;
        }
    }
};
static __device__ __forceinline__ unsigned rs_pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));
    return r;
}
template <int U>
static __device__ __forceinline__ void rs_expand(g90_q4_K, const unsigned char * ra, const unsigned char * rb, int c, unsigned (&a)[4][4]) {
    const rs_k4<U> sa(ra), sb(rb);
#pragma unroll
    for (int half = 0; half < 2; half++) { // bytes 32U + 16 half + {2c, 2c+1, 2c+8, 2c+9}: steps half and half + 2
        const int q = 16 + 32 * U + 16 * half + 2 * c;
        const unsigned wa = ld16(ra + q) | (ld16(ra + q + 8) << 16), wb = ld16(rb + q) | (ld16(rb + q + 8) << 16);
#pragma unroll
        for (int j = 0; j < 2; j++) { // j 0: low nibbles (sub-block 2U), 1: high (2U + 1)
            const unsigned xa = (j ? wa >> 4 : wa) & 0x0F0F0F0Fu, xb = (j ? wb >> 4 : wb) & 0x0F0F0F0Fu;
            unsigned * f = a[half + 2 * j];
            f[0] = rs_pack(g90_k4(xa, 0, sa.d1[j], sa.m1[j]), g90_k4(xa, 1, sa.d1[j], sa.m1[j]));
            f[1] = rs_pack(g90_k4(xb, 0, sb.d1[j], sb.m1[j]), g90_k4(xb, 1, sb.d1[j], sb.m1[j]));
            f[2] = rs_pack(g90_k4(xa, 2, sa.d1[j], sa.m1[j]), g90_k4(xa, 3, sa.d1[j], sa.m1[j]));
            f[3] = rs_pack(g90_k4(xb, 2, sb.d1[j], sb.m1[j]), g90_k4(xb, 3, sb.d1[j], sb.m1[j]));
        }
    }
}

template <int SB, int RW, int GB> __host__ __device__ constexpr int rs_smem() { return SB * GEMM90_TILE_B + RW * 128 * GB + 1024; }

// One k-tile of a multiplying thread: expand into a (buffer P of the
// caller), wait for B's stage, multiply, retire the previous k-tile's wgmma
// and release its stage.
template <typename Q, int SB, int RW, int U>
static __device__ __forceinline__ void rs_step(int kt, unsigned (&a)[4][4], float * d, const unsigned char * raw, unsigned bbase,
                                               unsigned long long * full, unsigned long long * empty, unsigned long long * rawfull,
                                               unsigned long long * rawempty, int lr, int c, int l) {
    constexpr int GB = Q::GROUP;
    const int g = kt >> 2, r = g % RW; // kt % 4 == U
    if (U == 0) ternion_mbar_wait(ternion_smem_u32(&rawfull[r]), (g / RW) & 1);
    const unsigned char * ra = raw + r * (128 * GB) + lr * GB;
    rs_expand<U>(Q(), ra, ra + 8 * GB, c, a);
    if (U == 3) mbar_arrive(ternion_smem_u32(&rawempty[r]));
    const int s = kt % SB;
    ternion_mbar_wait(ternion_smem_u32(&full[s]), (kt / SB) & 1);
    const unsigned bs = bbase + s * GEMM90_TILE_B;
    rs_pin(d);
    rs_pin(a);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < 4; kk++) rs_mma(d, a[kk], desc_sw128(bs + kk * 32));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    rs_pin(d);
    if (kt > 0 && l == 0) mbar_arrive(ternion_smem_u32(&empty[(kt - 1) % SB]));
}

template <typename Q, int SB, int RW>
__global__ void __launch_bounds__(384, 1) g90rs(ternion_tensor dst, ternion_tensor src0, const void * bt) {
    constexpr int GB = Q::GROUP, NQ = GB / 16;
    const unsigned char * B = (const unsigned char *)bt;
    extern __shared__ unsigned char dyn[];
    __shared__ __align__(8) unsigned long long full[SB], empty[SB], rawfull[RW], rawempty[RW];
    const int M = (int)src0.ne[1], K = (int)src0.ne[0];
    const unsigned char * Aq = (const unsigned char *)src0.data;
    const long long arow = src0.nb[1];
    const unsigned base = (ternion_smem_u32(dyn) + 1023) & ~1023u, raws = base + SB * GEMM90_TILE_B;
    const unsigned char * raw = dyn + (raws - ternion_smem_u32(dyn));
    const int tid = threadIdx.x, wg = tid >> 7, warp = tid >> 5, l = tid & 31;
    const int mt = (M + 127) / 128, m0 = (int)(blockIdx.x % mt) * 128, nt = (int)(blockIdx.x / mt), n0 = nt * 128;
    const int T = K / 64, G = T / 4, rows = min(128, M - m0);
    if (tid == 0) {
        for (int s = 0; s < SB; s++) {
            mbar_init(ternion_smem_u32(&full[s]), 1);  // the bulk copy's arrival expecting B's bytes
            mbar_init(ternion_smem_u32(&empty[s]), 8); // lane 0 of each multiplying warp
        }
        for (int r = 0; r < RW; r++) {
            mbar_init(ternion_smem_u32(&rawfull[r]), 96);   // each lane of warps 9..11 (cp.async.mbarrier.arrive.noinc)
            mbar_init(ternion_smem_u32(&rawempty[r]), 256); // every multiplying thread, done with the group
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (wg == 2) {
        if (warp == 8) {
            for (int kt = 0; kt < T; kt++) {
                const int s = kt % SB;
                if (kt >= SB) ternion_mbar_wait(ternion_smem_u32(&empty[s]), ((kt / SB) - 1) & 1);
                if (l == 0) { mbar_arrive_tx(ternion_smem_u32(&full[s]), GEMM90_TILE_B); bulk_copy(base + s * GEMM90_TILE_B, B + ((long long)nt * T + kt) * GEMM90_TILE_B, GEMM90_TILE_B, ternion_smem_u32(&full[s])); }
                __syncwarp();
            }
            return;
        }
        for (int g = 0; g < G; g++) {
            const int r = g % RW;
            if (g >= RW) ternion_mbar_wait(ternion_smem_u32(&rawempty[r]), ((g / RW) - 1) & 1);
            for (int q = (warp - 9) * 32 + l; q < 128 * NQ; q += 96) {
                const int row = q / NQ, ch = q % NQ;
                if (row < rows) {
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(raws + r * (128 * GB) + row * GB + ch * 16),
                                 "l"(Aq + (long long)(m0 + row) * arow + (long long)g * GB + ch * 16)
                                 : "memory");
                }
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ternion_smem_u32(&rawfull[r])) : "memory");
        }
        return;
    }
    const int w = warp & 3, wm = wg * 64, lr = wm + 16 * w + (l >> 2), c = l & 3;
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++) d[i] = 0.0f;
    rs_pin(d);
    unsigned a0[4][4], a1[4][4];
    for (int kt = 0; kt < T; kt += 4) {
        rs_step<Q, SB, RW, 0>(kt, a0, d, raw, base, full, empty, rawfull, rawempty, lr, c, l);
        rs_step<Q, SB, RW, 1>(kt + 1, a1, d, raw, base, full, empty, rawfull, rawempty, lr, c, l);
        rs_step<Q, SB, RW, 2>(kt + 2, a0, d, raw, base, full, empty, rawfull, rawempty, lr, c, l);
        rs_step<Q, SB, RW, 3>(kt + 3, a1, d, raw, base, full, empty, rawfull, rawempty, lr, c, l);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    rs_pin(d);
    float * C = (float *)dst.data;
    const long long ldc = dst.nb[1] / 4;
    const int N = (int)dst.ne[1], r0 = m0 + lr;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int n = n0 + j * 8 + c * 2;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int row = r0 + (e >> 1) * 8, col = n + (e & 1);
            if (row < M && col < N) C[(long long)col * ldc + row] = d[4 * j + e];
        }
    }
}

// The tree's dequantize of format f (0 q4_0, 1 q8_0, 2 q4_K) into a.
static void dequant(cudaStream_t st, __half * a, const void * x, int M, int K, int f) {
    const long bb = f == 0 ? 18 : f == 1 ? 34 : 144, qk = f == 2 ? 256 : 32, xs = (long)K / qk * bb, n = (long)K * M / 8;
    ternion_tensor td = {a, {K, M, 1, 1}, {2, 2L * K, 2L * K * M, 2L * K * M}};
    ternion_tensor ts = {(void *)x, {K, M, 1, 1}, {bb, xs, xs * M, xs * M}};
    const unsigned g = (unsigned)std::min((n + 255) / 256, 65536L);
    if (f == 0) dq_f16<ternion_q4_0><<<g, 256, 0, st>>>(td, ts, fastdiv(K / 8), fastdiv(M), fastdiv(1), n);
    if (f == 1) dq_f16<ternion_q8_0><<<g, 256, 0, st>>>(td, ts, fastdiv(K / 8), fastdiv(M), fastdiv(1), n);
    if (f == 2) dq_f16<ternion_q4_K><<<g, 256, 0, st>>>(td, ts, fastdiv(K / 8), fastdiv(M), fastdiv(1), n);
}

template <typename Q> static void g90_run(cudaStream_t st, dim3 grid, ternion_tensor td, ternion_tensor ta, const void * yt) {
    g90<Q><<<grid, GEMM90_THREADS, GEMM90_SHARED(Q::GROUP), st>>>(td, ta, yt);
}
template <typename Q, int SB, int RW> static void rs_run(cudaStream_t st, dim3 grid, ternion_tensor td, ternion_tensor ta, const void * yt) {
    g90rs<Q, SB, RW><<<grid, 384, rs_smem<SB, RW, Q::GROUP>(), st>>>(td, ta, yt);
}
template <typename Q, int SB, int RW> static void rs_attr() {
    CK(cudaFuncSetAttribute(g90rs<Q, SB, RW>, cudaFuncAttributeMaxDynamicSharedMemorySize, rs_smem<SB, RW, Q::GROUP>()));
}

int main() {
    struct shape { int m, k, n; };
    const shape shapes[] = {{4096, 14336, 512}, {4000, 14336, 500}, {14336, 4096, 512}, {4096, 14336, 1000}, {4096, 14336, 100}};
    const long maxmk = 14336L * 4096, maxnk = 1000L * 14336, maxmn = 14336L * 512;
    unsigned char * x;
    float *y, *c;
    __half *yh, *yt, *a;
    CK(cudaMalloc(&x, maxmk / 32 * 34));
    CK(cudaMalloc(&y, maxnk * 4));
    CK(cudaMalloc(&yh, maxnk * 2));
    CK(cudaMalloc(&yt, (maxnk + 128L * 14336) * 2));
    CK(cudaMalloc(&a, maxmk * 2));
    CK(cudaMalloc(&c, maxmn * 4));
    tree_path tp;
    CK(cudaFuncSetAttribute(g90<g90_q4_0>, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM90_SHARED(144)));
    CK(cudaFuncSetAttribute(g90<g90_q8_0>, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM90_SHARED(272)));
    CK(cudaFuncSetAttribute(g90<g90_q4_K>, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM90_SHARED(144)));
    rs_attr<g90_q4_0, 6, 4>();
    rs_attr<g90_q4_0, 4, 2>();
    rs_attr<g90_q8_0, 6, 3>();
    rs_attr<g90_q8_0, 4, 2>();
    rs_attr<g90_q4_K, 6, 4>();
    rs_attr<g90_q4_K, 4, 2>();
    const char * names[] = {"q4_0", "q8_0", "q4_K"};
    for (const shape & sh : shapes) {
        for (int f = 0; f < 3; f++) {
            const int M = sh.m, K = sh.k, N = sh.n, bb = f == 0 ? 18 : f == 1 ? 34 : 144, qk = f == 2 ? 256 : 32, NT = (N + BN - 1) / BN;
            const long xs = (long)K / qk * bb;
            fill_bytes<<<1024, 256>>>(x, xs * M, 17 + f);
            if (f == 2) {
                fix_scales<<<1024, 256>>>(x, xs * M / bb, bb, 0, 0.0001f, 0.001f, 5);
                fix_scales<<<1024, 256>>>(x, xs * M / bb, bb, 2, 0.0001f, 0.001f, 9);
            } else {
                fix_scales<<<1024, 256>>>(x, xs * M / bb, bb, 0, f ? 0.0001f : 0.001f, f ? 0.001f : 0.01f, 5);
            }
            fill_f32<<<1024, 256>>>(y, (long)K * N, 3);
            CK(cudaDeviceSynchronize());
            auto tree = [&](cudaStream_t st) {
                dequant(st, a, x, M, K, f);
                tp.convert(st, y, yh, (long)K * N);
                tp.gemm(st, a, yh, c, M, N, K);
            };
            const ternion_tensor td = {c, {M, N, 1, 1}, {4, 4L * M, 4L * M * N, 4L * M * N}};
            const ternion_tensor ta = {x, {K, M, 1, 1}, {bb, xs, xs * M, xs * M}};
            const ternion_tensor tb = {y, {K, N, 1, 1}, {4, 4L * K, 4L * K * N, 4L * K * N}};
            const long chunks = (long)NT * BN * K / 8;
            const dim3 grid((unsigned)(((M + BM - 1) / BM) * NT));
            auto conv = [&](cudaStream_t st) { gemm90_b_f32<<<(unsigned)((chunks + 255) / 256), 256, 0, st>>>(yt, tb, chunks); };
            auto g90k = [&](cudaStream_t st) {
                if (f == 0) g90_run<g90_q4_0>(st, grid, td, ta, yt);
                if (f == 1) g90_run<g90_q8_0>(st, grid, td, ta, yt);
                if (f == 2) g90_run<g90_q4_K>(st, grid, td, ta, yt);
            };
            auto rs6 = [&](cudaStream_t st) {
                if (f == 0) rs_run<g90_q4_0, 6, 4>(st, grid, td, ta, yt);
                if (f == 1) rs_run<g90_q8_0, 6, 3>(st, grid, td, ta, yt);
                if (f == 2) rs_run<g90_q4_K, 6, 4>(st, grid, td, ta, yt);
            };
            auto rs4 = [&](cudaStream_t st) {
                if (f == 0) rs_run<g90_q4_0, 4, 2>(st, grid, td, ta, yt);
                if (f == 1) rs_run<g90_q8_0, 4, 2>(st, grid, td, ta, yt);
                if (f == 2) rs_run<g90_q4_K, 4, 2>(st, grid, td, ta, yt);
            };
            std::vector<float> ref((long)M * N), got((long)M * N);
            tree(0);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(ref.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
            conv(0);
            CK(cudaDeviceSynchronize());
            auto check = [&](auto fn) {
                CK(cudaMemset(c, 0xff, (long)M * N * 4));
                fn((cudaStream_t)0);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(got.data(), c, (long)M * N * 4, cudaMemcpyDeviceToHost));
                return nmse(got, ref);
            };
            const double flop = 2.0 * M * N * K;
            const double e90 = check(g90k), e6 = check(rs6), e4 = check(rs4);
            const float tt = timeit(tree, 10), tc = timeit(conv, 10), t90 = timeit(g90k, 10), t6 = timeit(rs6, 10), t4 = timeit(rs4, 10);
            printf("%s m=%5d k=%5d n=%4d  tree %7.2f  b_f32 %6.2f  kernel (us, TFLOP/s, nmse): gemm90 %7.2f %4.0f %.1e | rs 6/%d %7.2f %4.0f %.1e | rs 4/2 %7.2f %4.0f %.1e\n",
                   names[f], M, K, N, tt, tc, t90, flop / t90 / 1e6, e90, f == 1 ? 3 : 4, t6, flop / t6 / 1e6, e6, t4, flop / t4 / 1e6, e4);
            fflush(stdout);
        }
    }
    return 0;
}
