package host

import (
	"fmt"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// binbcast.go implements kernels/binbcast.cu.

// binOp returns the op of binbcast.cu's ternion_bin_* structs for kernel k.
func binOp(k kernels.Kernel) (func(x, y float32) float32, error) {
	if op := binaryOps[k.Bind["op"]]; op != nil {
		return op, nil
	}
	return nil, fmt.Errorf("kernel %s: op %q has no host implementation", k.Name, k.Bind["op"])
}

// binRow is binbcast.cu's ternion_bin_row: the indices (i1, i2, i3) of dst's
// row r and (j1, j2, j3) of src1's.
func binRow(r uint32, ne01, ne02, ne11, ne12, ne13 vendorapi.FastDiv) (i, j [4]uint32) {
	i[1], i[2], i[3] = rowIndex(r, ne01, ne02)
	j[1], j[2], j[3] = ne11.Mod(i[1]), ne12.Mod(i[2]), ne13.Mod(i[3])
	return i, j
}

// rowOff is the byte offset of row (i1, i2, i3) of t.
func rowOff(t vendorapi.TensorDesc, i [4]uint32) int64 {
	return int64(i[1])*t.Nb[1] + int64(i[2])*t.Nb[2] + int64(i[3])*t.Nb[3]
}

func init() {
	// bin_{op}_{t0}_{t1}(dst, src0, src1, ne01, ne02, ne10, ne11, ne12, ne13, nrows).
	registerTemplate("bin_bcast", func(k kernels.Kernel) (*hostKernel, error) {
		op, err := binOp(k)
		if err != nil {
			return nil, err
		}
		t0, err := elemTypeOf(k.Name, k.Bind, "t0")
		if err != nil {
			return nil, err
		}
		t1, err := elemTypeOf(k.Name, k.Bind, "t1")
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				return []buffer{tensorBuf("dst", a.TensorAt(0), t0.size), tensorBuf("src0", a.TensorAt(1), t0.size),
					tensorBuf("src1", a.TensorAt(2), t1.size)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				ne01, ne02, ne10 := a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5)
				ne11, ne12, ne13 := a.FastDivAt(6), a.FastDivAt(7), a.FastDivAt(8)
				b.blockRows(a.I64At(9), func(row int64) {
					i, j := binRow(uint32(row), ne01, ne02, ne11, ne12, ne13)
					d, x, y := rowOff(dst, i), rowOff(s0, i), rowOff(s1, j)
					for i0 := range dst.Ne[0] {
						j0 := int64(ne10.Mod(uint32(i0)))
						v := op(t0.load(m[1][x+i0*s0.Nb[0]:]), t1.load(m[2][y+j0*s1.Nb[0]:]))
						t0.store(m[0][d+i0*dst.Nb[0]:], v)
					}
				})
			},
		}, nil
	})
	// bin4_{op}_f32(dst, src0, src1, ne01, ne02, ne11, ne12, ne13, nrows):
	// the float4 path computes the same values.
	registerTemplate("bin4_f32", func(k kernels.Kernel) (*hostKernel, error) {
		op, err := binOp(k)
		if err != nil {
			return nil, err
		}
		f32 := elemTypes["f32"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := []buffer{vecRows("dst", a.TensorAt(0), 4, 16), vecRows("src0", a.TensorAt(1), 4, 16),
					vecRows("src1", a.TensorAt(2), 4, 16)}
				if a.TensorAt(2).Ne[0] != a.TensorAt(0).Ne[0] && bufs[2].bad == "" {
					bufs[2].bad = "bin4 needs src1 rows as long as dst's"
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				ne01, ne02 := a.FastDivAt(3), a.FastDivAt(4)
				ne11, ne12, ne13 := a.FastDivAt(5), a.FastDivAt(6), a.FastDivAt(7)
				b.blockRows(a.I64At(8), func(row int64) {
					i, j := binRow(uint32(row), ne01, ne02, ne11, ne12, ne13)
					d, x, y := rowOff(dst, i), rowOff(s0, i), rowOff(s1, j)
					for i0 := range dst.Ne[0] {
						f32.store(m[0][d+4*i0:], op(f32.load(m[1][x+4*i0:]), f32.load(m[2][y+4*i0:])))
					}
				})
			},
		}, nil
	})
}
