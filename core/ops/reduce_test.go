package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// TestReduceSupports checks the group's supports answers: what runs, and
// the reason of each "no".
func TestReduceSupports(t *testing.T) {
	ctx := graph.NewContext()
	idx := ctx.Empty(tensor.I32, 4)
	for _, c := range []struct {
		name string
		node *graph.Tensor
		why  string // "" when supported
	}{
		{"get_rows f32", ctx.Empty(tensor.F32, 8, 5).GetRows(idx), ""},
		{"get_rows bf16", ctx.Empty(tensor.BF16, 8, 5).GetRows(idx), ""},
		{"get_rows i32", ctx.Empty(tensor.I32, 8, 5).GetRows(idx), ""},
		{"get_rows iq2_xxs", ctx.Empty(tensor.IQ2_XXS, 256, 5).GetRows(idx), ""},
		{"get_rows i16", ctx.Empty(tensor.I16, 8, 5).GetRows(idx), "only f32, f16, bf16, i32 and quantized rows"},
		{"argmax f32", ctx.Empty(tensor.F32, 8, 5).Argmax(), ""},
		{"argmax f16", ctx.Empty(tensor.F16, 8, 5).Argmax(), "runs on f32"},
		{"count_equal i32", idx.CountEqual(ctx.Empty(tensor.I32, 4)), ""},
		{"count_equal f32", ctx.Empty(tensor.F32, 4).CountEqual(ctx.Empty(tensor.F32, 4)), "runs on i32"},
		{"sum f16", ctx.Empty(tensor.F16, 4).Sum(), "runs on f32"},
		{"sum_rows f32", ctx.Empty(tensor.F32, 4, 3).SumRows(), ""},
		{"mean bf16", ctx.Empty(tensor.BF16, 4, 3).Mean(), "runs on f32"},
		{"argsort f32", ctx.Empty(tensor.F32, 5000, 3).Argsort(graph.SortDesc), ""},
		{"argsort f16", ctx.Empty(tensor.F16, 50).Argsort(graph.SortAsc), "sorts f32 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, ctx.Err())
			checkSupports(t, c.node, c.why)
		})
	}
}

func TestReduceGeometry(t *testing.T) {
	for _, c := range []struct {
		ne0, nrows, vec int64
		warp            int
		grid, block     vendorapi.Dim3
	}{
		{8192, 8192, 4, 32, vendorapi.Dim3{X: 8192}, vendorapi.Dim3{X: 512, Y: 1}},     // long rows: a block a row
		{32000, 512, 4, 32, vendorapi.Dim3{X: 512}, vendorapi.Dim3{X: 512, Y: 1}},      // at most 512 threads a row
		{128, 8192, 4, 32, vendorapi.Dim3{X: 1024}, vendorapi.Dim3{X: 32, Y: 8}},       // short rows: a warp a row
		{10, 7, 1, 64, vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 64, Y: 4}},              // wave64
		{5, 1 << 20, 1, 32, vendorapi.Dim3{X: maxBlocks}, vendorapi.Dim3{X: 32, Y: 8}}, // grid-stride beyond maxBlocks
	} {
		grid, block := reduceGeometry(c.ne0, c.nrows, c.vec, c.warp)
		assert.Equal(t, c.grid, grid, "ne0 %d nrows %d", c.ne0, c.nrows)
		assert.Equal(t, c.block, block, "ne0 %d nrows %d", c.ne0, c.nrows)
	}
}

// TestReduceOneBlockThreads checks the block of a one-launch whole-tensor
// sum: sixteen elements a thread in whole warps, 256 to 1024 threads.
func TestReduceOneBlockThreads(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{1, 256}, {4096, 256}, {4097, 288}, {8192, 512}, {8448, 544}, {reduceOneBlockMax, 1024},
	} {
		got := reduceOneBlockThreads(c.n, 32)
		assert.Equal(t, c.want, got, "n %d", c.n)
		assert.LessOrEqual(t, c.n, 16*got, "n %d: more than sixteen elements a thread", c.n)
	}
}

func TestReduceParts(t *testing.T) {
	for _, c := range []struct {
		n    int64
		sms  int
		want int64
	}{
		{1, 132, 1},
		{4096, 132, 1},
		{4097, 132, 2},
		{8192 * 8192, 132, 528},
		{8192 * 8192, 0, 4},
		{1 << 30, 1000, reduceMaxParts},
	} {
		assert.Equal(t, c.want, reduceParts(c.n, c.sms), "n %d sms %d", c.n, c.sms)
	}
}

func TestReduceBlockARow(t *testing.T) {
	packed := func(ne0, ne1 int64, data vendorapi.DevicePtr) vendorapi.TensorDesc {
		ne := [4]int64{ne0, ne1, 1, 1}
		return vendorapi.TensorDesc{Data: data, Ne: ne, Nb: tensor.RowMajorStrides(tensor.F32, ne)}
	}
	for _, c := range []struct {
		name string
		t    vendorapi.TensorDesc
		want bool
	}{
		{"SUM_ROWS goal [8192, 8192]", packed(8192, 8192, 256), true},
		{"ARGMAX goal [32000, 512]", packed(32000, 512, 256), true},
		{"4096 columns", packed(4096, 3, 256), true},
		{"4092 columns", packed(4092, 3, 256), false},
		{"ne0 % 4 != 0", packed(8191, 3, 256), false},
		{"not 16-byte aligned", packed(8192, 3, 260), false},
	} {
		assert.Equal(t, c.want, reduceBlockARow(c.t), c.name)
	}
}

func TestArgsortChunk(t *testing.T) {
	for _, c := range []struct {
		ncols, nrows int64
		sms          int
		want         int64
	}{
		{3, 1, 132, 4},         // the smallest power of two holding the row
		{4096, 1, 132, 4096},   // one chunk, however few blocks
		{4097, 128, 132, 0},    // 512 Ki elements: radix
		{200000, 16, 132, 0},   // ARGSORT goal: radix (249 µs against 565 merging)
		{65000, 16, 132, 0},    // radix (88 µs against 159)
		{200000, 1, 132, 2048}, // 49 chunks of 4096 < 132 SMs: merge from 2048 (92 µs against 108)
		{10000, 3, 1, 4096},    // enough chunks for one multiprocessor
		{65536, 7, 132, 2048},  // 112 chunks of 4096 < 132: 2048
	} {
		assert.Equal(t, c.want, argsortChunk(c.ncols, c.nrows, c.sms), "ncols %d nrows %d sms %d", c.ncols, c.nrows, c.sms)
	}
}
