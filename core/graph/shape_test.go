package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

// TestShapeOps checks the shapes, types, sources and op_params of the shape
// ops' constructors.
func TestShapeOps(t *testing.T) {
	ctx := NewContext()
	a := ctx.Empty(tensor.F16, 10, 5, 4, 3)
	x := ctx.Empty(tensor.F32, 8, 6, 2)
	ts := ctx.Empty(tensor.F32, 7)
	for _, c := range []struct {
		name   string
		r      *Tensor
		ty     tensor.Type
		ne     [4]int64
		srcs   []*Tensor
		params []int32
	}{
		{"repeat", a.Repeat(ctx.Empty(tensor.F32, 20, 5, 8, 3)), tensor.F16, [4]int64{20, 5, 8, 3}, []*Tensor{a}, nil},
		{"repeat4d", a.Repeat4D(10, 10, 4, 6), tensor.F16, [4]int64{10, 10, 4, 6}, []*Tensor{a}, nil},
		{"concat", a.Concat(ctx.Empty(tensor.F16, 10, 5, 7, 3), 2), tensor.F16, [4]int64{10, 5, 11, 3},
			[]*Tensor{a, nil}, []int32{2}},
		{"pad", x.Pad(1, 2, 0, 3), tensor.F32, [4]int64{9, 8, 2, 4}, []*Tensor{x}, []int32{0, 1, 0, 2, 0, 0, 0, 3, 0}},
		{"pad_ext", x.PadExt(1, 2, 3, 4, 5, 6, 7, 8), tensor.F32, [4]int64{11, 13, 13, 16}, []*Tensor{x},
			[]int32{1, 2, 3, 4, 5, 6, 7, 8, 0}},
		{"timestep", ts.TimestepEmbedding(15, 10000), tensor.F32, [4]int64{15, 7, 1, 1}, []*Tensor{ts}, []int32{15, 10000}},
		{"upscale", x.Upscale(2, ScaleBilinear), tensor.F32, [4]int64{16, 12, 2, 1}, []*Tensor{x}, []int32{1}},
		{"interpolate", x.Interpolate(3, 4, 5, 6, ScaleNearest|ScaleAlignCorners), tensor.F32, [4]int64{3, 4, 5, 6},
			[]*Tensor{x}, []int32{0x100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, ctx.Err())
			assert.Equal(t, c.ty, c.r.Type())
			assert.Equal(t, c.ne, c.r.Ne())
			assert.True(t, c.r.Layout().IsContiguous())
			assert.Equal(t, c.srcs[0], c.r.Src(0))
			for i, p := range c.params {
				assert.Equal(t, p, c.r.ParamI32(i), "op_params[%d]", i)
			}
		})
	}
	assert.Equal(t, [4]int64{4, 1, 1, 1}, ctx.Arange(0, 10, 3).Ne()) // 0, 3, 6, 9
	ar := ctx.Arange(-2.5, 7.3, 0.35)
	require.NoError(t, ctx.Err())
	// ceil(9.8/0.35) in float32, as ggml computes it: 9.8000002/0.34999999 > 28.
	assert.Equal(t, [4]int64{29, 1, 1, 1}, ar.Ne())
	assert.Equal(t, OpArange, ar.Op())
	assert.Nil(t, ar.Src(0))
	assert.Equal(t, []float32{-2.5, 7.3, 0.35}, []float32{ar.ParamF32(0), ar.ParamF32(1), ar.ParamF32(2)})
}

// TestShapeOpErrors checks that bad shapes, types and op_params fail at
// build time with the op and the reason.
func TestShapeOpErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(ctx *Context) *Tensor
		op    string
		msg   string
	}{
		{"repeat not a multiple", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 3, 2).Repeat(ctx.Empty(tensor.F32, 8, 2))
		}, "REPEAT", "does not repeat"},
		{"concat dim", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 3).Concat(ctx.Empty(tensor.F32, 3), 4)
		}, "CONCAT", "dim 4"},
		{"concat types", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 3).Concat(ctx.Empty(tensor.F16, 3), 0)
		}, "CONCAT", "type"},
		{"concat shapes", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 3, 2).Concat(ctx.Empty(tensor.F32, 3, 3), 0)
		}, "CONCAT", "dimension 1"},
		{"negative pad", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 3).PadExt(0, 1, -1, 0, 0, 0, 0, 0) },
			"PAD", "negative"},
		{"arange empty", func(ctx *Context) *Tensor { return ctx.Arange(5, 5, 1) }, "ARANGE", "not above"},
		{"arange step", func(ctx *Context) *Tensor { return ctx.Arange(0, 5, -1) }, "ARANGE", "step"},
		{"timestep type", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F16, 4).TimestepEmbedding(8, 100) },
			"TIMESTEP_EMBEDDING", "not f32"},
		{"timestep dim", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 4).TimestepEmbedding(0, 100) },
			"TIMESTEP_EMBEDDING", "dim 0"},
		{"timestep period", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 4).TimestepEmbedding(8, 0) },
			"TIMESTEP_EMBEDDING", "max_period"},
		{"upscale factor", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 4).Upscale(1, ScaleNearest) },
			"UPSCALE", "scale factor"},
		{"upscale mode", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 4).Interpolate(8, 1, 1, 1, 2) },
			"UPSCALE", "mode"},
		{"upscale flag", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 4).Interpolate(8, 1, 1, 1, 1<<9) },
			"UPSCALE", "mode"},
		{"upscale type", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F16, 4).Interpolate(8, 1, 1, 1, ScaleNearest)
		}, "UPSCALE", "not f32"},
		{"upscale empty", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 0, 2).Interpolate(8, 1, 1, 1, ScaleNearest)
		}, "UPSCALE", "empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := NewContext()
			r := c.build(ctx)
			assert.True(t, r.Failed())
			err := ctx.Err()
			require.ErrorIs(t, err, ErrInvalidOp)
			assert.Contains(t, err.Error(), c.op+": ")
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestShapeArangePlan checks that a node without sources builds and is placed
// by the allocator like any other node.
func TestShapeArangePlan(t *testing.T) {
	ctx := NewContext()
	x := ctx.Arange(0, 64, 1)
	y := x.Repeat4D(64, 4, 1, 1)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	assert.Equal(t, []*Tensor{x, y}, g.Nodes())
	assert.Empty(t, g.Leafs())
	p, err := g.Plan(AllocOptions{})
	require.NoError(t, err)
	checkPlan(t, g, p)
	_, placed := p.Offsets[x]
	assert.True(t, placed)
}
