package ops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

func TestUnarySupports(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(ctx *graph.Context) *graph.Tensor
		why   string // "" when supported
	}{
		{"silu f32", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.F32, 8, 3).SILU() }, ""},
		{"gelu f16 view", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F16, 8, 3).Transpose().GELUInplace()
		}, ""},
		{"silu bf16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.BF16, 8, 3).SILU() }, "runs on f32 and f16"},
		{"clamp bf16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.BF16, 8).Clamp(0, 1) }, "runs on f32 and f16"},
		{"swiglu f16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.F16, 8, 3).SwiGLU() }, ""},
		{"swiglu bf16", func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.BF16, 8, 3).SwiGLU() }, "runs on f32 and f16"},
		{"add1 f16+f32", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F16, 8, 3).Add1(ctx.Empty(tensor.F32, 1))
		}, ""},
		{"acc", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 8, 3).Acc(ctx.Empty(tensor.F32, 4, 2), 32, 64, 64, 4)
		}, ""},
		{"acc overlapping rows", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 8, 3).Acc(ctx.Empty(tensor.F32, 4, 2), 8, 64, 64, 0)
		}, "overlap"},
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
			require.True(t, errors.Is(err, ErrNotSupported), "%v", err)
			assert.Contains(t, err.Error(), c.why)
			assert.Contains(t, err.Error(), n.Op().String())
		})
	}
}

func TestUnaryOverlaps(t *testing.T) {
	for _, c := range []struct {
		ne, nb [4]int64
		want   bool
	}{
		{[4]int64{4, 2, 1, 1}, [4]int64{4, 16, 32, 32}, false},
		{[4]int64{4, 2, 1, 1}, [4]int64{4, 12, 32, 32}, true},    // rows of 16 bytes 12 apart
		{[4]int64{4, 2, 3, 1}, [4]int64{4, 100, 16, 300}, false}, // dim 2 packs rows of 48 bytes, dim 1 beyond
		{[4]int64{4, 2, 3, 1}, [4]int64{4, 40, 16, 300}, true},   // dim 1 steps inside those 48 bytes
		{[4]int64{4, 2, 3, 1}, [4]int64{4, 48, 16, 300}, false},  // dims 1 and 2 swapped, disjoint
		{[4]int64{1, 5, 1, 1}, [4]int64{4, 4, 20, 20}, false},
		{[4]int64{3, 1, 1, 1}, [4]int64{0, 12, 12, 12}, true}, // a zero stride repeats an address
	} {
		assert.Equal(t, c.want, unaryOverlaps(c.ne, c.nb), "ne %v nb %v", c.ne, c.nb)
	}
}

// TestUnaryAccStrides checks which ACC views run acc_f32 and the strides
// it divides by.
func TestUnaryAccStrides(t *testing.T) {
	for _, c := range []struct {
		name   string
		ne, nb [4]int64
		want   [3]int64
		ok     bool
	}{
		{"a's strides (test_acc)", [4]int64{256, 16, 2, 3}, [4]int64{4, 1024, 17408, 34816}, [3]int64{256, 4352, 8704}, true},
		{"half rows", [4]int64{128, 16, 2, 3}, [4]int64{4, 1024, 17408, 34816}, [3]int64{256, 4352, 8704}, true},
		{"dims of one element take the span", [4]int64{5, 1, 3, 1}, [4]int64{4, 7, 80, 9}, [3]int64{5, 20, 45}, true},
		{"dims 1 and 2 swapped", [4]int64{2, 3, 4, 1}, [4]int64{4, 32, 8, 512}, [3]int64{}, false},
		{"rows closer than a row", [4]int64{8, 2, 1, 1}, [4]int64{4, 16, 64, 64}, [3]int64{}, false},
		{"a stride not of whole elements", [4]int64{4, 2, 1, 1}, [4]int64{4, 18, 64, 64}, [3]int64{}, false},
		{"a stride of 2^31 elements", [4]int64{4, 2, 1, 1}, [4]int64{4, 1 << 33, 1 << 34, 1 << 34}, [3]int64{}, false},
	} {
		s, ok := unaryAccStrides(vendorapi.TensorDesc{Ne: c.ne, Nb: c.nb})
		assert.Equal(t, c.ok, ok, c.name)
		if c.ok {
			assert.Equal(t, c.want, s, c.name)
		}
	}
}

func TestUnaryFoldRows(t *testing.T) {
	for _, c := range []struct {
		name   string
		ne, nb [4]int64
		ok     bool
		rows   int64 // folded ne[1]
		stride int64 // folded nb[1]
	}{
		{"contiguous", [4]int64{8, 3, 2, 2}, [4]int64{4, 32, 96, 192}, true, 12, 32},
		{"half of wider rows", [4]int64{8, 3, 2, 1}, [4]int64{4, 64, 192, 384}, true, 6, 64},
		{"rows in dim 2 only", [4]int64{8, 1, 5, 1}, [4]int64{4, 999, 48, 240}, true, 5, 48},
		{"one row", [4]int64{8, 1, 1, 1}, [4]int64{4, 32, 32, 32}, true, 1, 32},
		{"dim 2 not over dim 1", [4]int64{8, 3, 2, 1}, [4]int64{4, 32, 128, 256}, false, 0, 0},
		{"dim 3 not over dim 2", [4]int64{8, 3, 2, 2}, [4]int64{4, 32, 96, 200}, false, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ok := unaryFoldRows(vendorapi.TensorDesc{Data: 256, Ne: c.ne, Nb: c.nb})
			require.Equal(t, c.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, [4]int64{c.ne[0], c.rows, 1, 1}, f.Ne)
			assert.Equal(t, c.nb[0], f.Nb[0])
			assert.Equal(t, c.stride, f.Nb[1])
			assert.Equal(t, vendorapi.DevicePtr(256), f.Data)
		})
	}
}

func TestUnaryGeometry(t *testing.T) {
	for _, c := range []struct {
		name      string
		sms       int
		nv, u     int64
		wantGrid  uint32
		wantBlock uint32
	}{
		{"large: u vectors a thread", 132, 4096 * 4096 / 4, 4, 4096, 256},
		{"mid: 8 blocks an SM, fewer vectors a thread", 132, 1 << 20, 4, 8 * 132, 256},
		{"small: one warp a multiprocessor", 132, 1000, 2, 32, 32},
		{"SILU [128,2,2,2] f32: 8 one-warp blocks", 132, 256, 4, 8, 32},
		{"two warps a block", 132, 8000, 4, 125, 64},
		{"empty", 132, 0, 4, 1, 32},
		{"no SM count", 0, 1 << 20, 4, 1024, 256},
		{"no SM count, small", 0, 1000, 2, 4, 256},
	} {
		t.Run(c.name, func(t *testing.T) {
			grid, block := unaryGeometry(c.sms, 32, c.nv, c.u)
			assert.Equal(t, c.wantGrid, grid.X)
			assert.Equal(t, c.wantBlock, block.X)
		})
	}
}
