// vendor.h - the few device-side differences between CUDA, HIP and MUSA.
// Kernel sources include only this header; each compiler sees its own block.
#pragma once

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define TERNION_VENDOR_HIP 1
#if defined(__GFX9__) || defined(__gfx900__) || defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx942__)
#define TERNION_WARP_SIZE 64
#else
#define TERNION_WARP_SIZE 32
#endif
// HIP shuffles take no mask.
#define TERNION_SHFL_XOR(v, m) __shfl_xor((v), (m), TERNION_WARP_SIZE)
#elif defined(__MUSACC__)
#define TERNION_VENDOR_MUSA 1
#define TERNION_WARP_SIZE 32
#define TERNION_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 32)
#else
// CUDA (nvcc or NVRTC). NVRTC has no standard headers: use builtin types only.
#define TERNION_VENDOR_CUDA 1
#define TERNION_WARP_SIZE 32
#define TERNION_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 32)
#endif

#include "abi.h"

// TERNION_SM80 is 1 in NVIDIA code for arch 8.0 and later (mma.sync's
// m16n8k16 and m16n8k32 shapes, cp.async, cvt.rn.f16x2/bf16x2), 0 elsewhere.
#if defined(TERNION_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TERNION_SM80 1
#else
#define TERNION_SM80 0
#endif

// TERNION_CLUSTER_DIMS(n) declares a kernel's thread-block clusters of n
// blocks along x in NVIDIA code for arch 9.0 and later (a plain launch then
// groups the grid's blocks so: its x a multiple of n); nothing elsewhere,
// where such a kernel has an empty body and is never launched. TERNION_SM90
// is 1 where clusters exist, 0 elsewhere.
#if defined(TERNION_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TERNION_SM90 1
#define TERNION_CLUSTER_DIMS(n) __cluster_dims__(n, 1, 1)
#else
#define TERNION_SM90 0
#define TERNION_CLUSTER_DIMS(n)
#endif

#if defined(TERNION_VENDOR_CUDA)
// ternion_smem_u32 is the shared-state-space address of p, a pointer into
// shared memory (the operand of ld/st.shared, cp.async and mbarrier PTX).
static __device__ __forceinline__ ternion_u32 ternion_smem_u32(const void * p) {
    ternion_u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// ternion_mbar_wait waits until the mbarrier at shared address bar has
// completed the phase of the given parity (mbarriers: code for arch 9.0 and
// later only).
static __device__ __forceinline__ void ternion_mbar_wait(ternion_u32 bar, ternion_u32 parity) {
    ternion_u32 done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (done == 0u);
}
#endif

// TERNION_KERNEL_ENTRY() is the first statement of every kernel (a test
// checks it): on NVIDIA arch 9.0 and later it waits until the grids this one
// depends on have completed and their writes are visible, then lets the next
// kernel on the stream launch (programmatic dependent launch: a launch with
// that attribute may start while the kernel before it still runs, and its
// blocks wait here, so no kernel touches memory before its predecessor is
// done). Without the attribute, or elsewhere, it does nothing.
// TERNION_KERNEL_ENTRY_EARLY() is the first statement of a kernel the
// catalog marks EarlyEntry instead: it only lets the next kernel launch, and
// the kernel calls TERNION_GRID_WAIT() itself before it reads what the
// kernel before it writes. Its reads before that wait may only touch memory
// the kernel before it does not write; everything earlier on the stream is
// complete by then (that kernel's blocks waited at their entry before they
// let this one launch).
#if TERNION_SM90
#define TERNION_GRID_WAIT() asm volatile("griddepcontrol.wait;" ::: "memory")
#define TERNION_KERNEL_ENTRY_EARLY() asm volatile("griddepcontrol.launch_dependents;" ::: "memory")
#else
#define TERNION_GRID_WAIT() \
    do {                    \
    } while (0)
#define TERNION_KERNEL_ENTRY_EARLY() \
    do {                             \
    } while (0)
#endif
#define TERNION_KERNEL_ENTRY()          \
    do {                                \
        TERNION_GRID_WAIT();            \
        TERNION_KERNEL_ENTRY_EARLY();   \
    } while (0)
// TERNION_KERNEL_ENTRY_DEFERRED() is the first statement of a kernel the
// catalog marks Deferred: it does nothing, and the kernel calls
// TERNION_KERNEL_ENTRY() itself after it has requested memory that no kernel
// still running may write (core/ops/early.go decides where that holds). The
// next kernel launches only after that call, so its own early reads still
// find every kernel before this one done.
#define TERNION_KERNEL_ENTRY_DEFERRED() \
    do {                                \
    } while (0)

// Global linear thread index and total thread count of a 1D launch.
#define TERNION_TID() ((ternion_i64)blockIdx.x * blockDim.x + threadIdx.x)
#define TERNION_NTHREADS() ((ternion_i64)gridDim.x * blockDim.x)

// ternion_ptr turns a generated entry point's void * parameter into the typed
// pointer its kernel body declares (const float *, unsigned short *, ...).
struct ternion_ptr {
    void * p;
    template <typename T> __device__ __forceinline__ operator T *() const { return (T *)p; }
};

// ternion_count_acq_rel adds 1 to *p and returns the old value with
// release and acquire semantics at device scope: called by a block's thread
// 0 after a barrier that every thread reached after ternion_publish(), it
// publishes the block's stores before it counts and, for the block that
// counts last, makes the others' visible (with a barrier after it;
// CUTLASS's semaphores do the same). atom.acq_rel on NVIDIA arch 7.0 and
// later (whose release is cumulative over the barrier, so ternion_publish
// is empty there), fences around a plain atomic elsewhere, where every
// thread fences its own stores first (the CUDA samples' threadFenceReduction).
#if defined(TERNION_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
static __device__ __forceinline__ void ternion_publish() {}
static __device__ __forceinline__ unsigned int ternion_count_acq_rel(unsigned int * p) {
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
    return old;
}
#else
static __device__ __forceinline__ void ternion_publish() { __threadfence(); }
static __device__ __forceinline__ unsigned int ternion_count_acq_rel(unsigned int * p) {
    __threadfence();
    const unsigned int old = atomicAdd(p, 1u);
    __threadfence();
    return old;
}
#endif

// ternion_ld_cg2 loads p[0], p[1] (p 8-byte aligned), which other blocks of
// the running grid wrote (published as ternion_count_acq_rel does): through
// L2 on NVIDIA (ld.global.cg: a multiprocessor's L1 is not coherent),
// volatile elsewhere.
static __device__ __forceinline__ float2 ternion_ld_cg2(const float * p) {
#if defined(TERNION_VENDOR_CUDA)
    return __ldcg((const float2 *)p);
#else
    return make_float2(((const volatile float *)p)[0], ((const volatile float *)p)[1]);
#endif
}

// n / f.d for n < 2^31 (ggml's fastdiv).
static __device__ __forceinline__ ternion_u32 ternion_fastdiv_div(ternion_u32 n, ternion_fastdiv f) {
    return (__umulhi(n, f.mp) + n) >> f.l;
}

// n % f.d for n < 2^31 (ggml's fastmodulo).
static __device__ __forceinline__ ternion_u32 ternion_fastdiv_mod(ternion_u32 n, ternion_fastdiv f) {
    return n - ternion_fastdiv_div(n, f) * f.d;
}

// Half-precision storage types: IEEE binary16 and bfloat16 bits, converted
// with the functions below (no vendor half header needed, so NVRTC compiles
// the sources without an include path).
typedef unsigned short ternion_f16;
typedef unsigned short ternion_bf16;

#if defined(TERNION_VENDOR_CUDA)
// One cvt instruction each way, round to nearest even.
static __device__ __forceinline__ float ternion_f16_to_f32(ternion_f16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static __device__ __forceinline__ ternion_f16 ternion_f32_to_f16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
#elif defined(TERNION_VENDOR_HIP)
static __device__ __forceinline__ float ternion_f16_to_f32(ternion_f16 h) { return (float)__builtin_bit_cast(_Float16, h); }
static __device__ __forceinline__ ternion_f16 ternion_f32_to_f16(float f) {
    return __builtin_bit_cast(unsigned short, (_Float16)f);
}
#else
// Portable conversions (MUSA): exact widening; narrowing rounds to nearest even.
static __device__ __forceinline__ float ternion_f16_to_f32(ternion_f16 h) {
    const unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
    unsigned int exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1fu) return __uint_as_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return __uint_as_float(sign);
        return __uint_as_float(sign) + (sign ? -1.0f : 1.0f) * (float)man * 5.9604644775390625e-8f; // man * 2^-24
    }
    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));
}
static __device__ __forceinline__ ternion_f16 ternion_f32_to_f16(float f) {
    const unsigned int x = __float_as_uint(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (ternion_f16)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) return (ternion_f16)(sign | 0x7c00u); // rounds to infinity
    if (ax < 0x38800000u) { // subnormal or zero: round man*2^-24 to nearest even
        const float m = __uint_as_float(ax) * 16777216.0f;
        return (ternion_f16)(sign | (unsigned int)__float2uint_rn(m));
    }
    const unsigned int r = ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u;
    return (ternion_f16)(sign | (r >> 13));
}
#endif

// bfloat16 is the high half of a float: widening is a shift; narrowing
// rounds to nearest even and keeps NaN a (quiet) NaN.
static __device__ __forceinline__ float ternion_bf16_to_f32(ternion_bf16 h) { return __uint_as_float((unsigned int)h << 16); }
static __device__ __forceinline__ ternion_bf16 ternion_f32_to_bf16(float f) {
    const unsigned int x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (ternion_bf16)((x >> 16) | 0x40u);
    return (ternion_bf16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// ternion_load and ternion_store read and write an element of any storage
// type as float, so one template serves f32, f16 and bf16 tensors.
static __device__ __forceinline__ float ternion_load(const float * p) { return *p; }
static __device__ __forceinline__ float ternion_load(const ternion_f16 * p) { return ternion_f16_to_f32(*p); }
static __device__ __forceinline__ void ternion_store(float * p, float v) { *p = v; }
static __device__ __forceinline__ void ternion_store(ternion_f16 * p, float v) { *p = ternion_f32_to_f16(v); }

// ternion_bf16s is bfloat16 storage as a distinct type for overloading.
struct ternion_bf16s {
    ternion_bf16 bits;
};
static __device__ __forceinline__ float ternion_load(const ternion_bf16s * p) { return ternion_bf16_to_f32(p->bits); }
static __device__ __forceinline__ void ternion_store(ternion_bf16s * p, float v) { p->bits = ternion_f32_to_bf16(v); }

#if TERNION_SM80
// ternion_mma_type<T> for T = ternion_f16 or ternion_bf16s (TERNION_SM80
// only): pack(lo, hi) rounds two floats to T and packs them into a word (lo
// in the low half), mma16816(c, a, b0, b1) is c += a·b for one m16n8k16
// tile of T with f32 accumulators (a: the 4 words of the A fragment).
template <typename T> struct ternion_mma_type;
template <> struct ternion_mma_type<ternion_f16> {
    static __device__ __forceinline__ ternion_u32 pack(float lo, float hi) {
        ternion_u32 r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); // first operand to the high half
        return r;
    }
    static __device__ __forceinline__ void mma16816(float * c, const ternion_u32 * a, ternion_u32 b0, ternion_u32 b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};
template <> struct ternion_mma_type<ternion_bf16s> {
    static __device__ __forceinline__ ternion_u32 pack(float lo, float hi) {
        ternion_u32 r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
    static __device__ __forceinline__ void mma16816(float * c, const ternion_u32 * a, ternion_u32 b0, ternion_u32 b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};
#endif

// ternion_ldcs and ternion_stcs load and store a 16-byte vector (float4,
// uint4, ...) of data touched once, hinting the caches to evict it first:
// CUDA's __ldcs/__stcs, HIP's nontemporal builtins (on the vector's native
// clang vector), plain accesses elsewhere (MUSA).
#if defined(TERNION_VENDOR_CUDA)
template <typename V> static __device__ __forceinline__ V ternion_ldcs(const V * p) { return __ldcs(p); }
template <typename V> static __device__ __forceinline__ void ternion_stcs(V * p, V v) { __stcs(p, v); }
#elif defined(TERNION_VENDOR_HIP)
template <typename V> static __device__ __forceinline__ V ternion_ldcs(const V * p) {
    V v;
    v.data = __builtin_nontemporal_load(&p->data);
    return v;
}
template <typename V> static __device__ __forceinline__ void ternion_stcs(V * p, V v) { __builtin_nontemporal_store(v.data, &p->data); }
#else
template <typename V> static __device__ __forceinline__ V ternion_ldcs(const V * p) { return *p; }
template <typename V> static __device__ __forceinline__ void ternion_stcs(V * p, V v) { *p = v; }
#endif

// ternion_dp4a is c + the dot product of the 4 signed bytes of a and b:
// CUDA's __dp4a (one instruction since Pascal); elsewhere written out (HIP
// has sdot4 builtins only on some gfx targets; the plain form compiles for
// every target and is exact).
static __device__ __forceinline__ int ternion_dp4a(int a, int b, int c) {
#if defined(TERNION_VENDOR_CUDA)
    return __dp4a(a, b, c);
#else
#pragma unroll
    for (int i = 0; i < 4; i++) c += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
    return c;
#endif
}

// ternion_byte_perm is byte i (0..3) of the result = byte (s >> 4i) & 7 of
// the 8 bytes (hi:lo): CUDA's and HIP's __byte_perm, written out elsewhere.
static __device__ __forceinline__ unsigned int ternion_byte_perm(unsigned int lo, unsigned int hi, unsigned int s) {
#if defined(TERNION_VENDOR_CUDA) || defined(TERNION_VENDOR_HIP)
    return __byte_perm(lo, hi, s & 0x7777u);
#else
    const unsigned long long v = ((unsigned long long)hi << 32) | lo;
    unsigned int r = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) r |= (unsigned int)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xffu) << (8 * i);
    return r;
#endif
}
