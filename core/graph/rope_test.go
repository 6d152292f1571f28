package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

// TestRoPEParams checks that ROPE's constructors lay out op_params as
// ggml_rope_impl and ggml_rope_multi do and place the sources.
func TestRoPEParams(t *testing.T) {
	ctx := NewContext()
	a := ctx.Empty(tensor.F32, 128, 12, 5)
	pos := ctx.Empty(tensor.I32, 20)
	ff := ctx.Empty(tensor.F32, 64)
	out := a.RoPEMulti(pos, ff, 128, [4]int{16, 24, 24, 0}, RoPEMulti, 4096, 1e6, 0.5, 0.75, 1.25, 32, 1)
	require.NoError(t, ctx.Err())
	assert.Equal(t, OpRope, out.Op())
	assert.Equal(t, []*Tensor{a, pos, ff}, []*Tensor{out.Src(0), out.Src(1), out.Src(2)})
	assert.Equal(t, a.Ne(), out.Ne())
	assert.Nil(t, out.ViewSrc(), "not in place: a new tensor")
	wantI := map[int]int32{0: 0, 1: 128, 2: 8, 3: 0, 4: 4096, 11: 16, 12: 24, 13: 24, 14: 0}
	for i, v := range wantI {
		assert.Equal(t, v, out.ParamI32(i), "op_params[%d]", i)
	}
	wantF := map[int]float32{5: 1e6, 6: 0.5, 7: 0.75, 8: 1.25, 9: 32, 10: 1}
	for i, v := range wantF {
		assert.Equal(t, v, out.ParamF32(i), "op_params[%d]", i)
	}

	in := a.Reshape(128, 12, 5).RoPEExtInplace(ctx.Empty(tensor.I32, 5), nil, 64, RoPENeoX, 0, 1e4, 1, 0, 1, 0, 0)
	require.NoError(t, ctx.Err())
	assert.Equal(t, a, in.ViewSrc(), "in place: a view of a's memory")
	assert.Nil(t, in.Src(2))

	def := a.RoPE(ctx.Empty(tensor.I32, 5), 128, 1e4, 1)
	require.NoError(t, ctx.Err())
	assert.Equal(t, int32(RoPENormal), def.ParamI32(2))
	assert.Equal(t, []float32{0, 1, 32, 1}, []float32{def.ParamF32(7), def.ParamF32(8), def.ParamF32(9), def.ParamF32(10)},
		"RoPE's YaRN defaults")
	assert.Equal(t, float32(1e4), def.ParamF32(5))
}

// TestRoPEBadInput checks that each kind of bad ROPE input fails at build
// time with an error naming the reason.
func TestRoPEBadInput(t *testing.T) {
	type args struct {
		ne       []int64
		posType  tensor.Type
		posNe    []int64
		ffNe     []int64 // nil: no factors
		ffType   tensor.Type
		nDims    int
		mode     RoPEMode
		sections [4]int
	}
	ok := args{ne: []int64{64, 4, 6}, posType: tensor.I32, posNe: []int64{6}, nDims: 64, mode: RoPENormal}
	with := func(f func(*args)) args { a := ok; f(&a); return a }
	for _, c := range []struct {
		name string
		in   args
		want string // "" builds
	}{
		{"valid", ok, ""},
		{"partial rotation", with(func(a *args) { a.nDims = 32 }), ""},
		{"vision", with(func(a *args) {
			a.mode, a.nDims, a.posNe, a.sections = RoPEVision, 32, []int64{24}, [4]int{16, 16, 0, 0}
		}), ""},
		{"unknown mode", with(func(a *args) { a.mode = 1 }), "mode 1"},
		{"imrope is not in the seed", with(func(a *args) { a.mode = 40 }), "mode 40"},
		{"odd n_dims", with(func(a *args) { a.nDims = 31 }), "n_dims 31"},
		{"n_dims past ne0", with(func(a *args) { a.nDims = 66 }), "n_dims 66"},
		{"zero n_dims", with(func(a *args) { a.nDims = 0 }), "n_dims 0"},
		{"odd ne0", with(func(a *args) { a.ne, a.nDims = []int64{63, 4, 6}, 62 }), "odd ne[0]"},
		{"vision n_dims", with(func(a *args) {
			a.mode, a.posNe, a.sections = RoPEVision, []int64{24}, [4]int{16, 16, 0, 0}
		}), "n_dims = ne[0]/2"},
		{"positions f32", with(func(a *args) { a.posType = tensor.F32 }), "must be i32"},
		{"positions too short", with(func(a *args) { a.posNe = []int64{5} }), "takes 6 positions"},
		{"one position per token in multi mode", with(func(a *args) {
			a.mode, a.sections = RoPEMulti, [4]int{8, 12, 12, 0}
		}), "takes 24 positions"},
		{"positions a matrix", with(func(a *args) { a.posNe = []int64{6, 2} }), "must be a vector"},
		{"factors f16", with(func(a *args) { a.ffNe, a.ffType = []int64{32}, tensor.F16 }), "must be f32"},
		{"factors short", with(func(a *args) { a.ffNe, a.ffType = []int64{31}, tensor.F32 }), "32 rotated pairs"},
		{"no sections", with(func(a *args) { a.mode, a.posNe = RoPEMulti, []int64{24} }), "must sum"},
		{"negative section", with(func(a *args) {
			a.mode, a.posNe, a.sections = RoPEMulti, []int64{24}, [4]int{8, -1, 12, 0}
		}), "negative"},
		{"sections in normal mode", with(func(a *args) { a.sections = [4]int{8, 8, 8, 0} }), "not normal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := NewContext()
			a := ctx.Empty(tensor.F16, c.in.ne...)
			pos := ctx.Empty(c.in.posType, c.in.posNe...)
			var ff *Tensor
			if c.in.ffNe != nil {
				ff = ctx.Empty(c.in.ffType, c.in.ffNe...)
			}
			out := a.RoPEMulti(pos, ff, c.in.nDims, c.in.sections, c.in.mode, 0, 1e4, 1, 0, 1, 32, 1)
			if c.want == "" {
				require.NoError(t, ctx.Err())
				assert.Equal(t, OpRope, out.Op())
				return
			}
			err := ctx.Err()
			require.ErrorIs(t, err, ErrInvalidOp)
			assert.Contains(t, err.Error(), "ROPE")
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, out.Failed())
		})
	}
}
