//go:build hip

// rocblas_api.h - the part of rocBLAS's C API the shim uses, declared here
// because rocBLAS is loaded at run time and Debian ships no rocBLAS headers.
// Types, values and prototypes follow the rocBLAS API reference
// (https://rocm.docs.amd.com/projects/rocBLAS/en/latest/reference/ :
// "rocBLAS datatypes", "rocBLAS enumeration", "rocBLAS extension" for
// rocblas_gemm_ex / _strided_batched_ex / _batched_ex, "auxiliary functions"
// for handles, streams, pointer mode, rocblas_get_version_string(_size) and
// rocblas_initialize). The enum values are ABI: rocBLAS 3.x-5.x keep them.
//
// Note: go build does not notice edits to this file (cgo tracks headers in the
// package's own directory only): run `go clean -cache` after changing it.
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct _rocblas_handle *rocblas_handle; // opaque library context
typedef int32_t rocblas_int;                   // the LP64 (default) build's integer
typedef int64_t rocblas_stride;                // stride between batch entries, in elements

typedef enum rocblas_status_ {
    rocblas_status_success = 0,
    rocblas_status_invalid_handle = 1,
    rocblas_status_not_implemented = 2,
    rocblas_status_invalid_pointer = 3,
    rocblas_status_invalid_size = 4,
    rocblas_status_memory_error = 5,
    rocblas_status_internal_error = 6,
    rocblas_status_perf_degraded = 7,
    rocblas_status_size_query_mismatch = 8,
    rocblas_status_size_increased = 9,
    rocblas_status_size_unchanged = 10,
    rocblas_status_invalid_value = 11,
    rocblas_status_continue = 12,
    rocblas_status_check_numerics_fail = 13,
    rocblas_status_excluded_from_build = 14,
    rocblas_status_arch_mismatch = 15,
} rocblas_status;

typedef enum rocblas_operation_ {
    rocblas_operation_none = 111,
    rocblas_operation_transpose = 112,
    rocblas_operation_conjugate_transpose = 113,
} rocblas_operation;

typedef enum rocblas_datatype_ {
    rocblas_datatype_f16_r = 150,
    rocblas_datatype_f32_r = 151,
    rocblas_datatype_f64_r = 152,
    rocblas_datatype_bf16_r = 168,
} rocblas_datatype;

typedef enum rocblas_gemm_algo_ {
    rocblas_gemm_algo_standard = 0,
} rocblas_gemm_algo;

typedef enum rocblas_pointer_mode_ {
    rocblas_pointer_mode_host = 0,
    rocblas_pointer_mode_device = 1,
} rocblas_pointer_mode;

rocblas_status rocblas_create_handle(rocblas_handle *handle);
rocblas_status rocblas_destroy_handle(rocblas_handle handle);
rocblas_status rocblas_set_stream(rocblas_handle handle, hipStream_t stream);
rocblas_status rocblas_set_pointer_mode(rocblas_handle handle, rocblas_pointer_mode pointer_mode);
rocblas_status rocblas_set_workspace(rocblas_handle handle, void *addr, size_t size);
rocblas_status rocblas_get_version_string_size(size_t *len);
rocblas_status rocblas_get_version_string(char *buf, size_t len);
void rocblas_initialize(void);

// D = alpha*op(A)*op(B) + beta*C; alpha and beta are in compute_type.
rocblas_status rocblas_gemm_ex(rocblas_handle handle, rocblas_operation trans_a, rocblas_operation trans_b,
                               rocblas_int m, rocblas_int n, rocblas_int k, const void *alpha, const void *a,
                               rocblas_datatype a_type, rocblas_int lda, const void *b, rocblas_datatype b_type,
                               rocblas_int ldb, const void *beta, const void *c, rocblas_datatype c_type,
                               rocblas_int ldc, void *d, rocblas_datatype d_type, rocblas_int ldd,
                               rocblas_datatype compute_type, rocblas_gemm_algo algo, int32_t solution_index,
                               uint32_t flags);
rocblas_status rocblas_gemm_strided_batched_ex(
    rocblas_handle handle, rocblas_operation trans_a, rocblas_operation trans_b, rocblas_int m, rocblas_int n,
    rocblas_int k, const void *alpha, const void *a, rocblas_datatype a_type, rocblas_int lda, rocblas_stride stride_a,
    const void *b, rocblas_datatype b_type, rocblas_int ldb, rocblas_stride stride_b, const void *beta, const void *c,
    rocblas_datatype c_type, rocblas_int ldc, rocblas_stride stride_c, void *d, rocblas_datatype d_type,
    rocblas_int ldd, rocblas_stride stride_d, rocblas_int batch_count, rocblas_datatype compute_type,
    rocblas_gemm_algo algo, int32_t solution_index, uint32_t flags);
// a, b, c and d are device arrays of batch_count device pointers.
rocblas_status rocblas_gemm_batched_ex(rocblas_handle handle, rocblas_operation trans_a, rocblas_operation trans_b,
                                       rocblas_int m, rocblas_int n, rocblas_int k, const void *alpha, const void *a,
                                       rocblas_datatype a_type, rocblas_int lda, const void *b,
                                       rocblas_datatype b_type, rocblas_int ldb, const void *beta, const void *c,
                                       rocblas_datatype c_type, rocblas_int ldc, void *d, rocblas_datatype d_type,
                                       rocblas_int ldd, rocblas_int batch_count, rocblas_datatype compute_type,
                                       rocblas_gemm_algo algo, int32_t solution_index, uint32_t flags);
