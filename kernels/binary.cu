// binary.cu - element-wise binary ops on contiguous f32 buffers. The entry
// points ({op}_f32) are generated from the catalog's template spec.
#include "binop.h"

// dst[i] = Op(a[i], b[i]) for i < n (grid-stride loop: any 1D grid covers n).
template <typename Op>
static __device__ __forceinline__ void binary_f32(float * dst, const float * a, const float * b, ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        dst[i] = Op::apply(a[i], b[i]);
    }
}
