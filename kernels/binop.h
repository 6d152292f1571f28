// binop.h - the element-wise binary ops of binary.cu and binbcast.cu, as
// functors: Op::apply(a, b) is one result of op Op.
#pragma once
#include "vendor.h"

struct ternion_bin_add {
    static __device__ __forceinline__ float apply(float a, float b) { return a + b; }
};
struct ternion_bin_sub {
    static __device__ __forceinline__ float apply(float a, float b) { return a - b; }
};
struct ternion_bin_mul {
    static __device__ __forceinline__ float apply(float a, float b) { return a * b; }
};
struct ternion_bin_div {
    static __device__ __forceinline__ float apply(float a, float b) { return a / b; }
};
