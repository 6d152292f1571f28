package backend

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
)

// normStep is one op of a norm chain applied to the chain's value so far (x)
// with the chain's inputs (in: a, b, w, c, each [ne0, rows]).
type normStep func(x *graph.Tensor, in []*graph.Tensor) *graph.Tensor

// TestNormFusion: a graph with a fusable norm chain ([ADD →] norm [→ MUL
// [→ ADD]]) computes in one launch what the chain's ops compute one graph
// each (same values: the host kernels round alike), also when the graph is
// computed again (replay); a chain whose intermediate is a graph output is
// not fused.
func TestNormFusion(t *testing.T) {
	add := func(i int) normStep {
		return func(x *graph.Tensor, in []*graph.Tensor) *graph.Tensor { return x.Add(in[i]) }
	}
	mul := func(i int) normStep {
		return func(x *graph.Tensor, in []*graph.Tensor) *graph.Tensor { return x.Mul(in[i]) }
	}
	rms := func(x *graph.Tensor, _ []*graph.Tensor) *graph.Tensor { return x.RMSNorm(1e-6) }
	norm := func(x *graph.Tensor, _ []*graph.Tensor) *graph.Tensor { return x.Norm(1e-5) }
	for _, c := range []struct {
		name  string
		ne0   int64 // row length: 1024 takes the float4 kernel, 1001 the scalar one
		steps []normStep
	}{
		{"RMS_NORM→MUL", 1024, []normStep{rms, mul(2)}},
		{"RMS_NORM→MUL→ADD", 1024, []normStep{rms, mul(2), add(3)}},
		{"ADD→RMS_NORM→MUL", 1024, []normStep{add(1), rms, mul(2)}},
		{"ADD→RMS_NORM→MUL→ADD", 1001, []normStep{add(1), rms, mul(2), add(3)}},
		{"ADD→RMS_NORM", 1001, []normStep{add(1), rms}},
		{"NORM→MUL→ADD", 1024, []normStep{norm, mul(2), add(3)}},
		{"NORM→MUL", 1001, []normStep{norm, mul(2)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, fd := faultyBackend(t)
			r := rand.New(rand.NewPCG(1, 2))
			const rows = 6
			data := make([][]float32, 4)
			for i := range data {
				n := c.ne0 * rows
				if i >= 2 {
					n = c.ne0 // the weight and bias rows broadcast over the rows
				}
				data[i] = make([]float32, n)
				for j := range data[i] {
					data[i][j] = 2*r.Float32() - 1
				}
			}
			inputs := func(ctx *graph.Context) []*graph.Tensor {
				return []*graph.Tensor{ctx.FromFloats(data[0], c.ne0, rows), ctx.FromFloats(data[1], c.ne0, rows),
					ctx.FromFloats(data[2], c.ne0), ctx.FromFloats(data[3], c.ne0)}
			}

			// Unfused: each op in a graph of its own, one launch each.
			x := data[0]
			for _, step := range c.steps {
				ctx := graph.NewContext()
				in := inputs(ctx)
				out := step(ctx.FromFloats(x, c.ne0, rows), in)
				g, err := ctx.Build(out)
				require.NoError(t, err)
				require.NoError(t, b.Compute(g))
				x, err = out.Floats()
				require.NoError(t, err)
			}
			require.Equal(t, len(c.steps), fd.Calls("Launch"))

			// Fused: the whole chain in one graph, one launch, computed twice.
			ctx := graph.NewContext()
			in := inputs(ctx)
			out, mid := in[0], []*graph.Tensor(nil)
			for _, step := range c.steps {
				out = step(out, in)
				mid = append(mid, out)
			}
			g, err := ctx.Build(out)
			require.NoError(t, err)
			for run := range 2 {
				before := fd.Calls("Launch")
				require.NoError(t, b.Compute(g))
				got, err := out.Floats()
				require.NoError(t, err)
				assert.Equal(t, x, got, "run %d: the fused chain differs from its ops run one by one", run)
				assert.Equal(t, 1, fd.Calls("Launch")-before, "run %d: the chain of %d nodes takes one launch", run, len(c.steps))
			}

			// An intermediate that is a graph output is written: the chain
			// is split there (a leading ADD still fuses, writing its sum).
			ctx = graph.NewContext()
			in = inputs(ctx)
			out, mid = in[0], mid[:0]
			for _, step := range c.steps {
				out = step(out, in)
				mid = append(mid, out)
			}
			keep := 0 // the norm's index in the chain
			for i, n := range mid {
				if n.Op() != graph.OpAdd {
					keep = i
					break
				}
			}
			g, err = ctx.Build(out, mid[keep])
			require.NoError(t, err)
			before := fd.Calls("Launch")
			require.NoError(t, b.Compute(g))
			got, err := out.Floats()
			require.NoError(t, err)
			assert.Equal(t, x, got)
			// The norm (with its leading ADD), then each node after it.
			assert.Equal(t, len(c.steps)-keep, fd.Calls("Launch")-before)
		})
	}
}

// TestNormFusionResidual: in out = rms_norm(s)·w + s with s = a + b (a
// transformer layer's residual stream) s is read twice, so the fused kernel
// writes it on the way: one launch, the values of the ops run unfused.
func TestNormFusionResidual(t *testing.T) {
	b, fd := faultyBackend(t)
	const ne0, rows = 512, 3
	r := rand.New(rand.NewPCG(3, 4))
	vals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 2*r.Float32() - 1
		}
		return v
	}
	a, bb, w := vals(ne0*rows), vals(ne0*rows), vals(ne0)
	build := func(split bool) (*graph.Graph, *graph.Tensor) {
		ctx := graph.NewContext()
		s := ctx.FromFloats(a, ne0, rows).Add(ctx.FromFloats(bb, ne0, rows))
		n := s.RMSNorm(1e-6)
		out := n.Mul(ctx.FromFloats(w, ne0)).Add(s)
		outs := []*graph.Tensor{out}
		if split {
			outs = append(outs, n) // keeps RMS_NORM → MUL apart: ADD → RMS_NORM, MUL, ADD
		}
		g, err := ctx.Build(outs...)
		require.NoError(t, err)
		return g, out
	}
	g, out := build(true)
	require.NoError(t, b.Compute(g))
	want, err := out.Floats()
	require.NoError(t, err)
	require.Equal(t, 3, fd.Calls("Launch"))
	g, out = build(false)
	require.NoError(t, b.Compute(g))
	got, err := out.Floats()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 4, fd.Calls("Launch"), "the residual chain takes one launch")
}
