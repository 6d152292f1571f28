package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// TestNormSupports: the row norms run on f32 of any strides, GROUP_NORM on
// contiguous f32; anything else is not supported, with the reason.
func TestNormSupports(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(ctx *graph.Context) *graph.Tensor
		why   string // "" when supported
	}{
		{"rms_norm f32 transposed", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 8, 4).Transpose().RMSNorm(1e-6)
		}, ""},
		{"norm f16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.F16, 8, 4).Norm(1e-6) }, "f32 only"},
		{"l2_norm bf16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.BF16, 8).L2Norm(1e-6) }, "f32 only"},
		{"group_norm f32", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.F32, 8, 4, 6).GroupNorm(3, 1e-6) }, ""},
		{"group_norm permuted", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 8, 4, 6).Permute(0, 2, 1, 3).GroupNorm(3, 1e-6)
		}, "contiguous"},
		{"group_norm f16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.F16, 8, 4, 6).GroupNorm(3, 1e-6) }, "f32 only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := graph.NewContext()
			n := c.build(ctx)
			require.NoError(t, ctx.Err())
			err := Supports(n, vendorapi.Props{WarpSize: 32})
			if c.why == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrNotSupported)
			assert.ErrorContains(t, err, c.why)
		})
	}
}
