package gpushim

import (
	"fmt"
	"strings"
)

// StatusInfo names one BLAS library status.
type StatusInfo struct {
	Name    string // e.g. CUBLAS_STATUS_NOT_SUPPORTED
	Message string // what it means
}

// cublasStatuses are cuBLAS's statuses (cublas_api.h, cublasStatus_t), with
// the descriptions of the cuBLAS documentation.
var cublasStatuses = map[int]StatusInfo{
	0:  {"CUBLAS_STATUS_SUCCESS", "the operation completed successfully"},
	1:  {"CUBLAS_STATUS_NOT_INITIALIZED", "the cuBLAS library was not initialized"},
	3:  {"CUBLAS_STATUS_ALLOC_FAILED", "resource allocation failed inside the cuBLAS library"},
	7:  {"CUBLAS_STATUS_INVALID_VALUE", "an unsupported value or parameter was passed to the function"},
	8:  {"CUBLAS_STATUS_ARCH_MISMATCH", "the function requires a feature absent from the device architecture"},
	11: {"CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
	13: {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	14: {"CUBLAS_STATUS_INTERNAL_ERROR", "an internal cuBLAS operation failed"},
	15: {"CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
	16: {"CUBLAS_STATUS_LICENSE_ERROR", "the functionality requested requires some license"},
}

// rocblasStatuses are rocBLAS's statuses (rocblas_status in rocblas-types.h),
// with the descriptions of the rocBLAS API reference ("rocBLAS enumeration").
var rocblasStatuses = map[int]StatusInfo{
	0:  {"rocblas_status_success", "success"},
	1:  {"rocblas_status_invalid_handle", "handle not initialized, invalid or null"},
	2:  {"rocblas_status_not_implemented", "function is not implemented"},
	3:  {"rocblas_status_invalid_pointer", "invalid pointer argument"},
	4:  {"rocblas_status_invalid_size", "invalid size argument"},
	5:  {"rocblas_status_memory_error", "failed internal memory allocation, copy or deallocation"},
	6:  {"rocblas_status_internal_error", "other internal library failure"},
	7:  {"rocblas_status_perf_degraded", "performance degraded due to low device memory"},
	8:  {"rocblas_status_size_query_mismatch", "unmatched start/stop size query"},
	9:  {"rocblas_status_size_increased", "queried device memory size increased"},
	10: {"rocblas_status_size_unchanged", "queried device memory size unchanged"},
	11: {"rocblas_status_invalid_value", "passed argument not valid"},
	12: {"rocblas_status_continue", "nothing preventing the function to proceed"},
	13: {"rocblas_status_check_numerics_fail", "a vector or matrix holds a NaN, infinity or denormal value"},
	14: {"rocblas_status_excluded_from_build", "the function is not in this build (likely one needing Tensile, built without it)"},
	15: {"rocblas_status_arch_mismatch", "the function requires a feature absent from the device architecture"},
}

// mublasStatuses are muBLAS's statuses: mublasStatus_t mirrors
// cublasStatus_t, names and values (checked against the MUSA headers by
// status_musa.go where an SDK is installed; no machine here has one).
var mublasStatuses = func() map[int]StatusInfo {
	m := map[int]StatusInfo{}
	for code, info := range cublasStatuses {
		m[code] = StatusInfo{musaName(info.Name), strings.ReplaceAll(info.Message, "cuBLAS", "muBLAS")}
	}
	return m
}()

// blasStatusTables holds each vendor's BLAS status table.
var blasStatusTables = map[string]map[int]StatusInfo{
	"cuda": cublasStatuses,
	"hip":  rocblasStatuses,
	"musa": mublasStatuses,
}

// blasStatus names BLAS status code of vendor; unknown codes get a generic name.
func blasStatus(vendor string, code int) StatusInfo {
	if info, ok := blasStatusTables[vendor][code]; ok {
		return info
	}
	return StatusInfo{fmt.Sprintf("BLAS_STATUS_%d", code), fmt.Sprintf("unknown %s BLAS status %d", vendor, code)}
}

// graphUpdateResults are the suffixes of cudaGraphExecUpdateResult (CUDA
// 11.x-13.x) by value; HIP's hipGraphExecUpdateResult numbers them alike.
var graphUpdateResults = []string{
	"Success",
	"Error",
	"ErrorTopologyChanged",
	"ErrorNodeTypeChanged",
	"ErrorFunctionChanged",
	"ErrorParametersChanged",
	"ErrorNotSupported",
	"ErrorUnsupportedFunctionChange",
	"ErrorAttributesChanged",
}

// graphUpdateResult names a graph exec update result in vendor's spelling,
// e.g. cudaGraphExecUpdateErrorTopologyChanged.
func graphUpdateResult(vendor string, r int) string {
	if r >= 0 && r < len(graphUpdateResults) {
		return vendor + "GraphExecUpdate" + graphUpdateResults[r]
	}
	return fmt.Sprintf("%sGraphExecUpdateResult(%d)", vendor, r)
}
