package host

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// softmax.go implements kernels/softmax.cu. Sums are taken in float64 (the
// GPU sums in float32 in its own order; results are compared within the
// ops' error bounds).

// softmaxArgs are the arguments every SOFT_MAX kernel takes (softmax_family.go's
// softmaxParams), then a split kernel's partial, chunk and nchunks.
type softmaxArgs struct {
	dst, src, mask       vendorapi.TensorDesc
	sinks                vendorapi.DevicePtr
	ne1, ne2, mne2, mne3 vendorapi.FastDiv
	nrows                int64
	scale, maxBias       float32
	m0, m1               float32
	nHeadLog2            int32
	chunk                int64
	nchunks              int64
}

func softmaxArgsOf(a *vendorapi.Args, split bool) softmaxArgs {
	q := softmaxArgs{dst: a.TensorAt(0), src: a.TensorAt(1), mask: a.TensorAt(2), sinks: a.PtrAt(3),
		ne1: a.FastDivAt(4), ne2: a.FastDivAt(5), mne2: a.FastDivAt(6), mne3: a.FastDivAt(7), nrows: a.I64At(8),
		scale: a.F32At(9), maxBias: a.F32At(10), m0: a.F32At(11), m1: a.F32At(12), nHeadLog2: a.I32At(13)}
	if split {
		q.chunk, q.nchunks = a.I64At(15), int64(a.I32At(16))
	}
	return q
}

// softmaxBuffers are a SOFT_MAX kernel's buffers: dst, src, mask, sinks
// (and partial for a split kernel), vec-aligned rows when v is 4.
func softmaxBuffers(a *vendorapi.Args, k kernels.Kernel, split bool) []buffer {
	q := softmaxArgsOf(a, split)
	vec := softmaxVecOf(k) == 4
	rows := func(param string, t vendorapi.TensorDesc, size, align uint64) buffer {
		if vec {
			return vecRows(param, t, size, align)
		}
		return tensorBuf(param, t, size)
	}
	bufs := []buffer{rows("dst", q.dst, 4, 16), rows("src", q.src, 4, 16), elems("mask", 0, 0, 1)}
	switch k.Bind["m"] {
	case "f32":
		bufs[2] = rows("mask", q.mask, 4, 16)
	case "f16":
		bufs[2] = rows("mask", q.mask, 2, 8)
	}
	nsinks := int64(0)
	if q.sinks != 0 {
		nsinks = q.src.Ne[2]
	}
	bufs = append(bufs, elems("sinks", q.sinks, nsinks, 4))
	if q.nrows > math.MaxInt32 {
		bufs[0].bad = fmt.Sprintf("nrows = %d: the kernel takes fewer than 2^31 rows", q.nrows)
	}
	if split {
		bufs = append(bufs, elems("partial", a.PtrAt(14), 2*q.nrows*q.nchunks, 4))
		if q.chunk <= 0 || q.chunk%4 != 0 {
			bufs[0].bad = fmt.Sprintf("chunk = %d is not a positive multiple of 4", q.chunk)
		}
	}
	return bufs
}

// softmaxRow is softmax.cu's softmax_row: where row row's source,
// destination and mask row start in their buffers, its slope and sink.
type softmaxRow struct {
	x, y, m int64
	slope   float32
	sink    float32
	hasSink bool
}

// row locates row row as softmax_row_at does.
func (q *softmaxArgs) row(mem [][]byte, row uint32) softmaxRow {
	i1, i2, i3 := rowIndex(row, q.ne1, q.ne2)
	r := softmaxRow{x: int64(i1)*q.src.Nb[1] + int64(i2)*q.src.Nb[2] + int64(i3)*q.src.Nb[3],
		y:     int64(i1)*q.dst.Nb[1] + int64(i2)*q.dst.Nb[2] + int64(i3)*q.dst.Nb[3],
		m:     int64(i1)*q.mask.Nb[1] + int64(q.mne2.Mod(i2))*q.mask.Nb[2] + int64(q.mne3.Mod(i3))*q.mask.Nb[3],
		slope: 1, sink: float32(math.Inf(-1))}
	if q.maxBias > 0 {
		h := int32(i2)
		if h < q.nHeadLog2 {
			r.slope = float32(math.Pow(float64(q.m0), float64(h+1)))
		} else {
			r.slope = float32(math.Pow(float64(q.m1), float64(2*(h-q.nHeadLog2)+1)))
		}
	}
	if q.sinks != 0 {
		r.sink, r.hasSink = f32s(mem[3])[i2], true
	}
	return r
}

// w returns x*scale + slope*mask for elements [lo, hi) of row r.
func (q *softmaxArgs) w(mem [][]byte, r softmaxRow, mt string, lo, hi int64) []float32 {
	f32 := elemTypes["f32"]
	out := make([]float32, 0, max(hi-lo, 0))
	for i := lo; i < hi; i++ {
		v := f32.load(mem[1][r.x+4*i:]) * q.scale
		if e, ok := elemTypes[mt]; ok {
			v += r.slope * e.load(mem[2][r.m+int64(e.size)*i:])
		}
		out = append(out, v)
	}
	return out
}

// softmaxMaxSum returns the max of w and Σ exp(w - max) (0 for no w).
func softmaxMaxSum(w []float32) (float32, float64) {
	m := float32(math.Inf(-1))
	for _, v := range w {
		m = max(m, v)
	}
	var s float64
	if !math.IsInf(float64(m), -1) {
		for _, v := range w {
			s += math.Exp(float64(v - m))
		}
	}
	return m, s
}

// softmaxMerge combines two (max, sum) pairs, as softmax_rescale does.
func softmaxMerge(m1 float32, s1 float64, m2 float32, s2 float64) (float32, float64) {
	m := max(m1, m2)
	scale := func(s float64, from float32) float64 {
		if from == m {
			return s
		}
		return s * math.Exp(float64(from-m))
	}
	return m, scale(s1, m1) + scale(s2, m2)
}

// write stores exp(w[i] - m)/s at elements lo.. of row r.
func (q *softmaxArgs) write(mem [][]byte, r softmaxRow, lo int64, w []float32, m float32, s float64) {
	f32 := elemTypes["f32"]
	inv := float32(1 / s)
	for i, v := range w {
		f32.store(mem[0][r.y+4*(lo+int64(i)):], float32(math.Exp(float64(v-m)))*inv)
	}
}

// withSink adds row r's sink to (m, s).
func (r softmaxRow) withSink(m float32, s float64) (float32, float64) {
	if !r.hasSink {
		return m, s
	}
	return softmaxMerge(m, s, r.sink, 1)
}

func init() {
	// softmax_{m}_v{v}_k{k} and softmax_wide_{m}_k{k} (v4; its streaming
	// hints change no result)(dst, src, mask, sinks, ne1, ne2, mne2, mne3,
	// nrows, scale, max_bias, m0, m1, n_head_log2).
	registerTemplate("softmax_rows", func(k kernels.Kernel) (*hostKernel, error) {
		vk, err := strconv.Atoi(k.Bind["k"])
		if err != nil {
			return nil, fmt.Errorf("kernel %s: k = %q", k.Name, k.Bind["k"])
		}
		vec := softmaxVecOf(k)
		mt := k.Bind["m"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer { return softmaxBuffers(a, k, false) },
			block: func(mem [][]byte, a *vendorapi.Args, b block) {
				q := softmaxArgsOf(a, false)
				// The threads of a row hold k vectors each: elements past
				// k*v*blockDim.x are neither read nor written.
				n := min(q.src.Ne[0]/vec, int64(vk)*int64(b.dim.X)) * vec
				b.blockRows(q.nrows, func(row int64) {
					r := q.row(mem, uint32(row))
					w := q.w(mem, r, mt, 0, n)
					m, s := r.withSink(softmaxMaxSum(w))
					q.write(mem, r, 0, w, m, s)
				})
			},
		}, nil
	})
	// softmax_cl_{m}_k{k}(as softmax_rows): a cluster of 8 blocks a row
	// (row x/8); the cluster's first block computes the whole row here (its
	// 8·256 threads hold k vectors of 4 each: elements past them are
	// neither read nor written), the others nothing.
	registerTemplate("softmax_cl", func(k kernels.Kernel) (*hostKernel, error) {
		vk, err := strconv.Atoi(k.Bind["k"])
		if err != nil {
			return nil, fmt.Errorf("kernel %s: k = %q", k.Name, k.Bind["k"])
		}
		const blocks, threads = 8, 256
		mt := k.Bind["m"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := softmaxBuffers(a, k, false)
				if q := softmaxArgsOf(a, false); q.src.Ne[0]%4 != 0 {
					bufs[1].bad = fmt.Sprintf("ne0 = %d: the cluster kernel reads vectors of 4", q.src.Ne[0])
				}
				return bufs
			},
			block: func(mem [][]byte, a *vendorapi.Args, b block) {
				q := softmaxArgsOf(a, false)
				row := int64(b.idx.X / blocks)
				if b.idx.X%blocks != 0 || row >= q.nrows || b.dim.X != threads {
					return
				}
				n := min(q.src.Ne[0]/4, int64(vk)*blocks*threads) * 4
				r := q.row(mem, uint32(row))
				w := q.w(mem, r, mt, 0, n)
				m, s := r.withSink(softmaxMaxSum(w))
				q.write(mem, r, 0, w, m, s)
			},
		}, nil
	})
	// softmax_part_{m}_v{v}(..., partial, chunk, nchunks).
	registerTemplate("softmax_part", func(k kernels.Kernel) (*hostKernel, error) {
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer { return softmaxBuffers(a, k, true) },
			block: func(mem [][]byte, a *vendorapi.Args, b block) {
				q := softmaxArgsOf(a, true)
				lo, hi := q.chunkRange(k, int64(b.idx.X))
				part := f32s(mem[4])
				for row := int64(b.idx.Y); row < q.nrows; row += int64(b.grid.Y) {
					r := q.row(mem, uint32(row))
					m, s := softmaxMaxSum(q.w(mem, r, k.Bind["m"], lo, hi))
					at := 2 * (row*q.nchunks + int64(b.idx.X))
					part[at], part[at+1] = m, float32(s)
				}
			},
		}, nil
	})
	// softmax_norm_{m}_v{v}(..., partial, chunk, nchunks).
	registerTemplate("softmax_norm", func(k kernels.Kernel) (*hostKernel, error) {
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer { return softmaxBuffers(a, k, true) },
			block: func(mem [][]byte, a *vendorapi.Args, b block) {
				q := softmaxArgsOf(a, true)
				lo, hi := q.chunkRange(k, int64(b.idx.X))
				part := f32s(mem[4])
				for row := int64(b.idx.Y); row < q.nrows; row += int64(b.grid.Y) {
					r := q.row(mem, uint32(row))
					m, s := float32(math.Inf(-1)), 0.0
					for c := range q.nchunks {
						at := 2 * (row*q.nchunks + c)
						m, s = softmaxMerge(m, s, part[at], float64(part[at+1]))
					}
					m, s = r.withSink(m, s)
					q.write(mem, r, lo, q.w(mem, r, k.Bind["m"], lo, hi), m, s)
				}
			},
		}, nil
	})
	// diag_mask_inf_f32(dst, src, ne0, ne1, ne2, n_past, n).
	register("diag_mask_inf_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			dst, src := tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src", a.TensorAt(1), 4)
			if n := a.I64At(6); n > math.MaxInt32 {
				dst.bad = fmt.Sprintf("n = %d: the kernel masks fewer than 2^31 elements", n)
			}
			return []buffer{dst, src}
		},
		block: func(mem [][]byte, a *vendorapi.Args, b block) {
			dst, src := a.TensorAt(0), a.TensorAt(1)
			d0, d1, d2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4)
			nPast := int64(a.I32At(5))
			f32 := elemTypes["f32"]
			b.gridStride(a.I64At(6), func(i int64) {
				q0 := d0.Div(uint32(i))
				i0, i1 := int64(uint32(i)-q0*d0.D), int64(d1.Mod(q0))
				v := f32.load(mem[1][tensorOffset(uint32(i), src, d0, d1, d2):])
				if i0 > nPast+i1 {
					v = float32(math.Inf(-1))
				}
				f32.store(mem[0][tensorOffset(uint32(i), dst, d0, d1, d2):], v)
			})
		},
	})
}

// chunkRange is the elements [lo, hi) of chunk c of a row, as softmax_part
// and softmax_norm cut it (whole vectors of v).
func (q *softmaxArgs) chunkRange(k kernels.Kernel, c int64) (lo, hi int64) {
	vec := softmaxVecOf(k)
	lo = c * q.chunk / vec * vec
	hi = min((c+1)*q.chunk, q.src.Ne[0]) / vec * vec
	return lo, max(lo, hi)
}

// softmaxVecOf is the elements kernel k reads a step: its v axis, 4 for a
// template without one (softmax_wide_*).
func softmaxVecOf(k kernels.Kernel) int64 {
	if v, ok := k.Bind["v"]; ok && v != "4" {
		return 1
	}
	return 4
}
