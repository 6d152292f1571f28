package host

import (
	"encoding/binary"
	"math"

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
			s, c := a.F32At(2), a.F32At(3)
			b.gridStride(a.I64At(4), func(i int64) {
				for j := 16 * i; j < 16*i+16; j += 4 {
					x := math.Float32frombits(binary.LittleEndian.Uint32(m[1][j:]))
					binary.LittleEndian.PutUint32(m[0][j:], math.Float32bits(fma32(x, s, c)))
				}
			})
		},
	})
}
