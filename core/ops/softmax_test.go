package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// TestSoftmaxSupports checks the group's supports answers: what runs, and
// the reason of each "no".
func TestSoftmaxSupports(t *testing.T) {
	ctx := graph.NewContext()
	a := ctx.Empty(tensor.F32, 16, 4, 2)
	for _, c := range []struct {
		name string
		node *graph.Tensor
		why  string // "" when supported
	}{
		{"softmax f32", a.Softmax(), ""},
		{"softmax f16 mask, sinks, alibi", a.SoftmaxExt(ctx.Empty(tensor.F16, 16, 4), ctx.Empty(tensor.F32, 2), 0.5, 8), ""},
		{"softmax f16", ctx.Empty(tensor.F16, 16, 4).Softmax(), "runs on f32"},
		{"diag_mask_inf f32", a.DiagMaskInf(2), ""},
		{"diag_mask_inf f16", ctx.Empty(tensor.F16, 16, 4).DiagMaskInf(2), "runs on f32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, ctx.Err())
			checkSupports(t, c.node, c.why)
		})
	}
}

// TestSoftmaxPlan checks which kernel a SOFT_MAX runs and its launch: rows
// in registers, many rows in flight (wide vectorised rows one a block); few
// long rows split over the H200's 132 multiprocessors.
func TestSoftmaxPlan(t *testing.T) {
	for _, c := range []struct {
		name            string
		ne0, nrows, vec int64
		sms, warp       int
		want            softmaxPlan
	}{
		{"goal [4096,4096,5]: wide, a row a block", 4096, 4096 * 5, 4, 132, 32, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 20480}}},
		{"short rows: a warp a row", 77, 4096 * 5, 1, 132, 32, softmaxPlan{vec: 1, k: 4,
			block: vendorapi.Dim3{X: 32, Y: 8}, grid: vendorapi.Dim3{X: 2560}}},
		{"8 warp-widths: a warp a row", 1024, 1024 * 10, 4, 132, 32, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 32, Y: 8}, grid: vendorapi.Dim3{X: 1280}}},
		{"over 8 warp-widths: wide", 2048, 1024, 4, 132, 32, softmaxPlan{vec: 4, wide: true, k: 1,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"wide, a vector a thread, whole warps", 1200, 1024, 4, 132, 32, softmaxPlan{vec: 4, wide: true, k: 1,
			block: vendorapi.Dim3{X: 320, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"wide, two vectors a thread", 2400, 1024, 4, 132, 32, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 320, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"wide, wave 64", 4096, 100, 4, 110, 64, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 100}}},
		{"8 wave64-widths: not wide", 2048, 1024, 4, 110, 64, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 64, Y: 4}, grid: vendorapi.Dim3{X: 256}}},
		{"over 8 warp-widths, unvectorised: not wide", 2047, 1024, 1, 132, 32, softmaxPlan{vec: 1, k: 8,
			block: vendorapi.Dim3{X: 256, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"tiny rows, wave 64", 16, 10, 4, 110, 64, softmaxPlan{vec: 4, k: 1,
			block: vendorapi.Dim3{X: 64, Y: 4}, grid: vendorapi.Dim3{X: 3}}},
		{"long rows, many", 12888, 256 * 5, 4, 132, 32, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 1280}}},
		{"goal [131072,16]: split", 131072, 16, 4, 132, 32, softmaxPlan{vec: 4, split: true, chunk: 4096, nchunks: 32,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 32, Y: 16}}},
		{"one row of 8192: tiny, one block", 8192, 1, 4, 132, 32, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 256, Y: 1}, grid: vendorapi.Dim3{X: 1}}},
		{"one row of 65536: split", 65536, 1, 4, 132, 32, softmaxPlan{vec: 4, split: true, chunk: 1024, nchunks: 64,
			block: vendorapi.Dim3{X: 128}, grid: vendorapi.Dim3{X: 64, Y: 1}}},
		{"[131072,4]: one block a multiprocessor, 512 threads", 131072, 4, 4, 132, 32, softmaxPlan{vec: 4, split: true,
			chunk: 4096, nchunks: 32, block: vendorapi.Dim3{X: 512}, grid: vendorapi.Dim3{X: 32, Y: 4}}},
		{"[262144,1]: one block a multiprocessor, 256 threads", 262144, 1, 4, 132, 32, softmaxPlan{vec: 4, split: true,
			chunk: 2048, nchunks: 128, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 128, Y: 1}}},
		{"[262144,4]: one block a multiprocessor, 512 threads of 4 vectors", 262144, 4, 4, 132, 32, softmaxPlan{vec: 4,
			split: true, chunk: 8192, nchunks: 32, block: vendorapi.Dim3{X: 512}, grid: vendorapi.Dim3{X: 32, Y: 4}}},
		{"[524288,4]: one block a multiprocessor would take 8 vectors a thread", 524288, 4, 4, 132, 32, softmaxPlan{vec: 4,
			split: true, chunk: 4096, nchunks: 128, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 128, Y: 4}}},
		{"rows too long for registers", 643251, 3000, 1, 132, 32, softmaxPlan{vec: 1, split: true, chunk: 644096,
			nchunks: 1, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 1, Y: 3000}}},
		{"odd split", 200001, 6, 1, 132, 32, softmaxPlan{vec: 1, split: true, chunk: 3072, nchunks: 66,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 66, Y: 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, softmaxPlanFor(c.ne0, c.nrows, c.vec, c.sms, c.warp, false))
		})
	}
}

// TestSoftmaxPlanCluster: with softmax_cl available the rows the split
// would take go to clusters, k the fewest vectors a thread (from 2) that
// cover the row with 8 blocks of 256 threads, up to 4, or 8 from 4 rows up
// (as measured on an H100); rows not read as vectors of 4, one row of 8 a
// thread, rows longer than that stay split, and rows the registers hold
// stay on the row kernels.
func TestSoftmaxPlanCluster(t *testing.T) {
	cl := func(k int64, nrows uint32) softmaxPlan {
		return softmaxPlan{vec: 4, cluster: true, k: k, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 8 * nrows}}
	}
	for _, c := range []struct {
		name            string
		ne0, nrows, vec int64
		want            softmaxPlan
	}{
		{"[8192,16]: two vectors a thread, the fewest built", 8192, 16, 4, cl(2, 16)},
		{"a row of 20000: 4 vectors a thread (partly)", 20000, 16, 4, cl(4, 16)},
		{"[32768,1]: tiny, one block a row as before", 32768, 1, 4, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 1024, Y: 1}, grid: vendorapi.Dim3{X: 1}}},
		{"[65536,4]: 8 vectors a thread from 4 rows", 65536, 4, 4, cl(8, 4)},
		{"one row of 65536: split", 65536, 1, 4, softmaxPlan{vec: 4, split: true, chunk: 1024, nchunks: 64,
			block: vendorapi.Dim3{X: 128}, grid: vendorapi.Dim3{X: 64, Y: 1}}},
		{"goal [131072,16]: split", 131072, 16, 4, softmaxPlan{vec: 4, split: true, chunk: 4096, nchunks: 32,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 32, Y: 16}}},
		{"unvectorised: split", 200001, 6, 1, softmaxPlan{vec: 1, split: true, chunk: 3072, nchunks: 66,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 66, Y: 6}}},
		{"goal [4096,4096,5]: wide as before", 4096, 4096 * 5, 4, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 20480}}},
		{"one row of 8192: tiny, one block as before", 8192, 1, 4, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 256, Y: 1}, grid: vendorapi.Dim3{X: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, softmaxPlanFor(c.ne0, c.nrows, c.vec, 132, 32, true))
		})
	}
}

func TestSoftmaxALiBi(t *testing.T) {
	for _, c := range []struct {
		nHead   int64
		maxBias float32
		log2    int32
		m0, m1  float32
	}{
		{32, 8, 32, 0.8408964, 0.9170040},
		{12, 8, 8, 0.5, 0.70710677},
		{1, 0, 1, 1, 1},
	} {
		log2, m0, m1 := softmaxALiBi(c.nHead, c.maxBias)
		assert.Equal(t, c.log2, log2, "n_head %d", c.nHead)
		assert.InDelta(t, c.m0, m0, 1e-6, "n_head %d", c.nHead)
		assert.InDelta(t, c.m1, m1, 1e-6, "n_head %d", c.nHead)
	}
}
