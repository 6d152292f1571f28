package host

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// unary.go implements kernels/unary.cu.

// unaryFunc is one of unary.cu's unary_* functors: the result for x with
// the op's float parameters p0, p1, computed in float32 (the transcendental
// functions in float64, rounded once).
type unaryFunc func(x, p0, p1 float32) float32

// unaryF64 lifts a float64 function to a unaryFunc.
func unaryF64(f func(x float64) float64) unaryFunc {
	return func(x, _, _ float32) float32 { return float32(f(float64(x))) }
}

// unaryGELU is ggml's tanh approximation of GELU (unary.cu computes the
// same function as x·sigmoid(2u), an identity of tanh).
func unaryGELU(x float64) float64 {
	const a, s = 0.044715, 0.79788456080286535587989211986876 // sqrt(2/pi)
	return 0.5 * x * (1 + math.Tanh(s*x*(1+a*x*x)))
}

// unaryHardSigmoid is clamp((x+3)/6, 0, 1).
func unaryHardSigmoid(x float64) float64 { return math.Min(1, math.Max(0, (x+3)/6)) }

// unaryFuncs are the functors of unary.cu by op axis value (the GLU ops use
// those of their activations: relu, gelu, silu, gelu_erf, gelu_quick).
var unaryFuncs = map[string]unaryFunc{
	"abs": unaryF64(math.Abs),
	"sgn": func(x, _, _ float32) float32 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	},
	"neg": func(x, _, _ float32) float32 { return -x },
	"step": func(x, _, _ float32) float32 {
		if x > 0 {
			return 1
		}
		return 0
	},
	"tanh": unaryF64(math.Tanh),
	"elu": unaryF64(func(x float64) float64 {
		if x > 0 {
			return x
		}
		return math.Expm1(x)
	}),
	"relu":        func(x, _, _ float32) float32 { return unaryMax(x, 0) },
	"sigmoid":     unaryF64(func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }),
	"gelu":        unaryF64(unaryGELU),
	"gelu_quick":  unaryF64(func(x float64) float64 { return x / (1 + math.Exp(-1.702*x)) }),
	"silu":        unaryF64(func(x float64) float64 { return x / (1 + math.Exp(-x)) }),
	"hardswish":   unaryF64(func(x float64) float64 { return x * unaryHardSigmoid(x) }),
	"hardsigmoid": unaryF64(unaryHardSigmoid),
	"exp":         unaryF64(math.Exp),
	"expm1":       unaryF64(math.Expm1),
	"softplus": unaryF64(func(x float64) float64 {
		if x > 20 {
			return x
		}
		return math.Log1p(math.Exp(x))
	}),
	"gelu_erf": unaryF64(func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }),
	"floor":    unaryF64(math.Floor),
	"ceil":     unaryF64(math.Ceil),
	"round":    unaryF64(math.Round),
	"trunc":    unaryF64(math.Trunc),
	"leaky_relu": func(x, slope, _ float32) float32 {
		return unaryMax(x, 0) + unaryMin(x, 0)*slope
	},
	"sqr":   func(x, _, _ float32) float32 { return x * x },
	"sqrt":  unaryF64(math.Sqrt),
	"sin":   unaryF64(math.Sin),
	"cos":   unaryF64(math.Cos),
	"log":   unaryF64(math.Log),
	"clamp": func(x, lo, hi float32) float32 { return unaryMin(unaryMax(x, lo), hi) },
}

// unaryGLUActs are the activations of the GLU ops (unary_family.go's axis).
var unaryGLUActs = map[string]string{"reglu": "relu", "geglu": "gelu", "swiglu": "silu", "geglu_erf": "gelu_erf",
	"geglu_quick": "gelu_quick"}

// unaryMax and unaryMin are C's fmaxf and fminf: a NaN operand gives the other.
func unaryMax(x, y float32) float32 {
	if x > y || y != y {
		return x
	}
	return y
}

func unaryMin(x, y float32) float32 {
	if x < y || y != y {
		return x
	}
	return y
}

// unaryKernelOp returns the functor and storage type of a unary or GLU
// template instantiation k (for a GLU kernel, of its activation).
func unaryKernelOp(k kernels.Kernel, glu bool) (unaryFunc, elemType, error) {
	name := k.Bind["op"]
	if glu {
		name = unaryGLUActs[name]
	}
	f := unaryFuncs[name]
	if f == nil {
		return nil, elemType{}, fmt.Errorf("kernel %s: op %q has no host implementation", k.Name, k.Bind["op"])
	}
	t, err := elemTypeOf(k.Name, k.Bind, "t")
	return f, t, err
}

// unaryBig marks the buffer of a kernel limited to n < 2^31 elements.
func unaryBig(b buffer, n int64) buffer {
	if n > math.MaxInt32 && b.bad == "" {
		b.bad = fmt.Sprintf("n = %d: the kernel takes fewer than 2^31 elements", n)
	}
	return b
}

// unarySameShape marks bufs[0] bad when the descriptors' shapes differ.
func unarySameShape(bufs []buffer, ts ...vendorapi.TensorDesc) []buffer {
	for _, t := range ts[1:] {
		if t.Ne != ts[0].Ne && bufs[0].bad == "" {
			bufs[0].bad = "the tensors differ in shape"
		}
	}
	return bufs
}

func init() {
	// scale4_f32(dst, src, scale, bias, n4): dst[i] = src[i]*scale + bias for
	// the 4·n4 floats (fused multiply-add, as the GPU compiler contracts it).
	register("scale4_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			n := a.I64At(4)
			return []buffer{elems("dst", a.PtrAt(0), n, 16), elems("src", a.PtrAt(1), n, 16)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := f32s(m[0]), f32s(m[1])
			s, c := a.F32At(2), a.F32At(3)
			b.gridStride(a.I64At(4), func(i int64) {
				for j := 4 * i; j < 4*i+4; j++ {
					dst[j] = fma32(src[j], s, c)
				}
			})
		},
	})
	// acc_f32(dst, src0, src1, off, s1, s2, s3, n): ACC in one pass over
	// the packed dst, src1 added where element i - off of dst's view
	// decomposes by the nested strides s1..s3 into indices inside src1.
	register("acc_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			n := a.I64At(7)
			return []buffer{elems("dst", a.PtrAt(0), n, 4), elems("src0", a.PtrAt(1), n, 4), tensorBuf("src1", a.TensorAt(2), 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src0, f32 := f32s(m[0]), f32s(m[1]), elemTypes["f32"]
			s1v, off := a.TensorAt(2), a.I64At(3)
			s1, s2, s3 := a.FastDivAt(4), a.FastDivAt(5), a.FastDivAt(6)
			b.gridStride(a.I64At(7), func(i int64) {
				v := src0[i]
				if i >= off {
					o := uint32(i - off)
					i3 := s3.Div(o)
					r3 := o - i3*s3.D
					i2 := s2.Div(r3)
					r2 := r3 - i2*s2.D
					i1 := s1.Div(r2)
					i0 := r2 - i1*s1.D
					if int64(i0) < s1v.Ne[0] && int64(i1) < s1v.Ne[1] && int64(i2) < s1v.Ne[2] && int64(i3) < s1v.Ne[3] {
						at := int64(i0)*s1v.Nb[0] + int64(i1)*s1v.Nb[1] + int64(i2)*s1v.Nb[2] + int64(i3)*s1v.Nb[3]
						v += f32.load(m[2][at:])
					}
				}
				dst[i] = v
			})
		},
	})
	// unary_{op}_{t}(dst, src, p0, p1, n): 16-byte vectors over the packed
	// buffers, thread g taking vectors g, g+T, ..., then tail element
	// nv·N + g.
	registerTemplate("unary_contig", func(k kernels.Kernel) (*hostKernel, error) {
		op, t, err := unaryKernelOp(k, false)
		if err != nil {
			return nil, err
		}
		vec := int64(16 / t.size)
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				n := a.I64At(4)
				dst, src := elems("dst", a.PtrAt(0), n, t.size), elems("src", a.PtrAt(1), n, t.size)
				dst.align, src.align = 16, 16
				if n/vec > math.MaxInt32 {
					dst.bad = fmt.Sprintf("n = %d: the kernel takes fewer than 2^31 whole vectors", n)
				}
				return []buffer{dst, src}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				p0, p1, n := a.F32At(2), a.F32At(3), a.I64At(4)
				s := int64(t.size)
				apply := func(j int64) { t.store(m[0][j*s:], op(t.load(m[1][j*s:]), p0, p1)) }
				nv := n / vec
				b.gridStride(nv, func(i int64) {
					for j := i * vec; j < (i+1)*vec; j++ {
						apply(j)
					}
				})
				first := int64(b.idx.X) * int64(b.dim.X)
				for g := first; g < first+int64(b.dim.X); g++ {
					if j := nv*vec + g; j < n {
						apply(j)
					}
				}
			},
		}, nil
	})
	// unarys_{op}_{t}(dst, src, ne0, ne1, ne2, p0, p1, n): element by element
	// in the common shape, any strides.
	registerTemplate("unary_strided", func(k kernels.Kernel) (*hostKernel, error) {
		op, t, err := unaryKernelOp(k, false)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				bufs := []buffer{unaryBig(tensorBuf("dst", dst, t.size), a.I64At(7)), tensorBuf("src", src, t.size)}
				return unarySameShape(bufs, dst, src)
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				d0, d1, d2 := a.FastDivAt(2), a.FastDivAt(3), a.FastDivAt(4)
				p0, p1 := a.F32At(5), a.F32At(6)
				b.gridStride(a.I64At(7), func(i int64) {
					so, do := tensorOffset(uint32(i), src, d0, d1, d2), tensorOffset(uint32(i), dst, d0, d1, d2)
					t.store(m[0][do:], op(t.load(m[1][so:]), p0, p1))
				})
			},
		}, nil
	})
	// glu_{op}_{t}(dst, x, g, nc, ne1, ne2, n): dst = act(x)·g element by
	// element, rows by fast division.
	registerTemplate("glu_flat", func(k kernels.Kernel) (*hostKernel, error) {
		act, t, err := unaryKernelOp(k, true)
		if err != nil {
			return nil, err
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, x, g := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				bufs := []buffer{unaryBig(tensorBuf("dst", dst, t.size), a.I64At(6)), tensorBuf("x", x, t.size),
					tensorBuf("g", g, t.size)}
				return unarySameShape(bufs, dst, x, g)
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, x, g := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				nc, ne1, ne2 := a.FastDivAt(3), a.FastDivAt(4), a.FastDivAt(5)
				b.gridStride(a.I64At(6), func(i int64) {
					xo, gro := tensorOffset(uint32(i), x, nc, ne1, ne2), tensorOffset(uint32(i), g, nc, ne1, ne2)
					v := act(t.load(m[1][xo:]), 0, 0) * t.load(m[2][gro:])
					t.store(m[0][tensorOffset(uint32(i), dst, nc, ne1, ne2):], v)
				})
			},
		}, nil
	})
	// gluv_{op}_{t}(dst, x, g, ncv, nv): glu_flat by 16-byte vectors over
	// evenly spaced rows (row r at data + r·nb[1]).
	registerTemplate("glu_vec", func(k kernels.Kernel) (*hostKernel, error) {
		act, t, err := unaryKernelOp(k, true)
		if err != nil {
			return nil, err
		}
		vec := int64(16 / t.size)
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst, x, g := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				bufs := []buffer{unaryBig(unaryFolded(vecRows("dst", dst, t.size, 16), dst), a.I64At(4)*vec),
					unaryFolded(vecRows("x", x, t.size, 16), x), unaryFolded(vecRows("g", g, t.size, 16), g)}
				return unarySameShape(bufs, dst, x, g)
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, x, g := a.TensorAt(0), a.TensorAt(1), a.TensorAt(2)
				ncv := a.FastDivAt(3)
				s := int64(t.size)
				b.gridStride(a.I64At(4), func(j int64) {
					r := int64(ncv.Div(uint32(j)))
					i0 := (j - r*int64(ncv.D)) * vec * s
					xo, gro, do := r*x.Nb[1]+i0, r*g.Nb[1]+i0, r*dst.Nb[1]+i0
					for k := range vec {
						v := act(t.load(m[1][xo+k*s:]), 0, 0) * t.load(m[2][gro+k*s:])
						t.store(m[0][do+k*s:], v)
					}
				})
			},
		}, nil
	})
}

// unaryFolded marks b (the buffer of descriptor t) bad unless t's rows are
// all in dim 1, as gluv's evenly spaced rows need.
func unaryFolded(b buffer, t vendorapi.TensorDesc) buffer {
	if (t.Ne[2] != 1 || t.Ne[3] != 1) && b.bad == "" {
		b.bad = fmt.Sprintf("ne = %v: the rows must be folded into dim 1 (ne[2] = ne[3] = 1)", t.Ne)
	}
	return b
}
