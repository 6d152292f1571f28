package host

import (
	"encoding/binary"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// getrows.go implements kernels/getrows.cu.

// getrowsRows is getrows.cu's getrows_rows: the byte offsets of dst row r's
// destination and source rows; ok is false for an index out of range.
func getrowsRows(m [][]byte, r uint32, dst, src0, src1 vendorapi.TensorDesc, ne10, ne11 vendorapi.FastDiv) (d, s int64, ok bool) {
	i10, i11, i12 := rowIndex(r, ne10, ne11)
	d = int64(i10)*dst.Nb[1] + int64(i11)*dst.Nb[2] + int64(i12)*dst.Nb[3]
	at := int64(i10)*src1.Nb[0] + int64(i11)*src1.Nb[1] + int64(i12)*src1.Nb[2]
	i01 := int64(int32(binary.LittleEndian.Uint32(m[2][at:])))
	if i01 < 0 || i01 >= src0.Ne[1] {
		return d, 0, false
	}
	return d, i01*src0.Nb[1] + int64(i11)*src0.Nb[2] + int64(i12)*src0.Nb[3], true
}

// getrowsKernel is a getrows kernel whose source rows hold elements of size
// bytes (16-byte rows in src0 and dst when vec), one element moved by move.
func getrowsKernel(size uint64, vec bool, move func(d, s []byte)) *hostKernel {
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			bufs := []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src0", a.TensorAt(1), size),
				tensorBuf("src1", a.TensorAt(2), 4)}
			if vec {
				bufs[0], bufs[1] = vecRows("dst", a.TensorAt(0), 4, 16), vecRows("src0", a.TensorAt(1), 4, 16)
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src0, src1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
			ne10, ne11 := a.FastDivAt(3), a.FastDivAt(4)
			b.blockRows(a.I64At(5), func(row int64) {
				d, s, ok := getrowsRows(m, uint32(row), dst, src0, src1, ne10, ne11)
				for i0 := range dst.Ne[0] {
					out := m[0][d+i0*dst.Nb[0]:]
					if !ok {
						binary.LittleEndian.PutUint32(out, 0)
						continue
					}
					move(out, m[1][s+i0*src0.Nb[0]:])
				}
			})
		},
	}
}

// getrowsCopy32 copies one 4-byte element bit for bit.
func getrowsCopy32(d, s []byte) { copy(d[:4], s[:4]) }

func init() {
	// getrows_{t}(dst, src0, src1, ne10, ne11, nrows).
	registerTemplate("getrows", func(k kernels.Kernel) (*hostKernel, error) {
		if k.Bind["t"] == "i32" {
			return getrowsKernel(4, false, getrowsCopy32), nil
		}
		t, err := elemTypeOf(k.Name, k.Bind, "t")
		if err != nil {
			return nil, err
		}
		f32 := elemTypes["f32"]
		return getrowsKernel(t.size, false, func(d, s []byte) { f32.store(d, t.load(s)) }), nil
	})
	// getrows4_b32(dst, src0, src1, ne10, ne11, nrows).
	register("getrows4_b32", getrowsKernel(4, true, getrowsCopy32))
}
