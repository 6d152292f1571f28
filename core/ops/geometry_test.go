package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// TestRowsGeometry checks the blocks of row kernels: about 256 threads, a
// row of threads per row when there are fewer rows than that.
func TestRowsGeometry(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ne0, nrows, vec int64
		warp            int
		grid, block     vendorapi.Dim3
	}{
		{"one element: one warp", 1, 1, 1, 32, vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 32, Y: 1}},
		{"3 short rows: 3 warps", 10, 3, 1, 32, vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 32, Y: 3}},
		{"many short rows: 8 a block", 10, 1000, 1, 32, vendorapi.Dim3{X: 125}, vendorapi.Dim3{X: 32, Y: 8}},
		{"long rows: 256 threads a row", 14336, 512, 1, 32, vendorapi.Dim3{X: 512}, vendorapi.Dim3{X: 256, Y: 1}},
		{"rows of 4-vectors", 256, 100, 4, 32, vendorapi.Dim3{X: 25}, vendorapi.Dim3{X: 64, Y: 4}},
		{"wave of 64", 1, 1, 1, 64, vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 64, Y: 1}},
	} {
		grid, block := rowsGeometry(tc.ne0, tc.nrows, tc.vec, tc.warp)
		assert.Equal(t, tc.grid, grid, tc.name)
		assert.Equal(t, tc.block, block, tc.name)
	}
}

// TestSpreadRows checks that a row grid of fewer blocks than
// multiprocessors takes fewer rows a block, and a full one is kept.
func TestSpreadRows(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ne0, nrows  int64
		sms         int
		grid, block vendorapi.Dim3
	}{
		{"REPEAT [20,10,8,2]: 160 rows, 2 a block", 5, 160, 132, vendorapi.Dim3{X: 80}, vendorapi.Dim3{X: 32, Y: 2}},
		{"8 rows: a block each", 5, 8, 132, vendorapi.Dim3{X: 8}, vendorapi.Dim3{X: 32, Y: 1}},
		{"many rows: kept", 5, 8000, 132, vendorapi.Dim3{X: 1000}, vendorapi.Dim3{X: 32, Y: 8}},
		{"long rows: kept", 14336, 8, 132, vendorapi.Dim3{X: 8}, vendorapi.Dim3{X: 256, Y: 1}},
		{"no SM count: kept", 5, 160, 0, vendorapi.Dim3{X: 20}, vendorapi.Dim3{X: 32, Y: 8}},
	} {
		grid, block := rowsGeometry(tc.ne0, tc.nrows, 4, 32)
		grid, block = spreadRows(grid, block, tc.nrows, tc.sms)
		assert.Equal(t, tc.grid, grid, tc.name)
		assert.Equal(t, tc.block, block, tc.name)
	}
}

// TestSpreadOne checks that a tiny one-unit-a-thread grid stays within one
// block a multiprocessor where blocks of up to 1024 threads allow it.
func TestSpreadOne(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n           int64
		sms         int
		grid, block uint32
	}{
		{"CONCAT [11,19,13,14]: 38038 units, 119 blocks of 320", 38038, 132, 119, 320},
		{"64 K units: 128 blocks of 512", 65536, 132, 128, 512},
		{"few units: spreadFlat's warps", 1024, 132, 32, 32},
		{"one 256-thread block a multiprocessor: kept", 132 * 256, 132, 132, 256},
		{"more than 1024 a multiprocessor: 256-thread blocks", 132*1024 + 1, 132, 529, 256},
		{"no SM count: 256-thread blocks", 38038, 0, 149, 256},
	} {
		grid, block := spreadOne(tc.n, tc.sms, 32)
		assert.Equal(t, vendorapi.Dim3{X: tc.grid}, grid, tc.name)
		assert.Equal(t, vendorapi.Dim3{X: tc.block}, block, tc.name)
		assert.GreaterOrEqual(t, int64(grid.X)*int64(block.X), tc.n, tc.name)
	}
}

// TestTinyFlatGeometry checks that elements fewer than a block's 256 get
// whole warps only.
func TestTinyFlatGeometry(t *testing.T) {
	for _, tc := range []struct {
		n         int64
		warp      int
		grid, blk uint32
	}{{1, 32, 1, 32}, {33, 32, 1, 64}, {255, 32, 1, 256}, {256, 32, 1, 256}, {1000, 32, 4, 256}, {1, 64, 1, 64}, {0, 32, 1, 32}} {
		grid, block := tinyFlatGeometry(tc.n, tc.warp)
		assert.Equal(t, vendorapi.Dim3{X: tc.grid}, grid, "n=%d warp %d", tc.n, tc.warp)
		assert.Equal(t, vendorapi.Dim3{X: tc.blk}, block, "n=%d warp %d", tc.n, tc.warp)
	}
}

// TestFlatBinary checks which binary nodes take the flat {op}_f32 kernels.
func TestFlatBinary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(ctx *graph.Context) *graph.Tensor
		flat  bool
	}{
		{"ADD of one element", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 1).Add(ctx.Empty(tensor.F32, 1))
		}, true},
		{"SUB of one shape", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 10, 5, 4, 3).Sub(ctx.Empty(tensor.F32, 10, 5, 4, 3))
		}, true},
		{"MUL of one shape", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 7, 3).Mul(ctx.Empty(tensor.F32, 7, 3))
		}, true},
		{"DIV: no flat kernel", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 7, 3).Div(ctx.Empty(tensor.F32, 7, 3))
		}, false},
		{"src1 broadcast", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 7, 3).Add(ctx.Empty(tensor.F32, 7, 1))
		}, false},
		{"src0 permuted", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 3, 7).Permute(1, 0, 2, 3).Add(ctx.Empty(tensor.F32, 7, 3))
		}, false},
		{"f16 src1", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.F32, 7, 3).Add(ctx.Empty(tensor.F16, 7, 3))
		}, false},
	} {
		n := tc.build(graph.NewContext())
		assert.Equal(t, tc.flat, flatBinary(n), tc.name)
	}
}
