package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// norm_fusion.go: the norm chains the compute loop's hook (RunFused) fuses, as ggml-cuda fuses RMS_NORM → MUL (→ ADD):
//
//	[ADD →] NORM|RMS_NORM [→ MUL [→ ADD]]
//
// consecutive nodes, each reading the one before (ggml_can_fuse): every
// intermediate except the leading ADD is read by the next node only and is
// no graph output, every node has the norm's shape, every tensor is f32. The
// leading ADD's result is still written when other nodes read it (the
// residual of a transformer layer), so ADD → RMS_NORM fuses there too.

// normFuse returns the norm chain that starts at node i and how many nodes
// it spans (0 or 1: nothing to fuse).
func normFuse(nodes []*graph.Tensor, i int, uses func(*graph.Tensor) int) (normChain, int) {
	var c normChain
	j := i
	if n := nodes[i]; n.Op() == graph.OpAdd && i+1 < len(nodes) && nodes[i+1].Src(0) == n && normFused(nodes[i+1].Op()) {
		c.x, c.add = n.Src(0), n.Src(1)
		if uses(n) > 1 || n.IsOutput() || n.ViewSrc() != nil {
			c.sum = n
		}
		j++
	}
	n := nodes[j]
	if !normFused(n.Op()) {
		return c, 0
	}
	c.norm, c.dst = n, n
	if c.x == nil {
		c.x = n.Src(0)
	}
	if w, ok := normNext(nodes, j, graph.OpMul, uses); ok {
		c.mul, c.dst = w, nodes[j+1]
		j++
		if p, ok := normNext(nodes, j, graph.OpAdd, uses); ok {
			c.post, c.dst = p, nodes[j+1]
			j++
		}
	}
	if j == i || !normFusable(c) {
		return c, 0
	}
	return c, j - i + 1
}

// normFused reports whether op is a norm with fused kernels (norm.cu's
// norm_fused_{op}_f32: NORM and RMS_NORM, those ggml fuses).
func normFused(op graph.Op) bool { return op == graph.OpNorm || op == graph.OpRMSNorm }

// normNext returns the other operand of node j+1 when it is an op node
// reading node j, which nothing else reads and which is no graph output,
// with node j's shape.
func normNext(nodes []*graph.Tensor, j int, op graph.Op, uses func(*graph.Tensor) int) (*graph.Tensor, bool) {
	if j+1 >= len(nodes) {
		return nil, false
	}
	prev, n := nodes[j], nodes[j+1]
	if n.Op() != op || uses(prev) != 1 || prev.IsOutput() || prev.ViewSrc() != nil || !n.Layout().SameShape(prev.Layout()) {
		return nil, false
	}
	switch prev {
	case n.Src(0):
		return n.Src(1), true
	case n.Src(1):
		return n.Src(0), true
	}
	return nil, false
}

// normFusable reports whether one launch can compute chain c: every tensor
// f32, placed, with counts the kernels index, and no tensor the launch
// writes (dst, sum) overlapping one it reads (x, add, mul, post) unless it
// is the same memory in the same layout (each element is then read and
// written by one thread, read first), nor the other one it writes: earlier
// nodes of the unfused chain may have been the last readers of memory the
// planner gave to later ones.
func normFusable(c normChain) bool {
	if c.dst.Layout().Empty() {
		return false
	}
	all := []*graph.Tensor{c.norm, c.x, c.add, c.sum, c.mul, c.post, c.dst}
	for _, t := range all {
		if t == nil {
			continue
		}
		if _, ok := t.Data(); !ok || t.Type() != tensor.F32 || !fits32(t.Layout()) {
			return false
		}
	}
	writes := []*graph.Tensor{c.dst, c.sum}
	for wi, w := range writes {
		if w == nil {
			continue
		}
		for _, r := range []*graph.Tensor{c.x, c.add, c.mul, c.post} {
			if r != nil && normOverlap(w, r) && !normSameMemory(w, r) {
				return false
			}
		}
		for _, o := range writes[wi+1:] {
			if o != nil && normOverlap(w, o) {
				return false
			}
		}
	}
	return true
}

// normOverlap reports whether the memory extents of a and b intersect.
func normOverlap(a, b *graph.Tensor) bool {
	pa, _ := a.Data()
	pb, _ := b.Data()
	ea, eb := uint64(pa)+uint64(a.Layout().Bytes()), uint64(pb)+uint64(b.Layout().Bytes())
	return uint64(pa) < eb && uint64(pb) < ea
}

// normSameMemory reports whether a and b are the same memory in the same
// layout.
func normSameMemory(a, b *graph.Tensor) bool {
	pa, _ := a.Data()
	pb, _ := b.Data()
	return pa == pb && a.Ne() == b.Ne() && a.Nb() == b.Nb()
}
