// index.h - indices and byte offsets of elements and rows of a
// ternion_tensor, with the fast divisions the kernels get from the host, and
// the element-by-element copy loop between two tensors.
#pragma once
#include "vendor.h"

// Indices (i1, i2, i3) of row r (rows of dims 1..3); d1, d2 divide by ne[1],
// ne[2].
static __device__ __forceinline__ void ternion_row_index(ternion_u32 r, ternion_fastdiv d1, ternion_fastdiv d2, ternion_u32 & i1,
                                                         ternion_u32 & i2, ternion_u32 & i3) {
    const ternion_u32 q = ternion_fastdiv_div(r, d1);
    i1 = r - q * d1.d;
    i3 = ternion_fastdiv_div(q, d2);
    i2 = q - i3 * d2.d;
}

// Byte offset of element i (row-major in ne) of a tensor with strides nb;
// d0, d1, d2 divide by ne[0], ne[1], ne[2].
static __device__ __forceinline__ ternion_i64 ternion_offset(ternion_u32 i, const ternion_tensor & t, ternion_fastdiv d0,
                                                             ternion_fastdiv d1, ternion_fastdiv d2) {
    const ternion_u32 q0 = ternion_fastdiv_div(i, d0);
    const ternion_u32 i0 = i - q0 * d0.d;
    ternion_u32 i1, i2, i3;
    ternion_row_index(q0, d1, d2, i1, i2, i3);
    return i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Byte offset of row r (rows of dims 1..3, in t's shape) of t; d1, d2 divide
// by ne[1], ne[2].
static __device__ __forceinline__ ternion_i64 ternion_row_offset(ternion_u32 r, const ternion_tensor & t, ternion_fastdiv d1,
                                                                 ternion_fastdiv d2) {
    ternion_u32 i1, i2, i3;
    ternion_row_index(r, d1, d2, i1, i2, i3);
    return i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// The data pointer a copy kernel writes through: dst.data, or, when dslot is
// not null, the pointer stored at dslot. dslot is a slot of the backend's CPY
// pointer array, refreshed before every launch of a captured graph, so that
// a replayed copy writes where its destination is now (the seed's
// cpy_dest_ptrs); the offsets within dst are dst's strides as ever.
static __device__ __forceinline__ void * ternion_copy_dst(const ternion_tensor & dst, void * const * dslot) {
    return dslot != nullptr ? *dslot : dst.data;
}

// The grid-stride loop over the elements of two tensors of one element count
// n (n < 2^31), each in its own shape and strides: Copy::apply(d, s) copies
// element i of src (at s) to element i of dst (at d). sne* and dne* divide by
// src's and dst's ne[0], ne[1], ne[2].
template <typename Copy>
static __device__ __forceinline__ void ternion_copy_elements(ternion_tensor dst, ternion_tensor src, ternion_fastdiv sne0,
                                                             ternion_fastdiv sne1, ternion_fastdiv sne2, ternion_fastdiv dne0,
                                                             ternion_fastdiv dne1, ternion_fastdiv dne2, ternion_i64 n) {
    for (ternion_i64 i = TERNION_TID(); i < n; i += TERNION_NTHREADS()) {
        const char * s = (const char *)src.data + ternion_offset((ternion_u32)i, src, sne0, sne1, sne2);
        char * d = (char *)dst.data + ternion_offset((ternion_u32)i, dst, dne0, dne1, dne2);
        Copy::apply(d, s);
    }
}
