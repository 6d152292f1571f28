package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

func TestUnaryOpNames(t *testing.T) {
	// ggml's numbering: op_params[0] of UNARY and GLU nodes.
	for _, c := range []struct {
		got  string
		num  int32
		want string
		wnum int32
	}{
		{UnaryAbs.String(), int32(UnaryAbs), "ABS", 0},
		{UnaryTanh.String(), int32(UnaryTanh), "TANH", 4},
		{UnarySILU.String(), int32(UnarySILU), "SILU", 10},
		{UnaryExp.String(), int32(UnaryExp), "EXP", 13},
		{UnaryGELUErf.String(), int32(UnaryGELUErf), "GELU_ERF", 16},
		{UnaryTrunc.String(), int32(UnaryTrunc), "TRUNC", 21},
		{GLUSwiGLU.String(), int32(GLUSwiGLU), "SWIGLU", 2},
		{GLUGeGLUQuick.String(), int32(GLUGeGLUQuick), "GEGLU_QUICK", 5},
	} {
		assert.Equal(t, c.want, c.got)
		assert.Equal(t, c.wnum, c.num, c.want)
	}
	assert.Len(t, UnaryOps(), 22)
	assert.Equal(t, "UnaryOp(40)", UnaryOp(40).String())
}

func TestUnaryNodes(t *testing.T) {
	for _, c := range []struct {
		name    string
		build   func(a, b *Tensor) *Tensor
		op      Op
		ne      [4]int64
		inplace bool
		params  []uint32 // leading op_params
	}{
		{"silu", func(a, _ *Tensor) *Tensor { return a.SILU() }, OpUnary, [4]int64{8, 6, 4, 2}, false, []uint32{uint32(UnarySILU)}},
		{"gelu inplace", func(a, _ *Tensor) *Tensor { return a.GELUInplace() }, OpUnary, [4]int64{8, 6, 4, 2}, true,
			[]uint32{uint32(UnaryGELU)}},
		{"unary", func(a, _ *Tensor) *Tensor { return a.Unary(UnaryHardSwish) }, OpUnary, [4]int64{8, 6, 4, 2}, false,
			[]uint32{uint32(UnaryHardSwish)}},
		{"sqr", func(a, _ *Tensor) *Tensor { return a.Sqr() }, OpSqr, [4]int64{8, 6, 4, 2}, false, []uint32{0}},
		{"log inplace", func(a, _ *Tensor) *Tensor { return a.LogInplace() }, OpLog, [4]int64{8, 6, 4, 2}, true, []uint32{0}},
		{"clamp", func(a, _ *Tensor) *Tensor { return a.Clamp(-1, 2) }, OpClamp, [4]int64{8, 6, 4, 2}, true,
			[]uint32{0xbf800000, 0x40000000}},
		{"leaky", func(a, _ *Tensor) *Tensor { return a.LeakyRelu(0.5) }, OpLeakyRelu, [4]int64{8, 6, 4, 2}, false,
			[]uint32{0x3f000000}},
		{"glu", func(a, _ *Tensor) *Tensor { return a.SwiGLU() }, OpGLU, [4]int64{4, 6, 4, 2}, false,
			[]uint32{uint32(GLUSwiGLU), 0}},
		{"glu swapped", func(a, _ *Tensor) *Tensor { return a.GeGLUSwapped() }, OpGLU, [4]int64{4, 6, 4, 2}, false,
			[]uint32{uint32(GLUGeGLU), 1}},
		{"glu split", func(a, b *Tensor) *Tensor { return a.ReGLU(b) }, OpGLU, [4]int64{8, 6, 4, 2}, false,
			[]uint32{uint32(GLUReGLU), 0}},
		{"acc", func(a, b *Tensor) *Tensor { return a.Acc(b.View(0, []int64{4, 3}, []int64{32}), 32, 192, 768, 8) },
			OpAcc, [4]int64{8, 6, 4, 2}, false, []uint32{32, 192, 768, 8, 0}},
		{"acc inplace", func(a, b *Tensor) *Tensor { return a.AccInplace(b, 32, 192, 768, 0) }, OpAcc, [4]int64{8, 6, 4, 2},
			true, []uint32{32, 192, 768, 0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := NewContext()
			a, b := ctx.Empty(tensor.F32, 8, 6, 4, 2), ctx.Empty(tensor.F32, 8, 6, 4, 2)
			r := c.build(a, b)
			require.NoError(t, ctx.Err())
			assert.Equal(t, c.op, r.Op())
			assert.Equal(t, c.ne, r.Ne())
			assert.Equal(t, a, r.Src(0))
			assert.True(t, r.Layout().IsContiguous())
			if c.inplace {
				assert.Equal(t, a, r.ViewSrc(), "an in-place op is a view of its source")
			} else {
				assert.Nil(t, r.ViewSrc())
			}
			p := r.Params()
			assert.Equal(t, c.params, p[:len(c.params)])
		})
	}
}

func TestUnaryAdd1(t *testing.T) {
	ctx := NewContext()
	a, s := ctx.Empty(tensor.F16, 8, 6), ctx.Empty(tensor.F32, 1)
	r := a.Add1Inplace(s)
	require.NoError(t, ctx.Err())
	assert.Equal(t, []*Tensor{a, s}, []*Tensor{r.Src(0), r.Src(1)})
	assert.Equal(t, a, r.ViewSrc())
	assert.Equal(t, tensor.F16, r.Type())
}

func TestUnaryBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(ctx *Context) *Tensor
		want  []string // in the error
	}{
		{"xielu", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8).Unary(UnaryXIELU) }, []string{"UNARY", "XIELU"}},
		{"unknown", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8).Unary(99) }, []string{"UNARY", "unknown unary op 99"}},
		{"quantized", func(ctx *Context) *Tensor { return ctx.Empty(tensor.Q4_0, 64).SILU() }, []string{"UNARY", "q4_0", "f32, f16 or bf16"}},
		{"i32 sqr", func(ctx *Context) *Tensor { return ctx.Empty(tensor.I32, 8).Sqr() }, []string{"SQR", "i32"}},
		{"oai", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8).GLU(GLUSwiGLUOAI, false) }, []string{"GLU", "SWIGLU_OAI"}},
		{"glu op", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8).GLU(-1, false) }, []string{"GLU", "unknown GLU op -1"}},
		{"glu transposed", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 4).Transpose().SwiGLU() },
			[]string{"GLU", "contiguous_1"}},
		{"glu shape", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 4).SwiGLU(ctx.Empty(tensor.F32, 8, 3)) },
			[]string{"GLU", "differs in shape", "[8,3,1,1]"}},
		{"glu type", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 4).GeGLU(ctx.Empty(tensor.F16, 8, 4)) },
			[]string{"GLU", "differs in type"}},
		{"glu nil", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 4).GLUSplit(nil, GLUReGLU) }, []string{"GLU", "nil"}},
		{"add1 vector", func(ctx *Context) *Tensor { return ctx.Empty(tensor.F32, 8, 4).Add1(ctx.Empty(tensor.F32, 2)) },
			[]string{"ADD1", "not a scalar"}},
		{"add1 permuted", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4, 3).Permute(0, 2, 1, 3).Add1(ctx.Empty(tensor.F32, 1))
		}, []string{"ADD1", "padded 1d"}},
		{"acc f16", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F16, 8, 4).Acc(ctx.Empty(tensor.F16, 8), 16, 64, 64, 0)
		},
			[]string{"ACC", "must be f32"}},
		{"acc bigger", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8).Acc(ctx.Empty(tensor.F32, 9), 36, 36, 36, 0)
		},
			[]string{"ACC", "more elements"}},
		{"acc past end", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).Acc(ctx.Empty(tensor.F32, 8, 2), 32, 64, 64, 96)
		}, []string{"ACC", "past src0"}},
		{"acc stride", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).Acc(ctx.Empty(tensor.F32, 8, 2), 30, 64, 64, 0)
		},
			[]string{"ACC", "multiples of 4"}},
		{"acc permuted", func(ctx *Context) *Tensor {
			return ctx.Empty(tensor.F32, 8, 4).Transpose().Acc(ctx.Empty(tensor.F32, 2), 16, 16, 16, 0)
		}, []string{"ACC", "not contiguous"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := NewContext()
			r := c.build(ctx)
			assert.True(t, r.Failed())
			err := ctx.Err()
			require.ErrorIs(t, err, ErrInvalidOp)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
