package host

import (
	"fmt"
	"math"
	"strings"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// norm.go implements kernels/norm.cu: the row norms (with their fused ADD
// before and MUL, ADD after) and GROUP_NORM. Sums are taken in float64 (the
// GPU sums in float32 in its own order); element-wise steps are float32 as
// on the GPU.

// normBuf is the buffer of an f32 tensor argument of a norm kernel: none for
// an absent operand (no data, no elements), packed 16-byte rows for the
// float4 kernels.
func normBuf(param string, t vendorapi.TensorDesc, vec bool) buffer {
	if t.Data == 0 && t.Ne == [4]int64{} {
		return buffer{param: param, align: 4}
	}
	if vec {
		return vecRows(param, t, 4, 16)
	}
	return tensorBuf(param, t, 4)
}

// normOperand is one broadcast operand's row as a kernel thread reads it.
type normOperand struct {
	mem  []byte
	off  int64 // the row's first byte in mem
	nb0  int64
	ne0  int64
	used bool
}

// normOperandRow is norm.cu's norm_operand_row on host: t's row broadcast
// into the dst row i by modulo (the kernel's fast divisions n1..n3).
func normOperandRow(mem []byte, t vendorapi.TensorDesc, n1, n2, n3 vendorapi.FastDiv, i [4]uint32) normOperand {
	if t.Data == 0 && t.Ne == [4]int64{} {
		return normOperand{}
	}
	off := int64(n1.Mod(i[1]))*t.Nb[1] + int64(n2.Mod(i[2]))*t.Nb[2] + int64(n3.Mod(i[3]))*t.Nb[3]
	return normOperand{mem: mem, off: off, nb0: t.Nb[0], ne0: t.Ne[0], used: true}
}

// at is the operand's element for column i0 of the dst row.
func (o normOperand) at(i0 int64) float32 {
	return elemTypes["f32"].load(o.mem[o.off+(i0%o.ne0)*o.nb0:])
}

func init() {
	// norm_{op}_f32 and norm4_{op}_f32(dst, src, add, mul, post, sum, ne1,
	// ne2, add0..3, mul0..3, post0..3, eps, nrows): the float4 kernels
	// compute the same values.
	registerTemplate("norm_rows", func(k kernels.Kernel) (*hostKernel, error) {
		op := k.Bind["op"]
		if op != "norm" && op != "rms" && op != "l2" {
			return nil, fmt.Errorf("kernel %s: op %q has no host implementation", k.Name, op)
		}
		vec := strings.HasPrefix(k.Name, "norm4_")
		f32 := elemTypes["f32"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := make([]buffer, 6)
				for i, name := range []string{"dst", "src", "add", "mul", "post", "sum"} {
					bufs[i] = normBuf(name, a.TensorAt(i), vec)
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src, add, mul, post, sum := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2), a.TensorAt(3), a.TensorAt(4), a.TensorAt(5)
				ne1, ne2 := a.FastDivAt(6), a.FastDivAt(7)
				eps := float64(a.F32At(20))
				ne0 := src.Ne[0]
				x := make([]float32, ne0)
				b.blockRows(a.I64At(21), func(row int64) {
					var i [4]uint32
					i[1], i[2], i[3] = rowIndex(uint32(row), ne1, ne2)
					ad := normOperandRow(m[2], add, a.FastDivAt(9), a.FastDivAt(10), a.FastDivAt(11), i)
					mu := normOperandRow(m[3], mul, a.FastDivAt(13), a.FastDivAt(14), a.FastDivAt(15), i)
					po := normOperandRow(m[4], post, a.FastDivAt(17), a.FastDivAt(18), a.FastDivAt(19), i)
					xs, ys := rowOff(src, i), rowOff(dst, i)
					var acc float64
					for i0 := range ne0 {
						v := f32.load(m[1][xs+i0*src.Nb[0]:])
						if ad.used {
							v += ad.at(i0)
							if sum.Data != 0 {
								f32.store(m[5][rowOff(sum, i)+i0*sum.Nb[0]:], v)
							}
						}
						x[i0] = v
						if op == "norm" {
							acc += float64(v)
						} else {
							acc += float64(v) * float64(v)
						}
					}
					mean, scale := 0.0, 0.0
					switch op {
					case "norm":
						mean = acc / float64(ne0)
						var dev float64
						for _, v := range x {
							dev += (float64(v) - mean) * (float64(v) - mean)
						}
						scale = 1 / math.Sqrt(dev/float64(ne0)+eps)
					case "rms":
						scale = 1 / math.Sqrt(acc/float64(ne0)+eps)
					default:
						scale = 1 / math.Sqrt(math.Max(acc, eps*eps))
					}
					mf, sf := float32(mean), float32(scale)
					for i0, v := range x {
						r := (v - mf) * sf
						if mu.used {
							r *= mu.at(int64(i0))
						}
						if po.used {
							r += po.at(int64(i0))
						}
						f32.store(m[0][ys+int64(i0)*dst.Nb[0]:], r)
					}
				})
			},
		}, nil
	})
	// group_norm_f32 and group_norm4_f32(dst, src, cpg, eps): block (x, y)
	// normalises channels [x*cpg, min((x+1)*cpg, ne2)) of sample y.
	registerTemplate("group_norm", func(k kernels.Kernel) (*hostKernel, error) {
		vec := strings.HasPrefix(k.Name, "group_norm4_")
		f32 := elemTypes["f32"]
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				bufs := []buffer{tensorBuf("dst", a.TensorAt(0), 4), tensorBuf("src", a.TensorAt(1), 4)}
				for i, t := range []vendorapi.TensorDesc{a.TensorAt(0), a.TensorAt(1)} {
					if t.Nb != [4]int64{4, 4 * t.Ne[0], 4 * t.Ne[0] * t.Ne[1], 4 * t.Ne[0] * t.Ne[1] * t.Ne[2]} {
						bufs[i].bad = "group_norm needs a contiguous f32 tensor"
					}
					if vec {
						bufs[i].align = 16
						if t.Ne[0]*t.Ne[1]%4 != 0 {
							bufs[i].bad = "group_norm4 needs ne0*ne1 a multiple of 4"
						}
					}
				}
				return bufs
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				cpg, eps := a.I64At(2), float64(a.F32At(3))
				c0 := int64(b.idx.X) * cpg
				c1 := min(c0+cpg, src.Ne[2])
				if c0 >= c1 {
					return
				}
				count := (c1 - c0) * src.Ne[0] * src.Ne[1]
				xs := int64(b.idx.Y)*src.Nb[3] + c0*src.Nb[2]
				ys := int64(b.idx.Y)*dst.Nb[3] + c0*dst.Nb[2]
				var sum float64
				for k := range count {
					sum += float64(f32.load(m[1][xs+4*k:]))
				}
				mean := sum / float64(count)
				var dev float64
				for k := range count {
					d := float64(f32.load(m[1][xs+4*k:])) - mean
					dev += d * d
				}
				mf, sf := float32(mean), float32(1/math.Sqrt(dev/float64(count)+eps))
				for k := range count {
					f32.store(m[0][ys+4*k:], (f32.load(m[1][xs+4*k:])-mf)*sf)
				}
			},
		}, nil
	})
}
