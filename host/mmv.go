package host

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// mmv.go implements kernels/mmv.cu.

func init() {
	// mmv_{t}(dst, src0, src1, r2, r3) and mmvv_{t}(…, early): one dot
	// product per block (kernels.MMVVRows for mmvv_{t}), summed in float64
	// (the GPU sums in float32 in its own order; results are compared
	// within MUL_MAT's error bound). mmvv_{t} loads 16-byte vectors, so its
	// rows must be 16-byte aligned; its early flag only moves its first
	// loads on the GPU.
	mmv := func(k kernels.Kernel) (*hostKernel, error) {
		t, err := elemTypeOf(k.Name, k.Bind, "t")
		if err != nil {
			return nil, err
		}
		vec := strings.HasPrefix(k.Name, "mmvv_")
		rows := int64(1) // rows a block: kernels.MMVVRows for mmvv_{t}
		if vec {
			rows = int64(kernels.MMVVRows(k.Bind["t"]))
		}
		f32 := elemTypes["f32"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src0", a.TensorAt(1), t.size),
					tensorBuf("src1", a.TensorAt(2), 4)}
				if vec {
					bufs[1], bufs[2] = vecRows("src0", a.TensorAt(1), t.size, 16), vecRows("src1", a.TensorAt(2), 4, 16)
				}
				if a.TensorAt(1).Nb[0] != int64(t.size) || a.TensorAt(2).Nb[0] != 4 {
					bufs[1].bad = "mmv needs packed rows in src0 and src1"
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				r2, r3 := a.FastDivAt(3), a.FastDivAt(4)
				i12, i13 := int64(b.idx.Y), int64(b.idx.Z)
				i02, i03 := int64(r2.Div(uint32(i12))), int64(r3.Div(uint32(i13)))
				y := i12*s1.Nb[2] + i13*s1.Nb[3]
				for row := int64(b.idx.X) * rows; row < min(int64(b.idx.X+1)*rows, s0.Ne[1]); row++ {
					x := row*s0.Nb[1] + i02*s0.Nb[2] + i03*s0.Nb[3]
					var sum float64
					for i := range s0.Ne[0] {
						sum += float64(t.load(m[1][x+i*int64(t.size):])) * float64(f32.load(m[2][y+4*i:]))
					}
					f32.store(m[0][row*dst.Nb[0]+i12*dst.Nb[2]+i13*dst.Nb[3]:], float32(sum))
				}
			},
		}, nil
	}
	registerTemplate("mmv", mmv)
	registerTemplate("mmvv", mmv)
	// mmvn_{t}(dst, src0, src1, r2, r3, ncols): kernels.MMVVRows rows a
	// block for 2 ≤ ncols ≤ 8 columns, 16-byte aligned rows; each dot
	// product summed in float64.
	registerTemplate("mmvn", mmvnHost(func(k kernels.Kernel) int64 { return int64(kernels.MMVVRows(k.Bind["t"])) }))
	// mmvt_{t} and mmvt2_{t}(dst, src0, src1, r2, r3, ncols): mmvn's
	// product with r·kernels.MMVTRows rows a block (axis r, the row tiles:
	// 1 and 2; the device rounds src1 to {t} for its tensor cores; here the
	// products are exact, within MUL_MAT's error bound of the device's).
	registerTemplate("mmvt", mmvnHost(func(k kernels.Kernel) int64 {
		r, _ := strconv.Atoi(k.Bind["r"])
		return int64(r) * kernels.MMVTRows
	}))
	// batched_ptrs(out, a, b, c, ne12, ne13, nba2, nba3, nbb2, nbb3, nbc2, nbc3, r2, r3).
	register("batched_ptrs", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			n := a.I64At(4) * a.I64At(5)
			if n < 0 || n > 1<<40 {
				return []buffer{{param: "out", bad: "ne12*ne13 is out of range"}}
			}
			return []buffer{elems("out", a.PtrAt(0), 3*n, 8)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			out := i64s(m[0])
			pa, pb, pc := a.I64At(1), a.I64At(2), a.I64At(3)
			ne12, ne13 := a.I64At(4), a.I64At(5)
			nba2, nba3, nbb2, nbb3, nbc2, nbc3 := a.I64At(6), a.I64At(7), a.I64At(8), a.I64At(9), a.I64At(10), a.I64At(11)
			r2, r3 := a.I64At(12), a.I64At(13)
			n := ne12 * ne13
			b.gridStride(n, func(i int64) {
				i12, i13 := i%ne12, i/ne12
				out[i] = pa + (i12/r2)*nba2 + (i13/r3)*nba3
				out[n+i] = pb + i12*nbb2 + i13*nbb3
				out[2*n+i] = pc + i12*nbc2 + i13*nbc3
			})
		},
	})
}

// mmvnHost makes the host implementation of mmvn_{t}, mmvt_{t} or
// mmvt2_{t}, whose blocks take rowsOf(k) rows for 2..8 columns.
func mmvnHost(rowsOf func(k kernels.Kernel) int64) func(kernels.Kernel) (*hostKernel, error) {
	return func(k kernels.Kernel) (*hostKernel, error) {
		t, err := elemTypeOf(k.Name, k.Bind, "t")
		if err != nil {
			return nil, err
		}
		rows := rowsOf(k)
		if rows <= 0 {
			return nil, fmt.Errorf("kernel %s: its rows a block (axes %v) have no host implementation", k.Name, k.Bind)
		}
		f32 := elemTypes["f32"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := []buffer{tensorBuf("dst", a.TensorAt(0), 4), vecRows("src0", a.TensorAt(1), t.size, 16),
					vecRows("src1", a.TensorAt(2), 4, 16)}
				if n := a.I32At(5); n < 2 || n > 8 || int64(n) != a.TensorAt(2).Ne[1] {
					bufs[2].bad = fmt.Sprintf("ncols = %d is not src1's ne[1] = %d in 2..8", n, a.TensorAt(2).Ne[1])
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				r2, r3, ncols := a.FastDivAt(3), a.FastDivAt(4), int64(a.I32At(5))
				i12, i13 := int64(b.idx.Y), int64(b.idx.Z)
				i02, i03 := int64(r2.Div(uint32(i12))), int64(r3.Div(uint32(i13)))
				for row := int64(b.idx.X) * rows; row < min(int64(b.idx.X+1)*rows, s0.Ne[1]); row++ {
					x := row*s0.Nb[1] + i02*s0.Nb[2] + i03*s0.Nb[3]
					for c := range ncols {
						y := c*s1.Nb[1] + i12*s1.Nb[2] + i13*s1.Nb[3]
						var sum float64
						for i := range s0.Ne[0] {
							sum += float64(t.load(m[1][x+i*int64(t.size):])) * float64(f32.load(m[2][y+4*i:]))
						}
						f32.store(m[0][row*dst.Nb[0]+c*dst.Nb[1]+i12*dst.Nb[2]+i13*dst.Nb[3]:], float32(sum))
					}
				}
			},
		}, nil
	}
}
