package backend

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/vendorapi"
)

// prepared is the graph a backend computed last, ready to run again: while
// it is computed again with nothing moved, its allocation, support checks
// and inputs are still valid (inputs live for the whole run and are never
// overwritten), and a node whose op did nothing but launch kernels launches
// the same kernels with the same arguments. Computing the same graph again
// (a decode step, a benchmark) then costs the vendor's launches and little
// more.
type prepared struct {
	g     *graph.Graph
	work  *Buffer
	leafs []graph.Placement // where each leaf was
	owned []graph.Placement // where each node that is not a view was
	nodes []preparedNode    // per node of g
	// plan is ops' plan of g's nodes, for ops.RunFused.
	plan *ops.Plan
}

// preparedNode is one node's recorded launches.
type preparedNode struct {
	recordable bool // only kernel launches: launches holds all of them
	launches   []launchRecord
}

// launchRecord is one kernel launch as an op made it.
type launchRecord struct {
	f           vendorapi.Function
	grid, block vendorapi.Dim3
	shared      uint32
	args        *vendorapi.Args
}

func newPrepared(g *graph.Graph, work *Buffer) *prepared {
	p := &prepared{g: g, work: work, nodes: make([]preparedNode, len(g.Nodes())), plan: ops.NewPlan(g.Nodes())}
	for i := range p.nodes {
		p.nodes[i].recordable = true
	}
	for _, l := range g.Leafs() {
		pl, _ := l.Placement()
		p.leafs = append(p.leafs, pl)
	}
	for _, n := range g.Nodes() {
		if n.ViewSrc() == nil {
			pl, _ := n.Placement()
			p.owned = append(p.owned, pl)
		}
	}
	return p
}

// ready reports whether g can run again as prepared: the same graph (with
// the same number of nodes), the same compute buffer, every leaf where it
// was, in a live buffer, and every node where it was.
func (p *prepared) ready(g *graph.Graph, work *Buffer) bool {
	if p == nil || p.g != g || p.work != work || len(p.nodes) != len(g.Nodes()) {
		return false
	}
	for i, l := range g.Leafs() {
		pl, ok := l.Placement()
		if !ok || pl != p.leafs[i] {
			return false
		}
		if m, ok := pl.Buf.(*Buffer); !ok || m.Freed() {
			return false
		}
	}
	i := 0
	for _, n := range g.Nodes() {
		if n.ViewSrc() == nil {
			if pl, _ := n.Placement(); pl != p.owned[i] {
				return false
			}
			i++
		}
	}
	return true
}

// unrecordable marks the node being recorded as one whose op must run again.
func (b *Backend) unrecordable() {
	if b.rec != nil {
		b.rec.recordable = false
		b.rec.launches = nil
	}
}

// replay runs the prepared graph again: recorded launches as they were
// (the nodes a fused chain took in recorded none), other nodes through
// their ops.
func (b *Backend) replay(g *graph.Graph) error {
	p := b.last
	nodes := g.Nodes()
	for i := 0; i < len(nodes); i++ {
		n, pn := nodes[i], &p.nodes[i]
		if !pn.recordable {
			k, err := b.runNode(p.plan, i)
			if err != nil {
				b.last = nil
				return fmt.Errorf("ternion: backend %s: %w", b.name, err)
			}
			i += k - 1
			continue
		}
		for _, l := range pn.launches {
			if err := b.drv.Launch(l.f, l.grid, l.block, l.shared, b.stream, l.args); err != nil {
				b.last = nil
				return fmt.Errorf("ternion: backend %s: %s: %w", b.name, n.Op(), err)
			}
		}
	}
	return nil
}
