package gpushim

import "fmt"

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

// blasStatusTables holds each vendor's BLAS status table; hip and musa add
// theirs (rocBLAS/hipBLAS, muBLAS) with their cgo files.
var blasStatusTables = map[string]map[int]StatusInfo{
	"cuda": cublasStatuses,
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
