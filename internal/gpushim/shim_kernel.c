//go:build cuda || hip || musa

// shim_kernel.c - code objects, kernel functions and launches (driver API).
#include <string.h>

#include "shim_impl.h"

tn_status tn_module_load(int32_t dev, const void *image, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device_ctx(dev));
    CUmodule m = NULL;
    TN_DR(cuModuleLoadData, (&m, image));
    *out = TN_U64(m);
    return tn_ok();
}

tn_status tn_module_unload(int32_t dev, uint64_t mod) {
    TN_TRY(tn_use_device_ctx(dev));
    TN_DR(cuModuleUnload, ((CUmodule)(uintptr_t)mod));
    return tn_ok();
}

tn_status tn_module_function(int32_t dev, uint64_t mod, const char *name, uint64_t *out) {
    *out = 0;
    TN_TRY(tn_use_device_ctx(dev));
    CUfunction f = NULL;
    TN_DR(cuModuleGetFunction, (&f, (CUmodule)(uintptr_t)mod, name));
    *out = TN_U64(f);
    return tn_ok();
}

tn_status tn_func_set_max_dyn_smem(int32_t dev, uint64_t f, int32_t bytes) {
    TN_TRY(tn_use_device_ctx(dev));
#if defined(TERNION_HIP) // no opt-in: any size up to the device's limit (checked by the caller) launches
    (void)f;
    (void)bytes;
#else
    TN_DR(cuFuncSetAttribute, ((CUfunction)(uintptr_t)f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
#endif
    return tn_ok();
}

// The preferred shared-memory carveout of f, in percent (CUDA; the Go side
// calls it for no other vendor: carveoutDevice).
tn_status tn_func_set_carveout(int32_t dev, uint64_t f, int32_t percent) {
    TN_TRY(tn_use_device_ctx(dev));
#if defined(TERNION_CUDA)
    TN_DR(cuFuncSetAttribute, ((CUfunction)(uintptr_t)f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent));
#else
    (void)f;
    (void)percent;
    return tn_shim("cuFuncSetAttribute", "TERNION_NOT_SUPPORTED", "no shared-memory carveout on this vendor", TN_HINT_NOT_SUPPORTED);
#endif
    return tn_ok();
}

int32_t tn_pdl_available(void) {
#if TN_PDL
    return TN_PTR(cuLaunchKernelEx) != NULL;
#else
    return 0;
#endif
}

// tn_launch is one cuLaunchKernel, or with pdl (where tn_pdl_available) one
// cuLaunchKernelEx that lets the kernel start before the one before it on
// the stream ends (programmatic stream serialization: the kernel's
// TERNION_KERNEL_ENTRY waits for it). args holds the arguments packed as the
// kernel's parameter list lays them out, offsets[i] is argument i's offset in
// it; the launch copies the values before it returns.
tn_status tn_launch(int32_t dev, uint64_t f, const uint32_t *dims, uint32_t smem, uint64_t s, const uint8_t *args,
                    const uint32_t *offsets, int32_t nargs, int32_t pdl) {
    void *params[TN_MAX_ARGS];
    TN_TRY(tn_launch_params(params, args, offsets, nargs));
    TN_TRY(tn_use_device_ctx(dev));
#if TN_PDL
    if (pdl && TN_PTR(cuLaunchKernelEx) != NULL) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = dims[0], cfg.gridDimY = dims[1], cfg.gridDimZ = dims[2];
        cfg.blockDimX = dims[3], cfg.blockDimY = dims[4], cfg.blockDimZ = dims[5];
        cfg.sharedMemBytes = smem;
        cfg.hStream = (CUstream)(uintptr_t)s;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        TN_DR(cuLaunchKernelEx, (&cfg, (CUfunction)(uintptr_t)f, nargs > 0 ? params : NULL, NULL));
        return tn_ok();
    }
#else
    (void)pdl;
#endif
    TN_DR(cuLaunchKernel, ((CUfunction)(uintptr_t)f, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], smem,
                           (CUstream)(uintptr_t)s, nargs > 0 ? params : NULL, NULL));
    return tn_ok();
}
