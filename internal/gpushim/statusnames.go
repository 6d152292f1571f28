package gpushim

import (
	"maps"
	"strings"

	"github.com/ternion/ternion/vendorapi"
)

// kindByName classifies vendor status names (as the vendor's name functions
// and the BLAS status tables spell them). Names, not numbers, so that one
// table serves every vendor.
var kindByName = map[string]error{
	// CUDA runtime.
	"cudaErrorMemoryAllocation":            vendorapi.ErrOutOfMemory,
	"cudaErrorNotSupported":                vendorapi.ErrNotSupported,
	"cudaErrorPeerAccessUnsupported":       vendorapi.ErrNotSupported,
	"cudaErrorStreamCaptureUnsupported":    vendorapi.ErrNotSupported,
	"cudaErrorInvalidValue":                vendorapi.ErrInvalidValue,
	"cudaErrorInvalidDevice":               vendorapi.ErrInvalidValue,
	"cudaErrorInvalidDevicePointer":        vendorapi.ErrInvalidValue,
	"cudaErrorInvalidResourceHandle":       vendorapi.ErrInvalidValue,
	"cudaErrorInvalidPitchValue":           vendorapi.ErrInvalidValue,
	"cudaErrorInvalidMemcpyDirection":      vendorapi.ErrInvalidValue,
	"cudaErrorInvalidConfiguration":        vendorapi.ErrInvalidValue,
	"cudaErrorHostMemoryAlreadyRegistered": vendorapi.ErrInvalidValue,
	"cudaErrorHostMemoryNotRegistered":     vendorapi.ErrInvalidValue,
	"cudaErrorNotReady":                    vendorapi.ErrNotReady,
	"cudaErrorGraphExecUpdateFailure":      vendorapi.ErrGraphUpdate,
	"cudaErrorInsufficientDriver":          vendorapi.ErrNoDriver,
	"cudaErrorStubLibrary":                 vendorapi.ErrNoDriver,
	"cudaErrorSystemDriverMismatch":        vendorapi.ErrNoDriver,
	"cudaErrorNoKernelImageForDevice":      vendorapi.ErrNoKernel,
	"cudaErrorInvalidKernelImage":          vendorapi.ErrNoKernel,
	"cudaErrorUnsupportedPtxVersion":       vendorapi.ErrNoKernel,
	// CUDA driver.
	"CUDA_ERROR_OUT_OF_MEMORY":           vendorapi.ErrOutOfMemory,
	"CUDA_ERROR_NOT_SUPPORTED":           vendorapi.ErrNotSupported,
	"CUDA_ERROR_INVALID_VALUE":           vendorapi.ErrInvalidValue,
	"CUDA_ERROR_INVALID_HANDLE":          vendorapi.ErrInvalidValue,
	"CUDA_ERROR_INVALID_DEVICE":          vendorapi.ErrInvalidValue,
	"CUDA_ERROR_NOT_READY":               vendorapi.ErrNotReady,
	"CUDA_ERROR_STUB_LIBRARY":            vendorapi.ErrNoDriver,
	"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH":  vendorapi.ErrNoDriver,
	"CUDA_ERROR_NO_BINARY_FOR_GPU":       vendorapi.ErrNoKernel,
	"CUDA_ERROR_INVALID_IMAGE":           vendorapi.ErrNoKernel,
	"CUDA_ERROR_INVALID_PTX":             vendorapi.ErrNoKernel,
	"CUDA_ERROR_UNSUPPORTED_PTX_VERSION": vendorapi.ErrNoKernel,
	"CUDA_ERROR_NOT_FOUND":               vendorapi.ErrNoKernel,
	// cuBLAS.
	"CUBLAS_STATUS_ALLOC_FAILED":  vendorapi.ErrOutOfMemory,
	"CUBLAS_STATUS_NOT_SUPPORTED": vendorapi.ErrNotSupported,
	"CUBLAS_STATUS_ARCH_MISMATCH": vendorapi.ErrNotSupported,
	"CUBLAS_STATUS_INVALID_VALUE": vendorapi.ErrInvalidValue,
	// HIP: runtime and module API share hipError_t (names as hipGetErrorName
	// spells them; hipErrorMemoryAllocation and hipErrorInvalidResourceHandle
	// are aliases reported as hipErrorOutOfMemory and hipErrorInvalidHandle).
	"hipErrorOutOfMemory":                 vendorapi.ErrOutOfMemory,
	"hipErrorNotSupported":                vendorapi.ErrNotSupported,
	"hipErrorPeerAccessUnsupported":       vendorapi.ErrNotSupported,
	"hipErrorStreamCaptureUnsupported":    vendorapi.ErrNotSupported,
	"hipErrorInvalidValue":                vendorapi.ErrInvalidValue,
	"hipErrorInvalidDevice":               vendorapi.ErrInvalidValue,
	"hipErrorInvalidDevicePointer":        vendorapi.ErrInvalidValue,
	"hipErrorInvalidHandle":               vendorapi.ErrInvalidValue,
	"hipErrorInvalidPitchValue":           vendorapi.ErrInvalidValue,
	"hipErrorInvalidMemcpyDirection":      vendorapi.ErrInvalidValue,
	"hipErrorInvalidConfiguration":        vendorapi.ErrInvalidValue,
	"hipErrorHostMemoryAlreadyRegistered": vendorapi.ErrInvalidValue,
	"hipErrorHostMemoryNotRegistered":     vendorapi.ErrInvalidValue,
	"hipErrorNotReady":                    vendorapi.ErrNotReady,
	"hipErrorGraphExecUpdateFailure":      vendorapi.ErrGraphUpdate,
	"hipErrorInsufficientDriver":          vendorapi.ErrNoDriver,
	"hipErrorNoBinaryForGpu":              vendorapi.ErrNoKernel,
	"hipErrorInvalidImage":                vendorapi.ErrNoKernel,
	"hipErrorInvalidKernelFile":           vendorapi.ErrNoKernel,
	"hipErrorSharedObjectInitFailed":      vendorapi.ErrNoKernel,
	"hipErrorNotFound":                    vendorapi.ErrNoKernel,
	// rocBLAS.
	"rocblas_status_memory_error":        vendorapi.ErrOutOfMemory,
	"rocblas_status_not_implemented":     vendorapi.ErrNotSupported,
	"rocblas_status_excluded_from_build": vendorapi.ErrNotSupported,
	"rocblas_status_arch_mismatch":       vendorapi.ErrNotSupported,
	"rocblas_status_invalid_value":       vendorapi.ErrInvalidValue,
	"rocblas_status_invalid_size":        vendorapi.ErrInvalidValue,
	"rocblas_status_invalid_pointer":     vendorapi.ErrInvalidValue,
	"rocblas_status_invalid_handle":      vendorapi.ErrInvalidValue,
}

// musaName is the MUSA spelling of a CUDA status name: MUSA's runtime,
// driver and muBLAS mirror CUDA's names with the prefix changed
// (cudaErrorNotReady -> musaErrorNotReady, CUDA_ERROR_NOT_READY ->
// MUSA_ERROR_NOT_READY, CUBLAS_STATUS_ALLOC_FAILED ->
// MUBLAS_STATUS_ALLOC_FAILED); "" for other names.
func musaName(cudaName string) string {
	for _, p := range [][2]string{{"cudaError", "musaError"}, {"CUDA_ERROR_", "MUSA_ERROR_"}, {"CUBLAS_STATUS_", "MUBLAS_STATUS_"}} {
		if rest, ok := strings.CutPrefix(cudaName, p[0]); ok {
			return p[1] + rest
		}
	}
	return ""
}

func init() {
	musa := map[string]error{}
	for name, kind := range kindByName {
		if m := musaName(name); m != "" {
			musa[m] = kind
		}
	}
	maps.Copy(kindByName, musa)
}
