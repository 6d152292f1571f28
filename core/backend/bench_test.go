package backend

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
)

// nopLaunch is the host driver with launches that do nothing: what is left
// of Compute is ternion's own Go-side cost per node.
type nopLaunch struct{ *host.Driver }

func (nopLaunch) Launch(vendorapi.Function, vendorapi.Dim3, vendorapi.Dim3, uint32, vendorapi.Stream, *vendorapi.Args) error {
	return nil
}

// BenchmarkComputeOverhead is Compute's Go-side cost per node of a chain of
// 1000 tiny ADDs (kernels launched into nothing), the part of eager
// execution ternion adds to the vendor's launch.
func BenchmarkComputeOverhead(b *testing.B) {
	const nodes = 1000
	d, err := host.New(host.Options{})
	require.NoError(b, err)
	defer d.Close()
	be, err := New(nopLaunch{d}, 0, quiet)
	require.NoError(b, err)
	defer be.Close()
	weights := graph.NewContext()
	one := weights.FromFloats([]float32{1}, 1)
	_, err = be.AllocTensors(one)
	require.NoError(b, err)
	ctx := graph.NewContext()
	h := ctx.FromFloats([]float32{0}, 1)
	for range nodes {
		h = h.Add(one)
	}
	g, err := ctx.Build(h)
	require.NoError(b, err)
	require.NoError(b, be.Compute(g))
	b.ResetTimer()
	for b.Loop() {
		if err := be.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
}
