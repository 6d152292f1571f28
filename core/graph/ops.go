package graph

import (
	"github.com/ternion/ternion/core/tensor"
)

// operands checks the sources of a new op node: none nil, none failed. It
// returns the context the node goes into (the first op source's; with only
// leaf sources, the last one's): tensors of any contexts combine, as ggml's
// do, so weights made once join every forward pass. A failed op's error is
// kept by the context of the tensor it returns.
func operands(op Op, srcs ...*Tensor) (*Context, *Tensor) {
	var c *Context
	for _, s := range srcs {
		if s != nil && s.ctx != nil && s.op != OpNone {
			c = s.ctx
			break
		}
	}
	if c == nil {
		for _, s := range srcs {
			if s != nil && s.ctx != nil {
				c = s.ctx
			}
		}
	}
	if c == nil {
		// Every operand is nil: no context to record the error in.
		c = NewContext()
		return c, c.fail(op, srcs, "every operand is nil")
	}
	for i, s := range srcs {
		switch {
		case s == nil:
			return c, c.fail(op, srcs, "src%d is nil", i)
		case s.failed:
			return s.ctx, s.ctx.failed(op)
		}
	}
	return c, nil
}

// node makes an op node of layout l with sources srcs.
func (c *Context) node(op Op, l tensor.Layout, srcs ...*Tensor) *Tensor {
	t := &Tensor{layout: l, op: op}
	copy(t.src[:], srcs)
	return c.add(t)
}

// view makes an op node that reads src's memory at byte offset off with
// layout l (a view of a view reads the first tensor's memory).
func (c *Context) view(op Op, src *Tensor, l tensor.Layout, off int64) *Tensor {
	t := c.node(op, l, src)
	t.viewSrc, t.viewOff = src, off
	if src.viewSrc != nil {
		t.viewSrc, t.viewOff = src.viewSrc, src.viewOff+off
	}
	return t
}

// dup is a contiguous layout of a's type and shape (ggml_dup_tensor).
func dup(a *Tensor) tensor.Layout {
	l := a.layout
	l.Nb = tensor.RowMajorStrides(l.Type, l.Ne)
	return l
}

// binary makes ADD, SUB, MUL or DIV of a and b: b tiles into a (ggml's
// broadcasting: dimension i of b divides that of a), the result has a's type
// and shape.
func (a *Tensor) binary(op Op, b *Tensor) *Tensor {
	c, bad := operands(op, a, b)
	if bad != nil {
		return bad
	}
	if !b.layout.CanRepeatInto(a.layout) {
		return c.fail(op, []*Tensor{a, b}, "src1 %s does not repeat into src0 %s (each dimension of src1 must divide src0's)",
			b.describe(), a.describe())
	}
	if b.layout.Type.IsQuantized() {
		return c.fail(op, []*Tensor{a, b}, "src1 %s is quantized", b.describe())
	}
	return c.node(op, dup(a), a, b)
}

// Add returns a + b, b broadcast over a (ggml_add).
func (a *Tensor) Add(b *Tensor) *Tensor { return a.binary(OpAdd, b) }

// Sub returns a - b, b broadcast over a (ggml_sub).
func (a *Tensor) Sub(b *Tensor) *Tensor { return a.binary(OpSub, b) }

// Mul returns a * b element-wise, b broadcast over a (ggml_mul).
func (a *Tensor) Mul(b *Tensor) *Tensor { return a.binary(OpMul, b) }

// Div returns a / b element-wise, b broadcast over a (ggml_div).
func (a *Tensor) Div(b *Tensor) *Tensor { return a.binary(OpDiv, b) }

// Scale returns a*s (ggml_scale).
func (a *Tensor) Scale(s float32) *Tensor { return a.ScaleBias(s, 0) }

// ScaleBias returns a*s + b (ggml_scale_bias).
func (a *Tensor) ScaleBias(s, b float32) *Tensor {
	c, bad := operands(OpScale, a)
	if bad != nil {
		return bad
	}
	t := c.node(OpScale, dup(a), a)
	t.setF32(0, s)
	t.setF32(1, b)
	return t
}

// MulMat returns the matrix product of a ([k, m, ...], e.g. weights) and b
// ([k, n, ...]): an F32 tensor [m, n, b.ne2, b.ne3] with out[n][m] =
// Σ_k a[m][k]·b[n][k] (ggml_mul_mat). a's dimensions 2 and 3 broadcast over
// b's by division (GQA: each a matrix serves b.ne2/a.ne2 consecutive b
// matrices); a must not be transposed.
func (a *Tensor) MulMat(b *Tensor) *Tensor {
	c, bad := operands(OpMulMat, a, b)
	if bad != nil {
		return bad
	}
	an, bn := a.layout.Ne, b.layout.Ne
	switch {
	case an[0] != bn[0]:
		return c.fail(OpMulMat, []*Tensor{a, b}, "src0 %s and src1 %s differ in ne[0] (the shared dimension k)", a.describe(), b.describe())
	case an[2] == 0 || an[3] == 0:
		return c.fail(OpMulMat, []*Tensor{a, b}, "src0 %s is empty in dimension 2 or 3", a.describe())
	case bn[2]%an[2] != 0 || bn[3]%an[3] != 0:
		return c.fail(OpMulMat, []*Tensor{a, b}, "src0 %s does not broadcast over src1 %s in dimensions 2 and 3", a.describe(), b.describe())
	case a.layout.IsTransposed():
		return c.fail(OpMulMat, []*Tensor{a, b}, "src0 %s is transposed (nb[0] %d > nb[1] %d)", a.describe(), a.layout.Nb[0], a.layout.Nb[1])
	case b.layout.Type.IsQuantized():
		return c.fail(OpMulMat, []*Tensor{a, b}, "src1 %s is quantized", b.describe())
	}
	l, err := tensor.Contiguous(tensor.F32, an[1], bn[1], bn[2], bn[3])
	if err != nil {
		return c.fail(OpMulMat, []*Tensor{a, b}, "%v", err)
	}
	return c.node(OpMulMat, l, a, b)
}

// Cpy copies a into b, converting to b's type (the element counts must
// match; shapes and strides may differ): the result is a view of b, which a
// graph must use for the copy to happen (ggml_cpy).
func (a *Tensor) Cpy(b *Tensor) *Tensor {
	c, bad := operands(OpCpy, a, b)
	if bad != nil {
		return bad
	}
	if a.layout.Elements() != b.layout.Elements() {
		return c.fail(OpCpy, []*Tensor{a, b}, "src0 %s has %d elements, dst %s has %d", a.describe(),
			a.layout.Elements(), b.describe(), b.layout.Elements())
	}
	return c.view(OpCpy, b, b.layout, 0).withSrc(a, b)
}

// Cast returns a converted to type ty, contiguous (ggml_cast).
func (a *Tensor) Cast(ty tensor.Type) *Tensor {
	c, bad := operands(OpCpy, a)
	if bad != nil {
		return bad
	}
	l, err := tensor.Contiguous(ty, a.layout.Ne[:]...)
	if err != nil {
		return c.fail(OpCpy, []*Tensor{a}, "%v", err)
	}
	return c.node(OpCpy, l, a)
}

// Cont returns a copy of a with its elements packed in row-major order (ggml_cont).
func (a *Tensor) Cont() *Tensor {
	c, bad := operands(OpCont, a)
	if bad != nil {
		return bad
	}
	return c.node(OpCont, dup(a), a)
}

// ContShape returns a's elements packed into a contiguous tensor of shape ne
// (ggml_cont_4d); the element counts must match.
func (a *Tensor) ContShape(ne ...int64) *Tensor {
	c, bad := operands(OpCont, a)
	if bad != nil {
		return bad
	}
	l, err := tensor.Contiguous(a.layout.Type, ne...)
	if err != nil {
		return c.fail(OpCont, []*Tensor{a}, "%v", err)
	}
	if l.Elements() != a.layout.Elements() {
		return c.fail(OpCont, []*Tensor{a}, "shape %s holds %d elements, src0 %s has %d", l.Shape(), l.Elements(),
			a.describe(), a.layout.Elements())
	}
	return c.node(OpCont, l, a)
}

// Dup returns a copy of a (ggml_dup).
func (a *Tensor) Dup() *Tensor {
	c, bad := operands(OpDup, a)
	if bad != nil {
		return bad
	}
	return c.node(OpDup, dup(a), a)
}

// withSrc sets t's sources (for nodes made by view, which sets only src0).
func (t *Tensor) withSrc(srcs ...*Tensor) *Tensor {
	t.src = [MaxSrc]*Tensor{}
	copy(t.src[:], srcs)
	return t
}

// Reshape returns a view of contiguous a with shape ne (ggml_reshape_Nd).
func (a *Tensor) Reshape(ne ...int64) *Tensor {
	c, bad := operands(OpReshape, a)
	if bad != nil {
		return bad
	}
	l, err := a.layout.Reshape(ne...)
	if err != nil {
		return c.fail(OpReshape, []*Tensor{a}, "%v", err)
	}
	return c.view(OpReshape, a, l, 0)
}

// View returns a view of a with shape ne, strides nb[1:] (nb[0] is the
// element size) at byte offset off (ggml_view_Nd): it must lie within a.
func (a *Tensor) View(off int64, ne []int64, nb []int64) *Tensor {
	c, bad := operands(OpView, a)
	if bad != nil {
		return bad
	}
	l, err := tensor.Contiguous(a.layout.Type, ne...)
	if err != nil {
		return c.fail(OpView, []*Tensor{a}, "%v", err)
	}
	if len(nb) != len(ne)-1 {
		return c.fail(OpView, []*Tensor{a}, "%d strides for %d dimensions (give nb[1] to nb[%d])", len(nb), len(ne), len(ne)-1)
	}
	copy(l.Nb[1:], nb)
	for i := len(ne); i < tensor.MaxDims; i++ {
		l.Nb[i] = l.Nb[i-1] * l.Ne[i-1]
	}
	if off < 0 || off+l.Bytes() > a.layout.Bytes() {
		return c.fail(OpView, []*Tensor{a}, "a view of %d bytes at offset %d does not fit src0 %s (%d bytes)", l.Bytes(), off,
			a.describe(), a.layout.Bytes())
	}
	t := c.view(OpView, a, l, off)
	t.setI32(0, int32(off))
	t.setI32(1, int32(off>>32))
	return t
}

// Permute returns a view of a with source dimension i moved to dimension
// axes[i] (ggml_permute).
func (a *Tensor) Permute(axes ...int) *Tensor {
	c, bad := operands(OpPermute, a)
	if bad != nil {
		return bad
	}
	if len(axes) != tensor.MaxDims {
		return c.fail(OpPermute, []*Tensor{a}, "%d axes, want 4", len(axes))
	}
	l, err := a.layout.Permute([4]int{axes[0], axes[1], axes[2], axes[3]})
	if err != nil {
		return c.fail(OpPermute, []*Tensor{a}, "%v", err)
	}
	t := c.view(OpPermute, a, l, 0)
	for i, x := range axes {
		t.setI32(i, int32(x))
	}
	return t
}

// Transpose returns a view of a with dimensions 0 and 1 swapped (ggml_transpose).
func (a *Tensor) Transpose() *Tensor {
	c, bad := operands(OpTranspose, a)
	if bad != nil {
		return bad
	}
	return c.view(OpTranspose, a, a.layout.Transpose(), 0)
}
