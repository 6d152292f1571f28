package graph

import (
	"fmt"

	"github.com/ternion/ternion/core/tensor"
)

// GLUOp is the gated linear unit of an OpGLU node, numbered as ggml's enum
// ggml_glu_op (the node's op_params[0]; op_params[1] is swapped).
type GLUOp int32

// The GLU ops, in ggml's order.
const (
	GLUReGLU GLUOp = iota
	GLUGeGLU
	GLUSwiGLU
	GLUSwiGLUOAI
	GLUGeGLUErf
	GLUGeGLUQuick
	gluCount
)

var gluNames = [gluCount]string{"REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK"}

// String is ggml's name of the GLU op ("SWIGLU").
func (g GLUOp) String() string {
	if g >= 0 && g < gluCount {
		return gluNames[g]
	}
	return fmt.Sprintf("GLUOp(%d)", int32(g))
}

// GLUOp returns the GLU op of an OpGLU node (op_params[0]).
func (t *Tensor) GLUOp() GLUOp { return GLUOp(t.ParamI32(0)) }

// GLUSwapped reports whether an OpGLU node of one source takes the
// activated half from the second half of each row (op_params[1]).
func (t *Tensor) GLUSwapped() bool { return t.ParamI32(1) != 0 }

// glu makes GLU op of a (split in halves along ne0 when b is nil: out =
// act(x)·g with x the first half and g the second, or the other way round
// when swapped) or of a and b (x = a, g = b). Rows must be packed and dims
// 2, 3 laid out over rows (ggml_is_contiguous_1).
func (a *Tensor) glu(b *Tensor, op GLUOp, swapped bool) *Tensor {
	srcs := []*Tensor{a}
	if b != nil {
		srcs = append(srcs, b)
	}
	c, bad := operands(OpGLU, srcs...)
	if bad != nil {
		return bad
	}
	switch {
	case op == GLUSwiGLUOAI:
		return c.fail(OpGLU, srcs, "SWIGLU_OAI takes alpha and limit (ggml_swiglu_oai), which ternion does not build yet")
	case op < 0 || op >= gluCount:
		return c.fail(OpGLU, srcs, "unknown GLU op %d", int32(op))
	case !unaryFloat(a.layout.Type):
		return c.fail(OpGLU, srcs, "src0 %s must be f32, f16 or bf16", a.describe())
	case !a.layout.IsContiguousN(1):
		return c.fail(OpGLU, srcs, "src0 %s: rows must be packed and dims 2, 3 laid out over rows (ggml_is_contiguous_1)", a.describe())
	}
	ne := a.layout.Ne
	if b != nil {
		switch {
		case b.layout.Type != a.layout.Type:
			return c.fail(OpGLU, srcs, "src1 %s differs in type from src0 %s", b.describe(), a.describe())
		case b.layout.Ne != a.layout.Ne:
			return c.fail(OpGLU, srcs, "src1 %s differs in shape from src0 %s", b.describe(), a.describe())
		case !b.layout.IsContiguousN(1):
			return c.fail(OpGLU, srcs, "src1 %s: rows must be packed and dims 2, 3 laid out over rows (ggml_is_contiguous_1)", b.describe())
		}
	} else {
		ne[0] /= 2
	}
	l := tensor.Layout{Type: a.layout.Type, Ne: ne, Nb: tensor.RowMajorStrides(a.layout.Type, ne)}
	t := c.node(OpGLU, l, srcs...)
	t.setI32(0, int32(op))
	if swapped {
		t.setI32(1, 1)
	}
	return t
}

// GLU returns op of a split in halves along ne0 (ggml_glu): act(first
// half)·second half, or act(second)·first when swapped; ne0 halves.
func (a *Tensor) GLU(op GLUOp, swapped bool) *Tensor { return a.glu(nil, op, swapped) }

// GLUSplit returns act(a)·b for op, a and b of one type and shape (ggml_glu_split).
func (a *Tensor) GLUSplit(b *Tensor, op GLUOp) *Tensor {
	if b == nil {
		c, bad := operands(OpGLU, a)
		if bad != nil {
			return bad
		}
		return c.fail(OpGLU, []*Tensor{a, b}, "src1 is nil")
	}
	return a.glu(b, op, false)
}

// gluOf is GLU op of a in halves, or of a and up[0] when given.
func (a *Tensor) gluOf(op GLUOp, up []*Tensor) *Tensor {
	if len(up) > 0 {
		return a.GLUSplit(up[0], op)
	}
	return a.glu(nil, op, false)
}

// ReGLU returns max(a, 0)·up (ggml_reglu_split), or without up the REGLU of
// a's halves (ggml_reglu).
func (a *Tensor) ReGLU(up ...*Tensor) *Tensor { return a.gluOf(GLUReGLU, up) }

// GeGLU returns GELU(a)·up (ggml_geglu_split), or without up the GEGLU of
// a's halves (ggml_geglu).
func (a *Tensor) GeGLU(up ...*Tensor) *Tensor { return a.gluOf(GLUGeGLU, up) }

// SwiGLU returns SILU(a)·up (ggml_swiglu_split), or without up the SWIGLU
// of a's halves (ggml_swiglu).
func (a *Tensor) SwiGLU(up ...*Tensor) *Tensor { return a.gluOf(GLUSwiGLU, up) }

// ReGLUSwapped is REGLU of a's halves with the second half activated (ggml_reglu_swapped).
func (a *Tensor) ReGLUSwapped() *Tensor { return a.glu(nil, GLUReGLU, true) }

// GeGLUSwapped is GEGLU of a's halves with the second half activated (ggml_geglu_swapped).
func (a *Tensor) GeGLUSwapped() *Tensor { return a.glu(nil, GLUGeGLU, true) }

// SwiGLUSwapped is SWIGLU of a's halves with the second half activated (ggml_swiglu_swapped).
func (a *Tensor) SwiGLUSwapped() *Tensor { return a.glu(nil, GLUSwiGLU, true) }
