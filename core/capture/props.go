package capture

import (
	"fmt"
	"math/bits"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// Props is what a captured graph bakes in of one node: when a node's Props
// differ from those its executable graph was made with, that executable must
// be updated before it runs again. What a captured graph does not bake in is
// left zero, so that two snapshots match exactly when they are ==:
//   - every pointer and parameter of a view node (VIEW, RESHAPE, PERMUTE,
//     TRANSPOSE launch nothing; the nodes that read a view see its address
//     as a source; VIEW's parameters are its byte offset);
//   - with copy indirection (Options.CopyIndirection), a CPY's destination
//     (its own data and src1), which the caller passes through its CPY
//     pointer array, refreshed on every call, replays included (the seed's
//     cpy_dest_ptrs): a KV-cache write whose destination moves every token
//     replays (core/ops never picks a copy kernel by the address of a
//     destination it passes that way); src0 is compared all the same.
//     Without it a CPY is compared like any node.
//
// Beyond the seed's properties (op, data, ne, nb, source data pointers and
// SCALE's parameters), Props holds the node's type, every op's parameters
// (any of them may be a kernel argument) and a fingerprint of the types and
// shapes of the node's leaf sources (a leaf's type or shape may change
// under the same address; a source that is a node has Props of its own).
//
// The fields the replay path reads come first, to touch fewer cache lines.
type Props struct {
	Op     graph.Op
	Srcs   uint8                             // source slots in use: the last non-nil source's index + 1
	Type   tensor.Type                       // the node's element type
	Data   vendorapi.DevicePtr               // the node's address (zero when exempt, see above)
	Src    [graph.MaxSrc]vendorapi.DevicePtr // the sources' addresses (zero when absent or exempt)
	Ne, Nb [tensor.MaxDims]int64             // shape and strides
	Params [graph.MaxParams]uint32           // the op's parameters
	Leaves uint64                            // fingerprint of the leaf sources' types and shapes
}

// PropsOf returns the properties of node n (pointers are zero until n is
// placed), with a CPY's destination left to pointer indirection when
// copyIndirect is set (Options.CopyIndirection).
func PropsOf(n *graph.Tensor, copyIndirect bool) Props {
	var p Props
	p.set(n, copyIndirect)
	return p
}

// addr returns t's address (0 when t is not placed).
func addr(t *graph.Tensor) vendorapi.DevicePtr {
	d, _ := t.Data()
	return d
}

// set fills p (which must be zero) from n; ci: copy indirection.
func (p *Props) set(n *graph.Tensor, ci bool) {
	p.Op, p.Type, p.Ne, p.Nb = n.Op(), n.Type(), n.Ne(), n.Nb()
	view, cpy := p.Op.IsView(), ci && p.Op == graph.OpCpy
	if !view {
		p.Params = n.Params()
	}
	if !view && !cpy {
		p.Data = addr(n)
	}
	for i := range graph.MaxSrc {
		s := n.Src(i)
		if s == nil {
			continue
		}
		p.Srcs = uint8(i + 1)
		if s.Op() == graph.OpNone {
			p.Leaves += leafPrint(s, i)
		}
		if view || cpy && i == 1 {
			continue
		}
		p.Src[i] = addr(s)
	}
}

// matches reports whether p are n's properties: p == PropsOf(n, ci),
// without building PropsOf(n, ci) (the replay path's inner loop). same tells
// that p was taken from this very node: a node is not modified once built
// (core/backend's replay of a prepared graph assumes it too), so only its
// pointers, which move when it or its sources are placed again, need
// comparing.
func (p *Props) matches(n *graph.Tensor, same, ci bool) bool {
	op := p.Op
	view, cpy := op.IsView(), ci && op == graph.OpCpy
	srcs := int(p.Srcs)
	if !same {
		if op != n.Op() || p.Type != n.Type() || p.Ne != n.Ne() || p.Nb != n.Nb() {
			return false
		}
		if view {
			if p.Params != ([graph.MaxParams]uint32{}) {
				return false
			}
		} else if p.Params != n.Params() {
			return false
		}
		srcs = graph.MaxSrc // trailing sources must be absent too
	}
	if view {
		return same || p.Data == 0 && p.Src == [graph.MaxSrc]vendorapi.DevicePtr{} && p.Leaves == leavesOf(n) &&
			p.Srcs == srcsOf(n)
	}
	if !cpy && p.Data != addr(n) || cpy && p.Data != 0 {
		return false
	}
	var leaves uint64
	used := 0
	for i := range srcs {
		s := n.Src(i)
		var d vendorapi.DevicePtr
		if s != nil {
			used = i + 1
			if !same && s.Op() == graph.OpNone {
				leaves += leafPrint(s, i)
			}
			if !cpy || i != 1 {
				d = addr(s)
			}
		}
		if p.Src[i] != d {
			return false
		}
	}
	return same || p.Leaves == leaves && int(p.Srcs) == used
}

// srcsOf is Props.Srcs of node n.
func srcsOf(n *graph.Tensor) uint8 {
	for i := graph.MaxSrc - 1; i >= 0; i-- {
		if n.Src(i) != nil {
			return uint8(i + 1)
		}
	}
	return 0
}

// leavesOf is Props.Leaves of node n.
func leavesOf(n *graph.Tensor) uint64 {
	var leaves uint64
	for i := range graph.MaxSrc {
		if s := n.Src(i); s != nil && s.Op() == graph.OpNone {
			leaves += leafPrint(s, i)
		}
	}
	return leaves
}

// leafPrint folds the type and shape of leaf t, source i of a node, into a
// word (a leaf is contiguous: its strides follow). Props.Leaves sums them.
func leafPrint(t *graph.Tensor, i int) uint64 {
	x := (uint64(t.Type())+1)*0x9e3779b97f4a7c15 + uint64(t.Dim(0))*0xff51afd7ed558ccd +
		uint64(t.Dim(1))*0xc4ceb9fe1a85ec53 + uint64(t.Dim(2))*0x94d049bb133111eb + uint64(t.Dim(3))*0xbf58476d1ce4e5b9
	return bits.RotateLeft64(x, 7*i+1) * 0xd6e8feb86659fd93
}

// mix folds x into h (a multiply-rotate step; collisions only cost an update).
func mix(h, x uint64) uint64 {
	return bits.RotateLeft64((h^x)*0x9e3779b97f4a7c15, 27)
}

// Snapshot appends the properties of each node (PropsOf(n, copyIndirect))
// to dst and returns it; when dst has room for them (Snapshot(dst[:0],
// nodes, ci)), nothing is allocated.
func Snapshot(dst []Props, nodes []*graph.Tensor, copyIndirect bool) []Props {
	for _, n := range nodes {
		dst = append(dst, Props{})
		dst[len(dst)-1].set(n, copyIndirect)
	}
	return dst
}

// srcPointer names source i's pointer in Diff's answers.
var srcPointer = func() (names [graph.MaxSrc]string) {
	for i := range names {
		names[i] = fmt.Sprintf("src%d data pointer", i)
	}
	return names
}()

// Diff returns "" when p and q match, else the first property that differs:
// "op", "type", "ne", "nb", "data pointer", "src1 data pointer", "op
// params" or "leaf source layout". It allocates nothing.
func (p *Props) Diff(q *Props) string {
	switch {
	case *p == *q:
		return ""
	case p.Op != q.Op:
		return "op"
	case p.Srcs != q.Srcs:
		return "sources"
	case p.Type != q.Type:
		return "type"
	case p.Ne != q.Ne:
		return "ne"
	case p.Nb != q.Nb:
		return "nb"
	case p.Data != q.Data:
		return "data pointer"
	case p.Params != q.Params:
		return "op params"
	case p.Leaves != q.Leaves:
		return "leaf source layout"
	}
	for i := range p.Src {
		if p.Src[i] != q.Src[i] {
			return srcPointer[i]
		}
	}
	return "?" // unreachable: the fields above are all of Props
}

// Key is a graph's shape: its node count and a hash of each node's op, type
// and ne (pointers, strides and parameters excluded). The cache keeps one
// executable graph per Key, so a decode step at a few KV lengths replays one
// graph per length. Two shapes may share a hash; that only costs an update,
// never a wrong replay: Props still tell them apart.
type Key struct {
	Nodes int    // the number of nodes
	Hash  uint64 // the hash of the nodes' ops, types and shapes
}

// String reads "25 nodes #3f2a9c01d4e5b6a7".
func (k Key) String() string { return fmt.Sprintf("%d nodes #%016x", k.Nodes, k.Hash) }

// KeyOf returns the shape key of a graph's nodes.
func KeyOf(nodes []*graph.Tensor) Key {
	h := uint64(len(nodes))
	for _, n := range nodes {
		h = mix(h, nodeWord(n))
	}
	return Key{Nodes: len(nodes), Hash: h}
}

// nodeWord folds a node's op, type and ne into one word for KeyOf.
func nodeWord(n *graph.Tensor) uint64 {
	return uint64(n.Op()) | uint64(n.Type())<<16 ^
		(uint64(n.Dim(0))*0xff51afd7ed558ccd + uint64(n.Dim(1))*0xc4ceb9fe1a85ec53 +
			uint64(n.Dim(2))*0x94d049bb133111eb + uint64(n.Dim(3))*0xbf58476d1ce4e5b9)
}
