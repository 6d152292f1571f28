package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// early.go decides when a kernel may request its weights before it waits
// for the kernels queued before it (a Deferred catalog kernel's early
// argument: mmvt's), unless TERNION_NO_EARLY_WEIGHTS. Launched with programmatic dependent launch, such a
// kernel starts while the kernel before it ends; what it reads before its
// wait must be memory no kernel still running writes. Two things make that
// so for src0 of node i:
//   - no node of the graph writes memory src0 occupies (weights: a node
//     writes only its dst, and a view's dst is the bytes it views), so no
//     kernel of this graph does;
//   - a node before i in the graph launches work that waits for the work
//     before it before it lets the next kernel launch (every kernel but the
//     EarlyEntry ones; copies are full dependencies), so no kernel of an
//     earlier call can still be running either.

// weightsEarly reports whether node i of nodes (the graph's nodes in order,
// allocated) may read its src0 before its kernel waits for the kernels
// queued before it.
func weightsEarly(nodes []*graph.Tensor, i int) bool {
	if switches.On(nil, switches.NoEarlyWeights) {
		return false
	}
	w := nodes[i].Src(0)
	lo, hi, ok := extent(w)
	if !ok {
		return false
	}
	for _, m := range nodes {
		if !launches(m) {
			continue
		}
		mlo, mhi, ok := extent(m)
		if !ok || (mlo < hi && lo < mhi) {
			return false
		}
	}
	for j := i - 1; j >= 0; j-- {
		if m := nodes[j]; launches(m) && !triggersBeforeWait(m) {
			return true
		}
	}
	return false
}

// launches reports whether node n queues work (views and leaves do not).
func launches(n *graph.Tensor) bool {
	return n.Op() != graph.OpNone && !n.Op().IsView() && !n.Layout().Empty()
}

// triggersBeforeWait reports whether node n may queue only kernels that let
// the next kernel launch before they wait for the ones before them (the
// EarlyEntry kernels without a kernel of their own before them: mmvq8wf and
// mmvq8wf_id, TERNION_MMVQ8WF).
func triggersBeforeWait(n *graph.Tensor) bool {
	return (n.Op() == graph.OpMulMat || n.Op() == graph.OpMulMatID) && switches.On(nil, switches.MMVQ8WF)
}

// extent is the device memory [lo, hi) tensor t spans, and whether it is
// allocated.
func extent(t *graph.Tensor) (lo, hi vendorapi.DevicePtr, ok bool) {
	p, ok := t.Data()
	if !ok {
		return 0, 0, false
	}
	return p, p.Add(uint64(t.Layout().Bytes())), true
}
