package host

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/quant"
	"github.com/ternion/ternion/vendorapi"
)

// fattn.go implements kernels/fattn.cu: the rows of a block are computed one
// after another with the kernel's arithmetic (f32 scores and softmax; the
// mma kernel's f16 rounding of the scaled Q and of P), in the order of a
// sequential online softmax rather than the GPU's tile order.

// fattnCall holds the arguments shared by fattn_vec_* and fattn_mma_*.
type fattnCall struct {
	dst, q, k, v, mask                    vendorapi.TensorDesc
	sinks                                 bool
	scale, softcap, maxBias, m0, m1       float32
	nHeadLog2, gqa, r3                    uint32
	mDst, mQ, mK, mV, mMask, mSinks, mPar []byte
}

// fattnArgs reads the arguments of an attention kernel (vec has part after
// sinks and chunk at the end) over the buffers m, in fattnBuffers' order.
func fattnArgs(m [][]byte, a *vendorapi.Args, vec bool) fattnCall {
	c := fattnCall{dst: a.TensorAt(0), q: a.TensorAt(1), k: a.TensorAt(2), v: a.TensorAt(3), mask: a.TensorAt(4),
		sinks: a.PtrAt(5) != 0, mDst: m[0], mQ: m[1], mK: m[2], mV: m[3], mMask: m[4], mSinks: m[5]}
	i := 6
	if vec {
		c.mPar = m[6]
		i = 7
	}
	c.scale, c.softcap, c.maxBias, c.m0, c.m1 = a.F32At(i), a.F32At(i+1), a.F32At(i+2), a.F32At(i+3), a.F32At(i+4)
	c.nHeadLog2, c.gqa, c.r3 = a.U32At(i+5), a.U32At(i+6), a.U32At(i+7)
	return c
}

// fattnBuffers are the buffers of an attention kernel's arguments for K
// head size dk and V head size dv: dst, q, k, v, mask, sinks (and the vector
// kernel's partials, nchunks·nrows·(dv+2) floats with nchunks =
// ⌈n_kv/chunk⌉).
func fattnBuffers(a *vendorapi.Args, dk, dv int64, vec bool) []buffer {
	dst, q, k, v, mask := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2), a.TensorAt(3), a.TensorAt(4)
	bufs := []buffer{tensorBuf("dst", dst, 4), tensorBuf("q", q, 4), vecRows("k", k, 2, 16), vecRows("v", v, 2, 16),
		tensorBuf("mask", mask, 2), {param: "sinks"}}
	if a.PtrAt(5) != 0 {
		bufs[5] = elems("sinks", a.PtrAt(5), q.Ne[2], 4)
	}
	switch {
	case k.Ne[0] != dk || v.Ne[0] != dv || q.Ne[0] != dk || dst.Ne[0] != dv:
		bufs[0].bad = fmt.Sprintf("the kernel is built for head sizes %d (K) and %d (V)", dk, dv)
	case q.Nb[0] != 4 || dst.Nb[0] != 4:
		bufs[0].bad = "q and dst rows must be packed"
	case mask.Data != 0 && mask.Nb[0] != 2:
		bufs[4].bad = "mask rows must be packed"
	}
	if vec {
		bufs = append(bufs, buffer{param: "part"})
		chunk := int64(a.U32At(15))
		if a.PtrAt(6) != 0 && chunk > 0 {
			nchunks := (k.Ne[1] + chunk - 1) / chunk
			bufs[6] = elems("part", a.PtrAt(6), nchunks*q.Ne[1]*q.Ne[2]*q.Ne[3]*(dv+2), 4)
		}
	}
	return bufs
}

// fattnF16At reads the f16 at byte offset off of b as float32.
func fattnF16At(b []byte, off int64) float32 {
	return half.F16ToF32(binary.LittleEndian.Uint16(b[off:]))
}

// fattnF32At reads the f32 at byte offset off of b.
func fattnF32At(b []byte, off int64) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

// fattnPutF32 writes v at byte offset off of b.
func fattnPutF32(b []byte, off int64, v float32) {
	binary.LittleEndian.PutUint32(b[off:], math.Float32bits(v))
}

// fattnNegInf is the softmax's empty maximum.
var fattnNegInf = float32(math.Inf(-1))

// slope is the ALiBi slope of head h (kernel's fattn_slope).
func (c *fattnCall) slope(h uint32) float32 {
	if c.maxBias <= 0 {
		return 1
	}
	if h < c.nHeadLog2 {
		return float32(math.Pow(float64(c.m0), float64(h+1)))
	}
	return float32(math.Pow(float64(c.m1), float64(2*(h-c.nHeadLog2)+1)))
}

// fattnRow is one query row: q head h, column iq1, batch iq3, and the kv
// head it reads.
type fattnRow struct {
	h, iq1, iq3 uint32
	kOff, vOff  int64 // byte offsets of the kv head in k and v
	mOff        int64 // byte offset of the mask row, -1 without a mask
	slope       float32
	q           []float32 // scaled query (rounded to f16 for the mma kernel)
}

// row prepares row (h, iq1, iq3); roundQ rounds the scaled query to f16.
func (c *fattnCall) row(h, iq1, iq3 uint32, roundQ bool) fattnRow {
	ik2, ik3 := int64(h/c.gqa), int64(iq3/c.r3)
	r := fattnRow{h: h, iq1: iq1, iq3: iq3, kOff: ik2*c.k.Nb[2] + ik3*c.k.Nb[3], vOff: ik2*c.v.Nb[2] + ik3*c.v.Nb[3],
		mOff: -1, slope: c.slope(h), q: make([]float32, c.q.Ne[0])}
	if c.mMask != nil {
		r.mOff = int64(iq1)*c.mask.Nb[1] + int64(h%uint32(c.mask.Ne[2]))*c.mask.Nb[2] + int64(iq3%uint32(c.mask.Ne[3]))*c.mask.Nb[3]
	}
	qo := int64(iq1)*c.q.Nb[1] + int64(h)*c.q.Nb[2] + int64(iq3)*c.q.Nb[3]
	for i := range r.q {
		x := fattnF32At(c.mQ, qo+4*int64(i)) * c.scale
		if roundQ {
			x = half.F16ToF32(half.F16FromF32(x))
		}
		r.q[i] = x
	}
	return r
}

// logit is the kernel's fattn_logit of position j for row r.
func (c *fattnCall) logit(r *fattnRow, j int64) float32 {
	var x float32
	ko := r.kOff + j*c.k.Nb[1]
	for i, qv := range r.q {
		x += qv * fattnF16At(c.mK, ko+2*int64(i))
	}
	if c.softcap != 0 {
		x = c.softcap * float32(math.Tanh(float64(x)))
	}
	if r.mOff >= 0 {
		x += r.slope * fattnF16At(c.mMask, r.mOff+2*j)
	}
	return x
}

// attend runs the online softmax of row r over positions [j0, j1) in tiles
// of 64 and returns the maximum, the sum and the unnormalised accumulator;
// roundP rounds the probabilities to f16 where they meet V (the mma kernel).
func (c *fattnCall) attend(r *fattnRow, j0, j1 int64, roundP bool) (m, s float32, acc []float32) {
	m, acc = fattnNegInf, make([]float32, c.v.Ne[0])
	p := make([]float32, 64)
	for t0 := j0; t0 < j1; t0 += 64 {
		n := min(64, j1-t0)
		mt := fattnNegInf
		for jj := range n {
			p[jj] = c.logit(r, t0+jj)
			mt = max(mt, p[jj])
		}
		mnew := max(m, mt)
		if mnew == fattnNegInf {
			continue // every position so far is masked
		}
		f := float32(math.Exp(float64(m - mnew)))
		for d := range acc {
			acc[d] *= f
		}
		var sum float32
		for jj := range n {
			e := float32(math.Exp(float64(p[jj] - mnew)))
			sum += e
			if roundP {
				e = half.F16ToF32(half.F16FromF32(e))
			}
			vo := r.vOff + (t0+jj)*c.v.Nb[1]
			for d := range acc {
				acc[d] += e * fattnF16At(c.mV, vo+2*int64(d))
			}
		}
		s = s*f + sum
		m = mnew
	}
	return m, s, acc
}

// finish adds the sink of the row's head to (m, s, acc) and stores the
// normalised row into dst.
func (c *fattnCall) finish(r *fattnRow, m, s float32, acc []float32) {
	f := float32(1)
	if c.sinks {
		sink := fattnF32At(c.mSinks, 4*int64(r.h))
		mn := max(m, sink)
		f = float32(math.Exp(float64(m - mn)))
		s = s*f + float32(math.Exp(float64(sink-mn)))
	}
	inv := float32(0)
	if s != 0 {
		inv = f / s
	}
	o := int64(r.h)*c.dst.Nb[1] + int64(r.iq1)*c.dst.Nb[2] + int64(r.iq3)*c.dst.Nb[3]
	for d, x := range acc {
		fattnPutF32(c.mDst, o+4*int64(d), x*inv)
	}
}

// fattnLog2E is log2(e), the decode kernel's exp2 scale.
const fattnLog2E = float32(1.4426950408889634)

// fattnDecEmpty is the decode kernel's maximum before any position.
const fattnDecEmpty = float32(-1e30)

// fattnCombineBuffers are the buffers of fattn_combine and fattn_dec_combine
// (dst, part, sinks, nchunks, nrows).
func fattnCombineBuffers(a *vendorapi.Args) []buffer {
	dst := a.TensorAt(0)
	n := int64(a.U32At(3)) * int64(a.U32At(4)) * (dst.Ne[0] + 2)
	bufs := []buffer{tensorBuf("dst", dst, 4), elems("part", a.PtrAt(1), n, 4), {param: "sinks"}}
	if a.PtrAt(2) != 0 {
		bufs[2] = elems("sinks", a.PtrAt(2), dst.Ne[1], 4)
	}
	if dst.Nb[0] != 4 {
		bufs[0].bad = "dst rows must be packed"
	}
	return bufs
}

// fattnDecMerge writes dims d0..d1-1 of dst row x (x = iq3·n_head + h of
// nrows) as the merge of nchunks one-query partials [max in log2 units,
// sum, acc[D]] (bytes mPart, chunk c's row at (c·nrows + x)·(D+2) floats)
// and, with sinks, head h's sink (bytes mSinks): fattn_dec_combine's
// block, and the merge of a tile's last block (fattn_dec_fold).
func fattnDecMerge(mDst, mPart, mSinks []byte, dst vendorapi.TensorDesc, sinks bool, nchunks, nrows int64, x uint32, d0, d1 int64) {
	d, nHead := dst.Ne[0], uint32(dst.Ne[1])
	h, iq3 := x%nHead, x/nHead
	stride := 4 * nrows * (d + 2)
	p := 4 * int64(x) * (d + 2)
	M, sink := fattnDecEmpty, float32(0)
	if sinks {
		sink = fattnF32At(mSinks, 4*int64(h)) * fattnLog2E
		M = sink
	}
	for c := range nchunks {
		M = max(M, fattnF32At(mPart, p+c*stride))
	}
	w := make([]float32, nchunks)
	var S float32
	for c := range nchunks {
		w[c] = float32(math.Exp2(float64(fattnF32At(mPart, p+c*stride) - M)))
		S += fattnF32At(mPart, p+c*stride+4) * w[c]
	}
	if sinks {
		S += float32(math.Exp2(float64(sink - M)))
	}
	inv := float32(0)
	if S != 0 {
		inv = 1 / S
	}
	o := int64(h)*dst.Nb[1] + int64(iq3)*dst.Nb[3]
	for i := d0; i < d1; i++ {
		var v float32
		for c := range nchunks {
			v += w[c] * inv * fattnF32At(mPart, p+c*stride+8+4*i)
		}
		fattnPutF32(mDst, o+4*i, v)
	}
}

// fattnDim returns the head-size axis value of kernel k.
func fattnDim(k kernels.Kernel) (int64, error) {
	d, err := strconv.Atoi(k.Bind["d"])
	if err != nil || d <= 0 || d%8 != 0 {
		return 0, fmt.Errorf("kernel %s: head size %q has no host implementation", k.Name, k.Bind["d"])
	}
	return int64(d), nil
}

// fattnDimRows returns the head size and the row count (axis r) of
// template kernel k.
func fattnDimRows(k kernels.Kernel) (int64, int, error) {
	d, err := fattnDim(k)
	if err != nil {
		return 0, 0, err
	}
	rows, err := fattnRows(k)
	return d, rows, err
}

// fattnRows returns the row count (axis r) of template kernel k.
func fattnRows(k kernels.Kernel) (int, error) { return fattnAxis(k, "r", "rows") }

// fattnAxis returns the positive count that axis (its meaning what) binds
// in template kernel k.
func fattnAxis(k kernels.Kernel, axis, what string) (int, error) {
	n, err := strconv.Atoi(k.Bind[axis])
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("kernel %s: %s %q has no host implementation", k.Name, what, k.Bind[axis])
	}
	return n, nil
}

// fattnVecDims returns the K and V head sizes of a fattn_vec kernel: axis
// d for both, or axes dk and dv.
func fattnVecDims(k kernels.Kernel) (dk, dv int64, err error) {
	if _, ok := k.Bind["d"]; ok {
		d, err := fattnDim(k)
		return d, d, err
	}
	x, errK := strconv.Atoi(k.Bind["dk"])
	y, errV := strconv.Atoi(k.Bind["dv"])
	if errK != nil || errV != nil || x <= 0 || y <= 0 || x%8 != 0 || y%8 != 0 {
		return 0, 0, fmt.Errorf("kernel %s: head sizes %q/%q have no host implementation", k.Name, k.Bind["dk"], k.Bind["dv"])
	}
	return int64(x), int64(y), nil
}

func init() {
	// fattn_vec_d{d}_r{r}(dst, q, k, v, mask, sinks, part, scale, softcap,
	// max_bias, m0, m1, n_head_log2, gqa, r3, chunk).
	registerTemplate("fattn_vec", func(k kernels.Kernel) (*hostKernel, error) {
		dk, d, err := fattnVecDims(k)
		if err != nil {
			return nil, err
		}
		rows, err := fattnRows(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer { return fattnBuffers(a, dk, d, true) },
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				c := fattnArgs(m, a, true)
				chunk := int64(a.U32At(15))
				nq, nHead, nhkv := uint32(c.q.Ne[1]), uint32(c.q.Ne[2]), uint32(c.k.Ne[2])
				nrows := c.gqa * nq
				ik2, iq3 := b.idx.Z%nhkv, b.idx.Z/nhkv
				j0 := int64(b.idx.X) * chunk
				j1 := min(j0+chunk, c.k.Ne[1])
				for rr := range uint32(rows) {
					gr := b.idx.Y*uint32(rows) + rr
					if gr >= nrows {
						break
					}
					r := c.row(ik2*c.gqa+gr/nq, gr%nq, iq3, false)
					mx, s, acc := c.attend(&r, j0, j1, false)
					if b.grid.X == 1 {
						c.finish(&r, mx, s, acc)
						continue
					}
					all := int64(nq) * int64(nHead) * int64(b.grid.Z/nhkv)
					o := 4 * (int64(b.idx.X)*all + (int64(iq3)*int64(nHead)+int64(r.h))*int64(nq) + int64(r.iq1)) * (d + 2)
					fattnPutF32(c.mPar, o, mx)
					fattnPutF32(c.mPar, o+4, s)
					for i, x := range acc {
						fattnPutF32(c.mPar, o+8+4*int64(i), x)
					}
				}
			},
		}, nil
	})
	// fattn_dec_d{d}_r{r}(dst, q, k, v, mask, sinks, part, scale, softcap,
	// max_bias, m0, m1, n_head_log2, gqa, r3, chunk): one query; block (x,
	// y, z) = chunk x, the gqa heads of kv head y, batch z. Partial maxima
	// are in log2 units; an all-masked chunk has fattnDecEmpty.
	registerTemplate("fattn_dec", func(k kernels.Kernel) (*hostKernel, error) { return fattnDecode(k, false) })
	// fattn_dect_d{d}_r{r}: fattn_dec's arguments and blocks on the tensor
	// cores (the scaled Q and P rounded to f16).
	registerTemplate("fattn_dect", func(k kernels.Kernel) (*hostKernel, error) { return fattnDecode(k, true) })
	// (fattn_dect_d{d}_r{r}_{kv} reads q8_0 or q4_0 K and V: each value
	// rounded to f16, then as above.)
	// fattn_dec_combine(dst, part, sinks, nchunks, nrows): block (row x,
	// dims 32y..32y+31), one query.
	register("fattn_dec_combine", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			bufs := fattnCombineBuffers(a)
			if a.U32At(3) > 256 {
				bufs[1].bad = "more than 256 chunks"
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst := a.TensorAt(0)
			fattnDecMerge(m[0], m[1], m[2], dst, a.PtrAt(2) != 0, int64(a.U32At(3)), int64(a.U32At(4)), b.idx.X,
				int64(b.idx.Y)*32, min(dst.Ne[0], int64(b.idx.Y+1)*32))
		},
	})
	// fattn_mma_d{d}, fattn_mma_w{w}_d{d}(dst, q, k, v, mask, sinks, scale,
	// softcap, max_bias, m0, m1, n_head_log2, gqa, r3): 64 (16·w) queries of
	// one head a block.
	registerTemplate("fattn_mma", func(k kernels.Kernel) (*hostKernel, error) {
		d, err := fattnDim(k)
		if err != nil {
			return nil, err
		}
		bq := uint32(64) // queries a block: 16 a warp, 4 warps unless axis w says
		if _, ok := k.Bind["w"]; ok {
			w, err := fattnAxis(k, "w", "warps")
			if err != nil {
				return nil, err
			}
			bq = uint32(16 * w)
		}
		return fattnQueryBlocks(d, bq), nil
	})
	// fattn_combine(dst, part, sinks, nchunks, nrows).
	register("fattn_combine", &hostKernel{
		buffers: fattnCombineBuffers,
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, nchunks, nrows := a.TensorAt(0), int64(a.U32At(3)), int64(a.U32At(4))
			d, nq, nHead := dst.Ne[0], uint32(dst.Ne[2]), uint32(dst.Ne[1])
			row := b.idx.X
			iq1, h, iq3 := row%nq, row/nq%nHead, row/(nq*nHead)
			stride := 4 * nrows * (d + 2)
			p := 4 * int64(row) * (d + 2)
			sinks := a.PtrAt(2) != 0
			M := fattnNegInf
			if sinks {
				M = fattnF32At(m[2], 4*int64(h))
			}
			for c := range nchunks {
				M = max(M, fattnF32At(m[1], p+c*stride))
			}
			var S float32
			if M != fattnNegInf {
				for c := range nchunks {
					if mc := fattnF32At(m[1], p+c*stride); mc != fattnNegInf {
						S += fattnF32At(m[1], p+c*stride+4) * float32(math.Exp(float64(mc-M)))
					}
				}
				if sinks {
					S += float32(math.Exp(float64(fattnF32At(m[2], 4*int64(h)) - M)))
				}
			}
			o := int64(h)*dst.Nb[1] + int64(iq1)*dst.Nb[2] + int64(iq3)*dst.Nb[3]
			for i := range d {
				var x float32
				if S != 0 {
					for c := range nchunks {
						if mc := fattnF32At(m[1], p+c*stride); mc != fattnNegInf {
							x += fattnF32At(m[1], p+c*stride+8+4*i) * float32(math.Exp(float64(mc-M)))
						}
					}
					x /= S
				}
				fattnPutF32(m[0], o+4*i, x)
			}
		},
	})
}

// fattnDecode is the host implementation of the one-query decode kernels
// k (fattn_dec, and fattn_dect with round: the scaled Q and the
// probabilities meeting V rounded to f16 as its mma tiles hold them).
func fattnDecode(k kernels.Kernel, round bool) (*hostKernel, error) {
	d, rows, err := fattnDimRows(k)
	if err != nil {
		return nil, err
	}
	var kvf *quant.Format
	if kv := k.Bind["kv"]; kv != "" {
		if kvf, err = fattnKVFormat(k, kv); err != nil {
			return nil, err
		}
	}
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			bufs := fattnBuffers(a, d, d, true)
			if kvf != nil {
				bufs[2], bufs[3] = quantBuf("k", a.TensorAt(2), kvf), quantBuf("v", a.TensorAt(3), kvf)
				bufs[2].align, bufs[3].align = 8, 8
			}
			q, k := a.TensorAt(1), a.TensorAt(2)
			bufs = append(bufs, buffer{param: "counters"})
			if a.PtrAt(16) != 0 { // a word a tile: kv heads × batches
				bufs[7] = elems("counters", a.PtrAt(16), k.Ne[2]*q.Ne[3], 4)
			}
			switch {
			case q.Ne[1] != 1:
				bufs[1].bad = "the decode kernel takes one query"
			case k.Ne[2] == 0 || q.Ne[2]/k.Ne[2] > int64(rows):
				bufs[1].bad = fmt.Sprintf("GQA ratio above the kernel's %d", rows)
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			c := fattnArgs(m, a, true)
			chunk := int64(a.U32At(15))
			nHead := int64(c.q.Ne[2])
			j0 := int64(b.idx.X) * chunk
			j1 := min(j0+chunk, c.k.Ne[1])
			if kvf != nil { // the rows this block reads: kv head y, its batch, positions j0..j1
				ik2, ik3 := int64(b.idx.Y), int64(b.idx.Z/c.r3)
				c.mK, c.k = fattnExpand(kvf, m[2], c.k, ik2, ik3, j0, j1)
				c.mV, c.v = fattnExpand(kvf, m[3], c.v, ik2, ik3, j0, j1)
			}
			for rr := range min(c.gqa, uint32(rows)) {
				r := c.row(b.idx.Y*c.gqa+rr, 0, b.idx.Z, round)
				mx, s, acc := c.attend(&r, j0, j1, round)
				if b.grid.X == 1 {
					c.finish(&r, mx, s, acc)
					continue
				}
				all := nHead * int64(b.grid.Z)
				o := 4 * (int64(b.idx.X)*all + int64(r.iq3)*nHead + int64(r.h)) * (d + 2)
				fattnPutF32(c.mPar, o, max(mx*fattnLog2E, fattnDecEmpty))
				fattnPutF32(c.mPar, o+4, s)
				for i, x := range acc {
					fattnPutF32(c.mPar, o+8+4*int64(i), x)
				}
			}
			if b.grid.X == 1 || a.PtrAt(16) == 0 {
				return
			}
			// The tile's last block merges its rows and zeroes the tile's
			// word (fattn_dec_fold); the atomic add orders every block's
			// partials before it.
			ctr := &u32s(m[7])[b.idx.Y+b.grid.Y*b.idx.Z]
			if atomic.AddUint32(ctr, 1) != b.grid.X {
				return
			}
			atomic.StoreUint32(ctr, 0)
			all := nHead * int64(b.grid.Z)
			for rr := range min(c.gqa, uint32(rows)) {
				fattnDecMerge(c.mDst, c.mPar, c.mSinks, c.dst, c.sinks, int64(b.grid.X), all,
					b.idx.Z*uint32(nHead)+b.idx.Y*c.gqa+rr, 0, d)
			}
		},
	}, nil
}

// fattnKVFormat returns the format of the K/V axis value kv of kernel k
// (q8_0 or q4_0).
func fattnKVFormat(k kernels.Kernel, kv string) (*quant.Format, error) {
	for _, f := range quant.Formats() {
		if f.Name == kv && (kv == "q8_0" || kv == "q4_0") {
			return f, nil
		}
	}
	return nil, fmt.Errorf("kernel %s: K/V format %q has no host implementation", k.Name, kv)
}

// fattnExpand returns a packed f16 tensor of t's shape and its descriptor
// holding rows i1 in [j0, j1) of head i2, batch i3 of tensor t of format f
// (bytes m), each value rounded to f16 once as fattn_dect's quantized
// kernels expand their tiles (the other rows are zero).
func fattnExpand(f *quant.Format, m []byte, t vendorapi.TensorDesc, i2, i3, j0, j1 int64) ([]byte, vendorapi.TensorDesc) {
	ne := t.Ne
	out := vendorapi.TensorDesc{Ne: ne, Nb: [4]int64{2, 2 * ne[0], 2 * ne[0] * ne[1], 2 * ne[0] * ne[1] * ne[2]}}
	buf := make([]byte, 2*ne[0]*ne[1]*ne[2]*ne[3])
	w := make([]float32, ne[0])
	rowBytes := int64(f.RowBytes(len(w)))
	for i1 := j0; i1 < j1; i1++ {
		off := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
		_ = f.Dequantize(w, m[off:off+rowBytes])
		o := i1*out.Nb[1] + i2*out.Nb[2] + i3*out.Nb[3]
		for i, x := range w {
			binary.LittleEndian.PutUint16(buf[o+2*int64(i):], half.F16FromF32(x))
		}
	}
	return buf, out
}

// fattnQueryBlocks is the host implementation of the prefill kernels of
// head size d (fattn_mma_*, fattn90_*): block (x, y, z) computes queries
// bq·x..bq·x+bq-1 of q head y, batch z, each over the whole KV sequence.
func fattnQueryBlocks(d int64, bq uint32) *hostKernel {
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer { return fattnBuffers(a, d, d, false) },
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			c := fattnArgs(m, a, false)
			for i := range bq {
				iq1 := b.idx.X*bq + i
				if int64(iq1) >= c.q.Ne[1] {
					break
				}
				r := c.row(b.idx.Y, iq1, b.idx.Z, true)
				mx, s, acc := c.attend(&r, 0, c.k.Ne[1], true)
				c.finish(&r, mx, s, acc)
			}
		},
	}
}
