// fill.cu - set every element of a buffer to one value.
#include "vendor.h"

// dst[i] = value for i < n (grid-stride loop: any 1D grid covers n).
extern "C" __global__ void fill_f32(float * dst, float value, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = value;
    }
}

// dst[i] = value for i < n, for any 4-byte element type.
extern "C" __global__ void fill_u32(ternion_u32 * dst, ternion_u32 value, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = value;
    }
}
