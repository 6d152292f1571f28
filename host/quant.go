package host

import (
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"sync/atomic"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/quant"
	"github.com/ternion/ternion/vendorapi"
)

// quant.go implements kernels/quant.cu with the block formats of package
// quant (bit-exact with ggml's CPU code).

// quantFormat is the format a quant.cu kernel's axis q names.
func quantFormat(k kernels.Kernel) (*quant.Format, error) {
	name := k.Bind["q"]
	for _, f := range quant.Formats() {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("kernel %s: package quant has no format %q", k.Name, name)
}

// quantBuf is the buffer of a tensor of format f: rows of ne[0] values in
// whole blocks (nb[0] the block's bytes), rows placed by nb[1..3].
func quantBuf(param string, t vendorapi.TensorDesc, f *quant.Format) buffer {
	if t.Ne[0]%int64(f.BlockElems) != 0 {
		return buffer{param: param, bad: fmt.Sprintf("ne[0] = %d is not a multiple of %s's block of %d", t.Ne[0], f.Name, f.BlockElems)}
	}
	if t.Nb[0] != int64(f.BlockBytes) {
		return buffer{param: param, bad: fmt.Sprintf("nb[0] = %d is not %s's block of %d bytes", t.Nb[0], f.Name, f.BlockBytes)}
	}
	blocks := t
	blocks.Ne[0] = t.Ne[0] / int64(f.BlockElems)
	b := tensorBuf(param, blocks, uint64(f.BlockBytes))
	b.align = quantAlign(f) // quant.h's QUANT_ALIGN: its loads fault on a row start less aligned
	return b
}

// mmvqRowsPerBlock is quant.cu's MMVQ_ROWS: the rows one block of mmvq
// computes (its warps split k).
const mmvqRowsPerBlock = 4

// quantAlign is gcd(block bytes, 4), the alignment quant.h's loads need.
func quantAlign(f *quant.Format) uint64 {
	switch {
	case f.BlockBytes%4 == 0:
		return 4
	case f.BlockBytes%2 == 0:
		return 2
	}
	return 1
}

// quantRow decodes values [e, e+8) of the row at m[off:] (whole blocks of f)
// into v, through one decoded block kept in blk.
func quantRow(f *quant.Format, m []byte, off int64, e int64, blk []float32, v []float32) {
	b := e / int64(f.BlockElems)
	start := off + b*int64(f.BlockBytes)
	_ = f.Dequantize(blk, m[start:start+int64(f.BlockBytes)]) // lengths are whole blocks by construction
	copy(v, blk[e%int64(f.BlockElems):][:8])
}

// putF32s and putF16s store 8 values packed at d.
func putF32s(d []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(d[4*i:], math.Float32bits(x))
	}
}

func putF16s(d []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint16(d[2*i:], half.F16FromF32(x))
	}
}

// rowOf splits row r into (i1, i2, i3) with the fast divisions by ne[1], ne[2].
func rowOf(r uint32, d1, d2 vendorapi.FastDiv) (int64, int64, int64) {
	q := d1.Div(r)
	i3 := d2.Div(q)
	return int64(r - q*d1.D), int64(q - i3*d2.D), int64(i3)
}

func init() {
	// dq_{q}_{td}(dst, src, groups, ne1, ne2, n, dslot): dst through the
	// device word at dslot when it is not 0 (indirect).
	registerTemplate("dq", func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		size, put := uint64(4), putF32s
		if k.Bind["td"] == "f16" {
			size, put = 2, putF16s
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				return []buffer{indirect(tensorBuf("dst", a.TensorAt(0), size), a.PtrAt(6)), quantBuf("src", a.TensorAt(1), f)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				groups, ne1, ne2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4)
				blk, v := make([]float32, f.BlockElems), make([]float32, 8)
				b.gridStride(a.I64At(5), func(g int64) {
					row := groups.Div(uint32(g))
					e := (int64(g) - int64(row)*int64(groups.D)) * 8
					i1, i2, i3 := rowOf(row, ne1, ne2)
					quantRow(f, m[1], i1*src.Nb[1]+i2*src.Nb[2]+i3*src.Nb[3], e, blk, v)
					put(m[0][i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]+e*int64(size):], v)
				})
			},
		}, nil
	})
	// getrows_{q}(dst, src0, src1, ne10, ne11, groups, n).
	registerTemplate("getrows_q", func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				return []buffer{tensorBuf("dst", a.TensorAt(0), 4), quantBuf("src0", a.TensorAt(1), f),
					tensorBuf("src1", a.TensorAt(2), 4)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src0, src1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				ne10, ne11, groups := a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5)
				blk, v := make([]float32, f.BlockElems), make([]float32, 8)
				b.gridStride(a.I64At(6), func(g int64) {
					row := groups.Div(uint32(g))
					e := (int64(g) - int64(row)*int64(groups.D)) * 8
					i10, i11, i12 := rowOf(row, ne10, ne11)
					i01 := int64(int32(binary.LittleEndian.Uint32(m[2][i10*src1.Nb[0]+i11*src1.Nb[1]+i12*src1.Nb[2]:])))
					clear(v)
					if i01 >= 0 && i01 < src0.Ne[1] {
						quantRow(f, m[1], i01*src0.Nb[1]+i11*src0.Nb[2]+i12*src0.Nb[3], e, blk, v)
					}
					putF32s(m[0][i10*dst.Nb[1]+i11*dst.Nb[2]+i12*dst.Nb[3]+e*4:], v)
				})
			},
		}, nil
	})
	// qz_{q}(dst, src, blocks, ne1, ne2, n, dslot).
	registerTemplate("qz", func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		// One whole block at a time by construction; iq4_nl with the seed's
		// CPY quantizer, not ggml's CPU one.
		put := func(d []byte, x []float32) { _ = f.Quantize(d, x) }
		if f.Name == "iq4_nl" {
			put = func(d []byte, x []float32) { _ = quant.QuantizeIQ4NLOnePass(d, x) }
		} else if !f.CanQuantize() {
			return nil, fmt.Errorf("kernel %s: package quant cannot quantize %s", k.Name, f.Name)
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				return []buffer{indirect(quantBuf("dst", a.TensorAt(0), f), a.PtrAt(6)), vecRows("src", a.TensorAt(1), 4, 4)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				blocks, ne1, ne2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4)
				x := make([]float32, f.BlockElems)
				b.gridStride(a.I64At(5), func(kb int64) {
					row := blocks.Div(uint32(kb))
					ib := int64(kb) - int64(row)*int64(blocks.D)
					i1, i2, i3 := rowOf(row, ne1, ne2)
					s := m[1][i1*src.Nb[1]+i2*src.Nb[2]+i3*src.Nb[3]+ib*int64(4*f.BlockElems):]
					for j := range x {
						x[j] = math.Float32frombits(binary.LittleEndian.Uint32(s[4*j:]))
					}
					put(m[0][i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]+ib*dst.Nb[0]:][:f.BlockBytes], x)
				})
			},
		}, nil
	})
	// mmvq_{q}(dst, src0, src1, r2, r3, ncols): mmvqRowsPerBlock rows a
	// block; each dot product summed in float64.
	registerTemplate("mmvq", func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := []buffer{tensorBuf("dst", a.TensorAt(0), 4), quantBuf("src0", a.TensorAt(1), f),
					vecRows("src1", a.TensorAt(2), 4, 16)}
				if n := a.I32At(5); n < 1 || n > 8 {
					bufs[2].bad = fmt.Sprintf("ncols = %d is not in 1..8", n)
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				r2, r3, ncols := a.FastDivAt(3), a.FastDivAt(4), int64(a.I32At(5))
				i12, i13 := int64(b.idx.Y), int64(b.idx.Z)
				i02, i03 := int64(r2.Div(uint32(i12))), int64(r3.Div(uint32(i13)))
				w := make([]float32, s0.Ne[0])
				for r := range int64(mmvqRowsPerBlock) {
					row := int64(b.idx.X)*mmvqRowsPerBlock + r
					if row >= s0.Ne[1] {
						continue
					}
					x := row*s0.Nb[1] + i02*s0.Nb[2] + i03*s0.Nb[3]
					_ = f.Dequantize(w, m[1][x:x+int64(f.RowBytes(len(w)))])
					for c := range ncols {
						y := c*s1.Nb[1] + i12*s1.Nb[2] + i13*s1.Nb[3]
						binary.LittleEndian.PutUint32(m[0][row*dst.Nb[0]+c*dst.Nb[1]+i12*dst.Nb[2]+i13*dst.Nb[3]:],
							math.Float32bits(float32(dotF32(w, m[2][y:]))))
					}
				}
			},
		}, nil
	})
}

// rowDecoder decodes a row of k values of a src0 type: a quant format, or
// f32/f16/bf16 (mmvq_id's float instantiations); also its buffer.
type rowDecoder struct {
	decode func(dst []float32, row []byte)
	bytes  func(k int64) int64
	buf    func(param string, t vendorapi.TensorDesc) buffer
}

// rowDecoderOf is the decoder of kernel k's axis q.
func rowDecoderOf(k kernels.Kernel) (rowDecoder, error) {
	if t, ok := elemTypes[k.Bind["q"]]; ok {
		return rowDecoder{
			decode: func(dst []float32, row []byte) {
				for i := range dst {
					dst[i] = t.load(row[uint64(i)*t.size:])
				}
			},
			bytes: func(n int64) int64 { return n * int64(t.size) },
			buf:   func(p string, d vendorapi.TensorDesc) buffer { return vecRows(p, d, t.size, 16) },
		}, nil
	}
	f, err := quantFormat(k)
	if err != nil {
		return rowDecoder{}, err
	}
	return rowDecoder{
		decode: func(dst []float32, row []byte) { _ = f.Dequantize(dst, row) }, // whole blocks by construction
		bytes:  func(n int64) int64 { return int64(f.RowBytes(int(n))) },
		buf:    func(p string, d vendorapi.TensorDesc) buffer { return quantBuf(p, d, f) },
	}, nil
}

// dotF32 is Σ w[i]·y[i] in float64 over f32 values y packed at b.
func dotF32(w []float32, b []byte) float64 {
	var sum float64
	for i, wi := range w {
		sum += float64(wi) * float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return sum
}

// setFlag ORs bit into a kernel's error flag word (the memory optionalWord
// resolved; empty when the flag pointer was null). Atomic: blocks run
// concurrently.
func setFlag(word []byte, bit uint32) {
	if len(word) == 4 {
		atomic.OrUint32(&u32s(word)[0], bit)
	}
}

// optionalWord is the 4-byte device word at p (a kernel's error flag),
// touching nothing when p is null.
func optionalWord(param string, p vendorapi.DevicePtr) buffer {
	if p == 0 {
		return buffer{param: param}
	}
	return elems(param, p, 1, 4)
}

func init() {
	// mmvq_id_{q}(dst, src0, src1, ids, flag): one warp a row, blockDim.y
	// rows a block, block column (e, t) = (blockIdx.y, blockIdx.z); an
	// expert out of range writes NaN rows and sets bit 1 of the 4-byte word
	// at flag when flag is not null (a null flag touches nothing).
	registerTemplate("mmvq_id", func(k kernels.Kernel) (*hostKernel, error) {
		rd, err := rowDecoderOf(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				return []buffer{tensorBuf("dst", a.TensorAt(0), 4), rd.buf("src0", a.TensorAt(1)),
					vecRows("src1", a.TensorAt(2), 4, 16), tensorBuf("ids", a.TensorAt(3), 4), optionalWord("flag", a.PtrAt(4))}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, s1, ids := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2), a.TensorAt(3)
				e, t := int64(b.idx.Y), int64(b.idx.Z)
				expert := int64(int32(binary.LittleEndian.Uint32(m[3][e*ids.Nb[0]+t*ids.Nb[1]:])))
				w := make([]float32, s0.Ne[0])
				for ty := range int64(b.dim.Y) {
					row := int64(b.idx.X)*int64(b.dim.Y) + ty
					if row >= s0.Ne[1] {
						continue
					}
					out := m[0][row*dst.Nb[0]+e*dst.Nb[1]+t*dst.Nb[2]:]
					if expert < 0 || expert >= s0.Ne[2] {
						binary.LittleEndian.PutUint32(out, 0x7fc00000)
						setFlag(m[4], 1)
						continue
					}
					x := row*s0.Nb[1] + expert*s0.Nb[2]
					rd.decode(w, m[1][x:x+rd.bytes(s0.Ne[0])])
					y := (e%s1.Ne[1])*s1.Nb[1] + t*s1.Nb[2]
					binary.LittleEndian.PutUint32(out, math.Float32bits(float32(dotF32(w, m[2][y:]))))
				}
			},
		}, nil
	})
}

// q8y, mmvq8, mmid_group and mmvq8_idg: src1
// quantized to 8 bits a value in blocks of 32 (a scale and the block's sum
// per block), and the matrix-vector products against it.

// mmvq8Rows is quant.cu's MMVQ8_ROWS: the rows one mmvq8 or mmvq8_idg
// block multiplies.
const mmvq8Rows = 4

// q8Sums is the bytes of q8y's float4 a 32-value block: scale d, d·Σq,
// d·Σ of the first 16 q, d·Σ of the last 16.
const q8Sums = 16

// q8Cols are the buffers of cols quantized columns of k values: k bytes a
// column at yq, a float4 per 32 values at yd.
func q8Cols(yq, yd vendorapi.DevicePtr, cols, k int64) []buffer {
	q, d := elems("yq", yq, cols*k, 1), elems("yd", yd, cols*(k/32), q8Sums)
	d.align = 16
	return []buffer{q, d}
}

// q8Column returns column col of k values as float32: byte j times its
// block's scale.
func q8Column(yq, yd []byte, col, k int64) []float32 {
	y := make([]float32, k)
	for j := range k {
		d := math.Float32frombits(binary.LittleEndian.Uint32(yd[q8Sums*(col*(k/32)+j/32):]))
		y[j] = float32(int8(yq[col*k+j])) * d
	}
	return y
}

// q8Block quantizes 32 values as q8y (and mmvq8wf inside its blocks) does:
// scale d = amax/127, bytes round(x/d) (0 for an all-zero block), and the
// float4 (d, d·Σq, d·Σ of q[0:16], d·Σ of q[16:32]).
func q8Block(x *[32]float32) (q [32]int8, sums [4]float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var half [2]int
	for j, v := range x {
		if amax != 0 {
			q[j] = int8(math.Round(float64(v / d)))
		}
		half[j/16] += int(q[j])
	}
	return q, [4]float32{d, d * float32(half[0]+half[1]), d * float32(half[0]), d * float32(half[1])}
}

// q8F32Column returns the k f32 values at byte off of src (packed) as
// q8Block quantizes them, as float32: byte j times its block's scale (what
// q8Column reads back from q8y's output).
func q8F32Column(src []byte, off, k int64) []float32 {
	y := make([]float32, k)
	for b := int64(0); b < k; b += 32 {
		var x [32]float32
		for j := range x {
			x[j] = math.Float32frombits(binary.LittleEndian.Uint32(src[off+4*(b+int64(j)):]))
		}
		q, sums := q8Block(&x)
		for j, v := range q {
			y[b+int64(j)] = float32(v) * sums[0]
		}
	}
	return y
}

// dot64 is Σ w[i]·y[i] in float64.
func dot64(w, y []float32) float64 {
	var s float64
	for i := range w {
		s += float64(w[i]) * float64(y[i])
	}
	return s
}

func init() {
	// q8y and q8ye(src, yq, yd, blocks, ne1, ne2, n): 32 threads a block of
	// 32 values in a grid-stride loop over the n blocks; scale amax/127,
	// bytes q = round(x/scale) (0 for an all-zero block), float4 (scale,
	// scale·Σq, scale·Σ of q[0:16], scale·Σ of q[16:32]). q8ye differs on
	// the GPU only in when it lets the next kernel launch.
	q8y := &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			src := a.TensorAt(0)
			bufs := append([]buffer{tensorBuf("src", src, 4)}, q8Cols(a.PtrAt(1), a.PtrAt(2), src.Ne[1]*src.Ne[2]*src.Ne[3], src.Ne[0])...)
			if src.Ne[0]%32 != 0 {
				bufs[0].bad = fmt.Sprintf("ne[0] = %d is not a multiple of 32", src.Ne[0])
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			src := a.TensorAt(0)
			blocks, ne1, ne2, n := a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5), a.I64At(6)
			step := int64(b.grid.X) * int64(b.dim.X) / 32
			for w := range int64(b.dim.X) / 32 {
				for g := (int64(b.idx.X)*int64(b.dim.X))/32 + w; g < n; g += step {
					row := int64(blocks.Div(uint32(g)))
					ib := g - row*int64(blocks.D)
					i1, i2, i3 := rowIndex(uint32(row), ne1, ne2)
					base := int64(i1)*src.Nb[1] + int64(i2)*src.Nb[2] + int64(i3)*src.Nb[3] + ib*32*src.Nb[0]
					var x [32]float32
					for j := range x {
						x[j] = math.Float32frombits(binary.LittleEndian.Uint32(m[0][base+int64(j)*src.Nb[0]:]))
					}
					q, sums := q8Block(&x)
					for j, v := range q {
						m[1][g*32+int64(j)] = byte(v)
					}
					for i, v := range sums {
						binary.LittleEndian.PutUint32(m[2][q8Sums*g+4*int64(i):], math.Float32bits(v))
					}
				}
			}
		},
	}
	registerTemplate("q8y_cols", func(kernels.Kernel) (*hostKernel, error) { return q8y, nil })
	// mmvq8_{q}_{nc} and mmvq8t_{q}(dst, src0, yq, yd, r2, r3, ncols):
	// mmvq8Rows (mmvq8tRows) rows a block, ncols ≤ 8 (1 for nc 1).
	registerTemplate("mmvq8", mmvq8Host(rowSets(mmvq8Rows), ncolsArg))
	registerTemplate("mmvq8t", mmvq8Host(rowSets(mmvq8tRows), ncolsArg))
	// mmvq8w_{q}(dst, src0, yq, yd, r2, r3): one column, k a multiple of
	// 256; warp wg of the grid (blockDim.x/32 warps a block) takes units
	// wg, wg + nw, … (warpRows) of block column (i12, i13).
	registerTemplate("mmvq8w", mmvq8Host(warpRows, oneColumn))
	// mmvq8w_id_{q}(dst, src0, yq, yd, ne11, ids, flag): mmvq8w's rows for
	// pair (slot, token) = (blockIdx.y, blockIdx.z) of MUL_MAT_ID.
	registerTemplate("mmvq8w_id", mmvq8wIDHost(false))
	// mmvq8wf_{q}(dst, src0, src1, r2, r3) and mmvq8wf_id_{q}(dst, src0,
	// src1, ids, flag): mmvq8w and mmvq8w_id with src1 f32, quantized in
	// the kernel as q8y does.
	registerTemplate("mmvq8wf", mmvq8wfHost)
	registerTemplate("mmvq8wf_id", mmvq8wIDHost(true))
	// mmvq8wt_{q}(dst, src0, yq, yd, r2, r3, ncols): 2..8 columns, k a
	// multiple of 256; block bx takes the sets of the format's tiles of 16
	// rows bx, bx + grid.X, … of block column (i12, i13).
	registerTemplate("mmvq8wt", mmvq8Host(tileRows, wholeWordCols))
}

// mmvq8tRows is quant.cu's MMVQ8T_ROWS: the rows one mmvq8t block
// multiplies.
const mmvq8tRows = 16

// mmvq8RowMap gives the rows of src0 s0 (format f) that block b of a
// launch of kernel k computes.
type mmvq8RowMap func(k kernels.Kernel, f *quant.Format, b block, s0 vendorapi.TensorDesc) iter.Seq[int64]

// rowSets maps block bx to the sets of n rows bx, bx + grid.X, … (mmvq8
// and mmvq8t: n rows a block, the grid covering them once).
func rowSets(n int64) mmvq8RowMap {
	return func(_ kernels.Kernel, _ *quant.Format, b block, s0 vendorapi.TensorDesc) iter.Seq[int64] {
		ne1 := s0.Ne[1]
		return func(yield func(int64) bool) {
			for set := int64(b.idx.X); n*set < ne1; set += int64(b.grid.X) {
				for row := n * set; row < min(n*set+n, ne1); row++ {
					if !yield(row) {
						return
					}
				}
			}
		}
	}
}

// warpRows maps warp wg of the grid (warp w of block b: wg = w·grid.X +
// b) to its units wg, wg + nw, … of wholeWordUnitRows rows each (mmvq8w,
// mmvq8w_id).
func warpRows(_ kernels.Kernel, f *quant.Format, b block, s0 vendorapi.TensorDesc) iter.Seq[int64] {
	warps := int64(b.dim.X) / 32
	nw, ru, ne1 := int64(b.grid.X)*warps, wholeWordUnitRows(f, s0), s0.Ne[1]
	return func(yield func(int64) bool) {
		for wg := int64(b.idx.X); wg < nw; wg += int64(b.grid.X) {
			for u := wg; u*ru < ne1; u += nw {
				for row := u * ru; row < min(u*ru+ru, ne1); row++ {
					if !yield(row) {
						return
					}
				}
			}
		}
	}
}

// wholeWordUnitRows is the rows of an mmvq8w unit (quant.cu's mmvq8w_rows)
// for src0 s0 of format f: 32 / groups where a row has fewer than 32
// groups of 256 values and the rows are packed, else 1.
func wholeWordUnitRows(f *quant.Format, s0 vendorapi.TensorDesc) int64 {
	groups := s0.Ne[0] / 256
	if groups > 0 && groups < 32 && s0.Nb[1] == groups*int64(f.RowBytes(256)) {
		return 32 / groups
	}
	return 1
}

// mmvq8wIDHost is the host implementation of mmvq8w_id_{q}(dst, src0, yq,
// yd, ne11, ids, flag) (fused false) and mmvq8wf_id_{q}(dst, src0, src1,
// ids, flag) (fused true): block (bx, e, t) computes the rows warpRows
// gives it of dst[:, e, t] = src0[:, :, ids[e, t]] · column (e % ne11, t),
// q8y's or src1's quantized as q8y would (f32, packed along k, columns
// 16-byte aligned); an expert out of range writes NaN over those rows and
// sets bit 1 of the flag word (when the flag is not null).
func mmvq8wIDHost(fused bool) func(k kernels.Kernel) (*hostKernel, error) {
	// The arguments' positions: ids, flag, and (m index) the ids and flag
	// buffers.
	ids, flag, mIDs, mFlag := 5, 6, 4, 5
	if fused {
		ids, flag, mIDs, mFlag = 3, 4, 3, 4
	}
	return func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, s0 := a.TensorAt(0), a.TensorAt(1)
				var bufs []buffer
				var ne11 int64
				if fused {
					bufs = f32Operands(a, f)
					ne11 = a.TensorAt(2).Ne[1]
				} else {
					ne11 = int64(a.I32At(4))
					bufs = q8Operands(a, f, ne11*dst.Ne[2])
				}
				bufs = append(bufs, tensorBuf("ids", a.TensorAt(ids), 4), optionalWord("flag", a.PtrAt(flag)))
				if s0.Ne[0]%256 != 0 || ne11 < 1 {
					bufs[0].bad = fmt.Sprintf("k = %d is not a multiple of 256 or ne11 = %d < 1", s0.Ne[0], ne11)
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, idt := a.TensorAt(0), a.TensorAt(1), a.TensorAt(ids)
				e, t := int64(b.idx.Y), int64(b.idx.Z)
				expert := int64(int32(binary.LittleEndian.Uint32(m[mIDs][e*idt.Nb[0]+t*idt.Nb[1]:])))
				w := make([]float32, s0.Ne[0])
				var y []float32
				for row := range warpRows(k, f, b, s0) {
					out := m[0][row*dst.Nb[0]+e*dst.Nb[1]+t*dst.Nb[2]:]
					if expert < 0 || expert >= s0.Ne[2] {
						binary.LittleEndian.PutUint32(out, 0x7fc00000)
						setFlag(m[mFlag], 1)
						continue
					}
					if y == nil && fused {
						s1 := a.TensorAt(2)
						y = q8F32Column(m[2], (e%s1.Ne[1])*s1.Nb[1]+t*s1.Nb[2], s0.Ne[0])
					} else if y == nil {
						ne11 := int64(a.I32At(4))
						y = q8Column(m[2], m[3], e%ne11+ne11*t, s0.Ne[0])
					}
					x := row*s0.Nb[1] + expert*s0.Nb[2]
					_ = f.Dequantize(w, m[1][x:x+int64(f.RowBytes(len(w)))])
					binary.LittleEndian.PutUint32(out, math.Float32bits(float32(dot64(w, y))))
				}
			},
		}, nil
	}
}

// f32Operands are the first buffers of a launch (dst, src0, src1, …) of
// mmvq8wf and mmvq8wf_id: dst, src0 of format f with rows 16-byte aligned,
// and src1 f32, packed along k, its columns starting 16-byte aligned.
func f32Operands(a *vendorapi.Args, f *quant.Format) []buffer {
	dst, s0, s1 := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
	src0, src1 := quantBuf("src0", s0, f), tensorBuf("src1", s1, 4)
	src0.align, src1.align = 16, 16
	switch {
	case s1.Ne[0] != s0.Ne[0] || s1.Nb[0] != 4:
		src1.bad = fmt.Sprintf("src1's ne[0] = %d, nb[0] = %d: not src0's k = %d, packed", s1.Ne[0], s1.Nb[0], s0.Ne[0])
	case s1.Nb[1]%16 != 0 || s1.Nb[2]%16 != 0 || s1.Nb[3]%16 != 0:
		src1.bad = fmt.Sprintf("src1's columns (nb %v) do not all start 16-byte aligned", s1.Nb)
	}
	return []buffer{tensorBuf("dst", dst, 4), src0, src1}
}

// mmvq8wfHost is the host implementation of mmvq8wf_{q}(dst, src0, src1,
// r2, r3): mmvq8w's rows (warpRows) of block column (i12, i13) against
// src1's column (i12, i13) quantized as q8y would.
func mmvq8wfHost(k kernels.Kernel) (*hostKernel, error) {
	f, err := quantFormat(k)
	if err != nil {
		return nil, err
	}
	return &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			bufs := f32Operands(a, f)
			if dst, s0 := a.TensorAt(0), a.TensorAt(1); s0.Ne[0]%256 != 0 || dst.Ne[1] != 1 || a.TensorAt(2).Ne[1] != 1 {
				bufs[0].bad = fmt.Sprintf("k = %d is not a multiple of 256 or dst's (src1's) ne[1] is not 1", s0.Ne[0])
			}
			return bufs
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			s0, s1 := a.TensorAt(1), a.TensorAt(2)
			mmvq8DotsOf(m, a.TensorAt(0), s0, a.FastDivAt(3), a.FastDivAt(4), f, b, warpRows(k, f, b, s0), 1, func(_, i12, i13 int64) []float32 {
				return q8F32Column(m[2], i12*s1.Nb[2]+i13*s1.Nb[3], s0.Ne[0])
			})
		},
	}, nil
}

// tileRows is rowSets for mmvq8wt: sets of the kernel's tiles of 16 rows
// (its r axis; wholeWordCols refuses a kernel without one).
func tileRows(k kernels.Kernel, f *quant.Format, b block, s0 vendorapi.TensorDesc) iter.Seq[int64] {
	return rowSets(16*mmvq8wtTiles(k))(k, f, b, s0)
}

// mmvq8wtTiles is the tiles of 16 rows a warp of mmvq8wt kernel k takes at
// a time (its r axis: r1 or r2), 0 for another binding.
func mmvq8wtTiles(k kernels.Kernel) int64 {
	switch k.Bind["r"] {
	case "r1":
		return 1
	case "r2":
		return 2
	}
	return 0
}

// mmvq8Cols gives the src1 columns of a launch of kernel k and, when they
// or the shapes do not fit it, why.
type mmvq8Cols func(k kernels.Kernel, a *vendorapi.Args) (int64, string)

// ncolsArg takes the columns from the ncols argument (1..8; 1 for a
// kernel bound to nc 1), which must be dst's ne[1].
func ncolsArg(k kernels.Kernel, a *vendorapi.Args) (int64, string) {
	dst, n := a.TensorAt(0), a.I32At(6)
	maxCols := int32(8)
	if k.Bind["nc"] == "1" {
		maxCols = 1
	}
	if n < 1 || n > maxCols || int64(n) != dst.Ne[1] {
		return 0, fmt.Sprintf("ncols = %d is not dst's ne[1] = %d in 1..%d", n, dst.Ne[1], maxCols)
	}
	return int64(n), ""
}

// wholeWordCols is ncolsArg for mmvq8wt, which also needs k a multiple of
// 256 and a format kernels.MMVQ8WTFormats has.
func wholeWordCols(k kernels.Kernel, a *vendorapi.Args) (int64, string) {
	if _, ok := kernels.MMVQ8WTFormats[k.Bind["q"]]; !ok || mmvq8wtTiles(k) == 0 {
		return 0, fmt.Sprintf("%s (%s) has no mmvq8wt format (kernels.MMVQ8WTFormats) or tile count", k.Name, k.Bind["q"])
	}
	if s0 := a.TensorAt(1); s0.Ne[0]%256 != 0 {
		return 0, fmt.Sprintf("k = %d is not a multiple of 256", s0.Ne[0])
	}
	return ncolsArg(k, a)
}

// oneColumn is mmvq8w's one column (k a multiple of 256, dst's ne[1] 1).
func oneColumn(_ kernels.Kernel, a *vendorapi.Args) (int64, string) {
	if dst, s0 := a.TensorAt(0), a.TensorAt(1); s0.Ne[0]%256 != 0 || dst.Ne[1] != 1 {
		return 0, fmt.Sprintf("k = %d is not a multiple of 256 or dst's ne[1] = %d is not 1", s0.Ne[0], dst.Ne[1])
	}
	return 1, ""
}

// mmvq8Host makes the host implementation of a product of src0 with
// columns quantized by q8y (mmvq8, mmvq8t, mmvq8w, mmvq8wt): each block
// computes the rows rows gives it, of block column (i12, i13), for the
// columns cols gives; src0's rows 16-byte aligned.
func mmvq8Host(rows mmvq8RowMap, cols mmvq8Cols) func(k kernels.Kernel) (*hostKernel, error) {
	return func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := mmvq8Buffers(a, f)
				if _, bad := cols(k, a); bad != "" {
					bufs[0].bad = bad
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				n, _ := cols(k, a)
				mmvq8Dots(m, a, f, b, rows(k, f, b, a.TensorAt(1)), n)
			},
		}, nil
	}
}

// mmvq8Buffers are the buffers of an mmvq8, mmvq8t, mmvq8w or mmvq8wt launch (dst,
// src0, yq, yd, …): dst, src0 with rows 16-byte aligned, and q8y's columns.
func mmvq8Buffers(a *vendorapi.Args, f *quant.Format) []buffer {
	dst := a.TensorAt(0)
	return q8Operands(a, f, dst.Ne[1]*dst.Ne[2]*dst.Ne[3])
}

// q8Operands are the first buffers of a launch (dst, src0, yq, yd, …) of
// the products against q8y's columns: dst, src0 of format f with rows
// 16-byte aligned, and cols columns of q8y.
func q8Operands(a *vendorapi.Args, f *quant.Format, cols int64) []buffer {
	dst, s0 := a.TensorAt(0), a.TensorAt(1)
	src0 := quantBuf("src0", s0, f)
	src0.align = 16
	return append([]buffer{tensorBuf("dst", dst, 4), src0}, q8Cols(a.PtrAt(2), a.PtrAt(3), cols, s0.Ne[0])...)
}

// mmvq8Dots writes dst[row, c] for the rows block b computes and c <
// ncols, block column (i12, i13), as mmvq8, mmvq8t, mmvq8w and mmvq8wt compute
// them: each dot product of the row (dequantized) and the column (q8y's
// bytes times scales) summed in float64.
func mmvq8Dots(m [][]byte, a *vendorapi.Args, f *quant.Format, b block, rows iter.Seq[int64], ncols int64) {
	dst, k := a.TensorAt(0), a.TensorAt(1).Ne[0]
	mmvq8DotsOf(m, dst, a.TensorAt(1), a.FastDivAt(4), a.FastDivAt(5), f, b, rows, ncols, func(c, i12, i13 int64) []float32 {
		return q8Column(m[2], m[3], c+dst.Ne[1]*(i12+dst.Ne[2]*i13), k)
	})
}

// mmvq8DotsOf is mmvq8Dots for dst and src0 s0 (m[0], m[1]), the batch
// ratios r2, r3 and column(c, i12, i13), src1's column c of block column
// (i12, i13) as the kernel's products see it.
func mmvq8DotsOf(m [][]byte, dst, s0 vendorapi.TensorDesc, r2, r3 vendorapi.FastDiv, f *quant.Format, b block, rows iter.Seq[int64],
	ncols int64, column func(c, i12, i13 int64) []float32) {
	i12, i13 := int64(b.idx.Y), int64(b.idx.Z)
	i02, i03 := int64(r2.Div(uint32(i12))), int64(r3.Div(uint32(i13)))
	w := make([]float32, s0.Ne[0])
	var ys [][]float32
	for row := range rows {
		x := row*s0.Nb[1] + i02*s0.Nb[2] + i03*s0.Nb[3]
		_ = f.Dequantize(w, m[1][x:x+int64(f.RowBytes(len(w)))])
		for c := range ncols {
			if ys == nil {
				ys = make([][]float32, ncols)
			}
			if ys[c] == nil {
				ys[c] = column(c, i12, i13)
			}
			binary.LittleEndian.PutUint32(m[0][row*dst.Nb[0]+c*dst.Nb[1]+i12*dst.Nb[2]+i13*dst.Nb[3]:],
				math.Float32bits(float32(dot64(w, ys[c]))))
		}
	}
}

// mmidTile is quant.cu's MMID_TILE: the most pairs of one mmvq8_idg tile.
const mmidTile = 8

func init() {
	// mmid_group(ids, dst, n_experts, list, tiles, max_tiles, flag): one
	// block; the pairs of each expert in increasing order (the device's
	// order within an expert is not fixed, which changes nothing: every
	// pair's products are computed alone).
	register("mmid_group", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			ids := a.TensorAt(0)
			nPairs := ids.Ne[0] * ids.Ne[1]
			return []buffer{tensorBuf("ids", ids, 4), tensorBuf("dst", a.TensorAt(1), 4), elems("list", a.PtrAt(3), nPairs, 4),
				elems("tiles", a.PtrAt(4), 2*int64(a.I32At(5)), 4), optionalWord("flag", a.PtrAt(6))}
		},
		block: func(m [][]byte, a *vendorapi.Args, _ block) {
			ids, dst, nExperts := a.TensorAt(0), a.TensorAt(1), int64(a.I32At(2))
			nUsed, nPairs := ids.Ne[0], ids.Ne[0]*ids.Ne[1]
			byExpert := make([][]int32, nExperts)
			for p := range nPairs {
				e, t := p%nUsed, p/nUsed
				x := int64(int32(binary.LittleEndian.Uint32(m[0][e*ids.Nb[0]+t*ids.Nb[1]:])))
				if x >= 0 && x < nExperts {
					byExpert[x] = append(byExpert[x], int32(p))
					continue
				}
				for r := range dst.Ne[0] {
					binary.LittleEndian.PutUint32(m[1][r*dst.Nb[0]+e*dst.Nb[1]+t*dst.Nb[2]:], 0x7fc00000)
				}
				setFlag(m[4], 1)
			}
			list, tiles := u32s(m[2]), u32s(m[3])
			off, n := 0, 0
			for x, ps := range byExpert {
				for j := 0; j < len(ps); j += mmidTile {
					tiles[2*n] = uint32(off + j)
					tiles[2*n+1] = uint32(x) | uint32(min(mmidTile, len(ps)-j))<<16
					n++
				}
				for i, p := range ps {
					list[off+i] = uint32(p)
				}
				off += len(ps)
			}
			for i := n; i < len(tiles)/2; i++ {
				tiles[2*i+1] = 0
			}
		},
	})
	// mmvq8_idg_{q} and mmvq8t_idg_{q}(dst, src0, yq, yd, ne11, n_used,
	// list, tiles, max_tiles): block (bx, by): rows mmvq8Rows·bx …
	// (mmvq8tRows·bx …) of tile by's pairs.
	registerTemplate("mmvq8_idg", mmvq8IDGHost(mmvq8Rows))
	registerTemplate("mmvq8t_idg", mmvq8IDGHost(mmvq8tRows))
}

// mmvq8IDGHost makes the host implementation of mmvq8_idg or mmvq8t_idg
// with rows rows a block.
func mmvq8IDGHost(rows int64) func(k kernels.Kernel) (*hostKernel, error) {
	return func(k kernels.Kernel) (*hostKernel, error) {
		f, err := quantFormat(k)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, ne11 := a.TensorAt(0), int64(a.I32At(4))
				return append(q8Operands(a, f, ne11*dst.Ne[2]), elems("list", a.PtrAt(6), dst.Ne[1]*dst.Ne[2], 4),
					elems("tiles", a.PtrAt(7), 2*int64(a.I32At(8)), 4))
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, s0, ne11, nUsed := a.TensorAt(0), a.TensorAt(1), int64(a.I32At(4)), int64(a.I32At(5))
				if int32(b.idx.Y) >= a.I32At(8) {
					return
				}
				list, tiles := u32s(m[4]), u32s(m[5])
				start, xc := int64(tiles[2*b.idx.Y]), tiles[2*b.idx.Y+1]
				expert, count := int64(xc&0xffff), int64(xc>>16)
				k := s0.Ne[0]
				w := make([]float32, k)
				for r := range rows {
					row := int64(b.idx.X)*rows + r
					if row >= s0.Ne[1] {
						continue
					}
					x := row*s0.Nb[1] + expert*s0.Nb[2]
					_ = f.Dequantize(w, m[1][x:x+int64(f.RowBytes(len(w)))])
					for c := range count {
						p := int64(list[start+c])
						e, t := p%nUsed, p/nUsed
						y := q8Column(m[2], m[3], e%ne11+ne11*t, k)
						binary.LittleEndian.PutUint32(m[0][row*dst.Nb[0]+e*dst.Nb[1]+t*dst.Nb[2]:], math.Float32bits(float32(dot64(w, y))))
					}
				}
			},
		}, nil
	}
}
