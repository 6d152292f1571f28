package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

func TestSoftmaxNodes(t *testing.T) {
	ctx := NewContext()
	a := ctx.Empty(tensor.F32, 16, 4, 6, 2)
	mask := ctx.Empty(tensor.F16, 16, 5, 3, 1)
	sinks := ctx.Empty(tensor.F32, 6)
	for _, c := range []struct {
		name           string
		build          func() *Tensor
		op             Op
		srcs           [3]*Tensor
		scale, maxBias float32
		nPast          int32
		inplace        bool
	}{
		{"softmax", func() *Tensor { return a.Softmax() }, OpSoftMax, [3]*Tensor{a, nil, nil}, 1, 0, 0, false},
		{"softmax_ext", func() *Tensor { return a.SoftmaxExt(mask, sinks, 0.125, 8) }, OpSoftMax,
			[3]*Tensor{a, mask, sinks}, 0.125, 8, 0, false},
		{"softmax_ext sinks only", func() *Tensor { return a.SoftmaxExt(nil, sinks, 2, 0) }, OpSoftMax,
			[3]*Tensor{a, nil, sinks}, 2, 0, 0, false},
		{"softmax_ext in place", func() *Tensor { return a.SoftmaxExtInplace(mask, nil, 0.5, 0) }, OpSoftMax,
			[3]*Tensor{a, mask, nil}, 0.5, 0, 0, true},
		{"diag_mask_inf", func() *Tensor { return a.DiagMaskInf(3) }, OpDiagMaskInf, [3]*Tensor{a, nil, nil}, 0, 0, 3, false},
		{"diag_mask_inf in place", func() *Tensor { return a.DiagMaskInfInplace(0) }, OpDiagMaskInf,
			[3]*Tensor{a, nil, nil}, 0, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.build()
			require.NoError(t, ctx.Err())
			assert.Equal(t, c.op, r.Op())
			assert.Equal(t, tensor.F32, r.Type())
			assert.Equal(t, a.Ne(), r.Ne())
			for i, s := range c.srcs {
				assert.Same(t, s, r.Src(i), "src%d", i)
			}
			if c.op == OpSoftMax {
				assert.Equal(t, c.scale, r.ParamF32(0))
				assert.Equal(t, c.maxBias, r.ParamF32(1))
			} else {
				assert.Equal(t, c.nPast, r.ParamI32(0))
			}
			if c.inplace {
				assert.Same(t, a, r.ViewSrc())
			} else {
				assert.Nil(t, r.ViewSrc())
			}
		})
	}
}

func TestSoftmaxBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(ctx *Context) *Tensor
		op    string
		msg   string
	}{
		{"src0 not contiguous", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).Transpose().Softmax()
		}, "SOFT_MAX", "src0 TRANSPOSE f32 [4,8,1,1] is not contiguous"},
		{"mask type", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).SoftmaxExt(ctx.Empty(tensor.BF16, 8, 4), nil, 1, 0)
		}, "SOFT_MAX", "must be f16 or f32"},
		{"mask ne0", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).SoftmaxExt(ctx.Empty(tensor.F16, 9, 4), nil, 1, 0)
		}, "SOFT_MAX", "differ in ne[0]"},
		{"mask rows", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).SoftmaxExt(ctx.Empty(tensor.F16, 8, 3), nil, 1, 0)
		}, "SOFT_MAX", "fewer rows"},
		{"mask broadcast", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4, 6).SoftmaxExt(ctx.Empty(tensor.F32, 8, 4, 4), nil, 1, 0)
		}, "SOFT_MAX", "does not broadcast"},
		{"mask not contiguous", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 8).SoftmaxExt(ctx.Empty(tensor.F32, 8, 8).Transpose(), nil, 1, 0)
		}, "SOFT_MAX", "mask (src1) TRANSPOSE f32 [8,8,1,1] is not contiguous"},
		{"alibi without mask", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).SoftmaxExt(nil, nil, 1, 8)
		}, "SOFT_MAX", "needs a mask"},
		{"sinks type", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4, 2).SoftmaxExt(nil, ctx.Empty(tensor.F16, 2), 1, 0)
		}, "SOFT_MAX", "sinks (src2) f16 [2,1,1,1] must be f32"},
		{"sinks count", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4, 2).SoftmaxExt(nil, ctx.Empty(tensor.F32, 3), 1, 0)
		}, "SOFT_MAX", "one value per head"},
		{"negative n_past", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 4).DiagMaskInf(-1) },
			"DIAG_MASK_INF", "n_past -1"},
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
