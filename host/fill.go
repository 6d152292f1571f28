package host

import "github.com/ternion/ternion/vendorapi"

// fill.go implements kernels/fill.cu.

func init() {
	fill := func(value func(a []vendorapi.Arg) uint32) *hostKernel {
		return &hostKernel{
			buffers: func(a []vendorapi.Arg) []buffer { return []buffer{elems("dst", a[0], a[2].I64(), 4)} },
			run: func(m [][]byte, a []vendorapi.Arg) {
				dst, v := u32s(m[0]), value(a)
				parallel(len(dst), func(lo, hi int) {
					for i := lo; i < hi; i++ {
						dst[i] = v
					}
				})
			},
		}
	}
	// fill_f32(dst, value, n): dst[i] = value for i < n (stored bit for bit).
	register("fill_f32", fill(func(a []vendorapi.Arg) uint32 { return uint32(a[1].Bits) }))
	// fill_u32(dst, value, n): dst[i] = value for i < n.
	register("fill_u32", fill(func(a []vendorapi.Arg) uint32 { return a[1].U32() }))
}
