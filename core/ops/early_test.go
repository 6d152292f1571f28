package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
)

// TestWeightsEarly is the rule for reading a MUL_MAT's src0 before its
// kernel waits: a node before it launches work that waits before it lets
// the next kernel launch, and neither it nor a launching node after it
// writes src0's bytes.
func TestWeightsEarly(t *testing.T) {
	const k, m = 64, 32
	const slot = 1 << 16 // bytes between placements
	for _, c := range []struct {
		name string
		// build returns the graph's outputs from weights w [k, m] f16, v
		// [k, k] f32, u [k, m] f16, input x [k] f32 and q [k, k] q4_0.
		build   func(w, v, u, x, q *graph.Tensor) []*graph.Tensor
		overlap bool // place the first node over w's bytes
		wmmvq8f bool // TERNION_MMVQ8WF set
		want    bool
		off     bool // TERNION_NO_EARLY_READS set
		early   bool // TERNION_EARLY_PRODUCTS set
	}{
		{"after a kernel", func(w, _, _, x, _ *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{w.MulMat(x.Scale(2))} }, false, false, true, false, false},
		{"the graph's first node", func(w, _, _, x, _ *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{w.MulMat(x)} }, false, false, false, false, false},
		{"the node before copies into the weights", func(w, _, u, x, _ *graph.Tensor) []*graph.Tensor {
			s := x.Scale(2)
			return []*graph.Tensor{s, u.Cpy(w), w.MulMat(s)}
		}, false, false, false, false, false},
		{"a node copied into the weights before the node before", func(w, _, u, x, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{u.Cpy(w), w.MulMat(x.Scale(2))}
		}, false, false, true, false, false},
		{"a CPY elsewhere is the node before (its destination may move between replays)", func(w, v, _, x, _ *graph.Tensor) []*graph.Tensor {
			s := x.Scale(2)
			return []*graph.Tensor{s, x.Scale(3).Cpy(v.View(0, []int64{64}, nil)), w.MulMat(s)}
		}, false, false, false, false, false},
		{"a node's result lies over the weights", func(w, _, _, x, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(x.Scale(2))}
		}, true, false, false, false, false},
		{"after a MUL_MAT", func(w, v, _, x, _ *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{w.MulMat(v.MulMat(x))} }, false, false, true, false, false},
		{"after a MUL_MAT that may let the next launch before it waits", func(w, v, _, x, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(v.MulMat(x))}
		}, false, true, false, false, false},
		{"after such a MUL_MAT and a kernel before it", func(w, v, _, x, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(v.MulMat(x.Scale(2)))}
		}, false, true, true, false, false},
		{"after a quantized product that waited (the graph's first node)", func(w, _, _, x, q *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(q.MulMat(x))}
		}, false, false, true, false, true},
		{"after a quantized product that let the next launch before it waited, and a kernel before it", func(w, _, _, x, q *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(q.MulMat(x.Scale(2)))}
		}, false, false, true, false, true},
		{"after such a product, a node over the weights before it", func(w, _, _, x, q *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(q.MulMat(x.Scale(2)))}
		}, true, false, false, false, true},
		{"after a quantized product, a node over the weights before it, TERNION_EARLY_PRODUCTS off (q8y waits)", func(w, _, _, x, q *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(q.MulMat(x.Scale(2)))}
		}, true, false, true, false, false},
		{"after a float product, a node over the weights before it", func(w, v, _, x, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{w.MulMat(v.MulMat(x.Scale(2)))}
		}, true, false, true, false, false},
		{"after a kernel, TERNION_NO_EARLY_READS", func(w, _, _, x, _ *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{w.MulMat(x.Scale(2))} }, false, false, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.wmmvq8f {
				t.Setenv(switches.MMVQ8WF.Name, "1")
			}
			if c.off {
				t.Setenv(switches.NoEarlyReads.Name, "1")
			}
			if c.early {
				t.Setenv(switches.EarlyProducts.Name, "1")
			}
			ctx := graph.NewContext()
			w, v := ctx.Empty(tensor.F16, k, m), ctx.Empty(tensor.F32, k, k)
			u, x, q := ctx.Empty(tensor.F16, k, m), ctx.Empty(tensor.F32, k), ctx.Empty(tensor.Q4_0, k, k)
			g, err := ctx.Build(c.build(w, v, u, x, q)...)
			require.NoError(t, err)
			var buf normTestBuffer
			for i, l := range []*graph.Tensor{w, v, u, x, q} {
				require.NoError(t, l.Place(buf, uint64(i)*slot))
			}
			nodes := g.Nodes()
			last := -1
			for i, n := range nodes {
				if n.ViewSrc() == nil {
					at := uint64(10+i) * slot
					if i == 0 && c.overlap {
						at = 64 // inside w
					}
					require.NoError(t, n.Place(buf, at))
				}
				if n.Op() == graph.OpMulMat && n.Src(0) == w {
					last = i
				}
			}
			require.GreaterOrEqual(t, last, 0, "the graph has w's MUL_MAT")
			// The nodes before w's product as RunFused records them (none
			// of these graphs fuses).
			trigger := make([]bool, len(nodes))
			for j := range last {
				trigger[j] = queuesQ8ye(nodes, j, trigger)
			}
			require.Equal(t, c.want, readEarly(nodes, last, w, trigger))
		})
	}
}
