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

int tn_have_vmm;
int tn_device_count;

static void *g_driver;          // dlopen handle of TN_DRIVER_LIB
static char g_load_msg[768];    // why the driver could not be loaded
static CUcontext g_ctx[TN_MAX_DEVICES]; // retained primary contexts

int tn_dlsym(void *lib, const char *name, void *fptr, size_t size) {
    void *sym = dlsym(lib, name);
    if (sym == NULL || size != sizeof sym) return 0;
    memcpy(fptr, &sym, sizeof sym); // POSIX: a function pointer has an object pointer's representation
    return 1;
}

tn_status tn_ok(void) {
    tn_status s = {0};
    return s;
}

tn_status tn_rt(const char *call, cudaError_t e) {
    tn_status s = {TN_SRC_RUNTIME, (int32_t)e, 0, TN_HINT_NONE, call, cudaGetErrorName(e), cudaGetErrorString(e)};
    (void)cudaGetLastError(); // reported here; do not let a later call report it again
    return s;
}

tn_status tn_drv(const char *call, CUresult r) {
    tn_status s = {TN_SRC_DRIVER, (int32_t)r, 0, TN_HINT_NONE, call, NULL, NULL};
    if (TN_PTR(cuGetErrorName) && TN_PTR(cuGetErrorName)(r, &s.name) != CUDA_SUCCESS) s.name = NULL;
    if (TN_PTR(cuGetErrorString) && TN_PTR(cuGetErrorString)(r, &s.msg) != CUDA_SUCCESS) s.msg = NULL;
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
    return tn_shim(call, "TERNION_NOT_LOADED", "the loaded driver lacks this function", TN_HINT_NOT_SUPPORTED);
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
    return tn_ok();
}

// load_driver dlopens the driver library and resolves the functions the shim
// calls through TN_PTR.
static tn_status load_driver(void) {
    if (g_driver != NULL) return tn_ok();
    (void)dlerror();
    void *h = dlopen(TN_DRIVER_LIB, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        // The message names the library first: the CLI prints "cuda: driver not found (<message>)".
        const char *why = dlerror();
        if (why == NULL) why = "dlopen failed";
        if (strncmp(why, TN_DRIVER_LIB, strlen(TN_DRIVER_LIB)) == 0) {
            snprintf(g_load_msg, sizeof g_load_msg, "%s", why);
        } else {
            snprintf(g_load_msg, sizeof g_load_msg, "%s: %s", TN_DRIVER_LIB, why);
        }
        return tn_shim("dlopen", "TERNION_NO_DRIVER", g_load_msg, TN_HINT_NO_DRIVER);
    }
    const char *missing = NULL;
#define TN_LOAD_REQUIRED(f)                                                                                    \
    if (!tn_dlsym(h, TN_STR(f), &TN_PTR(f), sizeof TN_PTR(f)) && missing == NULL) missing = TN_STR(f);
    TN_DRIVER_FUNCS(TN_LOAD_REQUIRED)
    if (missing != NULL) {
        snprintf(g_load_msg, sizeof g_load_msg, "%s lacks %s: the driver is too old", TN_DRIVER_LIB, missing);
        TN_DRIVER_FUNCS(TN_CLEAR_PTR)
        (void)dlclose(h);
        return tn_shim("dlsym", "TERNION_NO_DRIVER", g_load_msg, TN_HINT_NO_DRIVER);
    }
    int vmm = 1;
#define TN_LOAD_OPTIONAL(f)                                                                                    \
    if (!tn_dlsym(h, TN_STR(f), &TN_PTR(f), sizeof TN_PTR(f))) vmm = 0;
    TN_DRIVER_VMM_FUNCS(TN_LOAD_OPTIONAL)
    if (!vmm) {
        TN_DRIVER_VMM_FUNCS(TN_CLEAR_PTR)
    }
    tn_have_vmm = vmm;
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
    if (r == CUDA_ERROR_NO_DEVICE) return tn_ok(); // a driver but no device: zero devices, not an error
    if (r != CUDA_SUCCESS) return tn_drv(TN_STR(cuInit), r);
    TN_RT(cudaRuntimeGetVersion, (&v)); // fails without a device
    *runtime_version = v;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice) {
        (void)cudaGetLastError();
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
    out->smem_per_block_optin = prop.sharedMemPerBlockOptin;
    out->total_mem = prop.totalGlobalMem;
    // The bus id is optional (Props.PCIBusID may be empty): a failure leaves it empty.
    cudaError_t e = cudaDeviceGetPCIBusId(out->pci_bus_id, (int)sizeof out->pci_bus_id, dev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
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
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError(); // enabling twice is not an error
        return tn_ok();
    }
    if (e != cudaSuccess) return tn_rt(TN_STR(cudaDeviceEnablePeerAccess), e);
    return tn_ok();
}

tn_status tn_peer_disable(int32_t dev, int32_t peer) {
    TN_TRY(tn_use_device(dev));
    cudaError_t e = cudaDeviceDisablePeerAccess(peer);
    if (e == cudaErrorPeerAccessNotEnabled) {
        (void)cudaGetLastError(); // disabling when not enabled is not an error
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
