package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// normTestBuffer is address space for placing tensors by hand.
type normTestBuffer struct{}

func (normTestBuffer) Device() int                { return 0 }
func (normTestBuffer) Ptr() vendorapi.DevicePtr   { return 1 << 20 }
func (normTestBuffer) Size() uint64               { return 1 << 30 }
func (normTestBuffer) Read(uint64, []byte) error  { return nil }
func (normTestBuffer) Write(uint64, []byte) error { return nil }

// TestNormFuse checks which chains normFuse takes and how many nodes: the
// ggml-cuda conditions (one reader, no graph output, same shape, f32) and
// the memory rule (what the launch writes must not overlap what it reads,
// unless it is the same memory in the same layout).
func TestNormFuse(t *testing.T) {
	const ne0, rows = 64, 4
	rowBytes := uint64(4 * ne0 * rows)
	for _, c := range []struct {
		name string
		// build returns the graph's outputs; x is [ne0, rows], w [ne0], h an f16 [ne0].
		build func(x, w, h *graph.Tensor) []*graph.Tensor
		// at places node i at this multiple of half a tensor's bytes (default: 20+2i).
		at   map[int]uint64
		want int
		sum  bool // the chain writes the leading ADD's result
	}{
		{"RMS_NORM→MUL", func(x, w, _ *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{x.RMSNorm(1e-6).Mul(w)} }, nil, 2, false},
		{"MUL by the norm as src1", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{x.Scale(1).Mul(x.RMSNorm(1e-6))}
		}, nil, 2, false},
		{"RMS_NORM→MUL→ADD", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{x.RMSNorm(1e-6).Mul(w).Add(w)}
		}, nil, 3, false},
		{"ADD→NORM→MUL→ADD", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{x.Add(w).Norm(1e-6).Mul(w).Add(w)}
		}, nil, 4, false},
		{"ADD read again", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			s := x.Add(w)
			return []*graph.Tensor{s.RMSNorm(1e-6).Mul(w).Add(s)}
		}, nil, 4, true},
		{"norm is a graph output", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			n := x.RMSNorm(1e-6)
			return []*graph.Tensor{n.Mul(w), n}
		}, nil, 0, false},
		{"norm read twice", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			n := x.RMSNorm(1e-6)
			return []*graph.Tensor{n.Mul(n)}
		}, nil, 0, false},
		{"L2_NORM→MUL (ggml fuses no L2_NORM)", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{x.L2Norm(1e-6).Mul(w)}
		}, nil, 0, false},
		{"f16 weight", func(x, _, h *graph.Tensor) []*graph.Tensor { return []*graph.Tensor{x.RMSNorm(1e-6).Mul(h)} }, nil, 0, false},
		{"MUL's result in the input's memory", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{x.Scale(1).RMSNorm(1e-6).Mul(w)}
		}, map[int]uint64{0: 40, 2: 40}, 2, false},
		{"MUL's result half over the input", func(x, w, _ *graph.Tensor) []*graph.Tensor {
			return []*graph.Tensor{x.Scale(1).RMSNorm(1e-6).Mul(w)}
		}, map[int]uint64{0: 40, 2: 41}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := graph.NewContext()
			x := ctx.Empty(tensor.F32, ne0, rows)
			w := ctx.Empty(tensor.F32, ne0)
			h := ctx.Empty(tensor.F16, ne0)
			g, err := ctx.Build(c.build(x, w, h)...)
			require.NoError(t, err)
			var buf normTestBuffer
			for i, l := range []*graph.Tensor{x, w, h} {
				require.NoError(t, l.Place(buf, uint64(i)*rowBytes))
			}
			nodes := g.Nodes()
			for i, n := range nodes {
				half := uint64(20 + 2*i)
				if o, ok := c.at[i]; ok {
					half = o
				}
				require.NoError(t, n.Place(buf, half*rowBytes/2))
			}
			uses := NewPlan(nodes).Uses
			start := 0
			for start < len(nodes) && nodes[start].Op() == graph.OpScale {
				start++
			}
			chain, k := normFuse(nodes, start, uses)
			assert.Equal(t, c.want, k, "nodes fused from node %d (%s)", start, nodes[start].Op())
			if k > 0 {
				assert.Equal(t, c.sum, chain.sum != nil, "sum written")
				assert.Same(t, nodes[start+k-1], chain.dst)
			}
		})
	}
}
