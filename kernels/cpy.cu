// cpy.cu - copies between tensors of one element type: any shapes with the
// same number of elements, any strides (ggml's CPY, CONT and DUP without a
// type conversion). The entry points (cpy_{T}) are generated from the
// catalog's template spec.
#include "index.h"

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
