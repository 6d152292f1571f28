//go:build hip

// vendor_hip.h - the shim's name mapping for AMD's HIP (ROCm): every CUDA name
// internal/gpushim's C sources use, defined to its HIP, rocBLAS or hipRTC
// equivalent, plus the TN_* settings that describe how the libraries are
// found. The shim's logic is the one the CUDA path tests; the few real
// differences are the #if defined(TERNION_HIP) blocks in internal/gpushim
// (no driver contexts, gcnArchName, managed memory advice and fallback, no
// opt-in shared memory, the rocBLAS version and rocblas_initialize).
//
// Library loading: everything is opened at run time, nothing is linked.
// libamdhip64 is runtime and module API in one library: tn_open dlopens it
// and resolves every runtime and driver function the shim calls
// (TN_RUNTIME_IN_DRIVER_LIB), so a binary built with -tags hip starts where
// ROCm is absent and reports "hip: driver not found (libamdhip64.so: ...)".
// rocBLAS is dlopened on the first BLAS call (TN_BLAS_LIBS); hipRTC on the
// first kernel that needs compiling (TN_RTC_LIBS: ROCm 5.2 and older carry it
// inside libamdhip64).
//
// Note: go build does not notice edits to this file when it rebuilds
// internal/gpushim (cgo tracks headers in the package's own directory only):
// run `go clean -cache` or build with -a after changing it.
#pragma once

#if !defined(__HIP_PLATFORM_AMD__)
#error "hip: define __HIP_PLATFORM_AMD__ (internal/gpushim/cgo_hip.go does; ternion's HIP vendor is AMD only)"
#endif

#if defined(__has_include) && !__has_include(<hip/hip_runtime_api.h>)
#error "ternion: hip/hip_runtime_api.h not found: the HIP (AMD) SDK headers are missing. Install ROCm at /opt/rocm (or Debian hipcc + libamdhip64-dev) or point CGO_CFLAGS at it. See README.md, section 'GPU: HIP (AMD)'."
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#include "rocblas_api.h"

// Libraries, tried in order; the first name is the one messages lead with.
#define TN_DRIVER_LIB "libamdhip64.so"
#define TN_DRIVER_LIBS                                                                                         \
    TN_DRIVER_LIB, "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"
#define TN_RUNTIME_IN_DRIVER_LIB 1
#define TN_BLAS_LIBS                                                                                           \
    "librocblas.so", "librocblas.so.5", "librocblas.so.4", "librocblas.so.3", "librocblas.so.0",              \
        "/opt/rocm/lib/librocblas.so"
#define TN_RTC_LIBS                                                                                            \
    "libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5", "/opt/rocm/lib/libhiprtc.so",       \
        "libamdhip64.so", "libamdhip64.so.5"

// Versions and API shapes.
#define TN_RUNTIME_VERSION HIP_VERSION
#define TN_GRAPH_API_12 0 // hipGraphInstantiate/hipGraphExecUpdate keep CUDA 11's signatures
// ROCm 5.2 answers hipInit with hipErrorInvalidDevice when there is no GPU.
#define TN_INIT_NO_DEVICE(r) ((r) == hipErrorNoDevice || (r) == hipErrorInvalidDevice)
#if HIP_VERSION < 50400000
#define TN_NO_VMM_ATTRIBUTE 1 // no hipDeviceAttributeVirtualMemoryManagementSupported: report no VMM
#else
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED hipDeviceAttributeVirtualMemoryManagementSupported
#endif

// Driver API -> HIP module API (same status type as the runtime).
#define CUresult hipError_t
#define CUDA_SUCCESS hipSuccess
#define CUDA_ERROR_NO_DEVICE hipErrorNoDevice
#define CUdevice hipDevice_t
#define CUdeviceptr hipDeviceptr_t
#define CUfunction hipFunction_t
#define CUmodule hipModule_t
#define CUstream hipStream_t
#define cuInit hipInit
#define cuDriverGetVersion hipDriverGetVersion
#define cuDeviceGet hipDeviceGet
#define cuDeviceGetAttribute hipDeviceGetAttribute
#define cuModuleLoadData hipModuleLoadData
#define cuModuleUnload hipModuleUnload
#define cuModuleGetFunction hipModuleGetFunction
#define cuLaunchKernel hipModuleLaunchKernel

// Virtual memory management.
#define CUmemAccessDesc hipMemAccessDesc
#define CUmemAllocationProp hipMemAllocationProp
#define CUmemGenericAllocationHandle hipMemGenericAllocationHandle_t
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE hipMemAccessFlagsProtReadWrite
#define CU_MEM_ALLOCATION_TYPE_PINNED hipMemAllocationTypePinned
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM hipMemAllocationGranularityMinimum
#define CU_MEM_ALLOC_GRANULARITY_RECOMMENDED hipMemAllocationGranularityRecommended
#define CU_MEM_LOCATION_TYPE_DEVICE hipMemLocationTypeDevice
#define cuMemGetAllocationGranularity hipMemGetAllocationGranularity
#define cuMemAddressReserve hipMemAddressReserve
#define cuMemAddressFree hipMemAddressFree
#define cuMemCreate hipMemCreate
#define cuMemRelease hipMemRelease
#define cuMemMap hipMemMap
#define cuMemUnmap hipMemUnmap
#define cuMemSetAccess hipMemSetAccess

// Runtime API: types and constants.
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorNotSupported hipErrorNotSupported
#define cudaErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define cudaErrorPeerAccessNotEnabled hipErrorPeerAccessNotEnabled
#define cudaDeviceProp hipDeviceProp_t
#define cudaStream_t hipStream_t
#define cudaEvent_t hipEvent_t
#define cudaGraph_t hipGraph_t
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphNode_t hipGraphNode_t
#define cudaMemcpyKind hipMemcpyKind
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaHostAllocPortable hipHostMallocPortable
#define cudaHostRegisterPortable hipHostRegisterPortable
#define cudaMemAttachGlobal hipMemAttachGlobal
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaEventDefault hipEventDefault
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaStreamCaptureModeRelaxed hipStreamCaptureModeRelaxed
#define cudaStreamCaptureStatus hipStreamCaptureStatus
#define cudaStreamCaptureStatusNone hipStreamCaptureStatusNone
#define cudaStreamCaptureStatusActive hipStreamCaptureStatusActive
#define cudaGraphExecUpdateResult hipGraphExecUpdateResult
#define cudaGraphExecUpdateSuccess hipGraphExecUpdateSuccess

// Runtime API: functions (every one in TN_RUNTIME_FUNCS).
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceGetPCIBusId hipDeviceGetPCIBusId
#define cudaMemGetInfo hipMemGetInfo
#define cudaDeviceCanAccessPeer hipDeviceCanAccessPeer
#define cudaDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define cudaDeviceDisablePeerAccess hipDeviceDisablePeerAccess
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMalloc hipMalloc
#define cudaMallocManaged hipMallocManaged
#define cudaMemAdvise hipMemAdvise
#define cudaFree hipFree
#define cudaHostAlloc hipHostMalloc
#define cudaFreeHost hipHostFree
#define cudaHostRegister hipHostRegister
#define cudaHostUnregister hipHostUnregister
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyPeerAsync hipMemcpyPeerAsync
#define cudaMemcpy2DAsync hipMemcpy2DAsync
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamQuery hipStreamQuery
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDestroy hipEventDestroy
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventQuery hipEventQuery
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamIsCapturing hipStreamIsCapturing
#define cudaGraphInstantiate hipGraphInstantiate
#define cudaGraphExecUpdate hipGraphExecUpdate
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy

// cuBLAS -> rocBLAS (rocblas_api.h).
#define cublasHandle_t rocblas_handle
#define cublasStatus_t rocblas_status
#define CUBLAS_STATUS_SUCCESS rocblas_status_success
#define cublasOperation_t rocblas_operation
#define CUBLAS_OP_N rocblas_operation_none
#define CUBLAS_OP_T rocblas_operation_transpose
#define cudaDataType rocblas_datatype
#define cublasComputeType_t rocblas_datatype
#define CUDA_R_32F rocblas_datatype_f32_r
#define CUDA_R_16F rocblas_datatype_f16_r
#define CUDA_R_16BF rocblas_datatype_bf16_r
#define CUBLAS_COMPUTE_32F rocblas_datatype_f32_r
#define CUBLAS_COMPUTE_16F rocblas_datatype_f16_r
#define CUBLAS_GEMM_DEFAULT rocblas_gemm_algo_standard
#define CUBLAS_POINTER_MODE_HOST rocblas_pointer_mode_host
#define cublasCreate rocblas_create_handle
#define cublasDestroy rocblas_destroy_handle
#define cublasSetStream rocblas_set_stream
#define cublasSetPointerMode rocblas_set_pointer_mode
#define cublasSetWorkspace rocblas_set_workspace
#define cublasGemmEx rocblas_gemm_ex
#define cublasGemmStridedBatchedEx rocblas_gemm_strided_batched_ex
#define cublasGemmBatchedEx rocblas_gemm_batched_ex
#define TN_BLAS_EXTRA_FUNCS(X) X(rocblas_get_version_string_size) X(rocblas_get_version_string) X(rocblas_initialize)
// rocBLAS writes D (here C again, in place) and takes a solution index and flags.
#define TN_GEMM_D(c, type, ld) , c, type, ld
#define TN_GEMM_D_STRIDED(c, type, ld, stride) , c, type, ld, stride
#define TN_GEMM_TAIL , 0, 0

// NVRTC -> hipRTC: one output, the code object for --offload-arch.
#define TN_RTC_CODE_ONLY 1
#define nvrtcResult hiprtcResult
#define NVRTC_SUCCESS HIPRTC_SUCCESS
#define nvrtcProgram hiprtcProgram
#define nvrtcVersion hiprtcVersion
#define nvrtcGetErrorString hiprtcGetErrorString
#define nvrtcCreateProgram hiprtcCreateProgram
#define nvrtcCompileProgram hiprtcCompileProgram
#define nvrtcDestroyProgram hiprtcDestroyProgram
#define nvrtcGetProgramLogSize hiprtcGetProgramLogSize
#define nvrtcGetProgramLog hiprtcGetProgramLog
#define nvrtcGetPTXSize hiprtcGetCodeSize
#define nvrtcGetPTX hiprtcGetCode
