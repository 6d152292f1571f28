package graph

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/core/tensor"
)

// UnaryOp is the element-wise function of an OpUnary node, numbered as
// ggml's enum ggml_unary_op (the node's op_params[0]).
type UnaryOp int32

// The unary ops, in ggml's order.
const (
	UnaryAbs UnaryOp = iota
	UnarySgn
	UnaryNeg
	UnaryStep
	UnaryTanh
	UnaryELU
	UnaryRELU
	UnarySigmoid
	UnaryGELU
	UnaryGELUQuick
	UnarySILU
	UnaryHardSwish
	UnaryHardSigmoid
	UnaryExp
	UnaryExpm1
	UnarySoftplus
	UnaryGELUErf
	UnaryXIELU
	UnaryFloor
	UnaryCeil
	UnaryRound
	UnaryTrunc
	unaryCount
)

var unaryNames = [unaryCount]string{"ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU",
	"GELU_QUICK", "SILU", "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF", "XIELU", "FLOOR",
	"CEIL", "ROUND", "TRUNC"}

// String is ggml's name of the unary op ("SILU", "GELU_QUICK").
func (u UnaryOp) String() string {
	if u >= 0 && u < unaryCount {
		return unaryNames[u]
	}
	return fmt.Sprintf("UnaryOp(%d)", int32(u))
}

// UnaryOps lists every unary op, in ggml's order.
func UnaryOps() []UnaryOp {
	out := make([]UnaryOp, unaryCount)
	for i := range out {
		out[i] = UnaryOp(i)
	}
	return out
}

// UnaryOp returns the unary op of an OpUnary node (op_params[0]).
func (t *Tensor) UnaryOp() UnaryOp { return UnaryOp(t.ParamI32(0)) }

// unaryFloat reports whether ty is a float type the element-wise ops take.
func unaryFloat(ty tensor.Type) bool {
	return ty == tensor.F32 || ty == tensor.F16 || ty == tensor.BF16
}

// unaryNode makes a node of op over a (and extra sources srcs): a new
// contiguous tensor of a's type and shape, or with inplace a view of a's
// memory (ggml_view_tensor), so the result overwrites a. a must be of a
// float type.
func (a *Tensor) unaryNode(op Op, inplace bool, srcs ...*Tensor) *Tensor {
	all := append([]*Tensor{a}, srcs...)
	c, bad := operands(op, all...)
	if bad != nil {
		return bad
	}
	if !unaryFloat(a.layout.Type) {
		return c.fail(op, all, "src0 %s must be f32, f16 or bf16", a.describe())
	}
	if inplace {
		return c.view(op, a, a.layout, 0).withSrc(all...)
	}
	return c.node(op, dup(a), all...)
}

// unary makes UNARY op u of a.
func (a *Tensor) unary(u UnaryOp, inplace bool) *Tensor {
	if u < 0 || u >= unaryCount || u == UnaryXIELU {
		c, bad := operands(OpUnary, a)
		if bad != nil {
			return bad
		}
		if u == UnaryXIELU {
			return c.fail(OpUnary, []*Tensor{a}, "XIELU takes parameters (ggml_xielu), which ternion does not build yet")
		}
		return c.fail(OpUnary, []*Tensor{a}, "unknown unary op %d", int32(u))
	}
	t := a.unaryNode(OpUnary, inplace)
	if !t.failed {
		t.setI32(0, int32(u))
	}
	return t
}

// Unary returns op applied to every element of a (ggml_unary).
func (a *Tensor) Unary(op UnaryOp) *Tensor { return a.unary(op, false) }

// UnaryInplace applies op to every element of a in a's memory and returns
// a view of a (ggml_unary_inplace).
func (a *Tensor) UnaryInplace(op UnaryOp) *Tensor { return a.unary(op, true) }

// Abs returns |a| (ggml_abs).
func (a *Tensor) Abs() *Tensor { return a.unary(UnaryAbs, false) }

// Sgn returns the sign of a: -1, 0 or 1 (ggml_sgn).
func (a *Tensor) Sgn() *Tensor { return a.unary(UnarySgn, false) }

// Neg returns -a (ggml_neg).
func (a *Tensor) Neg() *Tensor { return a.unary(UnaryNeg, false) }

// Step returns 1 where a > 0, else 0 (ggml_step).
func (a *Tensor) Step() *Tensor { return a.unary(UnaryStep, false) }

// Tanh returns tanh(a) (ggml_tanh).
func (a *Tensor) Tanh() *Tensor { return a.unary(UnaryTanh, false) }

// ELU returns a where a > 0, else exp(a) - 1 (ggml_elu).
func (a *Tensor) ELU() *Tensor { return a.unary(UnaryELU, false) }

// RELU returns max(a, 0) (ggml_relu).
func (a *Tensor) RELU() *Tensor { return a.unary(UnaryRELU, false) }

// Sigmoid returns 1/(1 + exp(-a)) (ggml_sigmoid).
func (a *Tensor) Sigmoid() *Tensor { return a.unary(UnarySigmoid, false) }

// GELU returns GELU(a) with the tanh approximation (ggml_gelu).
func (a *Tensor) GELU() *Tensor { return a.unary(UnaryGELU, false) }

// QuickGELU returns a·σ(1.702a) (ggml_gelu_quick).
func (a *Tensor) QuickGELU() *Tensor { return a.unary(UnaryGELUQuick, false) }

// SILU returns a·σ(a) (ggml_silu).
func (a *Tensor) SILU() *Tensor { return a.unary(UnarySILU, false) }

// HardSwish returns a·clamp((a+3)/6, 0, 1) (ggml_hardswish).
func (a *Tensor) HardSwish() *Tensor { return a.unary(UnaryHardSwish, false) }

// HardSigmoid returns clamp((a+3)/6, 0, 1) (ggml_hardsigmoid).
func (a *Tensor) HardSigmoid() *Tensor { return a.unary(UnaryHardSigmoid, false) }

// Exp returns exp(a) (ggml_exp).
func (a *Tensor) Exp() *Tensor { return a.unary(UnaryExp, false) }

// Expm1 returns exp(a) - 1 (ggml_expm1).
func (a *Tensor) Expm1() *Tensor { return a.unary(UnaryExpm1, false) }

// Softplus returns log(1 + exp(a)), or a above 20 (ggml_softplus).
func (a *Tensor) Softplus() *Tensor { return a.unary(UnarySoftplus, false) }

// GELUErf returns 0.5a(1 + erf(a/√2)), the exact GELU (ggml_gelu_erf).
func (a *Tensor) GELUErf() *Tensor { return a.unary(UnaryGELUErf, false) }

// Floor returns ⌊a⌋ (ggml_floor).
func (a *Tensor) Floor() *Tensor { return a.unary(UnaryFloor, false) }

// Ceil returns ⌈a⌉ (ggml_ceil).
func (a *Tensor) Ceil() *Tensor { return a.unary(UnaryCeil, false) }

// Round returns a rounded to the nearest integer, halves away from zero (ggml_round).
func (a *Tensor) Round() *Tensor { return a.unary(UnaryRound, false) }

// Trunc returns a rounded toward zero (ggml_trunc).
func (a *Tensor) Trunc() *Tensor { return a.unary(UnaryTrunc, false) }

// SILUInplace is SILU computed in a's memory (ggml_silu_inplace).
func (a *Tensor) SILUInplace() *Tensor { return a.unary(UnarySILU, true) }

// GELUInplace is GELU computed in a's memory (ggml_gelu_inplace).
func (a *Tensor) GELUInplace() *Tensor { return a.unary(UnaryGELU, true) }

// RELUInplace is RELU computed in a's memory (ggml_relu_inplace).
func (a *Tensor) RELUInplace() *Tensor { return a.unary(UnaryRELU, true) }

// TanhInplace is Tanh computed in a's memory (ggml_tanh_inplace).
func (a *Tensor) TanhInplace() *Tensor { return a.unary(UnaryTanh, true) }

// SigmoidInplace is Sigmoid computed in a's memory (ggml_sigmoid_inplace).
func (a *Tensor) SigmoidInplace() *Tensor { return a.unary(UnarySigmoid, true) }

// Sqr returns a² (ggml_sqr).
func (a *Tensor) Sqr() *Tensor { return a.unaryNode(OpSqr, false) }

// SqrInplace is Sqr computed in a's memory (ggml_sqr_inplace).
func (a *Tensor) SqrInplace() *Tensor { return a.unaryNode(OpSqr, true) }

// Sqrt returns √a (ggml_sqrt).
func (a *Tensor) Sqrt() *Tensor { return a.unaryNode(OpSqrt, false) }

// SqrtInplace is Sqrt computed in a's memory (ggml_sqrt_inplace).
func (a *Tensor) SqrtInplace() *Tensor { return a.unaryNode(OpSqrt, true) }

// Log returns the natural logarithm of a (ggml_log).
func (a *Tensor) Log() *Tensor { return a.unaryNode(OpLog, false) }

// LogInplace is Log computed in a's memory (ggml_log_inplace).
func (a *Tensor) LogInplace() *Tensor { return a.unaryNode(OpLog, true) }

// Sin returns sin(a) (ggml_sin).
func (a *Tensor) Sin() *Tensor { return a.unaryNode(OpSin, false) }

// SinInplace is Sin computed in a's memory (ggml_sin_inplace).
func (a *Tensor) SinInplace() *Tensor { return a.unaryNode(OpSin, true) }

// Cos returns cos(a) (ggml_cos).
func (a *Tensor) Cos() *Tensor { return a.unaryNode(OpCos, false) }

// CosInplace is Cos computed in a's memory (ggml_cos_inplace).
func (a *Tensor) CosInplace() *Tensor { return a.unaryNode(OpCos, true) }

// Clamp limits a to [lo, hi] in a's memory and returns a view of a: as
// ggml_clamp, it always works in place.
func (a *Tensor) Clamp(lo, hi float32) *Tensor {
	t := a.unaryNode(OpClamp, true)
	if !t.failed {
		t.setF32(0, lo)
		t.setF32(1, hi)
	}
	return t
}

// leakyRelu makes LEAKY_RELU of a with slope.
func (a *Tensor) leakyRelu(slope float32, inplace bool) *Tensor {
	t := a.unaryNode(OpLeakyRelu, inplace)
	if !t.failed {
		t.setF32(0, slope)
	}
	return t
}

// LeakyRelu returns a where a > 0, else a·slope (ggml_leaky_relu).
func (a *Tensor) LeakyRelu(slope float32) *Tensor { return a.leakyRelu(slope, false) }

// LeakyReluInplace is LeakyRelu computed in a's memory (ggml_leaky_relu with inplace).
func (a *Tensor) LeakyReluInplace(slope float32) *Tensor { return a.leakyRelu(slope, true) }

// add1 makes ADD1 of a and the scalar b.
func (a *Tensor) add1(b *Tensor, inplace bool) *Tensor {
	c, bad := operands(OpAdd1, a, b)
	if bad != nil {
		return bad
	}
	l := a.layout
	switch {
	case b.layout.Ne != [4]int64{1, 1, 1, 1}:
		return c.fail(OpAdd1, []*Tensor{a, b}, "src1 %s is not a scalar", b.describe())
	case !unaryFloat(b.layout.Type):
		return c.fail(OpAdd1, []*Tensor{a, b}, "src1 %s must be f32, f16 or bf16", b.describe())
	case l.Nb[0] != l.Type.BlockBytes() || l.Nb[2] != l.Nb[1]*l.Ne[1] || l.Nb[3] != l.Nb[2]*l.Ne[2]:
		return c.fail(OpAdd1, []*Tensor{a, b}, "src0 %s is not padded 1d (packed rows, dims 2 and 3 packed over rows)", a.describe())
	}
	return a.unaryNode(OpAdd1, inplace, b)
}

// Add1 returns a + b for a scalar tensor b (ggml_add1).
func (a *Tensor) Add1(b *Tensor) *Tensor { return a.add1(b, false) }

// Add1Inplace is Add1 computed in a's memory (ggml_add1_inplace).
func (a *Tensor) Add1Inplace(b *Tensor) *Tensor { return a.add1(b, true) }

// acc makes ACC: a with b added into the view of it with strides nb1..nb3
// at byte offset off.
func (a *Tensor) acc(b *Tensor, nb1, nb2, nb3, off int64, inplace bool) *Tensor {
	c, bad := operands(OpAcc, a, b)
	if bad != nil {
		return bad
	}
	srcs := []*Tensor{a, b}
	bn := b.layout.Ne
	switch {
	case a.layout.Type != tensor.F32 || b.layout.Type != tensor.F32:
		return c.fail(OpAcc, srcs, "src0 %s and src1 %s must be f32", a.describe(), b.describe())
	case !a.layout.IsContiguous():
		return c.fail(OpAcc, srcs, "src0 %s is not contiguous", a.describe())
	case b.layout.Elements() > a.layout.Elements():
		return c.fail(OpAcc, srcs, "src1 %s has more elements than src0 %s", b.describe(), a.describe())
	}
	for _, v := range []int64{nb1, nb2, nb3, off} {
		if v < 0 || v > math.MaxInt32 || v%4 != 0 {
			return c.fail(OpAcc, srcs, "strides nb1=%d nb2=%d nb3=%d and offset %d must be non-negative multiples of 4 below 2^31",
				nb1, nb2, nb3, off)
		}
	}
	if !b.layout.Empty() {
		end := off + 4 + (bn[0]-1)*4 + (bn[1]-1)*nb1 + (bn[2]-1)*nb2 + (bn[3]-1)*nb3
		if end > a.layout.Bytes() {
			return c.fail(OpAcc, srcs, "the view of src1's shape (strides nb1=%d nb2=%d nb3=%d, offset %d) ends at byte %d, past src0 %s (%d bytes)",
				nb1, nb2, nb3, off, end, a.describe(), a.layout.Bytes())
		}
	}
	t := a.unaryNode(OpAcc, inplace, b)
	if !t.failed {
		for i, v := range []int64{nb1, nb2, nb3, off} {
			t.setI32(i, int32(v))
		}
		if inplace {
			t.setI32(4, 1)
		}
	}
	return t
}

// Acc returns a copy of a with b added into its view of b's shape with byte
// strides nb1, nb2, nb3 at byte offset off (ggml_acc); a and b are f32.
func (a *Tensor) Acc(b *Tensor, nb1, nb2, nb3, off int64) *Tensor {
	return a.acc(b, nb1, nb2, nb3, off, false)
}

// AccInplace is Acc computed in a's memory (ggml_acc_inplace).
func (a *Tensor) AccInplace(b *Tensor, nb1, nb2, nb3, off int64) *Tensor {
	return a.acc(b, nb1, nb2, nb3, off, true)
}
