package host

import "github.com/ternion/ternion/vendorapi"

// binary.go implements kernels/binary.cu: element-wise ops on contiguous f32.

func init() {
	binary := func(op func(x, y float32) float32) *hostKernel {
		return &hostKernel{
			buffers: func(a []vendorapi.Arg) []buffer {
				n := a[3].I64()
				return []buffer{elems("dst", a[0], n, 4), elems("a", a[1], n, 4), elems("b", a[2], n, 4)}
			},
			run: func(m [][]byte, _ []vendorapi.Arg) {
				dst, x, y := f32s(m[0]), f32s(m[1]), f32s(m[2])
				parallel(len(dst), func(lo, hi int) {
					for i := lo; i < hi; i++ {
						dst[i] = op(x[i], y[i])
					}
				})
			},
		}
	}
	// add_f32(dst, a, b, n): dst[i] = a[i] + b[i] for i < n.
	register("add_f32", binary(func(x, y float32) float32 { return x + y }))
	// mul_f32(dst, a, b, n): dst[i] = a[i] * b[i] for i < n.
	register("mul_f32", binary(func(x, y float32) float32 { return x * y }))
}
