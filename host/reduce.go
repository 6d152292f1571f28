package host

import (
	"encoding/binary"
	"math"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// reduce.go implements kernels/reduce.cu. Sums are taken in float64 (the
// GPU sums in float32 in its own order; results are compared within the
// ops' error bounds).

// reduceSrcBuf is the source buffer of a row reduction: 16-byte rows when vec.
func reduceSrcBuf(a *vendorapi.Args, i int, vec bool) buffer {
	if vec {
		return vecRows("src", a.TensorAt(i), 4, 16)
	}
	return tensorBuf("src", a.TensorAt(i), 4)
}

// reduceFlatBlock calls f for every element of a packed buffer of n
// elements that block b's threads reach in reduce_flat's loops: vec reads
// the n/4 vectors grid-stride, then the last n % 4 elements.
func reduceFlatBlock(b block, n int64, vec bool, f func(i int64)) {
	tail := int64(0)
	if vec {
		b.gridStride(n/4, func(k int64) {
			for j := range int64(4) {
				f(4*k + j)
			}
		})
		tail = n / 4 * 4
	}
	b.gridStride(n-tail, func(i int64) { f(tail + i) })
}

// reduceArgmaxTake is reduce.cu's reduce_argmax_take.
func reduceArgmaxTake(v float32, i int32, bv *float32, bi *int32) {
	if v > *bv || (v == *bv && i < *bi) {
		*bv, *bi = v, i
	}
}

func init() {
	// sumrows{v}_f32(dst, src, ne1, ne2, nrows, scale); sumrowsb_f32 is
	// sumrows4_f32 with blockDim (512, 1).
	registerTemplate("reduce_rows", func(k kernels.Kernel) (*hostKernel, error) { return reduceRowsKernel(k.Bind["v"] == "4"), nil })
	register("sumrowsb_f32", reduceRowsKernel(true))
	// argmax{v}_f32(dst, src, nrows); argmaxb_f32 (reduce_argmax_block) is
	// argmax4_f32 with blockDim (256, 1) and early, which changes nothing here.
	registerTemplate("reduce_argmax", func(k kernels.Kernel) (*hostKernel, error) { return reduceArgmaxKernel(k.Bind["v"] == "4"), nil })
	registerTemplate("reduce_argmax_block", func(kernels.Kernel) (*hostKernel, error) { return reduceArgmaxKernel(true), nil })
	// sumflat{v}_f32(partial, nparts, src, n).
	registerTemplate("reduce_flat", func(k kernels.Kernel) (*hostKernel, error) {
		vec := k.Bind["v"] == "4"
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				src := elems("src", a.PtrAt(2), a.I64At(3), 4)
				if vec {
					src.align = 16
				}
				return []buffer{elems("partial", a.PtrAt(0), a.I64At(1), 4), src}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				src := f32s(m[1])
				var sum float64
				reduceFlatBlock(b, a.I64At(3), vec, func(i int64) { sum += float64(src[i]) })
				if int64(b.idx.X) < a.I64At(1) {
					f32s(m[0])[b.idx.X] = float32(sum)
				}
			},
		}, nil
	})
	// count_equal_i32(partial, nparts, a, b, ne0, ne1, ne2, n).
	register("count_equal_i32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{elems("partial", a.PtrAt(0), a.I64At(1), 8), tensorBuf("a", a.TensorAt(2), 4),
				tensorBuf("b", a.TensorAt(3), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			ta, tb := a.TensorAt(2), a.TensorAt(3)
			d0, d1, d2 := a.FastDivAt(4), a.FastDivAt(5), a.FastDivAt(6)
			var count int64
			b.gridStride(a.I64At(7), func(i int64) {
				x := binary.LittleEndian.Uint32(m[1][tensorOffset(uint32(i), ta, d0, d1, d2):])
				y := binary.LittleEndian.Uint32(m[2][tensorOffset(uint32(i), tb, d0, d1, d2):])
				if x == y {
					count++
				}
			})
			if int64(b.idx.X) < a.I64At(1) {
				i64s(m[0])[b.idx.X] = count
			}
		},
	})
	// reduce_final_f32(dst, partial, n, scale): one block.
	register("reduce_final_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{elems("dst", a.PtrAt(0), 1, 4), elems("partial", a.PtrAt(1), a.I64At(2), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			if !b.first() {
				return
			}
			var sum float64
			for _, v := range f32s(m[1])[:a.I64At(2)] {
				sum += float64(v)
			}
			f32s(m[0])[0] = float32(sum) * a.F32At(3)
		},
	})
	// reduce_final_i64(dst, partial, n): one block.
	register("reduce_final_i64", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{elems("dst", a.PtrAt(0), 1, 8), elems("partial", a.PtrAt(1), a.I64At(2), 8)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			if !b.first() {
				return
			}
			var sum int64
			for _, v := range i64s(m[1])[:a.I64At(2)] {
				sum += v
			}
			i64s(m[0])[0] = sum
		},
	})
}

// reduceRowsKernel is reduce_rows<4> when vec, else reduce_rows<1> (and
// reduce_rows_block, its one-row-a-block form).
func reduceRowsKernel(vec bool) *hostKernel {
	f32 := elemTypes["f32"]
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{tensorBuf("dst", a.TensorAt(0), 4), reduceSrcBuf(a, 1, vec)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			ne1, ne2, scale := a.FastDivAt(2), a.FastDivAt(3), a.F32At(5)
			b.blockRows(a.I64At(4), func(row int64) {
				i1, i2, i3 := rowIndex(uint32(row), ne1, ne2)
				s := int64(i1)*src.Nb[1] + int64(i2)*src.Nb[2] + int64(i3)*src.Nb[3]
				var sum float64
				for i0 := range src.Ne[0] {
					sum += float64(f32.load(m[1][s+i0*src.Nb[0]:]))
				}
				d := int64(i1)*dst.Nb[1] + int64(i2)*dst.Nb[2] + int64(i3)*dst.Nb[3]
				f32.store(m[0][d:], float32(sum)*scale)
			})
		},
	}
}

// reduceArgmaxKernel is reduce_argmax<4> when vec, else reduce_argmax<1>
// (and reduce_argmax_block, its one-row-a-block form).
func reduceArgmaxKernel(vec bool) *hostKernel {
	f32 := elemTypes["f32"]
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			return []buffer{tensorBuf("dst", a.TensorAt(0), 4), reduceSrcBuf(a, 1, vec)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			b.blockRows(a.I64At(2), func(row int64) {
				bv, bi := float32(math.Inf(-1)), int32(math.MaxInt32)
				for i0 := range src.Ne[0] {
					reduceArgmaxTake(f32.load(m[1][row*src.Nb[1]+i0*src.Nb[0]:]), int32(i0), &bv, &bi)
				}
				if bi == math.MaxInt32 {
					bi = 0
				}
				binary.LittleEndian.PutUint32(m[0][row*dst.Nb[0]:], uint32(bi))
			})
		},
	}
}
