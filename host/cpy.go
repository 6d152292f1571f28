package host

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// cpy.go implements kernels/cpy.cu.

// cpyElemSize is the element size of each value of cpy's T axis.
var cpyElemSize = map[string]uint64{"b8": 1, "b16": 2, "b32": 4, "b64": 8}

// tensorOffset (index.h's ternion_offset) is the byte offset of element i (row-major in t's shape) of
// t, dividing with the fast-division constants as the kernel does.
func tensorOffset(i uint32, t vendorapi.TensorDesc, d0, d1, d2 vendorapi.FastDiv) int64 {
	q0 := d0.Div(i)
	i0 := i - q0*d0.D
	i1, i2, i3 := rowIndex(q0, d1, d2)
	return int64(i0)*t.Nb[0] + int64(i1)*t.Nb[1] + int64(i2)*t.Nb[2] + int64(i3)*t.Nb[3]
}

// elementKernel is the host side of a kernel that moves element i of src
// (in src's shape) to element i of dst (in dst's shape) for i < n, with
// arguments (dst, src, sne0..2, dne0..2, n, dslot): cpy_{T} and
// cvt_{ts}_{td}. A non-null dslot holds dst's data pointer (indirect).
// move writes one destination element (dsize bytes) from one source
// element (ssize bytes); verb says what the kernel does in the error for
// too many elements.
func elementKernel(dsize, ssize uint64, verb string, move func(d, s []byte)) *hostKernel {
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			dst, src := indirect(tensorBuf("dst", a.TensorAt(0), dsize), a.PtrAt(9)), tensorBuf("src", a.TensorAt(1), ssize)
			if n := a.I64At(8); n > math.MaxInt32 {
				dst.bad = fmt.Sprintf("n = %d: the kernel %s fewer than 2^31 elements", n, verb)
			}
			return []buffer{dst, src}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			s0, s1, s2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4)
			d0, d1, d2 := a.FastDivAt(5), a.FastDivAt(6), a.FastDivAt(7)
			b.gridStride(a.I64At(8), func(i int64) {
				so := tensorOffset(uint32(i), src, s0, s1, s2)
				do := tensorOffset(uint32(i), dst, d0, d1, d2)
				move(m[0][do:do+int64(dsize)], m[1][so:so+int64(ssize)])
			})
		},
	}
}

func init() {
	// cpy_{T}(dst, src, sne0..2, dne0..2, n, dslot): raw element copies.
	registerTemplate("cpy", func(k kernels.Kernel) (*hostKernel, error) {
		size := cpyElemSize[k.Bind["T"]]
		if size == 0 {
			return nil, fmt.Errorf("kernel %s: element type %q has no host implementation", k.Name, k.Bind["T"])
		}
		return elementKernel(size, size, "copies", func(d, s []byte) { copy(d, s) }), nil
	})
}
