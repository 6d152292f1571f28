//go:build cuda || hip || musa

// shim_blas.c - BLAS handles and gemm (cuBLAS names).
#include <string.h>

#include "shim_impl.h"

tn_status tn_blas_create(int32_t dev, uint64_t s, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device(dev));
    cublasHandle_t h = NULL;
    TN_BL(cublasCreate, (&h));
    cublasStatus_t b = cublasSetStream(h, TN_STREAM(s));
    const char *call = TN_STR(cublasSetStream);
    if (b == CUBLAS_STATUS_SUCCESS) {
        b = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
        call = TN_STR(cublasSetPointerMode);
    }
    if (b != CUBLAS_STATUS_SUCCESS) {
        (void)cublasDestroy(h); // the handle is useless; its own failure would hide b
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
                             beta, TN_DPTR(g->c), ct, g->ldc, compute, CUBLAS_GEMM_DEFAULT));
        return tn_ok();
    case TN_GEMM_STRIDED:
        TN_BL(cublasGemmStridedBatchedEx,
              (hh, ta, tb, g->m, g->n, g->k, alpha, TN_DPTR(g->a), at, g->lda, (long long)g->stride_a, TN_DPTR(g->b), bt,
               g->ldb, (long long)g->stride_b, beta, TN_DPTR(g->c), ct, g->ldc, (long long)g->stride_c, g->batch,
               compute, CUBLAS_GEMM_DEFAULT));
        return tn_ok();
    case TN_GEMM_BATCHED:
        TN_BL(cublasGemmBatchedEx,
              (hh, ta, tb, g->m, g->n, g->k, alpha, (const void *const *)TN_DPTR(g->a), at, g->lda,
               (const void *const *)TN_DPTR(g->b), bt, g->ldb, beta, (void *const *)TN_DPTR(g->c), ct, g->ldc,
               g->batch, compute, CUBLAS_GEMM_DEFAULT));
        return tn_ok();
    }
    return tn_shim(TN_STR(cublasGemmEx), "TERNION_INVALID_VALUE", "unknown gemm mode", TN_HINT_INVALID_VALUE);
}

tn_status tn_blas_version(int32_t *major, int32_t *minor, int32_t *patch) {
    int v = 0;
    TN_BL(cublasGetProperty, (MAJOR_VERSION, &v));
    *major = v;
    TN_BL(cublasGetProperty, (MINOR_VERSION, &v));
    *minor = v;
    TN_BL(cublasGetProperty, (PATCH_LEVEL, &v));
    *patch = v;
    return tn_ok();
}
