//go:build cuda

package gpushim

/*
#include "shim_impl.h"
*/
import "C"

import "github.com/ternion/ternion/vendorapi"

// statusCases are the CUDA statuses the classification tables must know, by
// their C constants, so that a test (no GPU needed) checks the names CUDA
// itself reports against kindByName and blasStatuses.
var statusCases = []statusCase{
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
