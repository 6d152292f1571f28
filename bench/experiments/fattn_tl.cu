// fattn_tl.cu - a standalone nvcc program: the FA decode goal's kernels from
// the tree (fattn_dect<128, 8, 0> and fattn_dec_combine, included from
// kernels/fattn.cu), timed at several grids and register budgets, and the
// timeline of one launch of each, to find where the decode loses against
// the K/V read ceiling:
//   hsk = hsv = 128, 32 q heads over 8 kv heads (GQA 4), kv = 16384, 1 query,
//   f32 Q, f16 K/V [128, 16384, 8], an f16 mask row, scale 1/sqrt(128).
// K + V are 67,108,864 bytes.
//
// Variants: the tree's entry (__launch_bounds__(128), 2 blocks a
// multiprocessor, bound by shared memory) at several chunk counts: 32 is the
// tree's (256 blocks, one wave), 64 and 128 more waves, 16 one block a
// multiprocessor. Every variant's output is checked against a CPU reference
// (NMSE, ggml's 5e-4).
//
// Timings: µs of decode + combine and of the decode alone, each a CUDA graph
// of 100 calls (best of 7; back-to-back runs find part of K/V in the L2, as
// ops perf does), and a plain read of the same 67 MB (the ceiling).
//
// Timeline: FATTN_DECT_MARK records %globaltimer in every warp (lane 0) at
// its start, as each of its first 37 steps' K/V lands and at its loop's
// end, and at the block's end, for one launch right after a warm one; printed: the span,
// how the start of blocks spreads, the first step's wait, loop and epilogue
// times, how busy multiprocessors are (union of their blocks' lifetimes),
// when multiprocessors finish, and K/V consumed per microsecond.
//
// Build and run (device tool, repo root):
//   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/fattn_tl bench/experiments/fattn_tl.cu && /tmp/fattn_tl
#include <cuda_fp16.h>

#define TL_MAXB 2048
#define TL_EV 40 // events a warp: start, steps 1..TL_EV-3, loop done, block end
#define TL_W 8 // warps a block at most
__device__ unsigned long long g_tl[TL_MAXB * TL_W * TL_EV];
__device__ unsigned g_smid[TL_MAXB];
#define FATTN_DECT_MARK(e)                                                                                    \
    do {                                                                                                      \
        const unsigned b_ = blockIdx.y * gridDim.x + blockIdx.x;                                              \
        const int e_ = (e) == -1 ? TL_EV - 2 : (e) == -2 ? TL_EV - 1 : (e);                                \
        if (lane == 0 && (e_ < TL_EV - 2 || (e) < 0) && b_ < TL_MAXB) {                                        \
            unsigned long long t_;                                                                            \
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));                                          \
            g_tl[(b_ * TL_W + w) * TL_EV + e_] = t_;                                                            \
            if ((e) == 0 && w == 0) {                                                                         \
                unsigned s_;                                                                                  \
                asm volatile("mov.u32 %0, %%smid;" : "=r"(s_));                                             \
                g_smid[b_] = s_;                                                                              \
            }                                                                                                 \
        }                                                                                                     \
    } while (0)

#include "../../kernels/fattn.cu" // not ./fattn.cu, the older experiment
#include "harness.cuh"

#include <cmath>
#include <map>
#include <string>

// fattn_dect's dynamic shared memory on sm_90 with W warps (core's
// fattnDectShared for 4): W warps x 3 stages x a 16-row K and V tile of rows
// 2D + 16 bytes, then 3W mbarriers: 104,544 bytes with 4 warps (2 blocks a
// multiprocessor), 209,088 with 8 (one).
constexpr int D = 128, HKV = 8, GQA = 4, NH = HKV * GQA, KV = 16384;
constexpr int shared_of(int w) { return w * 3 * 2 * 16 * (2 * D + 16) + w * 3 * 8; }

#define DECT_ARGS                                                                                                  \
    ternion_tensor dst, ternion_tensor q, ternion_tensor k, ternion_tensor v, ternion_tensor mask, void * sinks, \
        void * part, float scale, float softcap, float max_bias, float m0, float m1, ternion_u32 n_head_log2,    \
        ternion_u32 gqa, ternion_u32 r3, ternion_u32 chunk, unsigned int * counters
#define DECT_CALL(W)                                                                                             \
    TERNION_KERNEL_ENTRY_DEFERRED(); /* fattn_dect waits itself (early 0: before any K/V) */                     \
    fattn_dect<128, 8, 0, W>(dst, q, k, v, mask, ternion_ptr{sinks}, ternion_ptr{part}, scale, softcap, max_bias, m0, \
                             m1, n_head_log2, gqa, r3, chunk, counters, 0)

__global__ void __launch_bounds__(128) dect_w4(DECT_ARGS) { DECT_CALL(4); }
__global__ void __launch_bounds__(256) dect_w8(DECT_ARGS) { DECT_CALL(8); }

__global__ void fill_f16(__half * p, long n, unsigned seed, float lo, float hi) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        p[i] = __float2half(lo + (hi - lo) * (h & 0xffffff) / 16777216.0f);
    }
}

static ternion_tensor tens(void * data, long n0, long n1, long n2, long n3, long es) {
    ternion_tensor t;
    t.data = data;
    t.ne[0] = n0, t.ne[1] = n1, t.ne[2] = n2, t.ne[3] = n3;
    t.nb[0] = es, t.nb[1] = es * n0, t.nb[2] = es * n0 * n1, t.nb[3] = es * n0 * n1 * n2;
    return t;
}

struct variant {
    const char * name;
    void (*kern)(DECT_ARGS);
    int warps, nchunks_target;
    bool fold; // the last block of each kv head merges (tile counters), no combine kernel
};

static double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(p * (v.size() - 1) + 0.5))];
}

int main() {
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs\n", prop.name, nsm);
    const long nk = (long)D * KV * HKV;
    __half *dK, *dV, *dM;
    float *dQ, *dO, *dP;
    unsigned * dSink;
    CK(cudaMalloc(&dK, nk * 2));
    CK(cudaMalloc(&dV, nk * 2));
    CK(cudaMalloc(&dM, KV * 2));
    CK(cudaMalloc(&dQ, D * NH * 4));
    CK(cudaMalloc(&dO, D * NH * 4));
    CK(cudaMalloc(&dP, (long)256 * NH * (D + 2) * 4));
    CK(cudaMalloc(&dSink, 4));
    fill_f16<<<1024, 256>>>(dK, nk, 11u, -1.0f, 1.0f);
    fill_f16<<<1024, 256>>>(dV, nk, 23u, -1.0f, 1.0f);
    fill_f16<<<64, 256>>>(dM, KV, 37u, -1.0f, 0.0f);
    fill_f32<<<64, 256>>>(dQ, D * NH, 41u);
    CK(cudaDeviceSynchronize());

    // CPU reference.
    std::vector<__half> hK(nk), hV(nk), hM(KV);
    std::vector<float> hQ(D * NH), ref(D * NH);
    CK(cudaMemcpy(hK.data(), dK, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hV.data(), dV, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hM.data(), dM, KV * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hQ.data(), dQ, D * NH * 4, cudaMemcpyDeviceToHost));
    const float scale = 1.0f / sqrtf((float)D);
    {
        std::vector<float> kf(nk), vf(nk);
        for (long i = 0; i < nk; i++) kf[i] = __half2float(hK[i]), vf[i] = __half2float(hV[i]);
        std::vector<double> s(KV);
        for (int h = 0; h < NH; h++) {
            const int kh = h / GQA;
            double mx = -1e300;
            for (int j = 0; j < KV; j++) {
                const float * kr = &kf[((long)kh * KV + j) * D];
                double a = 0;
                for (int d = 0; d < D; d++) a += (double)hQ[h * D + d] * kr[d];
                s[j] = a * scale + __half2float(hM[j]);
                mx = std::max(mx, s[j]);
            }
            double l = 0;
            std::vector<double> o(D, 0.0);
            for (int j = 0; j < KV; j++) {
                const double p = exp(s[j] - mx);
                l += p;
                const float * vr = &vf[((long)kh * KV + j) * D];
                for (int d = 0; d < D; d++) o[d] += p * vr[d];
            }
            for (int d = 0; d < D; d++) ref[h * D + d] = (float)(o[d] / l);
        }
    }

    const ternion_tensor tQ = tens(dQ, D, 1, NH, 1, 4), tK = tens(dK, D, KV, HKV, 1, 2), tV = tens(dV, D, KV, HKV, 1, 2),
                         tM = tens(dM, KV, 1, 1, 1, 2), tO = tens(dO, D, NH, 1, 1, 4);
    for (int wv : {4, 8}) {
        auto kern = wv == 4 ? dect_w4 : dect_w8;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_of(wv)));
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, kern));
        int occ = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, 32 * wv, shared_of(wv)));
        printf("dect %d warps: %d registers, %zu bytes local, %d blocks a multiprocessor\n", wv, fa.numRegs,
               fa.localSizeBytes, occ);
    }

    // Read ceiling: K then V, 16-byte loads.
    unsigned * sink = dSink;
    const float t_read = timeit([&](cudaStream_t st) {
        readall<4><<<nsm * 8, 256, 0, st>>>((const uint4 *)dK, nk * 2 / 16, sink);
        readall<4><<<nsm * 8, 256, 0, st>>>((const uint4 *)dV, nk * 2 / 16, sink);
    });
    printf("read ceiling (K and V, two launches): %.2f us, %.0f GB/s\n", t_read, 2.0 * nk * 2 / t_read / 1e3);

    const variant vs[] = {{"w4", dect_w4, 4, 17, false}, {"w4f", dect_w4, 4, 17, true}, {"w4", dect_w4, 4, 33, false},
                          {"w4f", dect_w4, 4, 33, true}, {"w8f", dect_w8, 8, 17, true}, {"w4", dect_w4, 4, 17, false},
                          {"w4f", dect_w4, 4, 17, true}};
    unsigned int * dCtr;
    CK(cudaMalloc(&dCtr, 64 * 4));
    CK(cudaMemset(dCtr, 0, 64 * 4));
    printf("\n%-4s %7s %7s %6s | %9s %9s %9s | %6s\n", "var", "chunks", "blocks", "steps", "dec+comb", "dec", "GB/s", "nmse");
    for (const variant & va : vs) {
        const int tiles = KV / 64, nct = std::min(std::max(va.nchunks_target, 1), tiles);
        const int chunk = (tiles + nct - 1) / nct * 64, nchunks = (KV + chunk - 1) / chunk;
        const dim3 grid(nchunks, HKV, 1), cgrid(NH, D / 32, 1);
        const auto dec = [&](cudaStream_t st) {
            launch(true, va.kern, grid, dim3(32 * va.warps), shared_of(va.warps), st, tO, tQ, tK, tV, tM, (void *)nullptr, (void *)dP, scale,
                   0.0f, 0.0f, 1.0f, 1.0f, 32u, (ternion_u32)GQA, 1u, (ternion_u32)chunk, va.fold ? dCtr : (unsigned int *)nullptr);
        };
        const auto comb = [&](cudaStream_t st) {
            if (va.fold) return;
            launch(true, fattn_dec_combine, cgrid, dim3(128), 0, st, tO, (const float *)dP, (const float *)nullptr,
                   (ternion_u32)nchunks, (ternion_u32)NH);
        };
        CK(cudaMemset(dO, 0xff, D * NH * 4));
        dec(0);
        comb(0);
        CK(cudaDeviceSynchronize());
        std::vector<float> out(D * NH);
        CK(cudaMemcpy(out.data(), dO, D * NH * 4, cudaMemcpyDeviceToHost));
        const double e = nmse(out, ref);
        const float t_both = timeit([&](cudaStream_t st) { dec(st), comb(st); });
        const float t_dec = timeit([&](cudaStream_t st) { dec(st); });
        printf("%-4s %7d %7d %6d | %9.2f %9.2f %9.0f | %.1e%s\n", va.name, nchunks, nchunks * HKV, chunk / 16 / va.warps, t_both,
               t_dec, 2.0 * nk * 2 / t_both / 1e3, e, e > 5e-4 ? " FAIL" : "");

        // Timeline of one launch right after a warm one.
        const int nb = nchunks * HKV;
        std::vector<unsigned long long> z(TL_MAXB * TL_W * TL_EV, 0);
        CK(cudaMemcpyToSymbol(g_tl, z.data(), z.size() * 8));
        dec(0);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpyToSymbol(g_tl, z.data(), z.size() * 8));
        dec(0);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> tl(z.size());
        std::vector<unsigned> sm(TL_MAXB);
        CK(cudaMemcpyFromSymbol(tl.data(), g_tl, tl.size() * 8));
        CK(cudaMemcpyFromSymbol(sm.data(), g_smid, sm.size() * 4));
        unsigned long long t0 = ~0ull, t1 = 0;
        for (int b = 0; b < nb; b++) {
            for (int ww = 0; ww < va.warps; ww++) {
                const unsigned long long * r = &tl[(b * TL_W + ww) * TL_EV];
                if (r[0]) t0 = std::min(t0, r[0]);
                if (r[TL_EV - 1]) t1 = std::max(t1, r[TL_EV - 1]);
            }
        }
        const double span = (t1 - t0) / 1e3;
        std::vector<double> start, wait1, loop, epi, life;
        std::map<unsigned, std::vector<std::pair<double, double>>> per_sm;
        const int bins = (int)span + 1;
        std::vector<double> bytes(bins, 0.0);
        for (int b = 0; b < nb; b++) {
            const unsigned long long * r0 = &tl[(b * TL_W) * TL_EV];
            double bend = 0, lmax = 0;
            for (int ww = 0; ww < va.warps; ww++) {
                const unsigned long long * r = &tl[(b * TL_W + ww) * TL_EV];
                if (!r[0]) continue;
                start.push_back((r[0] - t0) / 1e3);
                if (r[1]) wait1.push_back((r[1] - r[0]) / 1e3);
                if (r[TL_EV - 2] && r[1]) loop.push_back((r[TL_EV - 2] - r[1]) / 1e3);
                if (r[TL_EV - 2]) lmax = std::max(lmax, (r[TL_EV - 2] - t0) / 1e3);
                for (int i = 1; i < TL_EV - 2; i++) {
                    if (r[i]) bytes[std::min(bins - 1, (int)((r[i] - t0) / 1000))] += 16.0 * D * 2 * 2;
                }
                bend = std::max(bend, r[TL_EV - 1] ? (r[TL_EV - 1] - t0) / 1e3 : 0.0);
            }
            epi.push_back(bend - lmax);
            const double bs = (r0[0] - t0) / 1e3;
            life.push_back(bend - bs);
            per_sm[sm[b]].push_back({bs, bend});
        }
        double busy = 0;
        std::vector<double> sm_end;
        for (auto & kv : per_sm) {
            auto & iv = kv.second;
            std::sort(iv.begin(), iv.end());
            double cs = iv[0].first, ce = iv[0].second, last = 0;
            for (auto & p : iv) {
                if (p.first > ce) busy += ce - cs, cs = p.first, ce = p.second;
                else ce = std::max(ce, p.second);
                last = std::max(last, p.second);
            }
            busy += ce - cs;
            sm_end.push_back(last);
        }
        printf("  timeline: span %.2f us; SMs used %zu of %d, busy %.0f %% of SMs x span\n", span, per_sm.size(), nsm,
               100.0 * busy / (nsm * span));
        printf("  warp start p50/p90/max %.2f/%.2f/%.2f; first K/V wait p10/p50/p90 %.2f/%.2f/%.2f; loop p50/p90 %.2f/%.2f;"
               " epilogue p50/p90 %.2f/%.2f; block life p10/p50/p90 %.2f/%.2f/%.2f\n",
               pct(start, .5), pct(start, .9), pct(start, 1), pct(wait1, .1), pct(wait1, .5), pct(wait1, .9), pct(loop, .5),
               pct(loop, .9), pct(epi, .5), pct(epi, .9), pct(life, .1), pct(life, .5), pct(life, .9));
        printf("  SM last end min/p10/p50/p90: %.2f/%.2f/%.2f/%.2f\n", pct(sm_end, 0), pct(sm_end, .1), pct(sm_end, .5),
               pct(sm_end, .9));
        printf("  K/V landed a microsecond (GB/s):");
        for (int i = 0; i < bins; i++) printf(" %.0f", bytes[i] / 1e3);
        printf("\n");
    }
    return 0;
}
