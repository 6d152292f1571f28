package host

import (
	"fmt"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// convert.go implements kernels/convert.cu.

// rowIndex splits row r of a tensor whose dims 1 and 2 divide as d1 and d2
// into its indices (i1, i2, i3), dividing with the fast-division constants
// as the kernels do.
func rowIndex(r uint32, d1, d2 vendorapi.FastDiv) (i1, i2, i3 uint32) {
	q := d1.Div(r)
	i1 = r - q*d1.D
	i3 = d2.Div(q)
	i2 = q - i3*d2.D
	return i1, i2, i3
}

// rowOffset is index.h's ternion_row_offset: the byte offset of row r of t.
func rowOffset(r uint32, t vendorapi.TensorDesc, d1, d2 vendorapi.FastDiv) int64 {
	i1, i2, i3 := rowIndex(r, d1, d2)
	return int64(i1)*t.Nb[1] + int64(i2)*t.Nb[2] + int64(i3)*t.Nb[3]
}

// convertTypes returns the source and destination storage types of a
// cvt_{ts}_{td} kernel.
func convertTypes(k kernels.Kernel) (ts, td elemType, err error) {
	if ts, err = elemTypeOf(k.Name, k.Bind, "ts"); err != nil {
		return
	}
	td, err = elemTypeOf(k.Name, k.Bind, "td")
	return
}

func init() {
	// Every kernel of convert.cu takes dslot last: when not null, the device
	// word holding dst's data pointer (indirect).
	// cvt_{ts}_{td}(dst, src, sne0..2, dne0..2, n, dslot).
	registerTemplate("cvt", func(k kernels.Kernel) (*hostKernel, error) {
		ts, td, err := convertTypes(k)
		if err != nil {
			return nil, err
		}
		return elementKernel(td.size, ts.size, "converts", func(d, s []byte) { td.store(d, ts.load(s)) }), nil
	})
	// cvt_rows_{ts}_{td}(dst, src, sne1, sne2, dne1, dne2, nrows, dslot).
	registerTemplate("cvt_rows", func(k kernels.Kernel) (*hostKernel, error) {
		ts, td, err := convertTypes(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				return []buffer{indirect(vecRows("dst", a.TensorAt(0), td.size, td.size), a.PtrAt(7)),
					vecRows("src", a.TensorAt(1), ts.size, ts.size)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				s1, s2, d1, d2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5)
				b.blockRows(a.I64At(6), func(row int64) {
					so, do := rowOffset(uint32(row), src, s1, s2), rowOffset(uint32(row), dst, d1, d2)
					for i0 := range uint64(dst.Ne[0]) {
						td.store(m[0][uint64(do)+i0*td.size:], ts.load(m[1][uint64(so)+i0*ts.size:]))
					}
				})
			},
		}, nil
	})
	// rows4_b32(dst, src, sne1, sne2, dne1, dne2, nrows, dslot).
	register("rows4_b32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{indirect(vecRows("dst", a.TensorAt(0), 4, 16), a.PtrAt(7)), vecRows("src", a.TensorAt(1), 4, 16)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			s1, s2, d1, d2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5)
			n := 4 * dst.Ne[0]
			b.blockRows(a.I64At(6), func(row int64) {
				so, do := rowOffset(uint32(row), src, s1, s2), rowOffset(uint32(row), dst, d1, d2)
				copy(m[0][do:do+n], m[1][so:so+n])
			})
		},
	})
	// cvt_tile_{ts}_{td}(dst, src, c, na, nbatch, dslot).
	registerTemplate("cvt_tile", func(k kernels.Kernel) (*hostKernel, error) {
		ts, td, err := convertTypes(k)
		if err != nil {
			return nil, err
		}
		const tile = 32
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, src := tensorBuf("dst", a.TensorAt(0), td.size), tensorBuf("src", a.TensorAt(1), ts.size)
				if c := a.I32At(2); c < 1 || c > 3 {
					dst.bad = fmt.Sprintf("c = %d is not a dimension 1..3", c)
				}
				if a.TensorAt(0).Ne != a.TensorAt(1).Ne {
					dst.bad = "dst and src differ in shape"
				}
				return []buffer{indirect(dst, a.PtrAt(5)), src}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src, c, na := a.TensorAt(0), a.TensorAt(1), int(a.I32At(2)), a.FastDivAt(3)
				da, db := 1, 3
				if c == 1 {
					da = 2
				}
				if c == 3 {
					db = 2
				}
				ic0, i00 := int64(b.idx.X)*tile, int64(b.idx.Y)*tile
				const tileZ = 4 // batches per block step (TERNION_TILE_Z)
				nbatch := a.I64At(4)
				for z0 := int64(b.idx.Z) * tileZ; z0 < nbatch; z0 += int64(b.grid.Z) * tileZ {
					for z := z0; z < min(z0+tileZ, nbatch); z++ {
						ib := na.Div(uint32(z))
						ia := uint32(z) - ib*na.D
						so := int64(ia)*src.Nb[da] + int64(ib)*src.Nb[db]
						do := int64(ia)*dst.Nb[da] + int64(ib)*dst.Nb[db]
						for i0 := i00; i0 < min(i00+tile, dst.Ne[0]); i0++ {
							for ic := ic0; ic < min(ic0+tile, dst.Ne[c]); ic++ {
								td.store(m[0][do+i0*dst.Nb[0]+ic*dst.Nb[c]:], ts.load(m[1][so+i0*src.Nb[0]+ic*src.Nb[c]:]))
							}
						}
					}
				}
			},
		}, nil
	})
}
