package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

func TestRoPESupports(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(ctx *graph.Context) *graph.Tensor
		want string // "" runs
	}{
		{"f32", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 64, 4, 3).RoPE(ctx.Empty(tensor.I32, 3), 64, 1e4, 1)
		}, ""},
		{"f16 view of a fused QKV", func(ctx *graph.Context) *graph.Tensor {
			qkv := ctx.Empty(tensor.F16, 64*12, 3)
			q := qkv.View(0, []int64{64, 4, 3}, []int64{64 * 2, 64 * 12 * 2})
			return q.RoPE(ctx.Empty(tensor.I32, 3), 64, 1e4, 1)
		}, ""},
		{"bf16", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.BF16, 64, 4, 3).RoPE(ctx.Empty(tensor.I32, 3), 64, 1e4, 1)
		}, "f32 and f16"},
		{"transposed", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 4, 64, 3).Transpose().RoPE(ctx.Empty(tensor.I32, 3), 4, 1e4, 1)
		}, "packed along dim 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := graph.NewContext()
			n := c.make(ctx)
			require.NoError(t, ctx.Err())
			checkSupports(t, n, c.want)
		})
	}
}

// TestRoPEGeometry checks the launch covers every pair, head and token with
// at most 256 threads a block, and keeps enough blocks without giving a
// thread more than 8 heads.
func TestRoPEGeometry(t *testing.T) {
	for _, c := range []struct{ npairs, ne1, tokens int64 }{
		{64, 32, 512}, {64, 64, 512}, {40, 32, 512}, {32, 8, 512}, {8, 16, 8192}, {64, 32, 1}, {64, 1, 1},
		{1, 3, 7}, {512, 2, 2}, {64, 200000, 1}, {64, 36, 1000}, {16, 9, 100000},
	} {
		for _, sms := range []int{1, 132} {
			for _, size := range []int64{2, 4} {
				grid, block := ropeGeometry(c.npairs, c.ne1, c.tokens, size, sms)
				assert.LessOrEqual(t, block.X*block.Y, uint32(256), "%+v", c)
				assert.True(t, int64(block.X) >= min(c.npairs, 256) && block.X&(block.X-1) == 0, "%+v: block.x %d", c, block.X)
				assert.Equal(t, uint32(c.tokens), grid.X, "%+v", c)
				rows := int64(grid.Y) * int64(block.Y)
				perThread := (c.ne1 + rows - 1) / rows
				assert.LessOrEqual(t, perThread, max(int64(8), (c.ne1+65535*int64(block.Y)-1)/(65535*int64(block.Y))), "%+v", c)
				if perThread > 1 {
					// Fewer head groups only while blocks stay plentiful.
					assert.GreaterOrEqual(t, int64(grid.X)*int64(grid.Y), 2*size*int64(sms), "%+v", c)
				}
			}
		}
	}
}

// TestRoPECorrDims checks the float32 YaRN ramp ends against a float64
// evaluation of ggml_rope_yarn_corr_dims.
func TestRoPECorrDims(t *testing.T) {
	for _, c := range []struct {
		nDims, nCtxOrig          int
		base, betaFast, betaSlow float64
	}{
		{128, 4096, 10000, 32, 1}, {64, 2048, 500000, 32, 1}, {128, 8192, 1e6, 16, 2}, {128, 0, 10000, 1, 1},
	} {
		dim := func(beta float64) float64 {
			return float64(c.nDims) * math.Log(float64(c.nCtxOrig)/(beta*2*math.Pi)) / (2 * math.Log(c.base))
		}
		wantLow := math.Max(0, math.Floor(dim(c.betaFast)))
		wantHigh := math.Min(float64(c.nDims-1), math.Ceil(dim(c.betaSlow)))
		low, high := ropeCorrDims(c.nDims, c.nCtxOrig, float32(c.base), float32(c.betaFast), float32(c.betaSlow))
		assert.Equal(t, wantLow, float64(low), "%+v", c)
		assert.Equal(t, wantHigh, float64(high), "%+v", c)
	}
}
