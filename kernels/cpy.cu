// cpy.cu - copies between tensors of one element type: any shapes with the
// same number of elements, any strides (ggml's CPY, CONT and DUP without a
// type conversion). The entry points (cpy_{T}) are generated from the
// catalog's template spec.
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

// Element i of src goes to element i of dst, for i < n (n < 2^31; grid-stride loop).
template <typename T>
static __device__ __forceinline__ void cpy(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne0, ternion_fastdiv sne1,
                                           ternion_fastdiv sne2, ternion_fastdiv dne0, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                           ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const T * s = (const T *)((const char *)src.data + ternion_offset((ternion_u32)i, src, sne0, sne1, sne2));
        T * d = (T *)((char *)dst.data + ternion_offset((ternion_u32)i, dst, dne0, dne1, dne2));
        *d = *s;
    }
}
