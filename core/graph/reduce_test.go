package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

func TestReduceShapes(t *testing.T) {
	ctx := NewContext()
	for _, c := range []struct {
		name  string
		build func() *Tensor
		ty    tensor.Type
		ne    [4]int64
		param int32
	}{
		{"get_rows f16", func() *Tensor { return ctx.Empty(tensor.F16, 8, 5, 3, 2).GetRows(ctx.Empty(tensor.I32, 7, 3, 2)) },
			tensor.F32, [4]int64{8, 7, 3, 2}, 0},
		{"get_rows i32", func() *Tensor { return ctx.Empty(tensor.I32, 8, 5).GetRows(ctx.Empty(tensor.I32, 4)) },
			tensor.I32, [4]int64{8, 4, 1, 1}, 0},
		{"argmax", func() *Tensor { return ctx.Empty(tensor.F32, 100, 7).Argmax() }, tensor.I32, [4]int64{7, 1, 1, 1}, 0},
		{"count_equal", func() *Tensor { return ctx.Empty(tensor.I32, 6, 2).CountEqual(ctx.Empty(tensor.I32, 6, 2)) },
			tensor.I64, [4]int64{1, 1, 1, 1}, 0},
		{"sum", func() *Tensor { return ctx.Empty(tensor.F16, 6, 5, 4).Sum() }, tensor.F16, [4]int64{1, 1, 1, 1}, 0},
		{"sum_rows", func() *Tensor { return ctx.Empty(tensor.F32, 6, 5, 4, 3).SumRows() }, tensor.F32, [4]int64{1, 5, 4, 3}, 0},
		{"mean", func() *Tensor { return ctx.Empty(tensor.F16, 6, 5, 4, 3).Mean() }, tensor.F32, [4]int64{1, 5, 4, 3}, 0},
		{"argsort desc", func() *Tensor { return ctx.Empty(tensor.F32, 9, 5, 2).Argsort(SortDesc) }, tensor.I32,
			[4]int64{9, 5, 2, 1}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.build()
			require.NoError(t, ctx.Err())
			assert.Equal(t, c.ty, r.Type())
			assert.Equal(t, c.ne, r.Ne())
			assert.True(t, r.Layout().IsContiguous())
			assert.Equal(t, c.param, r.ParamI32(0))
		})
	}
}

func TestReduceBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(ctx *Context) *Tensor
		op    string
		msg   string
	}{
		{"get_rows f32 indices", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 5).GetRows(ctx.Empty(tensor.F32, 4))
		}, "GET_ROWS", "must be i32"},
		{"get_rows batch mismatch", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 5, 3).GetRows(ctx.Empty(tensor.I32, 4, 2))
		}, "GET_ROWS", "does not match"},
		{"get_rows 4d indices", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 5, 3, 2).GetRows(ctx.Empty(tensor.I32, 4, 3, 2, 2))
		}, "GET_ROWS", "ne[3] = 2, want 1"},
		{"argmax of a 3d tensor", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 5, 2).Argmax() },
			"ARGMAX", "not a matrix"},
		{"count_equal shapes", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.I32, 8, 5).CountEqual(ctx.Empty(tensor.I32, 5, 8))
		}, "COUNT_EQUAL", "differ in shape"},
		{"count_equal types", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.I32, 8, 5).CountEqual(ctx.Empty(tensor.F32, 8, 5))
		}, "COUNT_EQUAL", "differ in type"},
		{"argsort order", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8).Argsort(SortOrder(2)) },
			"ARGSORT", "neither ascending"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := NewContext()
			r := c.build(ctx)
			assert.True(t, r.Failed())
			require.ErrorIs(t, ctx.Err(), ErrInvalidOp)
			assert.Contains(t, ctx.Err().Error(), "ternion: "+c.op+": ")
			assert.Contains(t, ctx.Err().Error(), c.msg)
		})
	}
}

func TestSortOrderString(t *testing.T) {
	assert.Equal(t, "asc", SortAsc.String())
	assert.Equal(t, "desc", SortDesc.String())
	assert.Equal(t, "SortOrder(5)", SortOrder(5).String())
}
