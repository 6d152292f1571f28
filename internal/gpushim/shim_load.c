//go:build cuda || hip || musa

// shim_load.c - loading the driver library, status helpers, device selection
// and device queries.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "shim_impl.h"

#define TN_DEFINE_PTR(f) __typeof__(&f) TN_PTR(f);
TN_DRIVER_FUNCS(TN_DEFINE_PTR)
TN_DRIVER_VMM_FUNCS(TN_DEFINE_PTR)
#if defined(TN_RUNTIME_IN_DRIVER_LIB)
TN_RUNTIME_FUNCS(TN_DEFINE_PTR)
#endif

#if TN_PDL
__typeof__(&cuLaunchKernelEx) TN_PTR(cuLaunchKernelEx);
#endif

int tn_have_vmm;
int tn_device_count;

static void *g_driver;          // dlopen handle of the driver library
static char g_load_msg[1024];   // why the driver could not be loaded
#if !defined(TERNION_HIP)
static CUcontext g_ctx[TN_MAX_DEVICES]; // retained primary contexts
#endif

// clear_syms forgets the pointers of a symbol table.
static void clear_syms(const tn_sym *syms, size_t n) {
    for (size_t i = 0; i < n; i++) memset(syms[i].ptr, 0, syms[i].size);
}

// load_syms stores the symbols of syms found in lib; it returns the first one
// missing, NULL when none is.
static const char *load_syms(void *lib, const tn_sym *syms, size_t n) {
    const char *missing = NULL;
    for (size_t i = 0; i < n; i++) {
        void *sym = dlsym(lib, syms[i].name);
        if (sym == NULL || syms[i].size != sizeof sym) {
            if (missing == NULL) missing = syms[i].name;
            continue;
        }
        memcpy(syms[i].ptr, &sym, sizeof sym); // POSIX: a function pointer has an object pointer's representation
    }
    return missing;
}

void *tn_load_lib(const char *const *libs, size_t nlibs, const tn_sym *req, size_t nreq, const tn_sym *opt,
                  size_t nopt, int *all_opt, const char **which, char *msg, size_t msgsize) {
    *all_opt = 0;
    *which = NULL;
    msg[0] = 0;
    for (size_t i = 0; i < nlibs; i++) {
        (void)dlerror();
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        if (h != NULL && (missing = load_syms(h, req, nreq)) == NULL) {
            *all_opt = load_syms(h, opt, nopt) == NULL;
            *which = libs[i];
            return h;
        }
        const char *why = h == NULL ? dlerror() : NULL;
        if (i == 0) { // the reason given is the first library's; the others are listed after it
            if (h != NULL) {
                snprintf(msg, msgsize, "%s lacks %s (too old?)", libs[i], missing);
            } else if (why != NULL && strncmp(why, libs[i], strlen(libs[i])) == 0) {
                snprintf(msg, msgsize, "%s", why); // dlerror usually starts with the library's name
            } else {
                snprintf(msg, msgsize, "%s: %s", libs[i], why != NULL ? why : "dlopen failed");
            }
        }
        if (h != NULL) {
            clear_syms(req, nreq);
            (void)dlclose(h);
        }
    }
    size_t n = strlen(msg);
    for (size_t i = 1; i < nlibs && n + 1 < msgsize; i++) {
        n += (size_t)snprintf(msg + n, msgsize - n, "%s%s%s", i == 1 ? " (also tried " : " ", libs[i],
                              i + 1 == nlibs ? ")" : "");
    }
    return NULL;
}

tn_status tn_ok(void) {
    tn_status s = {0};
    return s;
}

tn_status tn_rt(const char *call, cudaError_t e) {
    tn_status s = {TN_SRC_RUNTIME, (int32_t)e, 0, TN_HINT_NONE, call, NULL, NULL};
    if (TN_RT_LOADED(cudaGetErrorName)) s.name = TN_RT_FN(cudaGetErrorName)(e);
    if (TN_RT_LOADED(cudaGetErrorString)) s.msg = TN_RT_FN(cudaGetErrorString)(e);
    if (TN_RT_LOADED(cudaGetLastError)) (void)TN_RT_FN(cudaGetLastError)(); // reported here, not again later
    return s;
}

tn_status tn_drv(const char *call, CUresult r) {
#if defined(TERNION_HIP)
    tn_status s = tn_rt(call, r); // one status type: the runtime names it
    s.src = TN_SRC_DRIVER;
#else
    tn_status s = {TN_SRC_DRIVER, (int32_t)r, 0, TN_HINT_NONE, call, NULL, NULL};
    if (TN_PTR(cuGetErrorName) && TN_PTR(cuGetErrorName)(r, &s.name) != CUDA_SUCCESS) s.name = NULL;
    if (TN_PTR(cuGetErrorString) && TN_PTR(cuGetErrorString)(r, &s.msg) != CUDA_SUCCESS) s.msg = NULL;
#endif
    return s;
}

tn_status tn_blas_status(const char *call, cublasStatus_t b) {
    tn_status s = {TN_SRC_BLAS, (int32_t)b, 0, TN_HINT_NONE, call, NULL, NULL};
    return s;
}

tn_status tn_shim(const char *call, const char *name, const char *msg, int32_t hint) {
    tn_status s = {TN_SRC_SHIM, 0, 0, hint, call, name, msg};
    return s;
}

tn_status tn_not_loaded(const char *call) {
    return tn_shim(call, "TERNION_NOT_LOADED", "the loaded library lacks this function, or is not loaded",
                   TN_HINT_NOT_SUPPORTED);
}

tn_status tn_use_device(int32_t dev) {
    if (dev < 0 || dev >= tn_device_count) {
        return tn_shim("cudaSetDevice", "TERNION_INVALID_DEVICE", "device index out of range", TN_HINT_INVALID_VALUE);
    }
    int cur = -1;
    TN_RT(cudaGetDevice, (&cur));
    if (cur != dev) TN_RT(cudaSetDevice, (dev));
    return tn_ok();
}

tn_status tn_use_device_ctx(int32_t dev) {
    TN_TRY(tn_use_device(dev));
#if !defined(TERNION_HIP) // HIP: the current device is all the module API uses
    CUcontext want = __atomic_load_n(&g_ctx[dev], __ATOMIC_ACQUIRE);
    if (want == NULL) {
        CUdevice d;
        TN_DR(cuDeviceGet, (&d, dev));
        TN_DR(cuDevicePrimaryCtxRetain, (&want, d));
        CUcontext expected = NULL;
        // Two threads may race here; both retained the same primary context.
        if (!__atomic_compare_exchange_n(&g_ctx[dev], &expected, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            want = expected;
        }
    }
    CUcontext cur = NULL;
    TN_DR(cuCtxGetCurrent, (&cur));
    if (cur != want) TN_DR(cuCtxSetCurrent, (want));
#endif
    return tn_ok();
}

// load_driver dlopens the driver library and resolves the functions the shim
// calls through TN_PTR: the driver functions, the runtime functions where
// they live in the driver library, and (optional) the VMM functions.
static tn_status load_driver(void) {
    if (g_driver != NULL) return tn_ok();
    static const char *const libs[] = {TN_DRIVER_LIBS};
    static const tn_sym req[] = {TN_DRIVER_FUNCS(TN_SYM)
#if defined(TN_RUNTIME_IN_DRIVER_LIB)
                                     TN_RUNTIME_FUNCS(TN_SYM)
#endif
    };
    static const tn_sym vmm[] = {TN_DRIVER_VMM_FUNCS(TN_SYM)};
    int all_vmm = 0;
    const char *which = NULL;
    // The message names the library first: the CLI prints "cuda: driver not found (<message>)".
    void *h = tn_load_lib(libs, TN_LEN(libs), req, TN_LEN(req), vmm, TN_LEN(vmm), &all_vmm, &which, g_load_msg,
                          sizeof g_load_msg);
    if (h == NULL) return tn_shim("dlopen", "TERNION_NO_DRIVER", g_load_msg, TN_HINT_NO_DRIVER);
    if (!all_vmm) clear_syms(vmm, TN_LEN(vmm)); // VMM is all or nothing
    tn_have_vmm = all_vmm;
#if TN_PDL // optional: drivers before CUDA 12 lack it
    TN_PTR(cuLaunchKernelEx) = (__typeof__(&cuLaunchKernelEx))dlsym(h, "cuLaunchKernelEx");
#endif
    g_driver = h;
    return tn_ok();
}

tn_status tn_open(int32_t *count, int32_t *driver_version, int32_t *runtime_version) {
    *count = 0;
    *driver_version = 0;
    *runtime_version = 0;
    TN_TRY(load_driver());
    int v = 0;
    TN_DR(cuDriverGetVersion, (&v)); // works before cuInit
    *driver_version = v;
    CUresult r = TN_PTR(cuInit)(0);
    if (TN_INIT_NO_DEVICE(r)) return tn_ok(); // a driver but no device: zero devices, not an error
    if (r != CUDA_SUCCESS) return tn_drv(TN_STR(cuInit), r);
    TN_RT(cudaRuntimeGetVersion, (&v)); // fails without a device
    *runtime_version = v;
    int n = 0;
    cudaError_t e = TN_RT_FN(cudaGetDeviceCount)(&n);
    if (e == cudaErrorNoDevice) {
        (void)TN_RT_FN(cudaGetLastError)();
        n = 0;
    } else if (e != cudaSuccess) {
        return tn_rt(TN_STR(cudaGetDeviceCount), e);
    }
    if (n > TN_MAX_DEVICES) n = TN_MAX_DEVICES;
    tn_device_count = n;
    *count = n;
    return tn_ok();
}

// vmm_props fills the VMM support flag and recommended granularity of dev.
static tn_status vmm_props(int32_t dev, tn_props *out) {
    if (!tn_have_vmm) return tn_ok();
#if defined(TN_NO_VMM_ATTRIBUTE) // the runtime cannot say whether a device has VMM: report none
    (void)dev;
    (void)out;
#else
    CUdevice d;
    int supported = 0;
    TN_DR(cuDeviceGet, (&d, dev));
    TN_DR(cuDeviceGetAttribute, (&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d));
    if (!supported) return tn_ok();
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0, min_gran = 0;
    TN_DR(cuMemGetAllocationGranularity, (&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    TN_DR(cuMemGetAllocationGranularity, (&min_gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    out->vmm = 1;
    out->vmm_granularity = gran;
    out->vmm_min_granularity = min_gran;
#endif
    return tn_ok();
}

tn_status tn_props_get(int32_t dev, tn_props *out) {
    memset(out, 0, sizeof *out);
    if (dev < 0 || dev >= tn_device_count) {
        return tn_shim("cudaGetDeviceProperties", "TERNION_INVALID_DEVICE", "device index out of range",
                       TN_HINT_INVALID_VALUE);
    }
    struct cudaDeviceProp prop;
    TN_RT(cudaGetDeviceProperties, (&prop, dev));
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->major = prop.major;
    out->minor = prop.minor;
    out->sms = prop.multiProcessorCount;
    out->warp_size = prop.warpSize;
    out->integrated = prop.integrated;
    out->smem_per_block = prop.sharedMemPerBlock;
#if defined(TERNION_HIP)
    // HIP names the target (gfx90a:sramecc+:xnack-) and has no opt-in shared
    // memory: the seed uses the per-block size.
    snprintf(out->arch_name, sizeof out->arch_name, "%s", prop.gcnArchName);
    out->smem_per_block_optin = prop.sharedMemPerBlock;
#else
    out->smem_per_block_optin = prop.sharedMemPerBlockOptin;
#endif
    out->total_mem = prop.totalGlobalMem;
    // The bus id is optional (Props.PCIBusID may be empty): a failure leaves it empty.
    cudaError_t e = TN_RT_FN(cudaDeviceGetPCIBusId)(out->pci_bus_id, (int)sizeof out->pci_bus_id, dev);
    if (e != cudaSuccess) {
        (void)TN_RT_FN(cudaGetLastError)();
        out->pci_bus_id[0] = 0;
    }
    return vmm_props(dev, out);
}

tn_status tn_mem_info(int32_t dev, uint64_t *free_bytes, uint64_t *total_bytes) {
    TN_TRY(tn_use_device(dev));
    size_t f = 0, t = 0;
    TN_RT(cudaMemGetInfo, (&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return tn_ok();
}

tn_status tn_can_access_peer(int32_t dev, int32_t peer, int32_t *out) {
    TN_TRY(tn_use_device(dev));
    int can = 0;
    TN_RT(cudaDeviceCanAccessPeer, (&can, dev, peer));
    *out = can;
    return tn_ok();
}

tn_status tn_peer_enable(int32_t dev, int32_t peer) {
    TN_TRY(tn_use_device(dev));
    cudaError_t e = TN_RT_FN(cudaDeviceEnablePeerAccess)(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)TN_RT_FN(cudaGetLastError)(); // enabling twice is not an error
        return tn_ok();
    }
    if (e != cudaSuccess) return tn_rt(TN_STR(cudaDeviceEnablePeerAccess), e);
    return tn_ok();
}

tn_status tn_peer_disable(int32_t dev, int32_t peer) {
    TN_TRY(tn_use_device(dev));
    cudaError_t e = TN_RT_FN(cudaDeviceDisablePeerAccess)(peer);
    if (e == cudaErrorPeerAccessNotEnabled) {
        (void)TN_RT_FN(cudaGetLastError)(); // disabling when not enabled is not an error
        return tn_ok();
    }
    if (e != cudaSuccess) return tn_rt(TN_STR(cudaDeviceDisablePeerAccess), e);
    return tn_ok();
}

tn_status tn_device_sync(int32_t dev) {
    TN_TRY(tn_use_device(dev));
    TN_RT(cudaDeviceSynchronize, ());
    return tn_ok();
}
