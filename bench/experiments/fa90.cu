// fa90.cu - a standalone nvcc program (sm_90a): kernels/fattn90.cu's
// FLASH_ATTN_EXT prefill on wgmma, checked and timed.
//   1. the two wgmma forms it uses, alone: S = Q·Kᵀ (m64n64k16, both operands
//      K-major from the swizzled layout) and O = P·V (m64n256k16, P from
//      registers, V MN-major from the same layout) against the CPU;
//   2. fattn90 and the tree's fattn_mma (kernels/fattn.cu) against a simple
//      f32 reference kernel (NMSE, ggml's FLASH_ATTN_EXT bound 5e-4) on the
//      issue-9 goal shape and shapes with partial tiles, sinks, ALiBi and a
//      softcap;
//   3. both timed as a CUDA graph of calls (best of 7), TFLOP/s = 4·D·nq·nh·nkv / t.
//
// Build and run (device tool, repo root; CUDA 12+):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/fa90 \
//       bench/experiments/fa90.cu && /tmp/fa90
#include "../../kernels/fattn.cu" // the tree's (this directory has an experiment of that name)
#include "fattn90.cu"
#include "harness.cuh"
#include <cmath>
#include <initializer_list>

template <int D>
__global__ void __launch_bounds__(FA90_THREADS, 1) k_fa90(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                                          ternion_tensor mask, const float * sinks, float scale, float softcap,
                                                          float max_bias, float m0, float m1, ternion_u32 nhl2, ternion_u32 gqa,
                                                          ternion_u32 r3) {
    fattn90<D>(dst, q, k, v, mask, sinks, scale, softcap, max_bias, m0, m1, nhl2, gqa, r3);
}
template <int D>
__global__ void __launch_bounds__(128) k_mma(ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v,
                                             ternion_tensor mask, const float * sinks, float scale, float softcap, float max_bias,
                                             float m0, float m1, ternion_u32 nhl2, ternion_u32 gqa, ternion_u32 r3) {
    fattn_mma<D, 4>(dst, q, k, v, mask, sinks, scale, softcap, max_bias, m0, m1, nhl2, gqa, r3);
}

// 1. The wgmma forms alone. a: f16 [64][256] (Q rows), b: f16 [64][256] (K
// rows) -> s f32 [64][64] = a·bᵀ; p: f16 [64][64], vv: f16 [64][256] -> o f32
// [64][256] = p·vv (LBO lbo for V's chunks).
__global__ void __launch_bounds__(128) mt_forms(const __half * a, const __half * b, float * s, const __half * p, const __half * vv,
                                                float * o, unsigned lbo) {
    extern __shared__ __align__(16) unsigned char mt_smem[];
    const ternion_u32 raw = ternion_smem_u32(mt_smem), base = (raw + 1023u) & ~1023u;
    unsigned char * sm = mt_smem + (base - raw);
    const int tid = threadIdx.x, w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    for (int i = tid; i < 64 * 32; i += 128) { // 16-byte units: row i/32, unit i%32
        const int r = i / 32, u = i % 32;
        *(uint4 *)(sm + fa90_off(r, u, 64)) = *(const uint4 *)(a + r * 256 + u * 8);
        *(uint4 *)(sm + 32768 + fa90_off(r, u, 64)) = *(const uint4 *)(b + r * 256 + u * 8);
        *(uint4 *)(sm + 65536 + fa90_off(r, u, 64)) = *(const uint4 *)(vv + r * 256 + u * 8);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[32];
    fa90_fence();
    for (int ks = 0; ks < 16; ks++) {
        fa90_qk(d, ternion_wg_desc(base + (ks / 4) * 8192 + (ks % 4) * 32, 16), ternion_wg_desc(base + 32768 + (ks / 4) * 8192 + (ks % 4) * 32, 16), ks);
    }
    fa90_commit_wait();
    ternion_wg_pin<32>(d);
    for (int i = 0; i < 32; i++) {
        s[(16 * w + g + 8 * ((i >> 1) & 1)) * 64 + (i / 4) * 8 + 2 * t + (i & 1)] = d[i];
    }
    float od[128];
    for (int i = 0; i < 128; i++) od[i] = 0.0f;
    ternion_u32 pa[4][4];
    const ternion_u32 * pw = (const ternion_u32 *)p; // row r, column pair c at r*32 + c
    for (int kk = 0; kk < 4; kk++) {
        const int ra = 16 * w + g;
        pa[kk][0] = pw[ra * 32 + kk * 8 + t];
        pa[kk][1] = pw[(ra + 8) * 32 + kk * 8 + t];
        pa[kk][2] = pw[ra * 32 + kk * 8 + 4 + t];
        pa[kk][3] = pw[(ra + 8) * 32 + kk * 8 + 4 + t];
    }
    fa90_fence();
    for (int kk = 0; kk < 4; kk++) {
        fa90_pv(fa90_n<256>(), od, pa[kk], ternion_wg_desc(base + 65536 + kk * 2048, lbo));
    }
    fa90_commit_wait();
    ternion_wg_pin<128>(od);
    for (int i = 0; i < 128; i++) {
        o[(16 * w + g + 8 * ((i >> 1) & 1)) * 256 + (i / 4) * 8 + 2 * t + (i & 1)] = od[i];
    }
}

static void test_forms() {
    std::vector<__half> ha(64 * 256), hb(64 * 256), hp(64 * 64), hv(64 * 256);
    srand(7);
    auto rnd = [] { return (rand() % 2001 - 1000) / 1000.0f; };
    for (auto & x : ha) x = __float2half(rnd());
    for (auto & x : hb) x = __float2half(rnd());
    for (auto & x : hp) x = __float2half(rnd());
    for (auto & x : hv) x = __float2half(rnd());
    __half *a, *b, *p, *v;
    float *s, *o;
    CK(cudaMalloc(&a, 64 * 256 * 2));
    CK(cudaMalloc(&b, 64 * 256 * 2));
    CK(cudaMalloc(&p, 64 * 64 * 2));
    CK(cudaMalloc(&v, 64 * 256 * 2));
    CK(cudaMalloc(&s, 64 * 64 * 4));
    CK(cudaMalloc(&o, 64 * 256 * 4));
    CK(cudaMemcpy(a, ha.data(), 64 * 256 * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), 64 * 256 * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p, hp.data(), 64 * 64 * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(v, hv.data(), 64 * 256 * 2, cudaMemcpyHostToDevice));
    std::vector<float> rs(64 * 64), ro(64 * 256);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            double x = 0;
            for (int c = 0; c < 256; c++) x += (double)__half2float(ha[i * 256 + c]) * __half2float(hb[j * 256 + c]);
            rs[i * 64 + j] = (float)x;
        }
    for (int i = 0; i < 64; i++)
        for (int c = 0; c < 256; c++) {
            double x = 0;
            for (int j = 0; j < 64; j++) x += (double)__half2float(hp[i * 64 + j]) * __half2float(hv[j * 256 + c]);
            ro[i * 256 + c] = (float)x;
        }
    CK(cudaFuncSetAttribute(mt_forms, cudaFuncAttributeMaxDynamicSharedMemorySize, 3 * 32768 + 1024));
    for (unsigned lbo : {8192u, 1024u}) {
        mt_forms<<<1, 128, 3 * 32768 + 1024>>>(a, b, s, p, v, o, lbo);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<float> gs(64 * 64), go(64 * 256);
        CK(cudaMemcpy(gs.data(), s, gs.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(go.data(), o, go.size() * 4, cudaMemcpyDeviceToHost));
        printf("forms (lbo %u): S = Q·Kᵀ nmse %.3g, O = P·V nmse %.3g\n", lbo, nmse(gs, rs), nmse(go, ro));
    }
    for (void * x : {(void *)a, (void *)b, (void *)p, (void *)v, (void *)s, (void *)o}) CK(cudaFree(x));
}

// 2. The reference: block (query, head), f32 throughout.
__global__ void ref_fa(float * dst, const float * q, const __half * k, const __half * v, const __half * mask, const float * sinks,
                       int D, int nq, int nh, int nkv, int gqa, float scale, float softcap, float max_bias, float m0, float m1,
                       unsigned nhl2) {
    extern __shared__ float sh[];
    float * qr = sh;
    float * sc = sh + D;
    __shared__ float red[256];
    const int qi = blockIdx.x, h = blockIdx.y, hk = h / gqa, tid = threadIdx.x;
    for (int d = tid; d < D; d += blockDim.x) qr[d] = q[((long)h * nq + qi) * D + d];
    __syncthreads();
    const float slope = fattn_slope(max_bias, m0, m1, nhl2, h);
    float mx = -INFINITY;
    for (int j = tid; j < nkv; j += blockDim.x) {
        const __half * kr = k + ((long)hk * nkv + j) * D;
        float x = 0;
        for (int d = 0; d < D; d++) x += qr[d] * __half2float(kr[d]);
        x *= scale;
        if (softcap != 0.0f) x = softcap * tanhf(x);
        if (mask) x += slope * __half2float(mask[(long)qi * nkv + j]);
        sc[j] = x;
        mx = fmaxf(mx, x);
    }
    red[tid] = mx;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    mx = red[0];
    if (sinks) mx = fmaxf(mx, sinks[h]);
    __syncthreads();
    float sum = 0;
    for (int j = tid; j < nkv; j += blockDim.x) {
        sc[j] = expf(sc[j] - mx);
        sum += sc[j];
    }
    red[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    sum = red[0];
    if (sinks) sum += expf(sinks[h] - mx);
    for (int d = tid; d < D; d += blockDim.x) {
        float acc = 0;
        for (int j = 0; j < nkv; j++) acc += sc[j] * __half2float(v[((long)hk * nkv + j) * D + d]);
        dst[((long)qi * nh + h) * D + d] = acc / sum;
    }
}

__global__ void mask_fill(__half * m, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 15, x *= 2246822519u, x ^= x >> 13;
        m[i] = (x % 10 == 0) ? __float2half(-INFINITY) : __float2half((x & 0xffff) / 32768.0f - 1.0f);
    }
}
__global__ void to_half(__half * o, const float * x, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) o[i] = __float2half(x[i]);
}

struct fa_case {
    int D, nh, nhkv, nq, nkv;
    bool mask, sinks;
    float max_bias, softcap;
    bool timed;
};

template <int D> static void run_case(const fa_case & c) {
    const int gqa = c.nh / c.nhkv;
    float *q, *dst, *ref, *sinks = nullptr, *tmp;
    __half *k, *v, *mask = nullptr;
    const long nQ = (long)D * c.nq * c.nh, nK = (long)D * c.nkv * c.nhkv, nM = (long)c.nq * c.nkv, nO = (long)D * c.nh * c.nq;
    CK(cudaMalloc(&q, nQ * 4));
    CK(cudaMalloc(&k, nK * 2));
    CK(cudaMalloc(&v, nK * 2));
    CK(cudaMalloc(&tmp, nK * 4));
    CK(cudaMalloc(&dst, nO * 4 + 4096 * 4));
    CK(cudaMalloc(&ref, nO * 4));
    fill_f32<<<1024, 256>>>(q, nQ, 11);
    fill_f32<<<1024, 256>>>(tmp, nK, 12);
    to_half<<<1024, 256>>>(k, tmp, nK);
    fill_f32<<<1024, 256>>>(tmp, nK, 13);
    to_half<<<1024, 256>>>(v, tmp, nK);
    if (c.mask) {
        CK(cudaMalloc(&mask, nM * 2));
        mask_fill<<<1024, 256>>>(mask, nM, 14);
    }
    if (c.sinks) {
        CK(cudaMalloc(&sinks, c.nh * 4));
        fill_f32<<<1, 256>>>(sinks, c.nh, 15);
    }
    const float scale = 1.0f / sqrtf((float)D);
    unsigned nhl2 = 1;
    while (nhl2 * 2 <= (unsigned)c.nh) nhl2 *= 2;
    const float m0 = powf(2.0f, -c.max_bias / nhl2), m1 = powf(2.0f, -c.max_bias / 2.0f / nhl2);
    // ggml's layouts: q [D, nq, nh], k/v [D, nkv, nhkv], mask [nkv, nq], dst [D, nh, nq].
    const ternion_tensor tq = {q, {D, c.nq, c.nh, 1}, {4, 4L * D, 4L * D * c.nq, 4L * D * c.nq * c.nh}};
    const ternion_tensor tk = {k, {D, c.nkv, c.nhkv, 1}, {2, 2L * D, 2L * D * c.nkv, 2L * D * c.nkv * c.nhkv}};
    const ternion_tensor tv = {v, {D, c.nkv, c.nhkv, 1}, {2, 2L * D, 2L * D * c.nkv, 2L * D * c.nkv * c.nhkv}};
    const ternion_tensor tm = {mask, {c.nkv, c.nq, 1, 1}, {2, 2L * c.nkv, 2L * c.nkv * c.nq, 2L * c.nkv * c.nq}};
    const ternion_tensor td = {dst, {D, c.nh, c.nq, 1}, {4, 4L * D, 4L * D * c.nh, 4L * D * c.nh * c.nq}};
    CK(cudaFuncSetAttribute(ref_fa, cudaFuncAttributeMaxDynamicSharedMemorySize, (D + c.nkv) * 4));
    ref_fa<<<dim3(c.nq, c.nh), 256, (D + c.nkv) * 4>>>(ref, q, k, v, mask, sinks, D, c.nq, c.nh, c.nkv, gqa, scale, c.softcap,
                                                        c.max_bias, m0, m1, nhl2);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> hr(nO), ho(nO + 4096);
    CK(cudaMemcpy(hr.data(), ref, nO * 4, cudaMemcpyDeviceToHost));

    const int sm90 = FA90_SHARED(D), smma = ((64 + 2 * 64) * (D + 8) + 64 * 72) * 2;
    CK(cudaFuncSetAttribute(k_fa90<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm90));
    CK(cudaFuncSetAttribute(k_mma<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smma));
    const dim3 g90((c.nq + FA90_BQ - 1) / FA90_BQ, c.nh, 1), gmma((c.nq + 63) / 64, c.nh, 1);
    const auto fa90 = [&](cudaStream_t st) {
        k_fa90<D><<<g90, FA90_THREADS, sm90, st>>>(td, tq, tk, tv, tm, sinks, scale, c.softcap, c.max_bias, m0, m1, nhl2, gqa, 1);
    };
    const auto fmma = [&](cudaStream_t st) {
        k_mma<D><<<gmma, 128, smma, st>>>(td, tq, tk, tv, tm, sinks, scale, c.softcap, c.max_bias, m0, m1, nhl2, gqa, 1);
    };
    printf("D=%d nh=%d nhkv=%d nq=%d nkv=%d mask=%d sinks=%d max_bias=%g softcap=%g:", D, c.nh, c.nhkv, c.nq, c.nkv, c.mask,
           c.sinks, c.max_bias, c.softcap);
    const double flop = 4.0 * D * c.nq * c.nh * (double)c.nkv;
    for (int which = 0; which < 2; which++) {
        const char * name = which == 0 ? "fattn90" : "fattn_mma";
        std::vector<float> sent(4096, 12345.0f);
        CK(cudaMemset(dst, 0xff, nO * 4)); // NaN: every output must be written
        CK(cudaMemcpy(dst + nO, sent.data(), 4096 * 4, cudaMemcpyHostToDevice));
        if (which == 0) fa90(0); else fmma(0);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(ho.data(), dst, (nO + 4096) * 4, cudaMemcpyDeviceToHost));
        bool sentinel = true;
        for (int i = 0; i < 4096; i++) sentinel = sentinel && ho[nO + i] == 12345.0f;
        ho.resize(nO);
        const double e = nmse(ho, hr);
        printf(" %s nmse %.3g%s%s", name, e, e < 5e-4 ? " ok" : " FAIL", sentinel ? "" : " SENTINEL");
        ho.resize(nO + 4096);
        if (c.timed) {
            const float us = which == 0 ? timeit(fa90, 20) : timeit(fmma, 20);
            printf(" %.1f us %.1f TFLOP/s", us, flop / us * 1e-6);
        }
        printf(";");
    }
    printf("\n");
    for (void * x : {(void *)q, (void *)k, (void *)v, (void *)tmp, (void *)dst, (void *)ref}) CK(cudaFree(x));
    if (mask) CK(cudaFree(mask));
    if (sinks) CK(cudaFree(sinks));
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s\n", p.name);
    test_forms();
    const fa_case cases[] = {
        {256, 32, 2, 512, 10000, true, false, 0.0f, 0.0f, true},  // the issue-9 prefill goal (nr23 = [16,1])
        {256, 8, 2, 100, 1000, true, true, 8.0f, 0.0f, false},    // partial tiles, sinks, ALiBi
        {256, 4, 4, 130, 77, false, false, 0.0f, 30.0f, false},   // softcap, no mask, short KV
        {128, 8, 8, 300, 776, true, true, 0.0f, 0.0f, false},    // mask rows 16-byte aligned (core sends others to fattn_mma)
        {128, 8, 8, 300, 777, false, true, 0.0f, 0.0f, false},
        {128, 32, 8, 512, 8192, true, false, 0.0f, 0.0f, true},
    };
    for (const fa_case & c : cases) {
        if (c.D == 256) run_case<256>(c); else run_case<128>(c);
    }
    return 0;
}
