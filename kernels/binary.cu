// binary.cu - element-wise binary ops on contiguous f32 buffers.
#include "vendor.h"

// dst[i] = a[i] + b[i] for i < n.
extern "C" __global__ void add_f32(float * dst, const float * a, const float * b, ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = a[i] + b[i];
    }
}

// dst[i] = a[i] * b[i] for i < n.
extern "C" __global__ void mul_f32(float * dst, const float * a, const float * b, ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = a[i] * b[i];
    }
}
