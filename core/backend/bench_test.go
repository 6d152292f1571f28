package backend

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// nopLaunch is the host driver with launches that do nothing: what is left
// of Compute is ternion's own Go-side cost per node.
type nopLaunch struct{ *host.Driver }

func (nopLaunch) Launch(vendorapi.Function, vendorapi.Dim3, vendorapi.Dim3, uint32, vendorapi.Stream, *vendorapi.Args) error {
	return nil
}

// chainGraph builds a chain of n one-element nodes on be: node i is
// step(i, h, one) of the node before (a leaf 0 first) and a weight 1.
func chainGraph(b *testing.B, be *Backend, n int, step func(i int, h, one *graph.Tensor) *graph.Tensor) *graph.Graph {
	weights := graph.NewContext()
	one := weights.FromFloats([]float32{1}, 1)
	_, err := be.AllocTensors(one)
	require.NoError(b, err)
	ctx := graph.NewContext()
	h := ctx.FromFloats([]float32{0}, 1)
	for i := range n {
		h = step(i, h, one)
	}
	g, err := ctx.Build(h)
	require.NoError(b, err)
	return g
}

// chain1000 builds ComputeChain1000's graph (ADD, MUL, SCALE of one element
// in turn, 1000 nodes) on be.
func chain1000(b *testing.B, be *Backend) *graph.Graph {
	return chainGraph(b, be, 1000, func(i int, h, one *graph.Tensor) *graph.Tensor {
		switch i % 3 {
		case 0:
			return h.Add(one)
		case 1:
			return h.Mul(one)
		}
		return h.Scale(0.5)
	})
}

// BenchmarkComputeReplayOverhead is Compute's Go-side cost per node when
// the graph replays (GPU graphs on, the launches captured into nothing):
// what a 1000-node chain replayed on the GPU pays on the host on top of
// the vendor's graph launch (issue 11's goal: ≤ 0.75 µs a node in all).
func BenchmarkComputeReplayOverhead(b *testing.B) {
	d, err := host.New(host.Options{})
	require.NoError(b, err)
	defer d.Close()
	be, err := New(nopLaunch{d}, 0, quiet)
	require.NoError(b, err)
	defer be.Close()
	g := chain1000(b, be)
	for range 3 { // warm-up, capture, first replay
		require.NoError(b, be.Compute(g))
	}
	before := be.GraphStats()
	b.ResetTimer()
	for b.Loop() {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after := be.GraphStats()
	require.Equal(b, b.N, after.Replay-before.Replay, "every timed Compute replays")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/node")
}

// BenchmarkComputeOverhead is Compute's Go-side cost per node of a chain of
// 1000 tiny ADDs (kernels launched into nothing, GPU graphs off), the part
// of eager execution ternion adds to the vendor's launch.
func BenchmarkComputeOverhead(b *testing.B) {
	const nodes = 1000
	d, err := host.New(host.Options{})
	require.NoError(b, err)
	defer d.Close()
	o := quiet
	o.Env = func(k string) (string, bool) { return "1", k == switches.DisableGraphs.Name }
	be, err := New(nopLaunch{d}, 0, o)
	require.NoError(b, err)
	defer be.Close()
	g := chainGraph(b, be, nodes, func(_ int, h, one *graph.Tensor) *graph.Tensor { return h.Add(one) })
	require.NoError(b, be.Compute(g))
	b.ResetTimer()
	for b.Loop() {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.Zero(b, be.GraphStats().Replay, "eager: no graph replays")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
}
