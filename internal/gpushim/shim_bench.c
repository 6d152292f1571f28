//go:build (cuda || hip || musa) && ternion_bench

// shim_bench.c - the floor of a launch for the overhead benchmarks: built only
// with the ternion_bench tag, never in a production binary.
#include "shim_impl.h"

// tn_launch_raw is one cuLaunchKernel of a 1x1 grid and block, nothing else
// (no argument check, no device switch: the caller made the context current
// on this thread with tn_bind_device).
tn_status tn_launch_raw(uint64_t f, uint64_t s, const uint8_t *args, const uint32_t *offsets, int32_t nargs) {
    void *params[TN_MAX_ARGS];
    TN_TRY(tn_launch_params(params, args, offsets, nargs));
    TN_DR(cuLaunchKernel, ((CUfunction)(uintptr_t)f, 1, 1, 1, 1, 1, 1, 0, (CUstream)(uintptr_t)s,
                           nargs > 0 ? params : NULL, NULL));
    return tn_ok();
}

tn_status tn_bind_device(int32_t dev) { return tn_use_device_ctx(dev); }
