package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

func TestFlashAttnExtShapes(t *testing.T) {
	type shapes struct {
		q, k, v, mask, sinks [4]int64
		maskType             tensor.Type
		maxBias              float32
	}
	good := shapes{q: [4]int64{64, 5, 8, 2}, k: [4]int64{64, 33, 2, 2}, v: [4]int64{64, 33, 2, 2},
		mask: [4]int64{33, 5, 1, 2}, sinks: [4]int64{8, 1, 1, 1}, maskType: tensor.F16, maxBias: 8}
	cases := []struct {
		name string
		edit func(s *shapes)
		why  string // "" when the node builds
	}{
		{"gqa, batches, mask, sinks, alibi", func(*shapes) {}, ""},
		{"no mask, no sinks", func(s *shapes) { s.mask, s.sinks, s.maxBias = [4]int64{}, [4]int64{}, 0 }, ""},
		{"mask broadcast over dim 3", func(s *shapes) { s.mask[3] = 1 }, ""},
		{"hsv differs from hsk", func(s *shapes) { s.v[0] = 48 }, ""},
		{"head sizes differ", func(s *shapes) { s.k[0] = 32 }, "head size"},
		{"kv lengths differ", func(s *shapes) { s.v[1] = 32 }, "kv positions"},
		{"kv heads differ", func(s *shapes) { s.v[2] = 1 }, "kv heads"},
		{"gqa ratio not whole", func(s *shapes) { s.k[2], s.v[2] = 3, 3 }, "GQA"},
		{"alibi without mask", func(s *shapes) { s.mask = [4]int64{} }, "needs a mask"},
		{"f32 mask", func(s *shapes) { s.maskType = tensor.F32 }, "must be f16"},
		{"mask too short", func(s *shapes) { s.mask[0] = 32 }, "must cover"},
		{"mask has too few rows", func(s *shapes) { s.mask[1] = 4 }, "must cover"},
		{"mask heads do not broadcast", func(s *shapes) { s.mask[2] = 3 }, "does not broadcast"},
		{"sinks of the kv heads", func(s *shapes) { s.sinks[0] = 2 }, "sinks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := good
			c.edit(&s)
			ctx := NewContext()
			q, k, v := ctx.Empty(tensor.F32, s.q[:]...), ctx.Empty(tensor.F16, s.k[:]...), ctx.Empty(tensor.F16, s.v[:]...)
			var m *Tensor
			if s.mask != [4]int64{} {
				m = ctx.Empty(s.maskType, s.mask[:]...)
			}
			r := q.FlashAttnExt(k, v, m, 0.125, s.maxBias, 0)
			if s.sinks != [4]int64{} {
				r = r.FlashAttnExtAddSinks(ctx.Empty(tensor.F32, s.sinks[:]...))
			}
			r = r.FlashAttnExtSetPrec(PrecF32)
			if c.why != "" {
				assert.True(t, r.Failed())
				require.ErrorIs(t, ctx.Err(), ErrInvalidOp)
				assert.Contains(t, ctx.Err().Error(), c.why)
				assert.Contains(t, ctx.Err().Error(), "FLASH_ATTN_EXT")
				return
			}
			require.NoError(t, ctx.Err())
			assert.Equal(t, [4]int64{s.v[0], s.q[2], s.q[1], s.q[3]}, r.Ne(), "ggml's permuted output")
			assert.Equal(t, tensor.F32, r.Type())
			assert.Equal(t, float32(0.125), r.ParamF32(0))
			assert.Equal(t, s.maxBias, r.ParamF32(1))
			assert.Equal(t, int32(PrecF32), r.ParamI32(3))
			assert.Equal(t, m, r.Src(3))
			assert.Equal(t, s.sinks != [4]int64{}, r.Src(4) != nil)
		})
	}
}
