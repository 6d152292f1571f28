package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// early.go decides when a kernel may request an input before it waits for
// the kernels queued before it (a Deferred catalog kernel's early argument:
// mmvt's weights, fattn_dect's K and V, with TERNION_EARLY_PRODUCTS mmvv's
// weights; and, with that switch, whether q8ye lets its product launch
// before it waits), unless TERNION_NO_EARLY_READS.
// Launched with programmatic dependent launch, such a kernel starts while
// the kernel before it runs; what it reads before its wait must be memory no
// kernel still running writes. A kernel that waits before it lets the next
// one launch (every kernel but the EarlyEntry ones; a copy is a full
// dependency) has all work queued before it done by the time the next one
// starts; so the kernels that may still run are those of the nodes from the
// last such node on. Node i may read input t early when:
//   - a node before i in the graph launches work that waits before it lets
//     the next kernel launch (else a kernel of an earlier call may still
//     run), and
//   - neither that node nor any launching node after it, up to i, writes
//     memory t occupies (a node writes only its dst; a view's dst is the
//     bytes it views), and none of them is a CPY: a captured graph replays
//     a CPY with its destination moved (core/backend's CPY pointer array:
//     a KV-cache row one further each token) without capturing again, so
//     the bytes it writes are not known when the graph is made.
// Model code that writes the KV cache before Q's ROPE (the node before the
// attention) lets FLASH_ATTN_EXT read K and V early; llama.cpp's order (the
// cache copies right before the attention) does not.

// readEarly reports whether node i of nodes (the graph's nodes in order,
// allocated) may read t before its kernel waits for the kernels queued
// before it; trigger[j] (Plan's: queuesQ8ye of the nodes before i) is true
// where node j may have queued q8ye, which lets the next kernel launch
// before it waits.
func readEarly(nodes []*graph.Tensor, i int, t *graph.Tensor, trigger []bool) bool {
	if switches.On(nil, switches.NoEarlyReads) {
		return false
	}
	lo, hi, ok := extent(t)
	if !ok {
		return false
	}
	for j := i - 1; j >= 0; j-- {
		m := nodes[j]
		if !launches(m) {
			continue
		}
		if mlo, mhi, ok := extent(m); !ok || (mlo < hi && lo < mhi) || m.Op() == graph.OpCpy {
			return false
		}
		if !triggersBeforeWait(m) && !(j < len(trigger) && trigger[j]) {
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

// queuesQ8ye reports whether node i of nodes, queued alone, may queue q8ye
// (and so lets its product launch before q8ye waits): a q8yEarlyCandidate
// that readEarly lets read src0 early, given trigger (the same for the
// nodes before i). RunFused records it as the plan's trigger.
func queuesQ8ye(nodes []*graph.Tensor, i int, trigger []bool) bool {
	n := nodes[i]
	return q8yEarlyCandidate(n) && readEarly(nodes, i, n.Src(0), trigger)
}

// earlyProducts reports whether TERNION_EARLY_PRODUCTS is on: mmvv reads
// its weights early and q8ye lets its product launch early where readEarly
// allows (off until measured on a GPU).
func earlyProducts() bool { return switches.On(nil, switches.EarlyProducts) }

// q8yEarlyCandidate reports whether node n may queue q8ye, which lets the
// product after it launch before it waits (runMMVQ8 where its product
// reads src0 early, under earlyProducts): a MUL_MAT of quantized src0 by at
// most MMVQMaxColumns f32 columns. The products that do are fewer (the
// device's path decides); taking the others for such nodes only makes
// readEarly look further back.
func q8yEarlyCandidate(n *graph.Tensor) bool {
	return earlyProducts() && n.Op() == graph.OpMulMat && n.Src(0).Type().IsQuantized() && n.Src(1).Type() == tensor.F32 &&
		n.Src(1).Ne()[1] <= MMVQMaxColumns
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

// boolI32 is a kernel's 0/1 flag argument (early).
func boolI32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
