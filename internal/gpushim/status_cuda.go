//go:build cuda

package gpushim

/*
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "shim.h"

tn_status tn_rt(const char *call, cudaError_t e);
tn_status tn_drv(const char *call, CUresult r);
tn_status tn_blas_status(const char *call, cublasStatus_t s);

static const char *tn_test_call(void) { return "statusTest"; }
*/
import "C"

import "github.com/ternion/ternion/vendorapi"

// statusCase is a CUDA status and the sentinel the contract maps it to.
type statusCase struct {
	src  int
	code int
	kind error
}

// cudaStatusCases are the statuses the issue names, by their C constants, so
// that a test (no GPU needed) checks the names CUDA itself reports against
// kindByName and blasStatuses.
var cudaStatusCases = []statusCase{
	{srcRuntime, C.cudaErrorMemoryAllocation, vendorapi.ErrOutOfMemory},
	{srcRuntime, C.cudaErrorNotSupported, vendorapi.ErrNotSupported},
	{srcRuntime, C.cudaErrorInvalidValue, vendorapi.ErrInvalidValue},
	{srcRuntime, C.cudaErrorInvalidResourceHandle, vendorapi.ErrInvalidValue},
	{srcRuntime, C.cudaErrorInvalidDevice, vendorapi.ErrInvalidValue},
	{srcRuntime, C.cudaErrorNotReady, vendorapi.ErrNotReady},
	{srcRuntime, C.cudaErrorGraphExecUpdateFailure, vendorapi.ErrGraphUpdate},
	{srcRuntime, C.cudaErrorInsufficientDriver, vendorapi.ErrNoDriver},
	{srcRuntime, C.cudaErrorNoKernelImageForDevice, vendorapi.ErrNoKernel},
	{srcDriver, C.CUDA_ERROR_OUT_OF_MEMORY, vendorapi.ErrOutOfMemory},
	{srcDriver, C.CUDA_ERROR_NOT_SUPPORTED, vendorapi.ErrNotSupported},
	{srcDriver, C.CUDA_ERROR_INVALID_VALUE, vendorapi.ErrInvalidValue},
	{srcDriver, C.CUDA_ERROR_INVALID_HANDLE, vendorapi.ErrInvalidValue},
	{srcDriver, C.CUDA_ERROR_NOT_READY, vendorapi.ErrNotReady},
	{srcDriver, C.CUDA_ERROR_NO_BINARY_FOR_GPU, vendorapi.ErrNoKernel},
	{srcBLAS, C.CUBLAS_STATUS_ALLOC_FAILED, vendorapi.ErrOutOfMemory},
	{srcBLAS, C.CUBLAS_STATUS_NOT_SUPPORTED, vendorapi.ErrNotSupported},
	{srcBLAS, C.CUBLAS_STATUS_INVALID_VALUE, vendorapi.ErrInvalidValue},
}

// cStatus builds a status the way the C side reports a failure of src with
// code (names from cudaGetErrorName, cuGetErrorName, or none for cuBLAS).
func cStatus(src, code int) status {
	var st C.tn_status
	switch src {
	case srcRuntime:
		st = C.tn_rt(C.tn_test_call(), C.cudaError_t(code))
	case srcDriver:
		st = C.tn_drv(C.tn_test_call(), C.CUresult(code))
	default:
		st = C.tn_blas_status(C.tn_test_call(), C.cublasStatus_t(code))
	}
	return status{src: int(st.src), code: int(st.code), aux: int(st.aux), hint: int(st.hint),
		call: C.GoString(st.call), name: C.GoString(st.name), msg: C.GoString(st.msg)}
}
