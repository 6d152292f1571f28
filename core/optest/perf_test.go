package optest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
)

// TestPerfRepeats checks the op's count in a perf graph against
// test-backend-ops' n_runs = min(graph_size - n_nodes, target / op) + 1.
func TestPerfRepeats(t *testing.T) {
	for _, tc := range []struct {
		name          string
		target, work  float64
		nodes, repeat int
	}{
		{"MUL_MAT m=4096 n=512 k=14336: 60.1 GFLOP of 100", 100e9, 2 * 4096 * 512 * 14336, 1, 2},
		{"an op of more than the target runs once", 100e9, 350e9, 1, 1},
		{"exactly the target: twice", 100e9, 100e9, 1, 2},
		{"a small op fills the graph's free nodes", 32 << 30, 4096, 1, perfGraphSize},
		{"free nodes count the graph's own", 32 << 30, 4096, 3, perfGraphSize - 2},
		{"n=1 q4_0 m=4096 k=14336: 117 MFLOP", 100e9, 2 * 4096 * 14336, 1, 852},
	} {
		assert.Equal(t, tc.repeat, perfRepeats(tc.target, tc.work, tc.nodes), tc.name)
	}
}

// TestBuildCopies checks cold perf's graph: copies of a one-node case, each
// with its own inputs, until the inputs total the bytes asked (two at
// least); without bytes the case once; a case of more nodes refused.
func TestBuildCopies(t *testing.T) {
	var one, multi *Case
	inputs := int64(0) // the one-node case's input bytes
	for _, c := range Tests() {
		g, _, err := build(c, 1)
		if err != nil {
			continue
		}
		switch {
		case one == nil && c.Op == graph.OpMulMat && len(g.Nodes()) == 1:
			one = &c
			for _, l := range inputLeaves(g) {
				inputs += l.Layout().Bytes()
			}
		case multi == nil && len(g.Nodes()) > 1:
			multi = &c
		}
	}
	require.NotNil(t, one, "a one-node MUL_MAT case")
	require.NotNil(t, multi, "a case of more than one node")
	require.Positive(t, inputs)
	for _, tc := range []struct {
		name  string
		bytes int64
		want  int
	}{
		{"off: the case once", 0, 1},
		{"a little: two copies", 1, 2},
		{"exactly two copies' inputs", 2 * inputs, 2},
		{"one byte more: three", 2*inputs + 1, 3},
		{"five copies' inputs", 5 * inputs, 5},
		{"no more than half the graph's nodes", 1 << 62, perfGraphSize / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, outs, err := buildCopies(*one, tc.bytes)
			require.NoError(t, err)
			require.Len(t, outs, tc.want)
			require.Equal(t, outs, g.Nodes(), "one node a copy, in order")
			seen := map[*graph.Tensor]bool{}
			for _, o := range outs {
				require.False(t, seen[o.Src(0)], "every copy has its own weights")
				seen[o.Src(0)] = true
			}
		})
	}
	_, _, err := buildCopies(*multi, 1)
	require.ErrorContains(t, err, "cold perf cycles one-node cases")

	// The repetitions: the runs a graph holds and their order.
	for _, tc := range []struct {
		name              string
		copies, per, runs int
	}{
		{"one set, 5 runs", 1, 5, 5},
		{"one set, 1 run", 1, 1, 1},
		{"3 copies, fewer runs asked: each once", 3, 2, 3},
		{"3 copies, 7 runs: in turn", 3, 7, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cold := int64(tc.copies) * inputs
			if tc.copies == 1 {
				cold = 0
			}
			g, outs, err := buildCopies(*one, cold)
			require.NoError(t, err)
			require.Len(t, outs, tc.copies)
			runs, err := repeatCopies(g, outs, tc.per)
			require.NoError(t, err)
			require.Equal(t, tc.runs, runs)
			require.Len(t, g.Nodes(), runs, "the graph computes exactly the runs counted")
			for i, n := range g.Nodes() {
				require.Same(t, outs[i%len(outs)], n, "node %d", i)
			}
		})
	}

	// Timed on the host: every copy computed once a graph (the targets ask
	// for one run), so the runs are a multiple of the copies.
	be, err := backend.Open("host", 0, backend.Options{})
	require.NoError(t, err)
	defer be.Close()
	r := PerfCold(*one, be, 1, 1, 0, 3*inputs)
	require.Empty(t, r.Err)
	require.Positive(t, r.Runs)
	require.Zero(t, r.Runs%3, "runs %d", r.Runs)
	require.Equal(t, 3, r.Copies)
	require.Zero(t, Perf(*one, be, 1, 1, 0).Copies, "one set: no copies reported")
	r = PerfCold(*multi, be, 1, 1, 0, 1)
	require.Contains(t, r.Err, "cold perf cycles one-node cases")
}
