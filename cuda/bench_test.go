//go:build cuda

package cuda

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
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
	x := captureGraph(b, d, s, func() {
		for range nodes {
			require.NoError(b, d.Launch(f, one, one, 0, s, args))
		}
	})
	reportPer(b, replayLoop(b, d, s, x)*nodes, "node")
}

// BenchmarkGraphReplay1 is the driver's floor of a call that replays a
// graph of one tiny launch and waits for it: what every Compute of a
// replayed graph pays at least (`ops perf` computes its graph and waits,
// as test-backend-ops does). Reports µs a replay.
func BenchmarkGraphReplay1(b *testing.B) { forKernels(b, benchGraphReplay1) }

func benchGraphReplay1(b *testing.B, k tinyKernel) {
	d, f, s, args := tiny(b, k)
	x := captureGraph(b, d, s, func() { require.NoError(b, d.Launch(f, one, one, 0, s, args)) })
	reportPer(b, replayLoop(b, d, s, x), "replay")
}

// BenchmarkComputeOne is Compute and Synchronize of a one-node graph (SCALE
// of one element), with and without GPU graphs: ternion's fixed cost a
// call, to hold against BenchmarkGraphReplay1's. Reports µs a call.
func BenchmarkComputeOne(b *testing.B) {
	graphModes(b, func(b *testing.B, be *backend.Backend) {
		ctx := graph.NewContext()
		h := ctx.FromFloats([]float32{3}, 1).Scale(0.5)
		g, err := ctx.Build(h)
		require.NoError(b, err)
		n := computeLoop(b, be, g)
		got, err := h.Floats()
		require.NoError(b, err)
		require.InDelta(b, 1.5, got[0], 1e-6)
		reportPer(b, n, "call")
	})
}

// captureGraph captures the launches queue makes on s into a graph,
// instantiates it and launches it once, waiting for it (warm-up: the first
// launch uploads the graph); the benchmark's cleanup destroys both.
func captureGraph(b *testing.B, d vendorapi.Driver, s vendorapi.Stream, queue func()) vendorapi.GraphExec {
	b.Helper()
	require.NoError(b, d.BeginCapture(s))
	queue()
	g, err := d.EndCapture(s)
	require.NoError(b, err)
	b.Cleanup(func() { _ = d.GraphDestroy(g) })
	x, err := d.GraphInstantiate(g)
	require.NoError(b, err)
	b.Cleanup(func() { _ = d.GraphExecDestroy(x) })
	require.NoError(b, d.GraphLaunch(x, s))
	require.NoError(b, d.StreamSynchronize(s))
	return x
}

// replayLoop launches x on s and waits for it until the benchmark ends,
// and returns how many times it did.
func replayLoop(b *testing.B, d vendorapi.Driver, s vendorapi.Stream, x vendorapi.GraphExec) int {
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
	return n
}

// graphModes runs bench with Compute capturing GPU graphs (the default
// policy) and with TERNION_DISABLE_GRAPHS, as sub-benchmarks.
func graphModes(b *testing.B, bench func(b *testing.B, be *backend.Backend)) {
	for _, m := range []struct {
		name string
		env  map[string]string
	}{{"graphs=on", nil}, {"graphs=off", map[string]string{switches.DisableGraphs.Name: "1"}}} {
		b.Run(m.name, func(b *testing.B) {
			d := openOrSkip(b)
			be, err := backend.New(d, 0, backend.Options{Env: func(k string) (string, bool) { v, ok := m.env[k]; return v, ok }})
			require.NoError(b, err)
			defer be.Close()
			bench(b, be)
			b.ReportMetric(float64(be.GraphStats().Replay), "replays")
		})
	}
}

// computeLoop computes g until the benchmark ends (a sync after each
// Compute, as a decode loop reads its logits), after three warm-up calls
// (kernels loaded, buffers made, the graph captured).
func computeLoop(b *testing.B, be *backend.Backend, g *graph.Graph) int {
	for range 3 {
		require.NoError(b, be.Compute(g))
		require.NoError(b, be.Synchronize())
	}
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
	return n
}

// BenchmarkComputeChain1000 is Compute's cost per node of a chain of 1000
// tiny nodes (ADD, MUL, SCALE of 1 element in turn), with and without GPU
// graphs (issue 11's goal: replayed <= 0.75 µs a node, >= 4x eager).
func BenchmarkComputeChain1000(b *testing.B) {
	const nodes = 1000
	graphModes(b, func(b *testing.B, be *backend.Backend) {
		weights := graph.NewContext()
		one := weights.FromFloats([]float32{1}, 1)
		buf, err := be.AllocTensors(one)
		require.NoError(b, err)
		defer buf.Free()
		ctx := graph.NewContext()
		h := ctx.FromFloats([]float32{0}, 1)
		want := float32(0)
		for i := range nodes {
			switch i % 3 {
			case 0:
				h, want = h.Add(one), want+1
			case 1:
				h = h.Mul(one)
			default:
				h, want = h.Scale(0.5), want*0.5
			}
		}
		g, err := ctx.Build(h)
		require.NoError(b, err)
		n := computeLoop(b, be, g)
		got, err := h.Floats()
		require.NoError(b, err)
		require.InDelta(b, want, got[0], 1e-5)
		reportPer(b, n*nodes, "node")
	})
}

// BenchmarkDecodeLayers32 is one decode step (one token) of a 32-layer
// llama-3-8B-shaped model through Compute, with and without GPU graphs:
// per layer RMS_NORM·w, Q/K/V projections (f16 MUL_MAT n=1), ROPE,
// FLASH_ATTN_EXT over a 4096-position f16 K/V cache (8 kv heads, GQA 4),
// output projection + residual, RMS_NORM·w, gate/up projections, SWIGLU,
// down projection + residual (the layers share one set of weights: 0.5 GB
// read a layer all the same). Reports µs a step.
func BenchmarkDecodeLayers32(b *testing.B) {
	const (
		layers, embd, heads, kvHeads, headDim, ffn, kvLen = 32, 4096, 32, 8, 128, 14336, 4096
		eps                                               = 1e-5
	)
	graphModes(b, func(b *testing.B, be *backend.Backend) {
		r := rand.New(rand.NewPCG(5, 8))
		w := graph.NewContext()
		rnd := func(t tensor.Type, a float32, ne ...int64) *graph.Tensor {
			n := int64(1)
			for _, d := range ne {
				n *= d
			}
			v := make([]float32, n)
			for i := range v {
				v[i] = a * (2*r.Float32() - 1)
			}
			return w.FromFloatsAs(t, v, ne...)
		}
		s := float32(1 / math.Sqrt(embd))
		wq, wk, wv, wo := rnd(tensor.F16, s, embd, heads*headDim), rnd(tensor.F16, s, embd, kvHeads*headDim),
			rnd(tensor.F16, s, embd, kvHeads*headDim), rnd(tensor.F16, s, heads*headDim, embd)
		wg, wu, wd := rnd(tensor.F16, s, embd, ffn), rnd(tensor.F16, s, embd, ffn), rnd(tensor.F16, float32(1/math.Sqrt(ffn)), ffn, embd)
		n1, n2 := rnd(tensor.F32, 1, embd), rnd(tensor.F32, 1, embd)
		kc, vc := rnd(tensor.F16, 1, headDim, kvLen, kvHeads), rnd(tensor.F16, 1, headDim, kvLen, kvHeads)
		buf, err := be.AllocTensors(wq, wk, wv, wo, wg, wu, wd, n1, n2, kc, vc)
		require.NoError(b, err)
		defer buf.Free()

		ctx := graph.NewContext()
		x := ctx.FromFloats(make([]float32, embd), embd, 1)
		pos := ctx.FromInts([]int32{kvLen - 1}, 1)
		var kvs []*graph.Tensor // each layer's new K (roped) and V: outputs (a model would write them to its cache)
		for range layers {
			h := x.RMSNorm(eps).Mul(n1)
			q := wq.MulMat(h).Reshape(headDim, heads, 1).RoPE(pos, headDim, 500000, 1)
			kvs = append(kvs, wk.MulMat(h).Reshape(headDim, kvHeads, 1).RoPE(pos, headDim, 500000, 1), wv.MulMat(h))
			attn := q.Permute(0, 2, 1, 3).FlashAttnExt(kc, vc, nil, float32(1/math.Sqrt(headDim)), 0, 0)
			x = wo.MulMat(attn.Reshape(heads*headDim, 1)).Add(x)
			h2 := x.RMSNorm(eps).Mul(n2)
			x = wd.MulMat(wg.MulMat(h2).SwiGLU(wu.MulMat(h2))).Add(x)
		}
		g, err := ctx.Build(append([]*graph.Tensor{x}, kvs...)...)
		require.NoError(b, err)
		n := computeLoop(b, be, g)
		got, err := x.Floats()
		require.NoError(b, err)
		for _, v := range got {
			require.False(b, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0), "finite output")
		}
		reportPer(b, n, "step")
		b.ReportMetric(float64(len(g.Nodes())), "nodes")
	})
}

// uniform returns count values drawn from r uniformly in [-1, 1).
func uniform(r *rand.Rand, count int) []float32 {
	v := make([]float32, count)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	return v
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
		rnd := func(count int) []float32 { return uniform(r, count) }
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

// BenchmarkQuantPair bisects the time of one-column quantized MUL_MAT (q4_0,
// m=4096 k=14336: q8y then mmvq8w_q4_0) between core and the driver: the
// node through Compute (a graph of 853 repetitions, as `ternion ops perf`
// times it), against the same two launches captured straight through the
// driver with their arguments built here, src0 being the backend's weights
// or a copy of them in a plain Malloc. Each reports µs a node. On the H200
// `ops perf` measured 10.3–11.0 µs where a CUDA-runtime graph of the same
// kernels measured 9.7 (bench/README.md, 2026-12-04): this says on which
// side of the driver the difference lies.
func BenchmarkQuantPair(b *testing.B) {
	const m, k, nodes = 4096, 14336, 853
	d := openOrSkip(b)
	be, err := backend.New(d, 0, backend.Options{})
	require.NoError(b, err)
	defer be.Close()
	r := rand.New(rand.NewPCG(3, 4))
	rnd := func(count int) []float32 { return uniform(r, count) }
	weights := graph.NewContext()
	w := weights.FromFloatsAs(tensor.Q4_0, rnd(m*k), k, m)
	wbuf, err := be.AllocTensors(w)
	require.NoError(b, err)
	defer wbuf.Free()
	ctx := graph.NewContext()
	x := ctx.FromFloats(rnd(k), k, 1)
	y := w.MulMat(x)
	g, err := ctx.Build(y)
	require.NoError(b, err)
	require.NoError(b, g.Repeat(y, nodes-1))
	require.NoError(b, be.Compute(g))
	require.NoError(b, be.Synchronize())
	want, err := y.Floats()
	require.NoError(b, err)
	b.Run("compute", func(b *testing.B) {
		n := computeLoop(b, be, g)
		reportPer(b, n*nodes, "node")
	})

	// The same launches through the driver (core/ops' runMMVQ8 for this shape).
	rowBytes := int64(k / 32 * 18)
	pw, _ := w.Data()
	alloc := func(size int64) vendorapi.DevicePtr {
		p, err := d.Malloc(0, uint64(size))
		require.NoError(b, err)
		b.Cleanup(func() { _ = d.Free(0, p) })
		return p
	}
	src1, yq, yd, dst, wcopy := alloc(4*k), alloc(k), alloc(k/32*16), alloc(4*m), alloc(rowBytes*m)
	require.NoError(b, d.CopyDtoD(0, wcopy, pw, uint64(rowBytes*m)))
	require.NoError(b, d.CopyHtoD(0, src1, x.HostData()))
	fq, err := d.Kernel(0, "q8y")
	require.NoError(b, err)
	fm, err := d.Kernel(0, "mmvq8w_q4_0")
	require.NoError(b, err)
	shared := 3*k/2 + 16*2*32*144 // core/ops' mmvq8wShared
	require.NoError(b, d.SetMaxDynamicSharedMemory(fm, shared))
	one := vendorapi.NewFastDiv(1)
	qArgs := vendorapi.NewArgs().Tensor(vendorapi.TensorDesc{Data: src1, Ne: [4]int64{k, 1, 1, 1}, Nb: [4]int64{4, 4 * k, 4 * k, 4 * k}}).
		Ptr(yq).Ptr(yd).FastDiv(vendorapi.NewFastDiv(k / 32)).FastDiv(one).FastDiv(one).I64(k / 32)
	dstDesc := vendorapi.TensorDesc{Data: dst, Ne: [4]int64{m, 1, 1, 1}, Nb: [4]int64{4, 4 * m, 4 * m, 4 * m}}
	sms := uint32(be.Props().SMs)
	for _, c := range []struct {
		name string
		src0 vendorapi.DevicePtr
	}{{"driver_backend_weights", pw}, {"driver_malloc_weights", wcopy}} {
		b.Run(c.name, func(b *testing.B) {
			mArgs := vendorapi.NewArgs().Tensor(dstDesc).
				Tensor(vendorapi.TensorDesc{Data: c.src0, Ne: [4]int64{k, m, 1, 1}, Nb: [4]int64{18, rowBytes, rowBytes * m, rowBytes * m}}).
				Ptr(yq).Ptr(yd).FastDiv(one).FastDiv(one)
			s, err := d.StreamCreate(0)
			require.NoError(b, err)
			b.Cleanup(func() { _ = d.StreamDestroy(s) }) // after the graph's cleanups (last in, first out)
			ex := captureGraph(b, d, s, func() {
				for range nodes {
					require.NoError(b, d.Launch(fq, vendorapi.Dim3{X: k / 256, Y: 1, Z: 1}, vendorapi.Dim3{X: 256, Y: 1, Z: 1}, 0, s, qArgs))
					require.NoError(b, d.Launch(fm, vendorapi.Dim3{X: min(m/16, sms), Y: 1, Z: 1}, vendorapi.Dim3{X: 512, Y: 1, Z: 1},
						uint32(shared), s, mArgs))
				}
			})
			got := make([]byte, 4*m)
			require.NoError(b, d.CopyDtoH(0, got, dst))
			for i := range m {
				v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
				require.InDelta(b, want[i], v, 1e-3*(1+math.Abs(float64(want[i]))), "row %d: the driver's launches compute what Compute does", i)
			}
			reportPer(b, replayLoop(b, d, s, ex)*nodes, "node")
		})
	}
}
