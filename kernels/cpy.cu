// cpy.cu - copies between tensors of one element type: any shapes with the
// same number of elements, any strides (ggml's CPY, CONT and DUP without a
// type conversion). The entry points (cpy_{T}) are generated from the
// catalog's template spec.
#include "index.h"

// One element of type T: *d = *s.
template <typename T> struct ternion_copy_same {
    static __device__ __forceinline__ void apply(char * d, const char * s) { *(T *)d = *(const T *)s; }
};

// Element i of src goes to element i of dst, for i < n (n < 2^31; grid-stride loop),
// dst's data pointer read from dslot when it is not null (ternion_copy_dst).
template <typename T>
static __device__ __forceinline__ void cpy(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne0, ternion_fastdiv sne1,
                                           ternion_fastdiv sne2, ternion_fastdiv dne0, ternion_fastdiv dne1, ternion_fastdiv dne2,
                                           ternion_i64 n, void * const * dslot) {
    dst.data = ternion_copy_dst(dst, dslot);
    ternion_copy_elements<ternion_copy_same<T> >(dst, src, sne0, sne1, sne2, dne0, dne1, dne2, n);
}
