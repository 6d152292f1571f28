// addid.cu - ggml's ADD_ID, the per-expert bias of a mixture-of-experts
// layer: dst[:, i1, i2] = a[:, i1, i2] + b[:, ids[i1, i2]] (f32 a, b, dst;
// i32 ids). A row index out of range gives NaN and sets bit 2 of the
// backend's device error word (core/ops errflags.go) when flag is not null.
#include "index.h"

// One thread an element: n = ne0·ne1·ne2 elements, ne0 and ne1 divide the
// element index into (i0, i1, i2); a grid-stride loop.
extern "C" __global__ void add_id_f32(ternion_tensor dst, ternion_tensor a, ternion_tensor b, ternion_tensor ids, ternion_fastdiv ne0,
                                      ternion_fastdiv ne1, ternion_i64 n, unsigned int * flag) {
    TERNION_KERNEL_ENTRY();
    for (ternion_i64 e = TERNION_TID(); e < n; e += TERNION_NTHREADS()) {
        const ternion_u32 row = ternion_fastdiv_div((ternion_u32)e, ne0);
        const ternion_u32 i0 = (ternion_u32)e - row * ne0.d;
        const ternion_u32 i2 = ternion_fastdiv_div(row, ne1);
        const ternion_u32 i1 = row - i2 * ne1.d;
        const int id = *(const int *)((const char *)ids.data + i1 * ids.nb[0] + i2 * ids.nb[1]);
        float * out = (float *)((char *)dst.data + i0 * dst.nb[0] + i1 * dst.nb[1] + i2 * dst.nb[2]);
        if (id < 0 || id >= b.ne[1]) {
            *out = __int_as_float(0x7fc00000);
            if (flag != nullptr) atomicOr(flag, 2u);
            continue;
        }
        *out = *(const float *)((const char *)a.data + i0 * a.nb[0] + i1 * a.nb[1] + i2 * a.nb[2]) +
               *(const float *)((const char *)b.data + i0 * b.nb[0] + id * b.nb[1]);
    }
}
