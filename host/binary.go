package host

import (
	"fmt"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// binary.go implements kernels/binary.cu: element-wise ops on contiguous f32.

// binaryOps are the ops of binop.h's ternion_bin_* structs (used by
// binary.cu and binbcast.cu), by axis value.
var binaryOps = map[string]func(x, y float32) float32{
	"add": func(x, y float32) float32 { return x + y },
	"sub": func(x, y float32) float32 { return x - y },
	"mul": func(x, y float32) float32 { return x * y },
	"div": func(x, y float32) float32 { return x / y },
}

func init() {
	// {op}_f32(dst, a, b, n): dst[i] = a[i] op b[i] for i < n.
	registerTemplate("binary_f32", func(k kernels.Kernel) (*hostKernel, error) {
		op := binaryOps[k.Bind["op"]]
		if op == nil {
			return nil, fmt.Errorf("kernel %s: binary op %q has no host implementation", k.Name, k.Bind["op"])
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				n := a.I64At(3)
				return []buffer{elems("dst", a.PtrAt(0), n, 4), elems("a", a.PtrAt(1), n, 4), elems("b", a.PtrAt(2), n, 4)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, x, y := f32s(m[0]), f32s(m[1]), f32s(m[2])
				b.gridStride(a.I64At(3), func(i int64) { dst[i] = op(x[i], y[i]) })
			},
		}, nil
	})
}
