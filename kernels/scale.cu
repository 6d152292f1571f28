// scale.cu - dst = src*scale + bias, ggml's SCALE op on contiguous f32.
#include "vendor.h"

// dst[i] = src[i]*scale + bias for i < n.
extern "C" __global__ void scale_f32(float * dst, const float * src, float scale, float bias, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = src[i] * scale + bias;
    }
}
