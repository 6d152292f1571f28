//go:build musa

// vendor_musa.h - the shim's name mapping for Moore Threads' MUSA: every CUDA
// name internal/gpushim's C sources use, defined to its MUSA or muBLAS
// equivalent (MUSA mirrors CUDA: cuda* -> musa*, cu* -> mu*, CU_* -> MU_*,
// cublas* -> mublas*), plus the TN_* settings. The MUSA path has no #if
// block of its own in the shim: it differs from the CUDA path only by this
// table. Written against the documented MUSA API (and the names ggml's
// vendors/musa.h uses); no MUSA SDK is reachable from this project's
// machines, so it has not been compiled yet.
//
// Note: go build does not notice edits to this file when it rebuilds
// internal/gpushim (cgo tracks headers in the package's own directory only):
// run `go clean -cache` or build with -a after changing it.
#pragma once

#if defined(__has_include) && !__has_include(<musa.h>)
#error "ternion: musa.h not found: the MUSA (Moore Threads) SDK headers are missing. Install the MUSA SDK at /usr/local/musa or point CGO_CFLAGS/CGO_LDFLAGS at it. See README.md, section 'GPU: MUSA (Moore Threads)'."
#endif
#include <musa.h>
#include <musa_runtime.h>
#include <mublas.h>

// The driver library, loaded with dlopen at tn_open (as libcuda for CUDA):
// the runtime (libmusart) and muBLAS are linked.
#define TN_DRIVER_LIB "libmusa.so"
#define TN_DRIVER_LIBS TN_DRIVER_LIB, "libmusa.so.1", "/usr/local/musa/lib/libmusa.so"

// No run-time compiler: kernels come from the code objects mcc builds.
#define TN_RTC_NONE                                                                                            \
    "MUSA has no run-time compiler ternion uses: the kernels must be built with mcc "                         \
    "(go generate ./kernels where mcc is installed; kernels.MUSAArchs lists the archs)"

// API shapes.
#define TN_GRAPH_API_12 0 // musaGraphInstantiate/musaGraphExecUpdate have CUDA 11's signatures
#define TN_BLAS_BUILD_VERSION_MAJOR MUBLAS_VERSION_MAJOR
#define TN_BLAS_BUILD_VERSION_MINOR MUBLAS_VERSION_MINOR
#define TN_BLAS_BUILD_VERSION_PATCH MUBLAS_VERSION_PATCH

// Driver API.
#define CUresult MUresult
#define CUDA_SUCCESS MUSA_SUCCESS
#define CUDA_ERROR_NO_DEVICE MUSA_ERROR_NO_DEVICE
#define CUcontext MUcontext
#define CUdevice MUdevice
#define CUdeviceptr MUdeviceptr
#define CUfunction MUfunction
#define CUmodule MUmodule
#define CUstream MUstream
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES MU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
#define cuInit muInit
#define cuDriverGetVersion muDriverGetVersion
#define cuDeviceGet muDeviceGet
#define cuDeviceGetAttribute muDeviceGetAttribute
#define cuCtxGetCurrent muCtxGetCurrent
#define cuCtxSetCurrent muCtxSetCurrent
#define cuDevicePrimaryCtxRetain muDevicePrimaryCtxRetain
#define cuModuleLoadData muModuleLoadData
#define cuModuleUnload muModuleUnload
#define cuModuleGetFunction muModuleGetFunction
#define cuFuncSetAttribute muFuncSetAttribute
#define cuLaunchKernel muLaunchKernel
#define cuGetErrorName muGetErrorName
#define cuGetErrorString muGetErrorString

// Virtual memory management (MUSA names the attribute "address management").
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED MU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED
#define CUmemAccessDesc MUmemAccessDesc
#define CUmemAllocationProp MUmemAllocationProp
#define CUmemGenericAllocationHandle MUmemGenericAllocationHandle
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE MU_MEM_ACCESS_FLAGS_PROT_READWRITE
#define CU_MEM_ALLOCATION_TYPE_PINNED MU_MEM_ALLOCATION_TYPE_PINNED
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM MU_MEM_ALLOC_GRANULARITY_MINIMUM
#define CU_MEM_ALLOC_GRANULARITY_RECOMMENDED MU_MEM_ALLOC_GRANULARITY_RECOMMENDED
#define CU_MEM_LOCATION_TYPE_DEVICE MU_MEM_LOCATION_TYPE_DEVICE
#define cuMemGetAllocationGranularity muMemGetAllocationGranularity
#define cuMemAddressReserve muMemAddressReserve
#define cuMemAddressFree muMemAddressFree
#define cuMemCreate muMemCreate
#define cuMemRelease muMemRelease
#define cuMemMap muMemMap
#define cuMemUnmap muMemUnmap
#define cuMemSetAccess muMemSetAccess

// Runtime API: types and constants.
#define cudaError_t musaError_t
#define cudaSuccess musaSuccess
#define cudaErrorNoDevice musaErrorNoDevice
#define cudaErrorNotSupported musaErrorNotSupported
#define cudaErrorPeerAccessAlreadyEnabled musaErrorPeerAccessAlreadyEnabled
#define cudaErrorPeerAccessNotEnabled musaErrorPeerAccessNotEnabled
#define cudaDeviceProp musaDeviceProp
#define cudaStream_t musaStream_t
#define cudaEvent_t musaEvent_t
#define cudaGraph_t musaGraph_t
#define cudaGraphExec_t musaGraphExec_t
#define cudaGraphNode_t musaGraphNode_t
#define cudaMemcpyKind musaMemcpyKind
#define cudaMemcpyHostToDevice musaMemcpyHostToDevice
#define cudaMemcpyDeviceToHost musaMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice musaMemcpyDeviceToDevice
#define cudaHostAllocPortable musaHostAllocPortable
#define cudaHostRegisterPortable musaHostRegisterPortable
#define cudaMemAttachGlobal musaMemAttachGlobal
#define cudaStreamNonBlocking musaStreamNonBlocking
#define cudaEventDefault musaEventDefault
#define cudaEventDisableTiming musaEventDisableTiming
#define cudaStreamCaptureModeRelaxed musaStreamCaptureModeRelaxed
#define cudaStreamCaptureStatus musaStreamCaptureStatus
#define cudaStreamCaptureStatusNone musaStreamCaptureStatusNone
#define cudaStreamCaptureStatusActive musaStreamCaptureStatusActive
#define cudaGraphExecUpdateResult musaGraphExecUpdateResult
#define cudaGraphExecUpdateSuccess musaGraphExecUpdateSuccess

// Runtime API: functions.
#define cudaGetDevice musaGetDevice
#define cudaSetDevice musaSetDevice
#define cudaGetErrorName musaGetErrorName
#define cudaGetErrorString musaGetErrorString
#define cudaGetLastError musaGetLastError
#define cudaRuntimeGetVersion musaRuntimeGetVersion
#define cudaGetDeviceCount musaGetDeviceCount
#define cudaGetDeviceProperties musaGetDeviceProperties
#define cudaDeviceGetPCIBusId musaDeviceGetPCIBusId
#define cudaMemGetInfo musaMemGetInfo
#define cudaDeviceCanAccessPeer musaDeviceCanAccessPeer
#define cudaDeviceEnablePeerAccess musaDeviceEnablePeerAccess
#define cudaDeviceDisablePeerAccess musaDeviceDisablePeerAccess
#define cudaDeviceSynchronize musaDeviceSynchronize
#define cudaMalloc musaMalloc
#define cudaMallocManaged musaMallocManaged
#define cudaMemAdvise musaMemAdvise
#define cudaFree musaFree
#define cudaHostAlloc musaHostAlloc
#define cudaFreeHost musaFreeHost
#define cudaHostRegister musaHostRegister
#define cudaHostUnregister musaHostUnregister
#define cudaMemsetAsync musaMemsetAsync
#define cudaMemcpyAsync musaMemcpyAsync
#define cudaMemcpyPeerAsync musaMemcpyPeerAsync
#define cudaMemcpy2DAsync musaMemcpy2DAsync
#define cudaStreamCreateWithFlags musaStreamCreateWithFlags
#define cudaStreamDestroy musaStreamDestroy
#define cudaStreamSynchronize musaStreamSynchronize
#define cudaStreamQuery musaStreamQuery
#define cudaStreamWaitEvent musaStreamWaitEvent
#define cudaEventCreateWithFlags musaEventCreateWithFlags
#define cudaEventDestroy musaEventDestroy
#define cudaEventRecord musaEventRecord
#define cudaEventSynchronize musaEventSynchronize
#define cudaEventQuery musaEventQuery
#define cudaEventElapsedTime musaEventElapsedTime
#define cudaStreamBeginCapture musaStreamBeginCapture
#define cudaStreamEndCapture musaStreamEndCapture
#define cudaStreamIsCapturing musaStreamIsCapturing
#define cudaGraphInstantiate musaGraphInstantiate
#define cudaGraphExecUpdate musaGraphExecUpdate
#define cudaGraphLaunch musaGraphLaunch
#define cudaGraphDestroy musaGraphDestroy
#define cudaGraphExecDestroy musaGraphExecDestroy

// cuBLAS -> muBLAS (compute types are data types, as in ggml's mapping).
#define cublasHandle_t mublasHandle_t
#define cublasStatus_t mublasStatus_t
#define CUBLAS_STATUS_SUCCESS MUBLAS_STATUS_SUCCESS
#define cublasOperation_t mublasOperation_t
#define CUBLAS_OP_N MUBLAS_OP_N
#define CUBLAS_OP_T MUBLAS_OP_T
#define cudaDataType musaDataType_t
#define cublasComputeType_t musaDataType_t
#define CUDA_R_32F MUSA_R_32F
#define CUDA_R_16F MUSA_R_16F
#define CUDA_R_16BF MUSA_R_16BF
#define CUBLAS_COMPUTE_32F MUSA_R_32F
#define CUBLAS_COMPUTE_16F MUSA_R_16F
#define CUBLAS_GEMM_DEFAULT MUBLAS_GEMM_DEFAULT
#define CUBLAS_POINTER_MODE_HOST MUBLAS_POINTER_MODE_HOST
#define cublasCreate mublasCreate
#define cublasDestroy mublasDestroy
#define cublasSetStream mublasSetStream
#define cublasSetPointerMode mublasSetPointerMode
#define cublasSetWorkspace mublasSetWorkspace
#define cublasGemmEx mublasGemmEx
#define cublasGemmStridedBatchedEx mublasGemmStridedBatchedEx
#define cublasGemmBatchedEx mublasGemmBatchedEx
