// unary.cu - element-wise ops of one tensor: ggml's SCALE on 16-byte
// vectors (UNARY ops join with Wave 2 · 3/7).
#include "vendor.h"

// dst[i] = src[i]*scale + bias over n4 float4 (grid-stride, four in flight
// per thread).
extern "C" __global__ void scale4_f32(float4 * dst, const float4 * src, float scale, float bias, ternion_i64 n4) {
    const ternion_i64 step = TERNION_NTHREADS();
    for (ternion_i64 i0 = TERNION_TID(); i0 < n4; i0 += 4 * step) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 i = i0 + u * step;
            if (i < n4) v[u] = src[i];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ternion_i64 i = i0 + u * step;
            if (i < n4) {
                dst[i] = make_float4(v[u].x * scale + bias, v[u].y * scale + bias, v[u].z * scale + bias, v[u].w * scale + bias);
            }
        }
    }
}
