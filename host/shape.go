package host

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// shape.go implements kernels/shape.cu.

// shapeUnitSizes are the byte sizes of shape.cu's storage units (axis T).
var shapeUnitSizes = map[string]uint64{"b16": 2, "b32": 4, "b128": 16}

// shapeUnit returns the unit size of a repeat/concat/pad kernel k.
func shapeUnit(k kernels.Kernel) (uint64, error) {
	if n, ok := shapeUnitSizes[k.Bind["T"]]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("kernel %s: unit %q has no host implementation", k.Name, k.Bind["T"])
}

// shapeRowPtr is shape.cu's shape_row_ptr: the byte offset of row (i1, i2, i3) of t.
func shapeRowPtr(t vendorapi.TensorDesc, i1, i2, i3 int64) int64 {
	return i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
}

// shapeNearest is shape.cu's shape_nearest: i/sf in float32, truncated and
// clamped to the n source indices.
func shapeNearest(i uint32, sf float32, n int64) int64 {
	return min(int64(float32(i)/sf), n-1)
}

// shapeLerpIndex is shape.cu's shape_lerp_index: the neighbours of dst index
// i's source position and the weight of the second, in float32.
func shapeLerpIndex(i uint32, sf, off float32, n int64) (k0, k1 int64, w float32) {
	p := (float32(i)+off)/sf - off
	k0 = int64(math.Floor(float64(p)))
	k1 = k0 + 1
	k0, k1 = max(0, min(k0, n-1)), max(0, min(k1, n-1))
	w = max(0, min(p-float32(k0), 1))
	return k0, k1, w
}

// shapeTensors is the host kernel of shape.cu's kernel k whose first
// arguments are the tensors named (dst, then its sources) in k's storage
// units of size bytes: body runs one block.
func shapeTensors(k kernels.Kernel, names []string, body func(m [][]byte, a *vendorapi.Args, b block, size uint64)) (*hostKernel, error) {
	size, err := shapeUnit(k)
	if err != nil {
		return nil, err
	}
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			bufs := make([]buffer, len(names))
			for i, name := range names {
				bufs[i] = tensorBuf(name, a.TensorAt(i), size)
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) { body(m, a, b, size) },
	}, nil
}

// shapeDstSrc and shapeConcat are shapeTensors of the kernels that build
// dst from src, and from src0 and src1.
var shapeDstSrc, shapeConcat = []string{"dst", "src"}, []string{"dst", "src0", "src1"}

// shapeConcatUnit is the unit of CONCAT's dst at index i (of size bytes):
// src0's (memory m[1]) where i[dim] < s0.Ne[dim], else src1's (m[2]) at
// i[dim] - s0.Ne[dim].
func shapeConcatUnit(m [][]byte, s0, s1 vendorapi.TensorDesc, dim int, i [4]int64, size uint64) []byte {
	src, mem := s0, m[1]
	if i[dim] >= s0.Ne[dim] {
		i[dim] -= s0.Ne[dim]
		src, mem = s1, m[2]
	}
	return mem[shapeRowPtr(src, i[1], i[2], i[3])+i[0]*src.Nb[0]:][:size]
}

func init() {
	// repeat_{T}(dst, src, dne1, dne2, sne0, sne1, sne2, sne3, nrows).
	registerTemplate("shape_repeat", func(k kernels.Kernel) (*hostKernel, error) {
		return shapeTensors(k, shapeDstSrc, func(m [][]byte, a *vendorapi.Args, b block, size uint64) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			dne1, dne2 := a.FastDivAt(2), a.FastDivAt(3)
			sne0, sne1, sne2, sne3 := a.FastDivAt(4), a.FastDivAt(5), a.FastDivAt(6), a.FastDivAt(7)
			b.blockRows(a.I64At(8), func(row int64) {
				i1, i2, i3 := rowIndex(uint32(row), dne1, dne2)
				s := shapeRowPtr(src, int64(sne1.Mod(i1)), int64(sne2.Mod(i2)), int64(sne3.Mod(i3)))
				d := shapeRowPtr(dst, int64(i1), int64(i2), int64(i3))
				for i0 := range dst.Ne[0] {
					j0 := int64(sne0.Mod(uint32(i0)))
					copy(m[0][d+i0*dst.Nb[0]:][:size], m[1][s+j0*src.Nb[0]:][:size])
				}
			})
		})
	})
	// repeatf_{T}(dst, src, dne0, dne1, dne2, sne0, sne1, sne2, sne3, n):
	// dst packed.
	registerTemplate("shape_repeat_flat", func(k kernels.Kernel) (*hostKernel, error) {
		return shapeTensors(k, shapeDstSrc, func(m [][]byte, a *vendorapi.Args, b block, size uint64) {
			src := a.TensorAt(1)
			dne0, dne1, dne2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4)
			sne0, sne1, sne2, sne3 := a.FastDivAt(5), a.FastDivAt(6), a.FastDivAt(7), a.FastDivAt(8)
			b.gridStride(a.I64At(9), func(t int64) {
				i := uint32(t)
				r := dne0.Div(i)
				i1, i2, i3 := rowIndex(r, dne1, dne2)
				s := int64(sne0.Mod(i-r*dne0.D))*src.Nb[0] + shapeRowPtr(src, int64(sne1.Mod(i1)), int64(sne2.Mod(i2)), int64(sne3.Mod(i3)))
				copy(m[0][uint64(t)*size:][:size], m[1][s:][:size])
			})
		})
	})
	// concat_{T}(dst, src0, src1, dim, dne1, dne2, nrows).
	registerTemplate("shape_concat", func(k kernels.Kernel) (*hostKernel, error) {
		return shapeTensors(k, shapeConcat, func(m [][]byte, a *vendorapi.Args, b block, size uint64) {
			dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
			dim := int(a.I32At(3))
			dne1, dne2 := a.FastDivAt(4), a.FastDivAt(5)
			b.blockRows(a.I64At(6), func(row int64) {
				i1, i2, i3 := rowIndex(uint32(row), dne1, dne2)
				i := [4]int64{0, int64(i1), int64(i2), int64(i3)}
				d := shapeRowPtr(dst, i[1], i[2], i[3])
				for i0 := range dst.Ne[0] {
					i[0] = i0
					copy(m[0][d+i0*dst.Nb[0]:][:size], shapeConcatUnit(m, s0, s1, dim, i, size))
				}
			})
		})
	})
	// concatf_{T}(dst, src0, src1, dim, dne0, dne1, dne2, n): dst packed.
	registerTemplate("shape_concat_flat", func(k kernels.Kernel) (*hostKernel, error) {
		return shapeTensors(k, shapeConcat, func(m [][]byte, a *vendorapi.Args, b block, size uint64) {
			s0, s1 := a.TensorAt(1), a.TensorAt(2)
			dim := int(a.I32At(3))
			dne0, dne1, dne2 := a.FastDivAt(4), a.FastDivAt(5), a.FastDivAt(6)
			b.gridStride(a.I64At(7), func(t int64) {
				i := uint32(t)
				r := dne0.Div(i)
				i1, i2, i3 := rowIndex(r, dne1, dne2)
				idx := [4]int64{int64(i - r*dne0.D), int64(i1), int64(i2), int64(i3)}
				copy(m[0][uint64(t)*size:][:size], shapeConcatUnit(m, s0, s1, dim, idx, size))
			})
		})
	})
	// pad_{T}(dst, src, lp0, lp1, lp2, lp3, dne1, dne2, nrows).
	registerTemplate("shape_pad", func(k kernels.Kernel) (*hostKernel, error) {
		return shapeTensors(k, shapeDstSrc, func(m [][]byte, a *vendorapi.Args, b block, size uint64) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			lp := [4]int64{int64(a.I32At(2)), int64(a.I32At(3)), int64(a.I32At(4)), int64(a.I32At(5))}
			dne1, dne2 := a.FastDivAt(6), a.FastDivAt(7)
			b.blockRows(a.I64At(8), func(row int64) {
				i1, i2, i3 := rowIndex(uint32(row), dne1, dne2)
				d := shapeRowPtr(dst, int64(i1), int64(i2), int64(i3))
				j := [4]int64{0, int64(i1) - lp[1], int64(i2) - lp[2], int64(i3) - lp[3]}
				for i0 := range dst.Ne[0] {
					j[0] = i0 - lp[0]
					out := m[0][d+i0*dst.Nb[0]:][:size]
					inside := true
					for x := range 4 {
						inside = inside && j[x] >= 0 && j[x] < src.Ne[x]
					}
					if !inside {
						clear(out)
						continue
					}
					copy(out, m[1][shapeRowPtr(src, j[1], j[2], j[3])+j[0]*src.Nb[0]:][:size])
				}
			})
		})
	})
	f32 := elemTypes["f32"]
	// upscale_nearest_f32(dst, src, sf0, sf1, sf2, sf3, dne1, dne2, nrows).
	register("upscale_nearest_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src", a.TensorAt(1), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			sf0, sf1, sf2, sf3 := a.F32At(2), a.F32At(3), a.F32At(4), a.F32At(5)
			dne1, dne2 := a.FastDivAt(6), a.FastDivAt(7)
			b.blockRows(a.I64At(8), func(row int64) {
				i1, i2, i3 := rowIndex(uint32(row), dne1, dne2)
				s := shapeRowPtr(src, shapeNearest(i1, sf1, src.Ne[1]), shapeNearest(i2, sf2, src.Ne[2]),
					shapeNearest(i3, sf3, src.Ne[3]))
				d := shapeRowPtr(dst, int64(i1), int64(i2), int64(i3))
				for i0 := range dst.Ne[0] {
					j0 := shapeNearest(uint32(i0), sf0, src.Ne[0])
					f32.store(m[0][d+i0*dst.Nb[0]:], f32.load(m[1][s+j0*src.Nb[0]:]))
				}
			})
		},
	})
	// upscale_bilinear_f32(dst, src, sf0, sf1, sf2, sf3, off, dne1, dne2, nrows).
	register("upscale_bilinear_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src", a.TensorAt(1), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			sf0, sf1, sf2, sf3, off := a.F32At(2), a.F32At(3), a.F32At(4), a.F32At(5), a.F32At(6)
			dne1, dne2 := a.FastDivAt(7), a.FastDivAt(8)
			b.blockRows(a.I64At(9), func(row int64) {
				i1, i2, i3 := rowIndex(uint32(row), dne1, dne2)
				y0, y1, dy := shapeLerpIndex(i1, sf1, off, src.Ne[1])
				j2, j3 := shapeNearest(i2, sf2, src.Ne[2]), shapeNearest(i3, sf3, src.Ne[3])
				r0, r1 := shapeRowPtr(src, y0, j2, j3), shapeRowPtr(src, y1, j2, j3)
				d := shapeRowPtr(dst, int64(i1), int64(i2), int64(i3))
				for i0 := range dst.Ne[0] {
					x0, x1, dx := shapeLerpIndex(uint32(i0), sf0, off, src.Ne[0])
					at := func(r, x int64) float32 { return f32.load(m[1][r+x*src.Nb[0]:]) }
					v := at(r0, x0)*(1-dx)*(1-dy) + at(r0, x1)*dx*(1-dy) + at(r1, x0)*(1-dx)*dy + at(r1, x1)*dx*dy
					f32.store(m[0][d+i0*dst.Nb[0]:], v)
				}
			})
		},
	})
	// arange_f32(dst, start, step, n): dst[i] = fmaf(step, i, start).
	register("arange_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer { return []buffer{elems("dst", a.PtrAt(0), a.I64At(3), 4)} },
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst := f32s(m[0])
			start, step := a.F32At(1), a.F32At(2)
			b.gridStride(a.I64At(3), func(i int64) { dst[i] = fma32(step, float32(i), start) })
		},
	})
	// tsembd_f32(dst, src, dim, max_period, nrows).
	register("tsembd_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src", a.TensorAt(1), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			dim, period := int64(a.I32At(2)), a.I32At(3)
			half := dim / 2
			lmp := -float32(math.Log(float64(float32(period))))
			b.blockRows(a.I64At(4), func(row int64) {
				t := f32.load(m[1][row*src.Nb[0]:])
				d := row * dst.Nb[1]
				for j := range half {
					freq := float32(math.Exp(float64(lmp * float32(j) / float32(half))))
					arg := float64(t * freq)
					f32.store(m[0][d+j*dst.Nb[0]:], float32(math.Cos(arg)))
					f32.store(m[0][d+(j+half)*dst.Nb[0]:], float32(math.Sin(arg)))
				}
				if dim%2 != 0 {
					f32.store(m[0][d+2*half*dst.Nb[0]:], 0)
				}
			})
		},
	})
}
