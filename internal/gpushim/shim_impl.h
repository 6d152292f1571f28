//go:build cuda || hip || musa

// shim_impl.h - what the shim's .c files share: the vendor mapping header, the
// tables of functions resolved with dlsym, and the status helpers. Everything
// here is written with CUDA names; the mapping header renames them.
#pragma once

#include "shim.h"

#if (defined(TERNION_CUDA) + defined(TERNION_HIP) + defined(TERNION_MUSA)) != 1
#error "gpushim: no single TERNION_<VENDOR>: several GPU tags were given (use one of cuda, hip, musa)"
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
// TN_PTR(f) is the pointer through which the shim calls function f of a
// library opened with dlopen. f is expanded first, so versioned names (cuFoo
// -> cuFoo_v2) and vendor renames (cuFoo -> hipFoo) name the pointer, the
// prototype and the dlsym symbol alike.
#define TN_PTR(f) TN_PASTE(tn_p_, f)

// Defaults a mapping header may override.
#ifndef TN_DRIVER_LIBS
#define TN_DRIVER_LIBS TN_DRIVER_LIB // the driver library, or a list of names to try in order
#endif
#ifndef TN_INIT_NO_DEVICE
#define TN_INIT_NO_DEVICE(r) ((r) == CUDA_ERROR_NO_DEVICE) // cuInit's result for "a driver but no device"
#endif
#ifndef TN_GRAPH_API_12
#define TN_GRAPH_API_12 (TN_RUNTIME_VERSION >= 12000) // cudaGraphInstantiate/ExecUpdate have CUDA 12's signatures
#endif

// Driver-API functions the shim needs on every device.
#define TN_DRIVER_FUNCS(X)                                                                                     \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetAttribute) X(cuModuleLoadData) X(cuModuleUnload) \
    X(cuModuleGetFunction) X(cuLaunchKernel) TN_DRIVER_CONTEXT_FUNCS(X)
#if defined(TERNION_HIP)
// HIP has no driver contexts to make current (its module API works on the
// runtime's current device), its module API reports hipError_t (named by the
// runtime) and dynamic shared memory needs no opt-in.
#define TN_DRIVER_CONTEXT_FUNCS(X)
#else
#define TN_DRIVER_CONTEXT_FUNCS(X)                                                                             \
    X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuDevicePrimaryCtxRetain) X(cuFuncSetAttribute) X(cuGetErrorName)  \
    X(cuGetErrorString)
#endif

// Driver-API functions of virtual memory management: optional (an old driver
// lacks them; the devices then report no VMM).
#define TN_DRIVER_VMM_FUNCS(X)                                                                                 \
    X(cuMemGetAllocationGranularity) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemCreate) X(cuMemRelease) \
    X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess)

// Runtime-API functions. Where the runtime library is linked (CUDA, MUSA) the
// shim calls them directly; where the mapping header defines
// TN_RUNTIME_IN_DRIVER_LIB (HIP: libamdhip64 holds runtime and module API
// alike) they are resolved from the driver library at tn_open like the driver
// functions, so that a binary starts where that library is absent.
#define TN_RUNTIME_FUNCS(X)                                                                                    \
    X(cudaGetDevice) X(cudaSetDevice) X(cudaGetErrorName) X(cudaGetErrorString) X(cudaGetLastError)            \
    X(cudaRuntimeGetVersion) X(cudaGetDeviceCount) X(cudaGetDeviceProperties) X(cudaDeviceGetPCIBusId)         \
    X(cudaMemGetInfo) X(cudaDeviceCanAccessPeer) X(cudaDeviceEnablePeerAccess) X(cudaDeviceDisablePeerAccess)  \
    X(cudaDeviceSynchronize) X(cudaMalloc) X(cudaMallocManaged) X(cudaMemAdvise) X(cudaFree) X(cudaHostAlloc)  \
    X(cudaFreeHost) X(cudaHostRegister) X(cudaHostUnregister) X(cudaMemsetAsync) X(cudaMemcpyAsync)            \
    X(cudaMemcpyPeerAsync) X(cudaMemcpy2DAsync) X(cudaStreamCreateWithFlags) X(cudaStreamDestroy)              \
    X(cudaStreamSynchronize) X(cudaStreamQuery) X(cudaStreamWaitEvent) X(cudaEventCreateWithFlags)             \
    X(cudaEventDestroy) X(cudaEventRecord) X(cudaEventSynchronize) X(cudaEventQuery) X(cudaEventElapsedTime)   \
    X(cudaStreamBeginCapture) X(cudaStreamEndCapture) X(cudaStreamIsCapturing) X(cudaGraphInstantiate)         \
    X(cudaGraphExecUpdate) X(cudaGraphLaunch) X(cudaGraphDestroy) X(cudaGraphExecDestroy)

// BLAS functions. Linked directly (cuBLAS, muBLAS) unless the mapping header
// lists libraries in TN_BLAS_LIBS (rocBLAS, which Debian does not ship):
// then the first tn_blas_open loads them with dlopen, and BLAS alone fails
// where they are absent. TN_BLAS_EXTRA_FUNCS are that library's own extras.
#define TN_BLAS_FUNCS(X)                                                                                       \
    X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasSetPointerMode) X(cublasGemmEx)                \
    X(cublasGemmStridedBatchedEx) X(cublasGemmBatchedEx) X(cublasSetWorkspace) TN_BLAS_EXTRA_FUNCS(X)
#ifndef TN_BLAS_EXTRA_FUNCS
#define TN_BLAS_EXTRA_FUNCS(X)
#endif

#define TN_DECLARE_PTR(f) extern __typeof__(&f) TN_PTR(f);
TN_DRIVER_FUNCS(TN_DECLARE_PTR)
TN_DRIVER_VMM_FUNCS(TN_DECLARE_PTR)

// TN_RT_FN(f) and TN_BL_FN(f) are what the shim calls for runtime and BLAS
// function f: f itself when its library is linked, else its pointer;
// TN_RT_LOADED(f) and TN_BL_LOADED(f) say whether it can be called.
#if defined(TN_RUNTIME_IN_DRIVER_LIB)
TN_RUNTIME_FUNCS(TN_DECLARE_PTR)
#define TN_RT_FN(f) TN_PTR(f)
#define TN_RT_LOADED(f) (TN_PTR(f) != NULL)
#else
#define TN_RT_FN(f) f
#define TN_RT_LOADED(f) 1
#endif
#if defined(TN_BLAS_LIBS)
TN_BLAS_FUNCS(TN_DECLARE_PTR)
#define TN_BL_FN(f) TN_PTR(f)
#define TN_BL_LOADED(f) (TN_PTR(f) != NULL)
#else
#define TN_BL_FN(f) f
#define TN_BL_LOADED(f) 1
#endif

// TN_PDL is 1 where the shim can launch with programmatic dependent launch:
// CUDA 12 headers (cuLaunchKernelEx and its attribute), the function then
// resolved from the driver when it has it (tn_pdl_available). HIP and MUSA
// have none.
#if defined(TERNION_CUDA) && defined(CUDA_VERSION) && CUDA_VERSION >= 12000
#define TN_PDL 1
extern __typeof__(&cuLaunchKernelEx) TN_PTR(cuLaunchKernelEx);
#else
#define TN_PDL 0
#endif

// tn_have_vmm is 1 when every TN_DRIVER_VMM_FUNCS function was found.
extern int tn_have_vmm;
// tn_device_count is the runtime's device count, set by tn_open.
extern int tn_device_count;

// tn_sym is one function a library provides: its symbol and the pointer it
// is stored in. TN_SYM(f) makes the entry of function f for a table.
typedef struct {
    const char *name;
    void *ptr;
    size_t size;
} tn_sym;
#define TN_SYM(f) {TN_STR(f), (void *)&TN_PTR(f), sizeof TN_PTR(f)},

// tn_load_lib dlopens the first of libs[0..nlibs) that provides every symbol of
// req, stores them, and stores those of opt it has (*all_opt is 1 when it has
// every one). It returns the handle and sets *which to the library's name; on
// failure it returns NULL with the reason in msg (the first library's name
// first) and leaves every pointer NULL.
void *tn_load_lib(const char *const *libs, size_t nlibs, const tn_sym *req, size_t nreq, const tn_sym *opt,
                  size_t nopt, int *all_opt, const char **which, char *msg, size_t msgsize);
#define TN_LEN(a) (sizeof(a) / sizeof((a)[0]))

// Status constructors. tn_rt also clears the runtime's last error, so a
// failure is reported once, by the call that failed.
tn_status tn_ok(void);
tn_status tn_rt(const char *call, cudaError_t e);
tn_status tn_drv(const char *call, CUresult r);
tn_status tn_blas_status(const char *call, cublasStatus_t s);
tn_status tn_shim(const char *call, const char *name, const char *msg, int32_t hint);
tn_status tn_not_loaded(const char *call); // a function the loaded library lacks

// tn_use_device makes dev current for the runtime API (cudaSetDevice only when
// it is not). tn_use_device_ctx also makes dev's primary context current for
// the driver API, which a runtime call does not guarantee on a fresh thread.
tn_status tn_use_device(int32_t dev);
tn_status tn_use_device_ctx(int32_t dev);

// Checked calls: return from the enclosing function with a tn_status when the
// vendor call fails. fn is the function, args its parenthesised arguments.
#define TN_RT(fn, args)                                                                                        \
    do {                                                                                                       \
        cudaError_t e_ = TN_RT_FN(fn) args;                                                                    \
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
        if (!TN_BL_LOADED(fn)) return tn_not_loaded(TN_STR(fn));                                               \
        cublasStatus_t b_ = TN_BL_FN(fn) args;                                                                 \
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

// tn_launch_params points params[i] (TN_MAX_ARGS of them) at argument i of
// args, packed as the kernel's parameter list lays them out (offsets[i] is
// argument i's offset in it), for cuLaunchKernel; a shim error when nargs is
// out of range.
static inline tn_status tn_launch_params(void **params, const uint8_t *args, const uint32_t *offsets, int32_t nargs) {
    if (nargs < 0 || nargs > TN_MAX_ARGS) {
        return tn_shim(TN_STR(cuLaunchKernel), "TERNION_INVALID_VALUE", "too many kernel arguments",
                       TN_HINT_INVALID_VALUE);
    }
    for (int32_t i = 0; i < nargs; i++) params[i] = (void *)(uintptr_t)(args + offsets[i]);
    return tn_ok();
}
