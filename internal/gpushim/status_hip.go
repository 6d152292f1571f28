//go:build hip

package gpushim

/*
#include "shim_impl.h"
*/
import "C"

import "github.com/ternion/ternion/vendorapi"

// statusCases are the HIP and rocBLAS statuses the classification tables
// must know, by their C constants (rocBLAS's from hip/rocblas_api.h).
var statusCases = []statusCase{
	{srcRuntime, C.hipErrorOutOfMemory, vendorapi.ErrOutOfMemory},
	{srcRuntime, C.hipErrorMemoryAllocation, vendorapi.ErrOutOfMemory},
	{srcRuntime, C.hipErrorNotSupported, vendorapi.ErrNotSupported},
	{srcRuntime, C.hipErrorInvalidValue, vendorapi.ErrInvalidValue},
	{srcRuntime, C.hipErrorInvalidResourceHandle, vendorapi.ErrInvalidValue},
	{srcRuntime, C.hipErrorInvalidDevice, vendorapi.ErrInvalidValue},
	{srcRuntime, C.hipErrorNotReady, vendorapi.ErrNotReady},
	{srcRuntime, C.hipErrorGraphExecUpdateFailure, vendorapi.ErrGraphUpdate},
	{srcRuntime, C.hipErrorInsufficientDriver, vendorapi.ErrNoDriver},
	{srcDriver, C.hipErrorNoBinaryForGpu, vendorapi.ErrNoKernel},
	{srcDriver, C.hipErrorInvalidImage, vendorapi.ErrNoKernel},
	{srcDriver, C.hipErrorNotFound, vendorapi.ErrNoKernel},
	{srcBLAS, C.rocblas_status_memory_error, vendorapi.ErrOutOfMemory},
	{srcBLAS, C.rocblas_status_not_implemented, vendorapi.ErrNotSupported},
	{srcBLAS, C.rocblas_status_arch_mismatch, vendorapi.ErrNotSupported},
	{srcBLAS, C.rocblas_status_invalid_value, vendorapi.ErrInvalidValue},
	{srcBLAS, C.rocblas_status_invalid_size, vendorapi.ErrInvalidValue},
}
