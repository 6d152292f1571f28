package host

import (
	"encoding/binary"
	"math"

	"github.com/ternion/ternion/vendorapi"
)

// addid.go implements kernels/addid.cu.

func init() {
	// add_id_f32(dst, a, b, ids, ne0, ne1, n, flag): a row index out of
	// range writes NaN and sets bit 2 of the word at flag when flag is not
	// null.
	register("add_id_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("a", a.TensorAt(1), 4), tensorBuf("b", a.TensorAt(2), 4),
				tensorBuf("ids", a.TensorAt(3), 4), optionalWord("flag", a.PtrAt(7))}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src, rows, ids := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2), a.TensorAt(3)
			ne0, ne1 := a.FastDivAt(4), a.FastDivAt(5)
			b.gridStride(a.I64At(6), func(e int64) {
				row := ne0.Div(uint32(e))
				i0 := int64(uint32(e) - row*ne0.D)
				i2 := int64(ne1.Div(row))
				i1 := int64(row) - i2*int64(ne1.D)
				id := int64(int32(binary.LittleEndian.Uint32(m[3][i1*ids.Nb[0]+i2*ids.Nb[1]:])))
				out := m[0][i0*dst.Nb[0]+i1*dst.Nb[1]+i2*dst.Nb[2]:]
				if id < 0 || id >= rows.Ne[1] {
					binary.LittleEndian.PutUint32(out, 0x7fc00000)
					setFlag(m[4], 2)
					return
				}
				x := math.Float32frombits(binary.LittleEndian.Uint32(m[1][i0*src.Nb[0]+i1*src.Nb[1]+i2*src.Nb[2]:]))
				y := math.Float32frombits(binary.LittleEndian.Uint32(m[2][i0*rows.Nb[0]+id*rows.Nb[1]:]))
				binary.LittleEndian.PutUint32(out, math.Float32bits(x+y))
			})
		},
	})
}
