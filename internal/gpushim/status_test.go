package gpushim

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

func TestStatusToError(t *testing.T) {
	for _, c := range []struct {
		name     string
		st       status
		kind     error
		codeName string
		contains string
	}{
		{"runtime out of memory", status{src: srcRuntime, code: 2, call: "cudaMalloc", name: "cudaErrorMemoryAllocation", msg: "out of memory"},
			vendorapi.ErrOutOfMemory, "cudaErrorMemoryAllocation", "out of memory"},
		{"driver out of memory", status{src: srcDriver, code: 2, call: "cuMemCreate", name: "CUDA_ERROR_OUT_OF_MEMORY"},
			vendorapi.ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", ""},
		{"not ready", status{src: srcRuntime, code: 600, call: "cudaStreamQuery", name: "cudaErrorNotReady"},
			vendorapi.ErrNotReady, "cudaErrorNotReady", ""},
		{"no kernel image", status{src: srcRuntime, code: 209, call: "cudaLaunchKernel", name: "cudaErrorNoKernelImageForDevice"},
			vendorapi.ErrNoKernel, "cudaErrorNoKernelImageForDevice", ""},
		{"stub driver", status{src: srcDriver, code: 34, call: "cuInit", name: "CUDA_ERROR_STUB_LIBRARY"},
			vendorapi.ErrNoDriver, "CUDA_ERROR_STUB_LIBRARY", ""},
		{"cublas alloc failed", status{src: srcBLAS, code: 3, call: "cublasCreate_v2"},
			vendorapi.ErrOutOfMemory, "CUBLAS_STATUS_ALLOC_FAILED", "allocation failed"},
		{"cublas not supported", status{src: srcBLAS, code: 15, call: "cublasGemmEx"},
			vendorapi.ErrNotSupported, "CUBLAS_STATUS_NOT_SUPPORTED", "not supported"},
		{"cublas invalid value", status{src: srcBLAS, code: 7, call: "cublasGemmEx"},
			vendorapi.ErrInvalidValue, "CUBLAS_STATUS_INVALID_VALUE", ""},
		{"graph update hint wins over the name", status{src: srcRuntime, code: 910, aux: 2, hint: hintGraphUpdate,
			call: "cudaGraphExecUpdate", name: "cudaErrorGraphExecUpdateFailure", msg: "the graph update was not performed"},
			vendorapi.ErrGraphUpdate, "cudaErrorGraphExecUpdateFailure", "update result 2 (cudaGraphExecUpdateErrorTopologyChanged)"},
		{"graph update of another error", status{src: srcRuntime, code: 1, aux: 0, hint: hintGraphUpdate,
			call: "cudaGraphExecUpdate", name: "cudaErrorInvalidValue"},
			vendorapi.ErrGraphUpdate, "cudaErrorInvalidValue", "cudaGraphExecUpdateSuccess"},
		{"no driver hint", status{src: srcShim, hint: hintNoDriver, call: "dlopen", name: "TERNION_NO_DRIVER",
			msg: "libcuda.so.1: cannot open shared object file: No such file or directory"},
			vendorapi.ErrNoDriver, "TERNION_NO_DRIVER", "libcuda.so.1: cannot open"},
		{"invalid hint", status{src: srcShim, hint: hintInvalidValue, call: "cudaSetDevice", name: "TERNION_INVALID_DEVICE"},
			vendorapi.ErrInvalidValue, "TERNION_INVALID_DEVICE", ""},
		{"not supported hint", status{src: srcShim, hint: hintNotSupported, call: "cuMemCreate", name: "TERNION_NOT_LOADED"},
			vendorapi.ErrNotSupported, "TERNION_NOT_LOADED", ""},
		{"unknown name keeps no kind", status{src: srcRuntime, code: 719, call: "cudaStreamSynchronize", name: "cudaErrorLaunchFailure"},
			nil, "cudaErrorLaunchFailure", ""},
		{"nameless status is named by source and code", status{src: srcDriver, code: 999, call: "cuInit"},
			nil, "driver status 999", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := c.st.toError("cuda", 3)
			assert.Equal(t, "cuda", e.Vendor)
			assert.Equal(t, c.st.call, e.Call)
			assert.Equal(t, c.st.code, e.Code)
			assert.Equal(t, c.codeName, e.CodeName)
			assert.Equal(t, 3, e.Device)
			assert.Contains(t, e.Message, c.contains)
			if c.kind == nil {
				assert.Nil(t, e.Kind)
			} else {
				assert.ErrorIs(t, e, c.kind)
			}
		})
	}
}

func TestOwnAndContractErrors(t *testing.T) {
	e := ownError("cuda", "Kernel", 1, vendorapi.ErrNoKernel, "no code for %s", "sm_52")
	assert.Equal(t, "TERNION_NO_KERNEL", e.CodeName)
	assert.Zero(t, e.Code)
	assert.ErrorIs(t, e, vendorapi.ErrNoKernel)
	assert.Equal(t, "cuda: Kernel failed: TERNION_NO_KERNEL (code 0): no code for sm_52 [device 1]", e.Error())

	err := vendorapi.CheckArgs("add_f32", []vendorapi.ParamKind{vendorapi.ParamPtr}, nil)
	ce := contractError("cuda", "Launch", 0, err)
	assert.ErrorIs(t, ce, vendorapi.ErrInvalidValue)
	assert.Equal(t, "TERNION_INVALID_VALUE", ce.CodeName)
	assert.Equal(t, "kernel add_f32 takes 1 arguments (ptr), got 0 (none)", ce.Message)

	plain := contractError("cuda", "Kernel", 0, errors.New("odd"))
	assert.Nil(t, plain.Kind)
	assert.Equal(t, "TERNION_ERROR", plain.CodeName)
}

func TestBLASStatusNames(t *testing.T) {
	want := map[int]string{0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
		7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
		13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
		16: "CUBLAS_STATUS_LICENSE_ERROR"}
	require.Len(t, cublasStatuses, len(want))
	for code, name := range want {
		info := blasStatus("cuda", code)
		assert.Equal(t, name, info.Name, "code %d", code)
		assert.NotEmpty(t, info.Message, "code %d", code)
	}
	unknown := blasStatus("cuda", 42)
	assert.Equal(t, "BLAS_STATUS_42", unknown.Name)
	assert.Contains(t, unknown.Message, "unknown")
	assert.Equal(t, "BLAS_STATUS_3", blasStatus("nobody", 3).Name)
}

func TestGraphUpdateResultNames(t *testing.T) {
	assert.Equal(t, "cudaGraphExecUpdateSuccess", graphUpdateResult("cuda", 0))
	assert.Equal(t, "cudaGraphExecUpdateErrorTopologyChanged", graphUpdateResult("cuda", 2))
	assert.Equal(t, "hipGraphExecUpdateErrorNodeTypeChanged", graphUpdateResult("hip", 3))
	assert.Equal(t, "cudaGraphExecUpdateErrorAttributesChanged", graphUpdateResult("cuda", 8))
	assert.Equal(t, "cudaGraphExecUpdateResult(9)", graphUpdateResult("cuda", 9))
	assert.Equal(t, "cudaGraphExecUpdateResult(-1)", graphUpdateResult("cuda", -1))
}
