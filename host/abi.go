package host

import (
	"math"
	"unsafe"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// abi.go implements kernels/abi.cu.

func init() {
	// abi_echo(a, out, t, b, fd, c, d): writes back its arguments and the
	// layout of the by-value structs, here as Go lays them out (the
	// definition every device compiler is checked against).
	register("abi_echo", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{elems("out", a.PtrAt(1), kernels.AbiEchoLen, 8)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			if !b.first() {
				return
			}
			out := i64s(m[0])[:0:kernels.AbiEchoLen]
			t, fd := a.TensorAt(2), a.FastDivAt(4)
			out = append(out, int64(a.I32At(0)), int64(t.Data))
			out = append(out, t.Ne[:]...)
			out = append(out, t.Nb[:]...)
			out = append(out, int64(a.U32At(3)), int64(fd.Mp), int64(fd.L), int64(fd.D),
				int64(math.Float32bits(a.F32At(5))), a.I64At(6))
			var td vendorapi.TensorDesc
			var f vendorapi.FastDiv
			out = append(out, int64(unsafe.Sizeof(td)), int64(unsafe.Alignof(td)), int64(unsafe.Offsetof(td.Ne)),
				int64(unsafe.Offsetof(td.Nb)), int64(unsafe.Sizeof(f)), int64(unsafe.Alignof(f)),
				int64(unsafe.Offsetof(f.L)), int64(unsafe.Offsetof(f.D)))
		},
	})
}

func init() {
	// abi_geometry(out, n): out[b*T + t] = b*1024 + t + 1 for every block b
	// and thread t of the launch with b*T + t < n.
	register("abi_geometry", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer { return []buffer{elems("out", a.PtrAt(0), a.I64At(1), 8)} },
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			out, n := i64s(m[0]), a.I64At(1)
			lb := (int64(b.idx.Z)*int64(b.grid.Y)+int64(b.idx.Y))*int64(b.grid.X) + int64(b.idx.X)
			per := int64(b.dim.Count())
			for t := range per {
				if i := lb*per + t; i < n {
					out[i] = lb*1024 + t + 1
				}
			}
		},
	})
}
