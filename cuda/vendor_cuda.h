//go:build cuda

// vendor_cuda.h - the shim's name mapping for CUDA: the identity.
//
// internal/gpushim's C sources are written against CUDA names and include
// exactly one mapping header, chosen by the TERNION_<VENDOR> macro that the
// vendor's cgo_<vendor>.go defines. hip/vendor_hip.h and musa/vendor_musa.h
// will #define every CUDA name the shim uses to the vendor's name (cudaMalloc
// -> hipMalloc, cuLaunchKernel -> hipModuleLaunchKernel, cublasGemmEx ->
// rocblas/hipblas or mublas equivalents, ...) and set the TN_* macros below;
// the shim's logic stays the same.
//
// Note: go build does not notice edits to this file when it rebuilds
// internal/gpushim (cgo tracks headers in the package's own directory only);
// run `go clean -cache` or build with -a after changing it.
#pragma once

#if defined(__has_include) && !__has_include(<cuda.h>)
#error "ternion: cuda.h not found: the CUDA SDK headers are missing. Install the CUDA toolkit at /usr/local/cuda or point CGO_CFLAGS/CGO_LDFLAGS at it. See README.md, section 'GPU: CUDA'."
#endif
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <nvrtc.h>

// The driver library, loaded with dlopen at tn_open: binaries built with
// -tags cuda start on machines without the NVIDIA driver.
#define TN_DRIVER_LIB "libcuda.so.1"

// Run-time compiler libraries, tried in order.
#define TN_RTC_LIBS                                                                                            \
    "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "/usr/local/cuda/lib64/libnvrtc.so"

// Version macros the shim tests for API changes.
#define TN_RUNTIME_VERSION CUDART_VERSION
