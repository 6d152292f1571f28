package backend

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// TestDequantGemmSlices: a quantized MUL_MAT of more than 8 columns
// dequantizes src0 in slices of k under TERNION_DEQUANT_SLICE (off by
// default), one gemm a slice (the first with beta 0, the others adding into
// dst), and gives the whole-matrix path's result up to the order of the f32
// sums.
func TestDequantGemmSlices(t *testing.T) {
	const k, m, n = 1024, 24, 12
	t.Setenv(switches.NoGemm90.Name, "1") // the host device would take gemm90 (k a multiple of 256)
	rng := rand.New(rand.NewPCG(3, 4))
	w, x := make([]float32, k*m), make([]float32, k*n)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	run := func(limit string) ([]float32, int) {
		t.Setenv(switches.DequantSlice.Name, limit)
		fd := faulty.New(hostDriver(t))
		b := graphBackend(t, fd, map[string]string{switches.DisableGraphs.Name: "1"})
		ctx := graph.NewContext()
		y := ctx.FromFloatsAs(tensor.Q4_0, w, k, m).MulMat(ctx.FromFloats(x, k, n))
		g, err := ctx.Build(y)
		require.NoError(t, err)
		require.NoError(t, b.Compute(g))
		require.NoError(t, b.Synchronize())
		got, err := y.Floats()
		require.NoError(t, err)
		return got, fd.Calls("Gemm")
	}
	whole, calls := run("0")
	require.Equal(t, 1, calls)
	_, calls = run("")
	require.Equal(t, 1, calls, "unset: the whole matrix at once")
	var scale float64
	for _, v := range whole {
		scale = max(scale, math.Abs(float64(v)))
	}
	for _, c := range []struct {
		limit  string
		slices int
	}{
		{"48KiB", 1}, // 2·24·1024 bytes of f16: fits
		{"12KiB", 4}, // slices of 256 values
		{"20KiB", 3}, // 352, 352 and 320 values (whole q4_0 blocks)
		{"1000", 32}, // a slice a block of 32 values at the least
	} {
		got, calls := run(c.limit)
		require.Equal(t, c.slices, calls, "gemms with TERNION_DEQUANT_SLICE=%s", c.limit)
		require.Len(t, got, len(whole))
		for i := range got {
			require.InDelta(t, whole[i], got[i], 1e-5*scale, "element %d with TERNION_DEQUANT_SLICE=%s", i, c.limit)
		}
	}
	t.Setenv(switches.DequantSlice.Name, "12 lumps")
	fd := faulty.New(hostDriver(t))
	b := graphBackend(t, fd, nil)
	ctx := graph.NewContext()
	y := ctx.FromFloatsAs(tensor.Q4_0, w, k, m).MulMat(ctx.FromFloats(x, k, n))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	err = b.Compute(g)
	require.ErrorContains(t, err, switches.DequantSlice.Name, "a malformed size is an error naming the variable")
}
