//go:build cuda || hip || musa

// shim_impl.h - what the shim's .c files share: the vendor mapping header, the
// table of driver-API functions resolved with dlsym, and the status helpers.
// Everything here is written with CUDA names; the mapping header renames them.
#pragma once

#include "shim.h"

#if (defined(TERNION_CUDA) + defined(TERNION_HIP) + defined(TERNION_MUSA)) != 1
#error "gpushim: no single TERNION_<VENDOR>: either several GPU tags were given (use one of cuda, hip, musa) or this vendor's internal/gpushim/cgo_<vendor>.go and <vendor>/vendor_<vendor>.h do not exist yet (only cuda is written)"
#endif

#if defined(TERNION_CUDA)
#include "../../cuda/vendor_cuda.h"
#elif defined(TERNION_HIP)
#include "../../hip/vendor_hip.h"
#elif defined(TERNION_MUSA)
#include "../../musa/vendor_musa.h"
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gpushim: kernel arguments are packed little-endian"
#endif

#define TN_STR_(x) #x
#define TN_STR(x) TN_STR_(x)
#define TN_PASTE_(a, b) a##b
#define TN_PASTE(a, b) TN_PASTE_(a, b)
// TN_PTR(f) is the pointer through which the shim calls driver function f. f
// is expanded first, so versioned names (cuFoo -> cuFoo_v2) and vendor
// renames (cuFoo -> hipFoo) name the pointer, the prototype and the dlsym
// symbol alike.
#define TN_PTR(f) TN_PASTE(tn_p_, f)

// Driver-API functions the shim needs on every device.
#define TN_DRIVER_FUNCS(X)                                                                                     \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetAttribute) X(cuCtxGetCurrent)                  \
    X(cuCtxSetCurrent) X(cuDevicePrimaryCtxRetain) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) \
    X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuGetErrorName) X(cuGetErrorString)

// Driver-API functions of virtual memory management: optional (an old driver
// lacks them; the devices then report no VMM).
#define TN_DRIVER_VMM_FUNCS(X)                                                                                 \
    X(cuMemGetAllocationGranularity) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemCreate) X(cuMemRelease) \
    X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess)

#define TN_DECLARE_PTR(f) extern __typeof__(&f) TN_PTR(f);
TN_DRIVER_FUNCS(TN_DECLARE_PTR)
TN_DRIVER_VMM_FUNCS(TN_DECLARE_PTR)

// tn_have_vmm is 1 when every TN_DRIVER_VMM_FUNCS function was found.
extern int tn_have_vmm;
// tn_device_count is the runtime's device count, set by tn_open.
extern int tn_device_count;

// tn_dlsym stores symbol name of lib into the function pointer at fptr (of
// size bytes); 0 when the symbol is absent (the pointer is then untouched).
int tn_dlsym(void *lib, const char *name, void *fptr, size_t size);

// Status constructors. tn_rt also clears the runtime's last error, so a
// failure is reported once, by the call that failed.
tn_status tn_ok(void);
tn_status tn_rt(const char *call, cudaError_t e);
tn_status tn_drv(const char *call, CUresult r);
tn_status tn_blas_status(const char *call, cublasStatus_t s);
tn_status tn_shim(const char *call, const char *name, const char *msg, int32_t hint);
tn_status tn_not_loaded(const char *call); // a driver function the loaded driver lacks

// TN_CLEAR_PTR forgets a function pointer (used by the X-macro lists when a
// library is closed again).
#define TN_CLEAR_PTR(f) TN_PTR(f) = NULL;

// tn_use_device makes dev current for the runtime API (cudaSetDevice only when
// it is not). tn_use_device_ctx also makes dev's primary context current for
// the driver API, which a runtime call does not guarantee on a fresh thread.
tn_status tn_use_device(int32_t dev);
tn_status tn_use_device_ctx(int32_t dev);

// Checked calls: return from the enclosing function with a tn_status when the
// vendor call fails. fn is the function, args its parenthesised arguments.
#define TN_RT(fn, args)                                                                                        \
    do {                                                                                                       \
        cudaError_t e_ = fn args;                                                                              \
        if (e_ != cudaSuccess) return tn_rt(TN_STR(fn), e_);                                                   \
    } while (0)
#define TN_DR(fn, args)                                                                                        \
    do {                                                                                                       \
        if (!TN_PTR(fn)) return tn_not_loaded(TN_STR(fn));                                                     \
        CUresult r_ = TN_PTR(fn) args;                                                                         \
        if (r_ != CUDA_SUCCESS) return tn_drv(TN_STR(fn), r_);                                                 \
    } while (0)
#define TN_BL(fn, args)                                                                                        \
    do {                                                                                                       \
        cublasStatus_t b_ = fn args;                                                                           \
        if (b_ != CUBLAS_STATUS_SUCCESS) return tn_blas_status(TN_STR(fn), b_);                                \
    } while (0)
#define TN_TRY(expr)                                                                                           \
    do {                                                                                                       \
        tn_status s_ = (expr);                                                                                 \
        if (s_.src != TN_OK) return s_;                                                                        \
    } while (0)

// Handle conversions: Go carries every handle as a 64-bit integer.
#define TN_STREAM(s) ((cudaStream_t)(uintptr_t)(s))
#define TN_EVENT(e) ((cudaEvent_t)(uintptr_t)(e))
#define TN_DPTR(p) ((void *)(uintptr_t)(p))
#define TN_U64(p) ((uint64_t)(uintptr_t)(p))
