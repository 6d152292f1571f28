package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// TestShapeSupports checks which shape-op nodes the shape kernels run and
// the reasons of those they do not.
func TestShapeSupports(t *testing.T) {
	ctx := graph.NewContext()
	for _, c := range []struct {
		name string
		n    *graph.Tensor
		why  string // "" when supported
	}{
		{"repeat f32", ctx.Empty(tensor.F32, 4, 2).Repeat4D(8, 4, 1, 1), ""},
		{"repeat i16", ctx.Empty(tensor.I16, 4, 2).Repeat4D(8, 4, 1, 1), ""},
		{"repeat q4_0", ctx.Empty(tensor.Q4_0, 32, 2).Repeat4D(64, 2, 1, 1), "src0 must be"},
		{"concat bf16", ctx.Empty(tensor.BF16, 4, 2).Concat(ctx.Empty(tensor.BF16, 4, 3), 1), ""},
		{"concat f64", ctx.Empty(tensor.F64, 4, 2).Concat(ctx.Empty(tensor.F64, 4, 3), 1), "src0 must be"},
		{"pad q8_0", ctx.Empty(tensor.Q8_0, 32, 2).Pad(0, 1, 0, 0), "src0 must be"},
		{"pad i32", ctx.Empty(tensor.I32, 3, 2).PadExt(1, 1, 0, 1, 0, 0, 2, 0), ""},
		{"upscale", ctx.Empty(tensor.F32, 4, 2).Interpolate(8, 3, 1, 1, graph.ScaleBilinear|graph.ScaleAlignCorners), ""},
		{"arange", ctx.Arange(0, 1000, 0.5), ""},
		{"timestep", ctx.Empty(tensor.F32, 6).TimestepEmbedding(33, 10000), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, ctx.Err())
			checkSupports(t, c.n, c.why)
		})
	}
}

// TestShapeVec checks when the copy kernels may move 16-byte units: packed,
// 16-byte aligned rows a multiple of 16 bytes long, described in units.
func TestShapeVec(t *testing.T) {
	packed := vendorapi.TensorDesc{Data: 4096, Ne: [4]int64{8, 3, 1, 2}, Nb: [4]int64{4, 32, 96, 96}}
	v, ok := shapeVec(packed, 4)
	require.True(t, ok)
	assert.Equal(t, [4]int64{2, 3, 1, 2}, v.Ne)
	assert.Equal(t, [4]int64{16, 32, 0, 96}, v.Nb, "a dim of one element gets stride 0")
	for _, bad := range []vendorapi.TensorDesc{
		{Data: 4100, Ne: packed.Ne, Nb: packed.Nb},                             // misaligned start
		{Data: 4096, Ne: [4]int64{6, 3, 1, 2}, Nb: [4]int64{4, 24, 72, 72}},    // 24-byte rows
		{Data: 4096, Ne: [4]int64{8, 3, 1, 2}, Nb: [4]int64{4, 36, 108, 108}},  // row stride 36
		{Data: 4096, Ne: [4]int64{8, 3, 1, 2}, Nb: [4]int64{12, 96, 288, 288}}, // not packed
	} {
		_, ok := shapeVec(bad, 4)
		assert.False(t, ok, "%+v", bad)
	}
	ds := []vendorapi.TensorDesc{packed, {Data: 4096, Ne: [4]int64{6, 3, 1, 2}, Nb: [4]int64{4, 24, 72, 72}}}
	assert.False(t, shapeVecAll(ds, 4))
	assert.Equal(t, packed, ds[0], "no descriptor changes unless all do")
}
