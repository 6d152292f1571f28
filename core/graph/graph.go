package graph

import (
	"fmt"
	"slices"
)

// Graph is a forward graph: the op nodes that compute a set of outputs, in
// an order where every node follows its sources, and the leaves they read
// (ggml_build_forward_expand).
type Graph struct {
	ctx     *Context
	nodes   []*Tensor
	leafs   []*Tensor
	outputs []*Tensor
}

// Build returns the graph computing outputs: every tensor they depend on
// (made in any context), sources before the nodes that read them. The
// outputs are marked as such: their memory is kept after the graph runs. It
// returns c's first op error, or that of a failed output's context, instead.
func (c *Context) Build(outputs ...*Tensor) (*Graph, error) {
	if err := c.Err(); err != nil {
		return nil, err
	}
	if len(outputs) == 0 {
		return nil, &OpError{Op: OpNone, Msg: "a graph needs at least one output"}
	}
	g := &Graph{ctx: c}
	seen := map[*Tensor]bool{}
	var visit func(t *Tensor)
	visit = func(t *Tensor) {
		if seen[t] {
			return
		}
		seen[t] = true
		for _, s := range t.src {
			if s != nil {
				visit(s)
			}
		}
		if t.viewSrc != nil {
			visit(t.viewSrc)
		}
		if t.op == OpNone {
			g.leafs = append(g.leafs, t)
		} else {
			g.nodes = append(g.nodes, t)
		}
	}
	for i, o := range outputs {
		switch {
		case o == nil:
			return nil, &OpError{Op: OpNone, Msg: fmt.Sprintf("output %d is nil", i)}
		case o.failed:
			return nil, o.ctx.Err() // a failed op leaves its error in its context
		}
		o.output = true
		if o.viewSrc != nil {
			o.viewSrc.output = true // an output view keeps the memory it reads
		}
		g.outputs = append(g.outputs, o)
		visit(o)
	}
	return g, nil
}

// Nodes returns the op nodes in execution order (views included: they run
// nothing).
func (g *Graph) Nodes() []*Tensor { return g.nodes }

// Leafs returns the leaves the nodes read: weights and inputs.
func (g *Graph) Leafs() []*Tensor { return g.leafs }

// Outputs returns the tensors the graph was built for.
func (g *Graph) Outputs() []*Tensor { return g.outputs }

// Context returns the context the graph was built in.
func (g *Graph) Context() *Context { return g.ctx }

// Repeat appends node n, already in g, times more times to g's nodes: it
// is computed again each time (what `ternion ops perf` times, as ggml's
// test-backend-ops does). n must not be computed in place over a source.
func (g *Graph) Repeat(n *Tensor, times int) error {
	if !slices.Contains(g.nodes, n) {
		return &OpError{Op: n.op, Msg: "Repeat: the node is not in the graph"}
	}
	for range times {
		g.nodes = append(g.nodes, n)
	}
	return nil
}
