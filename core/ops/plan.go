package ops

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
)

// plan.go: what the compute loop keeps of a graph while it queues its nodes
// (Plan), and its hook RunFused.

// Plan is a graph's nodes as the compute loop queues them with RunFused:
// how many times each tensor is read (for fusion), and which nodes may
// have let the kernel after them launch before they waited for the
// kernels before them (for readEarly; filled in as RunFused queues the
// nodes in order).
type Plan struct {
	nodes []*graph.Tensor
	uses  map[*graph.Tensor]int
	// trigger[j]: node j may have queued only kernels that let the next
	// kernel launch before they wait (queuesQ8ye).
	trigger []bool
}

// NewPlan makes the plan of nodes (a graph's nodes in order).
func NewPlan(nodes []*graph.Tensor) *Plan {
	p := &Plan{nodes: nodes, uses: map[*graph.Tensor]int{}, trigger: make([]bool, len(nodes))}
	for _, n := range nodes {
		for i := range graph.MaxSrc {
			if s := n.Src(i); s != nil {
				p.uses[s]++
			}
		}
		if v := n.ViewSrc(); v != nil {
			p.uses[v]++
		}
	}
	return p
}

// Uses returns how many times t is read by the plan's nodes: once per node
// occurrence that has it as a source, and once more per view node of its
// memory.
func (p *Plan) Uses(t *graph.Tensor) int { return p.uses[t] }

// Nodes returns the plan's nodes.
func (p *Plan) Nodes() []*graph.Tensor { return p.nodes }

// RunFused queues node i of the plan on d, fused with the nodes after it
// when they form a chain one kernel computes, and returns how many nodes it
// ran (at least 1; the nodes it fused in launch nothing of their own). A
// node it runs alone may read inputs before its kernel waits where
// readEarly allows. Call Supports for every node first, and RunFused for
// the nodes in order.
func RunFused(d Device, p *Plan, i int) (int, error) {
	nodes := p.nodes
	if c, k := normFuse(nodes, i, p.Uses); k > 1 {
		if err := normLaunch(d, c); err != nil {
			return 0, fmt.Errorf("ternion: %s fused with %d nodes after it: %w", describe(nodes[i]), k-1, err)
		}
		return k, nil
	}
	p.trigger[i] = queuesQ8ye(nodes, i, p.trigger)
	return 1, runNode(d, nodes[i], func(t *graph.Tensor) bool { return readEarly(nodes, i, t, p.trigger) })
}
