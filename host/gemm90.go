package host

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// gemm90.go implements kernels/gemm90.cu: src1 converted to f16 in the
// gemm's swizzled B tile order, and the gemm of quantized src0 (kernels.Gemm90Groups), expanded to
// f16 (one rounding of each value, as the device), by those columns.

// gemm90BIndex is the f16 element of gemm90_b_f32's output holding value
// (column n, k) for rows of kk values: tile (n/128, k/64) of 128x64, row
// n%128's chunk (k%64)/8 swizzled by the row's low 3 bits.
func gemm90BIndex(n, k, kk int64) int64 {
	const bn, bk = kernels.Gemm90Tile, 64
	r, c := n%bn, (k%bk)/8
	return ((n/bn)*(kk/bk)+k/bk)*(bn*bk) + r*bk + (c^(r&7))*8 + k%8
}

func init() {
	// gemm90_b_f32(bt, src1, chunks): thread q of the grid converts the
	// 8 values of chunk q (column q / (k/8), values 8·(q % (k/8)) …); a
	// column past src1's n is zeros.
	register("gemm90_b_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			src1, chunks := a.TensorAt(1), a.I64At(2)
			k, n := src1.Ne[0], src1.Ne[1]
			bt, s := elems("bt", a.PtrAt(0), chunks*8, 2), tensorBuf("src1", src1, 4)
			bt.align, s.align = 16, 16
			switch {
			case k%256 != 0 || src1.Nb[0] != 4 || src1.Ne[2]*src1.Ne[3] != 1:
				s.bad = fmt.Sprintf("src1 (ne %v, nb %v) is not one f32 matrix packed along k, k a multiple of 256", src1.Ne, src1.Nb)
			case src1.Nb[1]%16 != 0:
				s.bad = fmt.Sprintf("src1's columns (nb[1] = %d) do not start 16-byte aligned", src1.Nb[1])
			case chunks != kernels.Gemm90BBytes(n, k)/16:
				bt.bad = fmt.Sprintf("chunks = %d is not Gemm90Tiles(%d)·128·%d/8", chunks, n, k)
			}
			return []buffer{bt, s}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			src1, chunks := a.TensorAt(1), a.I64At(2)
			k, n := src1.Ne[0], src1.Ne[1]
			first := int64(b.idx.X) * int64(b.dim.X)
			for q := first; q < min(first+int64(b.dim.X), chunks); q++ {
				col, k0 := q/(k/8), (q%(k/8))*8
				for j := range int64(8) {
					v := float32(0)
					if col < n {
						v = math.Float32frombits(binary.LittleEndian.Uint32(m[1][col*src1.Nb[1]+(k0+j)*4:]))
					}
					binary.LittleEndian.PutUint16(m[0][2*gemm90BIndex(col, k0+j, k):], half.F16FromF32(v))
				}
			}
		},
	})
	// gemm90_{q}(dst, src0, bt): block b computes dst's 128x128 tile
	// (m-tile b % mt, n-tile b / mt) from src0's rows, each value rounded
	// once to f16, and bt's columns, storing rows < m and columns < n.
	registerTemplate("gemm90_q", func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		if _, ok := kernels.Gemm90Groups[f.Name]; !ok {
			return nil, fmt.Errorf("kernel %s: %s has no gemm90 group size (kernels.Gemm90Groups)", k.Name, f.Name)
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, s0 := a.TensorAt(0), a.TensorAt(1)
				d, src0 := tensorBuf("dst", dst, 4), quantBuf("src0", s0, f)
				align := int64(kernels.Gemm90RowAlign(f.Name))
				src0.align = uint64(align)
				bt := elems("bt", a.PtrAt(2), kernels.Gemm90BBytes(dst.Ne[1], s0.Ne[0])/2, 2)
				bt.align = 16
				switch {
				case s0.Ne[0]%256 != 0 || s0.Ne[2]*s0.Ne[3] != 1 || s0.Nb[1]%align != 0:
					src0.bad = fmt.Sprintf("src0 (ne %v, nb %v) is not one matrix of rows %d-byte aligned, k a multiple of 256", s0.Ne, s0.Nb, align)
				case dst.Ne[0] != s0.Ne[1] || dst.Nb[0] != 4 || dst.Ne[2]*dst.Ne[3] != 1:
					d.bad = fmt.Sprintf("dst (ne %v, nb %v) is not one f32 matrix of src0's %d rows", dst.Ne, dst.Nb, s0.Ne[1])
				}
				return []buffer{d, src0, bt}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0 := a.TensorAt(0), a.TensorAt(1)
				const tile = kernels.Gemm90Tile
				rows, kk, cols := s0.Ne[1], s0.Ne[0], dst.Ne[1]
				mt := (rows + tile - 1) / tile
				m0, n0 := (int64(b.idx.X)%mt)*tile, (int64(b.idx.X)/mt)*tile
				if n0 >= cols {
					return
				}
				nr, nc := min(tile, rows-m0), min(tile, cols-n0)
				av, bv := make([]float32, nr*kk), make([]float32, nc*kk)
				blk := make([]float32, f.BlockElems)
				for r := range nr {
					off := (m0 + r) * s0.Nb[1]
					for e := int64(0); e < kk; e += int64(f.BlockElems) {
						start := off + e/int64(f.BlockElems)*int64(f.BlockBytes)
						_ = f.Dequantize(blk, m[1][start:start+int64(f.BlockBytes)])
						for j, v := range blk {
							av[r*kk+e+int64(j)] = half.F16ToF32(half.F16FromF32(v))
						}
					}
				}
				for c := range nc {
					for e := range kk {
						bv[c*kk+e] = half.F16ToF32(binary.LittleEndian.Uint16(m[2][2*gemm90BIndex(n0+c, e, kk):]))
					}
				}
				for c := range nc {
					for r := range nr {
						x, y := av[r*kk:(r+1)*kk], bv[c*kk:(c+1)*kk]
						var s float32
						for e := range x {
							s += x[e] * y[e]
						}
						binary.LittleEndian.PutUint32(m[0][(n0+c)*dst.Nb[1]+(m0+r)*4:], math.Float32bits(s))
					}
				}
			},
		}, nil
	})
}
