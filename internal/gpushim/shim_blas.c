//go:build cuda || hip || musa

// shim_blas.c - BLAS library loading, handles and gemm (cuBLAS names).
#include <stdio.h>
#include <string.h>

#include "shim_impl.h"

// Argument shapes a mapping header may change: rocBLAS's gemm_ex takes an
// output matrix D after C (the shim passes C again: in place, as cuBLAS
// computes) and a solution index and flags after the algorithm.
#ifndef TN_GEMM_D
#define TN_GEMM_D(c, type, ld)
#define TN_GEMM_D_STRIDED(c, type, ld, stride)
#define TN_GEMM_TAIL
#endif

#if defined(TN_BLAS_LIBS)
#define TN_BLAS_DEFINE_PTR(f) __typeof__(&f) TN_PTR(f);
TN_BLAS_FUNCS(TN_BLAS_DEFINE_PTR)

static void *g_blas;          // dlopen handle of the BLAS library
static const char *g_blas_lib; // its name
static char g_blas_msg[1024];  // why it could not be loaded
static int g_blas_initialized; // the initialization workaround ran

// load_blas loads the BLAS library once. The caller serializes calls (the Go
// side opens BLAS under a lock).
static tn_status load_blas(void) {
    if (g_blas != NULL) return tn_ok();
    static const char *const libs[] = {TN_BLAS_LIBS};
    static const tn_sym req[] = {TN_BLAS_FUNCS(TN_SYM)};
    int all_opt = 0;
    g_blas = tn_load_lib(libs, TN_LEN(libs), req, TN_LEN(req), NULL, 0, &all_opt, &g_blas_lib, g_blas_msg,
                         sizeof g_blas_msg);
    if (g_blas == NULL) return tn_shim("dlopen", "TERNION_NO_BLAS", g_blas_msg, TN_HINT_NO_DRIVER);
    return tn_ok();
}
#endif

// blas_version reads the library's version.
static tn_status blas_version(int32_t *major, int32_t *minor, int32_t *patch) {
#if defined(TERNION_HIP)
    // rocBLAS: a string, "4.1.0.dfd3c6f0" (major.minor.patch.commit).
    size_t n = 0;
    TN_BL(rocblas_get_version_string_size, (&n));
    char v[256] = {0};
    if (n > sizeof v) n = sizeof v;
    TN_BL(rocblas_get_version_string, (v, n));
    int ma = 0, mi = 0, pa = 0;
    if (sscanf(v, "%d.%d.%d", &ma, &mi, &pa) < 1) {
        return tn_shim("rocblas_get_version_string", "TERNION_BAD_VERSION", "the version string does not parse",
                       TN_HINT_NONE);
    }
    *major = ma;
    *minor = mi;
    *patch = pa;
#elif defined(TN_BLAS_BUILD_VERSION_MAJOR)
    // The headers' version (muBLAS has no run-time query the shim relies on).
    *major = TN_BLAS_BUILD_VERSION_MAJOR;
    *minor = TN_BLAS_BUILD_VERSION_MINOR;
    *patch = TN_BLAS_BUILD_VERSION_PATCH;
#else
    int v = 0;
    TN_BL(cublasGetProperty, (MAJOR_VERSION, &v));
    *major = v;
    TN_BL(cublasGetProperty, (MINOR_VERSION, &v));
    *minor = v;
    TN_BL(cublasGetProperty, (PATCH_LEVEL, &v));
    *patch = v;
#endif
    return tn_ok();
}

tn_status tn_blas_open(int32_t *major, int32_t *minor, int32_t *patch, int32_t *initialized, const char **lib) {
    *major = *minor = *patch = 0;
    *initialized = 0;
    *lib = NULL;
#if defined(TN_BLAS_LIBS)
    TN_TRY(load_blas());
    *lib = g_blas_lib;
#endif
    TN_TRY(blas_version(major, minor, patch));
#if defined(TERNION_HIP)
    // The seed's workaround for a rocBLAS bug with several GPUs
    // (ROCmSoftwarePlatform/rocBLAS#1346): before rocBLAS 4, load every
    // kernel up front.
    if (*major < 4 && !g_blas_initialized) {
        TN_PTR(rocblas_initialize)();
        g_blas_initialized = 1;
    }
    *initialized = g_blas_initialized;
#endif
    return tn_ok();
}

tn_status tn_blas_create(int32_t dev, uint64_t s, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device(dev));
    cublasHandle_t h = NULL;
    TN_BL(cublasCreate, (&h));
    cublasStatus_t b = TN_BL_FN(cublasSetStream)(h, TN_STREAM(s));
    const char *call = TN_STR(cublasSetStream);
    if (b == CUBLAS_STATUS_SUCCESS) {
        b = TN_BL_FN(cublasSetPointerMode)(h, CUBLAS_POINTER_MODE_HOST);
        call = TN_STR(cublasSetPointerMode);
    }
    if (b != CUBLAS_STATUS_SUCCESS) {
        (void)TN_BL_FN(cublasDestroy)(h); // the handle is useless; its own failure would hide b
        return tn_blas_status(call, b);
    }
    *out = TN_U64(h);
    return tn_ok();
}

tn_status tn_blas_destroy(int32_t dev, uint64_t h) {
    TN_TRY(tn_use_device(dev));
    TN_BL(cublasDestroy, ((cublasHandle_t)(uintptr_t)h));
    return tn_ok();
}

tn_status tn_blas_set_stream(int32_t dev, uint64_t h, uint64_t s) {
    TN_TRY(tn_use_device(dev));
    TN_BL(cublasSetStream, ((cublasHandle_t)(uintptr_t)h, TN_STREAM(s)));
    return tn_ok();
}

tn_status tn_blas_set_workspace(int32_t dev, uint64_t h, uint64_t p, uint64_t size) {
    TN_TRY(tn_use_device(dev));
    TN_BL(cublasSetWorkspace, ((cublasHandle_t)(uintptr_t)h, (void *)(uintptr_t)p, (size_t)size));
    return tn_ok();
}

// data_type maps TN_F32/F16/BF16 to the library's type; 0 in *ok when unknown.
static cudaDataType data_type(int32_t t, int *ok) {
    *ok = 1;
    switch (t) {
    case TN_F32: return CUDA_R_32F;
    case TN_F16: return CUDA_R_16F;
    case TN_BF16: return CUDA_R_16BF;
    }
    *ok = 0;
    return CUDA_R_32F;
}

tn_status tn_gemm_run(int32_t dev, uint64_t h, const tn_gemm *g, int32_t mode) {
    int oka, okb, okc;
    cudaDataType at = data_type(g->atype, &oka), bt = data_type(g->btype, &okb), ct = data_type(g->ctype, &okc);
    if (!oka || !okb || !okc || (g->compute != TN_COMPUTE_32F && g->compute != TN_COMPUTE_16F)) {
        return tn_shim(TN_STR(cublasGemmEx), "TERNION_INVALID_VALUE", "unknown data or compute type",
                       TN_HINT_INVALID_VALUE);
    }
    // alpha and beta are in the compute type: float, or half bits for 16F.
    float af, bf;
    uint16_t ah = (uint16_t)g->alpha_bits, bh = (uint16_t)g->beta_bits;
    memcpy(&af, &g->alpha_bits, sizeof af);
    memcpy(&bf, &g->beta_bits, sizeof bf);
    int half = g->compute == TN_COMPUTE_16F;
    const void *alpha = half ? (const void *)&ah : (const void *)&af;
    const void *beta = half ? (const void *)&bh : (const void *)&bf;
    cublasComputeType_t compute = half ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F;
    cublasOperation_t ta = g->transa ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasHandle_t hh = (cublasHandle_t)(uintptr_t)h;
    TN_TRY(tn_use_device(dev));
    switch (mode) {
    case TN_GEMM_ONE:
        TN_BL(cublasGemmEx, (hh, ta, tb, g->m, g->n, g->k, alpha, TN_DPTR(g->a), at, g->lda, TN_DPTR(g->b), bt, g->ldb,
                             beta, TN_DPTR(g->c), ct, g->ldc TN_GEMM_D(TN_DPTR(g->c), ct, g->ldc), compute,
                             CUBLAS_GEMM_DEFAULT TN_GEMM_TAIL));
        return tn_ok();
    case TN_GEMM_STRIDED:
        TN_BL(cublasGemmStridedBatchedEx,
              (hh, ta, tb, g->m, g->n, g->k, alpha, TN_DPTR(g->a), at, g->lda, (long long)g->stride_a, TN_DPTR(g->b), bt,
               g->ldb, (long long)g->stride_b, beta, TN_DPTR(g->c), ct, g->ldc, (long long)g->stride_c
               TN_GEMM_D_STRIDED(TN_DPTR(g->c), ct, g->ldc, (long long)g->stride_c), g->batch, compute,
               CUBLAS_GEMM_DEFAULT TN_GEMM_TAIL));
        return tn_ok();
    case TN_GEMM_BATCHED:
        TN_BL(cublasGemmBatchedEx,
              (hh, ta, tb, g->m, g->n, g->k, alpha, (const void *const *)TN_DPTR(g->a), at, g->lda,
               (const void *const *)TN_DPTR(g->b), bt, g->ldb, beta, (void *const *)TN_DPTR(g->c), ct, g->ldc
               TN_GEMM_D(TN_DPTR(g->c), ct, g->ldc), g->batch, compute, CUBLAS_GEMM_DEFAULT TN_GEMM_TAIL));
        return tn_ok();
    }
    return tn_shim(TN_STR(cublasGemmEx), "TERNION_INVALID_VALUE", "unknown gemm mode", TN_HINT_INVALID_VALUE);
}
