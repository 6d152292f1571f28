package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
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
// long rows split over the H200's 132 multiprocessors, in one launch where
// softmax_sync applies (slots 132), else in two.
func TestSoftmaxPlan(t *testing.T) {
	for _, c := range []struct {
		name             string
		ne0, nrows, vec  int64
		sms, warp, slots int
		want             softmaxPlan
	}{
		{"goal [4096,4096,5]: wide, a row a block", 4096, 4096 * 5, 4, 132, 32, 132, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 20480}}},
		{"short rows: a warp a row", 77, 4096 * 5, 1, 132, 32, 132, softmaxPlan{vec: 1, k: 4,
			block: vendorapi.Dim3{X: 32, Y: 8}, grid: vendorapi.Dim3{X: 2560}}},
		{"8 warp-widths: a warp a row", 1024, 1024 * 10, 4, 132, 32, 132, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 32, Y: 8}, grid: vendorapi.Dim3{X: 1280}}},
		{"over 8 warp-widths: wide", 2048, 1024, 4, 132, 32, 132, softmaxPlan{vec: 4, wide: true, k: 1,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"wide, a vector a thread, whole warps", 1200, 1024, 4, 132, 32, 132, softmaxPlan{vec: 4, wide: true, k: 1,
			block: vendorapi.Dim3{X: 320, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"wide, two vectors a thread", 2400, 1024, 4, 132, 32, 132, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 320, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"wide, wave 64", 4096, 100, 4, 110, 64, 110, softmaxPlan{vec: 4, wide: true, k: 2,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 100}}},
		{"8 wave64-widths: not wide", 2048, 1024, 4, 110, 64, 110, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 64, Y: 4}, grid: vendorapi.Dim3{X: 256}}},
		{"over 8 warp-widths, unvectorised: not wide", 2047, 1024, 1, 132, 32, 132, softmaxPlan{vec: 1, k: 8,
			block: vendorapi.Dim3{X: 256, Y: 1}, grid: vendorapi.Dim3{X: 1024}}},
		{"tiny rows, wave 64", 16, 10, 4, 110, 64, 110, softmaxPlan{vec: 4, k: 1,
			block: vendorapi.Dim3{X: 64, Y: 4}, grid: vendorapi.Dim3{X: 3}}},
		{"long rows, many", 12888, 256 * 5, 4, 132, 32, 132, softmaxPlan{vec: 4, k: 8,
			block: vendorapi.Dim3{X: 512, Y: 1}, grid: vendorapi.Dim3{X: 1280}}},
		{"goal [131072,16]: one launch, 8 chunks a row, 4 vectors a thread", 131072, 16, 4, 132, 32, 132, softmaxPlan{vec: 4,
			sync: true, chunk: 16384, nchunks: 8, block: vendorapi.Dim3{X: 1024}, grid: vendorapi.Dim3{X: 8, Y: 16}}},
		{"[131072,16], no slots (Moore Threads): split", 131072, 16, 4, 132, 32, 0, softmaxPlan{vec: 4, split: true,
			chunk: 4096, nchunks: 32, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 32, Y: 16}}},
		{"[131072,16], too few SMs: split", 131072, 16, 4, 16, 32, 16, softmaxPlan{vec: 4, split: true,
			chunk: 32768, nchunks: 4, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 4, Y: 16}}},
		{"[131072,16] odd length: split", 131071, 16, 1, 132, 32, 132, softmaxPlan{vec: 1, split: true,
			chunk: 4096, nchunks: 32, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 32, Y: 16}}},
		{"[131072,16] on 304 wave64 CUs: one launch, 19 chunks", 131072, 16, 4, 304, 64, 304, softmaxPlan{vec: 4,
			sync: true, chunk: 6900, nchunks: 19, block: vendorapi.Dim3{X: 1024}, grid: vendorapi.Dim3{X: 19, Y: 16}}},
		{"[524288,16]: chunks too long for registers, split", 524288, 16, 4, 132, 32, 132, softmaxPlan{vec: 4,
			split: true, chunk: 16384, nchunks: 32, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 32, Y: 16}}},
		{"[262144,16]: one launch, 8 vectors a thread", 262144, 16, 4, 132, 32, 132, softmaxPlan{vec: 4,
			sync: true, chunk: 32768, nchunks: 8, block: vendorapi.Dim3{X: 1024}, grid: vendorapi.Dim3{X: 8, Y: 16}}},
		{"66 rows on 132 slots: one launch, 2 chunks", 65536, 66, 4, 132, 32, 132, softmaxPlan{vec: 4,
			sync: true, chunk: 32768, nchunks: 2, block: vendorapi.Dim3{X: 1024}, grid: vendorapi.Dim3{X: 2, Y: 66}}},
		{"67 rows on 132 slots: split", 65536, 67, 4, 132, 32, 132, softmaxPlan{vec: 4, split: true,
			chunk: 8192, nchunks: 8, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 8, Y: 67}}},
		{"short split rows: one launch, a block a unit", 5000, 3, 4, 132, 32, 132, softmaxPlan{vec: 4,
			sync: true, chunk: 1000, nchunks: 5, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 5, Y: 3}}},
		{"one row: one launch", 8192, 1, 4, 132, 32, 132, softmaxPlan{vec: 4, sync: true, chunk: 1024, nchunks: 8,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 8, Y: 1}}},
		{"one row, no slots: split", 8192, 1, 4, 132, 32, 0, softmaxPlan{vec: 4, split: true, chunk: 1024, nchunks: 8,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 8, Y: 1}}},
		{"rows too long for registers", 643251, 3000, 1, 132, 32, 132, softmaxPlan{vec: 1, split: true, chunk: 644096,
			nchunks: 1, block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 1, Y: 3000}}},
		{"odd split", 200001, 6, 1, 132, 32, 132, softmaxPlan{vec: 1, split: true, chunk: 3072, nchunks: 66,
			block: vendorapi.Dim3{X: 256}, grid: vendorapi.Dim3{X: 66, Y: 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := softmaxPlanFor(c.ne0, c.nrows, c.vec, c.sms, c.warp, c.slots)
			assert.Equal(t, c.want, got)
			if got.sync {
				// The residency promise and the registers: the whole grid
				// in the slots, a chunk in its block's registers.
				assert.LessOrEqual(t, int(got.grid.X*got.grid.Y), c.slots)
				assert.LessOrEqual(t, got.block.X, uint32(softmaxSyncThreads))
				assert.LessOrEqual(t, got.chunk/4, int64(got.block.X)*softmaxSyncK)
				assert.Zero(t, got.block.X%uint32(c.warp))
				assert.GreaterOrEqual(t, got.chunk*got.nchunks, c.ne0)
				assert.Less(t, got.chunk*(got.nchunks-1), c.ne0)
			}
		})
	}
}

// TestSoftmaxSyncSlots checks how many blocks of softmax_sync each device is
// taken to hold at once: one a multiprocessor (NVIDIA, wave64 AMD), one per
// two CUs on RDNA, none on Moore Threads; the host device plans as an H200.
func TestSoftmaxSyncSlots(t *testing.T) {
	for _, c := range []struct {
		name  string
		props vendorapi.Props
		want  int
	}{
		{"H200", vendorapi.Props{CC: arch.Hopper, SMs: 132, WarpSize: 32}, 132},
		{"T4", vendorapi.Props{CC: arch.Turing, SMs: 40, WarpSize: 32}, 40},
		{"MI300X", vendorapi.Props{CC: arch.CDNA3, SMs: 304, WarpSize: 64}, 304},
		{"MI50", vendorapi.Props{CC: arch.Vega20, SMs: 60, WarpSize: 64}, 60},
		{"RX 7900", vendorapi.Props{CC: arch.RDNA3, SMs: 96, WarpSize: 32}, 48},
		{"MTT S4000", vendorapi.Props{CC: arch.QY2, SMs: 48, WarpSize: 32}, 0},
		{"host, 2 CPUs", vendorapi.Props{SMs: 2, WarpSize: 32}, 132},
	} {
		assert.Equal(t, c.want, softmaxSyncSlots(c.props), c.name)
	}
}

// TestSoftmaxSyncScratch checks the layout of softmax_sync's Zeroed memory:
// a 32-byte counter a row for up to slots rows, then two floats a block.
func TestSoftmaxSyncScratch(t *testing.T) {
	counters, size := softmaxSyncScratch(132)
	assert.Equal(t, uint64(32*132), counters)
	assert.Equal(t, uint64(32*132+8*132), size)
	counters, size = softmaxSyncScratch(0)
	assert.Equal(t, uint64(32), counters)
	assert.Equal(t, uint64(40), size)
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
