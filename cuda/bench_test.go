//go:build cuda

package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// syncEvery is how many launches the launch benchmarks queue between two
// stream synchronizations.
const syncEvery = 256

// tinyKernel is one of the smallest launches there is: noop (no arguments)
// or fill_f32 of one element.
type tinyKernel struct {
	name string
	args func(p vendorapi.DevicePtr) *vendorapi.Args
}

var tinyKernels = []tinyKernel{
	{"noop", func(vendorapi.DevicePtr) *vendorapi.Args { return nil }},
	{"fill_f32", func(p vendorapi.DevicePtr) *vendorapi.Args {
		return vendorapi.NewArgs().Ptr(p).F32(1).I64(1)
	}},
}

// tiny sets up kernel k on a fresh stream of device 0.
func tiny(b *testing.B, k tinyKernel) (vendorapi.Driver, vendorapi.Function, vendorapi.Stream, *vendorapi.Args) {
	b.Helper()
	d := openOrSkip(b)
	f, err := d.Kernel(0, k.name)
	require.NoError(b, err)
	s, err := d.StreamCreate(0)
	require.NoError(b, err)
	p, err := d.Malloc(0, 256)
	require.NoError(b, err)
	b.Cleanup(func() {
		_ = d.StreamSynchronize(s)
		_ = d.StreamDestroy(s)
		_ = d.Free(0, p)
	})
	return d, f, s, k.args(p)
}

// forKernels runs bench once per tiny kernel as a sub-benchmark.
func forKernels(b *testing.B, bench func(b *testing.B, k tinyKernel)) {
	for _, k := range tinyKernels {
		b.Run(k.name, func(b *testing.B) { bench(b, k) })
	}
}

var one = vendorapi.Dim3{X: 1, Y: 1, Z: 1}

// reportPer reports the wall time per unit (launch, node) in µs.
func reportPer(b *testing.B, units int, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(units), "µs/"+unit)
}

// BenchmarkLaunchVendorAPI is ternion's launch overhead: d.Launch of a tiny
// fill_f32 (argument check, handle lookup, one cgo call, device check,
// cuLaunchKernel), back to back, with a stream sync every syncEvery launches.
func BenchmarkLaunchVendorAPI(b *testing.B) { forKernels(b, benchLaunchVendorAPI) }

func benchLaunchVendorAPI(b *testing.B, k tinyKernel) {
	d, f, s, args := tiny(b, k)
	launchLoop(b, d, s, func() error { return d.Launch(f, one, one, 0, s, args) })
}

// launchLoop times launch back to back after a warm-up of syncEvery launches,
// synchronizing s every syncEvery launches, and reports µs per launch.
func launchLoop(b *testing.B, d vendorapi.Driver, s vendorapi.Stream, launch func() error) {
	for range syncEvery { // warm up: module loaded, queue primed
		require.NoError(b, launch())
	}
	require.NoError(b, d.StreamSynchronize(s))
	n := 0
	for b.Loop() {
		if err := launch(); err != nil {
			b.Fatal(err)
		}
		if n++; n%syncEvery == 0 {
			if err := d.StreamSynchronize(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	require.NoError(b, d.StreamSynchronize(s))
	reportPer(b, n, "launch")
}

// BenchmarkGraphReplay1000 captures 1000 tiny launches (noop, fill_f32) into one
// graph and replays it (launch and synchronize per iteration), reporting µs
// per node. Floor measured 2026-12-02 on the H200: 0.82 µs/node.
func BenchmarkGraphReplay1000(b *testing.B) { forKernels(b, benchGraphReplay1000) }

func benchGraphReplay1000(b *testing.B, k tinyKernel) {
	const nodes = 1000
	d, f, s, args := tiny(b, k)
	require.NoError(b, d.BeginCapture(s))
	for range nodes {
		require.NoError(b, d.Launch(f, one, one, 0, s, args))
	}
	g, err := d.EndCapture(s)
	require.NoError(b, err)
	defer func() { _ = d.GraphDestroy(g) }()
	x, err := d.GraphInstantiate(g)
	require.NoError(b, err)
	defer func() { _ = d.GraphExecDestroy(x) }()
	require.NoError(b, d.GraphLaunch(x, s)) // warm up: first launch uploads the graph
	require.NoError(b, d.StreamSynchronize(s))
	n := 0
	for b.Loop() {
		if err := d.GraphLaunch(x, s); err != nil {
			b.Fatal(err)
		}
		if err := d.StreamSynchronize(s); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportPer(b, n*nodes, "node")
}

// BenchmarkComputeChain1000 is the eager per-node cost of core's compute
// loop: a graph of 1000 ADDs of one f32 element each, computed and
// synchronized per iteration, reported in µs per node (compare with
// BenchmarkLaunchRawCgo in the same run).
func BenchmarkComputeChain1000(b *testing.B) {
	const nodes = 1000
	d := openOrSkip(b)
	be, err := backend.New(d, 0, backend.Options{})
	require.NoError(b, err)
	defer be.Close()
	weights := graph.NewContext()
	one := weights.FromFloats([]float32{1}, 1)
	buf, err := be.AllocTensors(one)
	require.NoError(b, err)
	defer buf.Free()
	ctx := graph.NewContext()
	x := ctx.FromFloats([]float32{0}, 1)
	h := x
	for range nodes {
		h = h.Add(one)
	}
	g, err := ctx.Build(h)
	require.NoError(b, err)
	require.NoError(b, be.Compute(g)) // warm up: kernels loaded, buffers made
	require.NoError(b, be.Synchronize())
	got, err := h.Floats()
	require.NoError(b, err)
	require.Equal(b, []float32{nodes}, got)
	n := 0
	for b.Loop() {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
		if err := be.Synchronize(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportPer(b, n*nodes, "node")
}

// BenchmarkMulMatVsBLAS times MUL_MAT m=4096 k=14336 n=512 (test-backend-ops'
// perf case) through core against the vendor BLAS called directly on the
// same operands in the same run: the gemm ternion issues (f16 or bf16
// inputs, f32 output, f32 accumulation), the seed's f16 gemm (f16 output,
// f16 accumulation), and ternion's whole node (src1 f32 → f16/bf16, gemm).
func BenchmarkMulMatVsBLAS(b *testing.B) {
	const m, n, k = 4096, 512, 14336
	d := openOrSkip(b)
	be, err := backend.New(d, 0, backend.Options{})
	require.NoError(b, err)
	defer be.Close()
	for _, c := range []struct {
		name string
		t    tensor.Type
		dt   vendorapi.DataType
	}{{"f16", tensor.F16, vendorapi.F16}, {"bf16", tensor.BF16, vendorapi.BF16}} {
		r := rand.New(rand.NewPCG(1, 2))
		rnd := func(count int) []float32 {
			v := make([]float32, count)
			for i := range v {
				v[i] = 2*r.Float32() - 1
			}
			return v
		}
		weights := graph.NewContext()
		w := weights.FromFloatsAs(c.t, rnd(m*k), k, m)
		bh := weights.FromFloatsAs(c.t, rnd(n*k), k, n) // src1 already converted: the direct gemm's B
		wbuf, err := be.AllocTensors(w, bh)
		require.NoError(b, err)
		ctx := graph.NewContext()
		x := ctx.FromFloats(rnd(n*k), k, n)
		y := w.MulMat(x)
		g, err := ctx.Build(y)
		require.NoError(b, err)
		out, err := be.Alloc(m * n * 4)
		require.NoError(b, err)
		h, err := be.BLAS()
		require.NoError(b, err)
		pw, _ := w.Data()
		pb, _ := bh.Data()
		gemm := vendorapi.Gemm{TransA: true, M: m, N: n, K: k, Alpha: 1, A: pw, AType: c.dt, LDA: k, B: pb, BType: c.dt,
			LDB: k, C: out.Ptr(), CType: vendorapi.F32, LDC: m, Compute: vendorapi.Compute32F}
		const per = 20
		timed := func(b *testing.B, run func() error) {
			require.NoError(b, run())
			require.NoError(b, be.Synchronize())
			iters := 0
			for b.Loop() {
				for range per {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				if err := be.Synchronize(); err != nil {
					b.Fatal(err)
				}
				iters++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(iters*per), "µs/mul_mat")
		}
		b.Run("blas_"+c.name+"_f32out", func(b *testing.B) { timed(b, func() error { return d.Gemm(h, gemm) }) })
		if c.t == tensor.F16 {
			seed := gemm
			seed.CType, seed.Compute, seed.LDC = vendorapi.F16, vendorapi.Compute16F, m
			b.Run("blas_f16_f16out_seed", func(b *testing.B) { timed(b, func() error { return d.Gemm(h, seed) }) })
		}
		b.Run("ternion_"+c.name, func(b *testing.B) { timed(b, func() error { return be.Compute(g) }) })
		require.NoError(b, out.Free())
		require.NoError(b, wbuf.Free())
	}
}
