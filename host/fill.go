package host

import (
	"math"

	"github.com/ternion/ternion/vendorapi"
)

// fill.go implements kernels/fill.cu.

func init() {
	fill := func(bits func(a *vendorapi.Args) uint32) *hostKernel {
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer { return []buffer{elems("dst", a.PtrAt(0), a.I64At(2), 4)} },
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, v := u32s(m[0]), bits(a)
				b.gridStride(a.I64At(2), func(i int64) { dst[i] = v })
			},
		}
	}
	// fill_f32(dst, value, n): dst[i] = value for i < n (stored bit for bit).
	register("fill_f32", fill(func(a *vendorapi.Args) uint32 { return math.Float32bits(a.F32At(1)) }))
	// fill_u32(dst, value, n): dst[i] = value for i < n.
	register("fill_u32", fill(func(a *vendorapi.Args) uint32 { return a.U32At(1) }))
}
