package host

import (
	"github.com/ternion/ternion/vendorapi"
)

// unary.go implements kernels/unary.cu.

func init() {
	// scale4_f32(dst, src, scale, bias, n4): dst[i] = src[i]*scale + bias for
	// the 4·n4 floats (fused multiply-add, as the GPU compiler contracts it).
	register("scale4_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			n := a.I64At(4)
			return []buffer{elems("dst", a.PtrAt(0), n, 16), elems("src", a.PtrAt(1), n, 16)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := f32s(m[0]), f32s(m[1])
			s, c := a.F32At(2), a.F32At(3)
			b.gridStride(a.I64At(4), func(i int64) {
				for j := 4 * i; j < 4*i+4; j++ {
					dst[j] = fma32(src[j], s, c)
				}
			})
		},
	})
}
