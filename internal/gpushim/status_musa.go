//go:build musa

package gpushim

/*
#include "shim_impl.h"
*/
import "C"

import "github.com/ternion/ternion/vendorapi"

// statusCases are the MUSA and muBLAS statuses the classification tables
// must know, by their C constants: where an SDK is installed, the test checks
// that muBLAS numbers its statuses as mublasStatuses assumes.
var statusCases = []statusCase{
	{srcRuntime, C.musaErrorMemoryAllocation, vendorapi.ErrOutOfMemory},
	{srcRuntime, C.musaErrorNotSupported, vendorapi.ErrNotSupported},
	{srcRuntime, C.musaErrorInvalidValue, vendorapi.ErrInvalidValue},
	{srcRuntime, C.musaErrorNotReady, vendorapi.ErrNotReady},
	{srcRuntime, C.musaErrorGraphExecUpdateFailure, vendorapi.ErrGraphUpdate},
	{srcDriver, C.MUSA_ERROR_OUT_OF_MEMORY, vendorapi.ErrOutOfMemory},
	{srcDriver, C.MUSA_ERROR_INVALID_VALUE, vendorapi.ErrInvalidValue},
	{srcDriver, C.MUSA_ERROR_NOT_READY, vendorapi.ErrNotReady},
	{srcBLAS, C.MUBLAS_STATUS_ALLOC_FAILED, vendorapi.ErrOutOfMemory},
	{srcBLAS, C.MUBLAS_STATUS_NOT_SUPPORTED, vendorapi.ErrNotSupported},
	{srcBLAS, C.MUBLAS_STATUS_INVALID_VALUE, vendorapi.ErrInvalidValue},
}
