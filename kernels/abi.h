// abi.h - the structs kernels take by value, laid out once for every device
// compiler (nvcc, NVRTC, hipcc, hipRTC, mcc) and the C shim. vendorapi's
// TensorDesc and FastDiv are the Go side: TestABIHeader checks that the
// numbers below are Go's, the static asserts make every compiler that
// includes this header check its own layout, and the abi_echo kernel checks
// it again at run time on each device (conformance suite).
#pragma once

typedef long long ternion_i64;
typedef unsigned int ternion_u32;

// ternion_tensor is a tensor as kernels see it: ggml's data pointer, ne
// (elements per dimension) and nb (bytes between neighbours per dimension).
typedef struct ternion_tensor {
    void * data;
    ternion_i64 ne[4];
    ternion_i64 nb[4];
} ternion_tensor;

// ternion_fastdiv holds the constants of division by d with a multiply and a
// shift (ggml's uint3 from init_fastdiv_values): n/d = (umulhi(n, mp) + n) >> l.
typedef struct ternion_fastdiv {
    ternion_u32 mp;
    ternion_u32 l;
    ternion_u32 d;
} ternion_fastdiv;

#define TERNION_TENSOR_SIZE 72
#define TERNION_TENSOR_ALIGN 8
#define TERNION_FASTDIV_SIZE 12
#define TERNION_FASTDIV_ALIGN 4

#ifdef __cplusplus
#define TERNION_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define TERNION_ALIGNOF(t) alignof(t)
#else
#define TERNION_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define TERNION_ALIGNOF(t) _Alignof(t)
#endif

TERNION_STATIC_ASSERT(sizeof(void *) == 8, "ternion kernels need 64-bit pointers");
TERNION_STATIC_ASSERT(sizeof(ternion_i64) == 8 && sizeof(ternion_u32) == 4, "integer sizes");
TERNION_STATIC_ASSERT(sizeof(ternion_tensor) == TERNION_TENSOR_SIZE, "ternion_tensor differs from vendorapi.TensorDesc");
TERNION_STATIC_ASSERT(TERNION_ALIGNOF(ternion_tensor) == TERNION_TENSOR_ALIGN, "ternion_tensor alignment");
TERNION_STATIC_ASSERT(sizeof(ternion_fastdiv) == TERNION_FASTDIV_SIZE, "ternion_fastdiv differs from vendorapi.FastDiv");
TERNION_STATIC_ASSERT(TERNION_ALIGNOF(ternion_fastdiv) == TERNION_FASTDIV_ALIGN, "ternion_fastdiv alignment");
