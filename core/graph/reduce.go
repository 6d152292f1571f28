package graph

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/core/tensor"
)

// SortOrder is ARGSORT's order (ggml's enum ggml_sort_order).
type SortOrder int32

// The sort orders.
const (
	SortAsc  SortOrder = 0 // smallest first
	SortDesc SortOrder = 1 // largest first
)

// String names the order.
func (o SortOrder) String() string {
	switch o {
	case SortAsc:
		return "asc"
	case SortDesc:
		return "desc"
	}
	return fmt.Sprintf("SortOrder(%d)", int32(o))
}

// GetRows returns the rows of a picked by the i32 indices of rows ([n, a.ne2,
// a.ne3]): out[:, i, j, k] = a[:, rows[i, j, k], j, k], shape [a.ne0, n,
// a.ne2, a.ne3], f32 (i32 when a is i32) (ggml_get_rows).
func (a *Tensor) GetRows(rows *Tensor) *Tensor {
	c, bad := operands(OpGetRows, a, rows)
	if bad != nil {
		return bad
	}
	an, rn := a.layout.Ne, rows.layout.Ne
	switch {
	case rows.layout.Type != tensor.I32:
		return c.fail(OpGetRows, []*Tensor{a, rows}, "src1 %s must be i32 row indices", rows.describe())
	case an[2] != rn[1] || an[3] != rn[2]:
		return c.fail(OpGetRows, []*Tensor{a, rows}, "src1 %s does not match src0 %s: src1.ne[1] must be src0.ne[2] and src1.ne[2] src0.ne[3]",
			rows.describe(), a.describe())
	case rn[3] != 1:
		return c.fail(OpGetRows, []*Tensor{a, rows}, "src1 %s has ne[3] = %d, want 1", rows.describe(), rn[3])
	}
	ty := tensor.F32
	if a.layout.Type == tensor.I32 {
		ty = tensor.I32
	}
	l, err := tensor.Contiguous(ty, an[0], rn[0], rn[1], rn[2])
	if err != nil {
		return c.fail(OpGetRows, []*Tensor{a, rows}, "%v", err)
	}
	return c.node(OpGetRows, l, a, rows)
}

// Argmax returns the index of the largest element of each row of matrix a
// (the first one among equals): i32 [a.ne1] (ggml_argmax).
func (a *Tensor) Argmax() *Tensor {
	c, bad := operands(OpArgmax, a)
	if bad != nil {
		return bad
	}
	n := a.layout.Ne
	switch {
	case n[2] != 1 || n[3] != 1:
		return c.fail(OpArgmax, []*Tensor{a}, "src0 %s is not a matrix (ne[2] and ne[3] must be 1)", a.describe())
	case n[0] > math.MaxInt32:
		return c.fail(OpArgmax, []*Tensor{a}, "src0 %s has rows longer than 2^31-1", a.describe())
	}
	l, err := tensor.Contiguous(tensor.I32, n[1])
	if err != nil {
		return c.fail(OpArgmax, []*Tensor{a}, "%v", err)
	}
	return c.node(OpArgmax, l, a)
}

// CountEqual returns how many elements of a equal those of b (same shape):
// an i64 [1] (ggml_count_equal).
func (a *Tensor) CountEqual(b *Tensor) *Tensor {
	c, bad := operands(OpCountEqual, a, b)
	if bad != nil {
		return bad
	}
	if !a.layout.SameShape(b.layout) {
		return c.fail(OpCountEqual, []*Tensor{a, b}, "src0 %s and src1 %s differ in shape", a.describe(), b.describe())
	}
	if a.layout.Type != b.layout.Type {
		return c.fail(OpCountEqual, []*Tensor{a, b}, "src0 %s and src1 %s differ in type", a.describe(), b.describe())
	}
	l, err := tensor.Contiguous(tensor.I64, 1)
	if err != nil {
		return c.fail(OpCountEqual, []*Tensor{a, b}, "%v", err)
	}
	return c.node(OpCountEqual, l, a, b)
}

// Sum returns the sum of every element of a: [1] of a's type (ggml_sum).
func (a *Tensor) Sum() *Tensor {
	c, bad := operands(OpSum, a)
	if bad != nil {
		return bad
	}
	l, err := tensor.Contiguous(a.layout.Type, 1)
	if err != nil {
		return c.fail(OpSum, []*Tensor{a}, "%v", err)
	}
	return c.node(OpSum, l, a)
}

// SumRows returns the sum of each row of a: [1, a.ne1, a.ne2, a.ne3] of a's
// type (ggml_sum_rows).
func (a *Tensor) SumRows() *Tensor { return a.rowReduce(OpSumRows, a.layout.Type) }

// Mean returns the mean of each row of a: f32 [1, a.ne1, a.ne2, a.ne3]
// (ggml_mean).
func (a *Tensor) Mean() *Tensor { return a.rowReduce(OpMean, tensor.F32) }

// rowReduce makes a node of op reducing each row of a to one element of ty.
func (a *Tensor) rowReduce(op Op, ty tensor.Type) *Tensor {
	c, bad := operands(op, a)
	if bad != nil {
		return bad
	}
	n := a.layout.Ne
	l, err := tensor.Contiguous(ty, 1, n[1], n[2], n[3])
	if err != nil {
		return c.fail(op, []*Tensor{a}, "%v", err)
	}
	return c.node(op, l, a)
}

// Argsort returns, for each row of a, the column indices that sort it in
// order: i32 of a's shape (ggml_argsort).
func (a *Tensor) Argsort(order SortOrder) *Tensor {
	c, bad := operands(OpArgsort, a)
	if bad != nil {
		return bad
	}
	switch {
	case order != SortAsc && order != SortDesc:
		return c.fail(OpArgsort, []*Tensor{a}, "sort order %d is neither ascending (0) nor descending (1)", int32(order))
	case a.layout.Ne[0] > math.MaxInt32:
		return c.fail(OpArgsort, []*Tensor{a}, "src0 %s has rows longer than 2^31-1", a.describe())
	}
	l, err := tensor.Contiguous(tensor.I32, a.layout.Ne[:]...)
	if err != nil {
		return c.fail(OpArgsort, []*Tensor{a}, "%v", err)
	}
	t := c.node(OpArgsort, l, a)
	t.setI32(0, int32(order))
	return t
}
