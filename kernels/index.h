// index.h - byte offsets of elements and rows of a ternion_tensor, with the
// fast divisions the kernels get from the host.
#pragma once
#include "vendor.h"

// Byte offset of element i (row-major in ne) of a tensor with strides nb;
// d0, d1, d2 divide by ne[0], ne[1], ne[2].
static __device__ __forceinline__ ternion_i64 ternion_offset(ternion_u32 i, const ternion_tensor & t, ternion_fastdiv d0,
                                                             ternion_fastdiv d1, ternion_fastdiv d2) {
    const ternion_u32 q0 = ternion_fastdiv_div(i, d0);
    const ternion_u32 i0 = i - q0 * d0.d;
    const ternion_u32 q1 = ternion_fastdiv_div(q0, d1);
    const ternion_u32 i1 = q0 - q1 * d1.d;
    const ternion_u32 i3 = ternion_fastdiv_div(q1, d2);
    const ternion_u32 i2 = q1 - i3 * d2.d;
    return i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Byte offset of row r (rows of dims 1..3, in t's shape) of t; d1, d2 divide
// by ne[1], ne[2].
static __device__ __forceinline__ ternion_i64 ternion_row_offset(ternion_u32 r, const ternion_tensor & t, ternion_fastdiv d1,
                                                                 ternion_fastdiv d2) {
    const ternion_u32 q = ternion_fastdiv_div(r, d1);
    const ternion_u32 i1 = r - q * d1.d;
    const ternion_u32 i3 = ternion_fastdiv_div(q, d2);
    const ternion_u32 i2 = q - i3 * d2.d;
    return i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}
