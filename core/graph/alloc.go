package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/ternion/ternion/internal/align"
)

// DefaultAlign is the alignment of every tensor a Plan places: the seed's
// buffer alignment of 128 bytes.
const DefaultAlign = 128

// AllocOptions configures graph allocation.
type AllocOptions struct {
	// Align is the alignment of every tensor's offset (default DefaultAlign).
	Align uint64
	// Size is how many bytes t needs in the buffer (default: its layout's
	// Bytes; a buffer type may pad quantized rows).
	Size func(t *Tensor) uint64
	// Scratch reports buffers whose placements a plan does not keep: a
	// tensor placed in one (by an earlier plan) is planned anew. nil keeps
	// every placement.
	Scratch func(b Buffer) bool
}

// Plan places a graph's tensors in one buffer (ggml's graph allocator): the
// leaves that need memory (inputs) first and for the whole run, then each
// node when it is computed, reusing the memory of tensors no later node
// reads, and computing in place over a source it is the last reader of when
// the op allows it (ADD, MUL, SCALE, ...). Tensors already placed (weights)
// and views (they use their source's memory) take no room.
type Plan struct {
	// Size is the buffer size the graph needs.
	Size uint64
	// Sum is what the same tensors would need without reuse.
	Sum uint64
	// Offsets holds the offset of every tensor the plan places.
	Offsets map[*Tensor]uint64
	// Inplace lists the nodes placed over one of their sources.
	Inplace []*Tensor
}

// block is a free range of the buffer.
type block struct{ off, size uint64 }

// arena hands out ranges of a buffer that grows as needed (ggml's dynamic
// tensor allocator): best fit among free blocks, else at the end.
type arena struct {
	align uint64
	free  []block // sorted by offset, never adjacent
	end   uint64  // high-water mark
}

func (a *arena) alloc(size uint64) uint64 {
	size = align.Up(size, a.align)
	best := -1
	for i, b := range a.free {
		if b.size >= size && (best < 0 || b.size < a.free[best].size) {
			best = i
		}
	}
	if best >= 0 {
		b := &a.free[best]
		off := b.off
		b.off, b.size = b.off+size, b.size-size
		if b.size == 0 {
			a.free = slices.Delete(a.free, best, best+1)
		}
		return off
	}
	// Grow at the end, over a free block that ends there.
	off := a.end
	if n := len(a.free); n > 0 && a.free[n-1].off+a.free[n-1].size == a.end {
		off = a.free[n-1].off
		a.free = a.free[:n-1]
	}
	a.end = off + size
	return off
}

func (a *arena) release(off, size uint64) {
	size = align.Up(size, a.align)
	i, _ := slices.BinarySearchFunc(a.free, off, func(b block, o uint64) int {
		switch {
		case b.off < o:
			return -1
		case b.off > o:
			return 1
		}
		return 0
	})
	a.free = slices.Insert(a.free, i, block{off, size})
	if i+1 < len(a.free) && a.free[i].off+a.free[i].size == a.free[i+1].off { // merge with the next
		a.free[i].size += a.free[i+1].size
		a.free = slices.Delete(a.free, i+1, i+2)
	}
	if i > 0 && a.free[i-1].off+a.free[i-1].size == a.free[i].off { // and the previous
		a.free[i-1].size += a.free[i].size
		a.free = slices.Delete(a.free, i, i+1)
	}
}

// Plan places g's tensors (see Plan).
func (g *Graph) Plan(o AllocOptions) (*Plan, error) {
	if o.Align == 0 {
		o.Align = DefaultAlign
	}
	if o.Size == nil {
		o.Size = func(t *Tensor) uint64 { return uint64(t.layout.Bytes()) }
	}
	p := &Plan{Offsets: map[*Tensor]uint64{}}
	a := &arena{align: o.Align}
	placed := func(t *Tensor) bool {
		return t.place.Buf != nil && (o.Scratch == nil || !o.Scratch(t.place.Buf))
	}
	own := map[*Tensor]bool{}     // tensors this plan allocated and has not freed
	children := map[*Tensor]int{} // nodes still to run that read the tensor
	views := map[*Tensor]int{}    // views still live that read the tensor's memory
	for _, n := range g.nodes {
		for _, s := range n.src {
			if s != nil {
				children[s]++
			}
		}
		if n.viewSrc != nil {
			views[n.viewSrc]++
		}
	}
	allocate := func(t *Tensor) {
		size := o.Size(t)
		off := a.alloc(max(size, 1))
		p.Offsets[t] = off
		p.Sum += align.Up(size, o.Align)
		own[t] = true
	}
	free := func(t *Tensor) {
		if !own[t] || t.output || t.op == OpNone {
			return
		}
		a.release(p.Offsets[t], max(o.Size(t), 1))
		delete(own, t)
	}
	for _, l := range g.leafs {
		if !placed(l) && l.viewSrc == nil {
			allocate(l) // inputs: live for the whole run
		}
	}
	for _, n := range g.nodes {
		switch {
		case n.viewSrc != nil, placed(n):
		case own[n]: // a node the graph repeats: computed again in place
		default:
			if parent := inplaceParent(n, own, children, views, o.Size); parent != nil {
				p.Offsets[n] = p.Offsets[parent]
				delete(own, parent)
				own[n] = true
				p.Inplace = append(p.Inplace, n)
				break
			}
			allocate(n)
		}
		for _, s := range n.src {
			if s == nil {
				continue
			}
			children[s]--
			if children[s] != 0 || views[s] != 0 {
				continue
			}
			if vs := s.viewSrc; vs != nil {
				views[vs]--
				if views[vs] == 0 && children[vs] == 0 {
					free(vs)
				}
			} else {
				free(s)
			}
		}
	}
	p.Size = a.end
	if p.Size > math.MaxInt64 {
		return nil, fmt.Errorf("graph: %d bytes do not fit an allocation", p.Size)
	}
	return p, nil
}

// inplaceParent returns the source whose memory n may take over: n's op
// allows it, n is the source's last reader and no view reads the source, the
// source was allocated by this plan (not a leaf, not an output) and has n's
// exact layout. A source that is a view gives its own source's memory, under
// the same conditions and when it takes exactly n's room (ggml-alloc's rules).
func inplaceParent(n *Tensor, own map[*Tensor]bool, children, views map[*Tensor]int, size func(*Tensor) uint64) *Tensor {
	if !n.op.canInplace() {
		return nil
	}
	for _, s := range n.src {
		if s == nil || s.output || s.op == OpNone || s.layout != n.layout || children[s] != 1 || views[s] != 0 {
			continue
		}
		if vs := s.viewSrc; vs != nil {
			if own[vs] && !vs.output && vs.op != OpNone && views[vs] == 1 && children[vs] == 0 && s.viewOff == 0 &&
				size(vs) == size(n) {
				return vs
			}
			continue
		}
		if own[s] {
			return s
		}
	}
	return nil
}

// Apply places every tensor of p in buf, which must hold p.Size bytes.
func (p *Plan) Apply(buf Buffer) error {
	if buf.Size() < p.Size {
		return fmt.Errorf("graph: a %d-byte buffer for a plan of %d bytes", buf.Size(), p.Size)
	}
	for t, off := range p.Offsets {
		t.place = Placement{Buf: buf, Offset: off}
	}
	return nil
}
