// abi.cu - the kernel argument ABI, checked on the device: abi_echo writes
// back what it received and how its compiler laid out the by-value structs.
#include "vendor.h"

// Writes a, t, b, fd, the bits of c, d, then the layout of ternion_tensor and
// ternion_fastdiv (sizeof, alignof, member offsets) to out[0:24]; one thread.
extern "C" __global__ void abi_echo(int a, ternion_i64 * out, ternion_tensor t, ternion_u32 b, ternion_fastdiv fd, float c,
                                    ternion_i64 d) {
    TERNION_KERNEL_ENTRY();
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    int i = 0;
    out[i++] = a;
    out[i++] = (ternion_i64)t.data;
    for (int j = 0; j < 4; j++) out[i++] = t.ne[j];
    for (int j = 0; j < 4; j++) out[i++] = t.nb[j];
    out[i++] = b;
    out[i++] = fd.mp;
    out[i++] = fd.l;
    out[i++] = fd.d;
    out[i++] = (ternion_i64)__float_as_uint(c);
    out[i++] = d;
    ternion_tensor probe;
    ternion_fastdiv fprobe;
    out[i++] = sizeof(ternion_tensor);
    out[i++] = alignof(ternion_tensor);
    out[i++] = (ternion_i64)((const char *)&probe.ne[0] - (const char *)&probe);
    out[i++] = (ternion_i64)((const char *)&probe.nb[0] - (const char *)&probe);
    out[i++] = sizeof(ternion_fastdiv);
    out[i++] = alignof(ternion_fastdiv);
    out[i++] = (ternion_i64)((const char *)&fprobe.l - (const char *)&fprobe);
    out[i++] = (ternion_i64)((const char *)&fprobe.d - (const char *)&fprobe);
}

// out[b*T + t] = b*1024 + t + 1 for block b and thread t (linear, x fastest;
// T threads per block) when b*T + t < n: which threads of a launch ran.
extern "C" __global__ void abi_geometry(ternion_i64 * out, ternion_i64 n) {
    TERNION_KERNEL_ENTRY();
    const ternion_i64 b = ((ternion_i64)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const ternion_i64 t = ((ternion_i64)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const ternion_i64 i = b * ((ternion_i64)blockDim.x * blockDim.y * blockDim.z) + t;
    if (i < n) {
        out[i] = b * 1024 + t + 1;
    }
}
