// Package ranges keeps sets of disjoint half-open address ranges, sorted by
// start and each carrying a value, with the lookups a driver's memory tables
// need: the range holding an address, the range starting at one, overlap,
// coverage by one range or by a run of adjacent ones, and exact tiling. The
// host device and the GPU shim both keep their live allocations, reserved and
// mapped ranges and pinned memory in such tables.
//
// A Table is not safe for concurrent use; its owner locks around it.
package ranges

import (
	"iter"
	"slices"
	"sort"
)

// Range is the addresses [Lo, Hi) and the value stored with them.
type Range[V any] struct {
	Lo, Hi uint64
	Val    V
}

// Table is a set of disjoint, non-empty ranges sorted by Lo. The zero value
// is an empty table.
type Table[V any] struct {
	rs []Range[V]
}

// Len returns the number of ranges.
func (t *Table[V]) Len() int { return len(t.rs) }

// Ranges returns a copy of the ranges in address order.
func (t *Table[V]) Ranges() []Range[V] { return slices.Clone(t.rs) }

// search returns the index of the first range ending after p.
func (t *Table[V]) search(p uint64) int {
	return sort.Search(len(t.rs), func(i int) bool { return t.rs[i].Hi > p })
}

// Find returns the range containing p.
func (t *Table[V]) Find(p uint64) (Range[V], bool) {
	if i := t.search(p); i < len(t.rs) && t.rs[i].Lo <= p {
		return t.rs[i], true
	}
	return Range[V]{}, false
}

// At returns the range starting exactly at lo.
func (t *Table[V]) At(lo uint64) (Range[V], bool) {
	if i := t.search(lo); i < len(t.rs) && t.rs[i].Lo == lo {
		return t.rs[i], true
	}
	return Range[V]{}, false
}

// Overlaps reports whether any range intersects [lo, hi).
func (t *Table[V]) Overlaps(lo, hi uint64) bool {
	i := t.search(lo)
	return lo < hi && i < len(t.rs) && t.rs[i].Lo < hi
}

// Overlapping yields, in address order, the ranges that intersect [lo, hi).
func (t *Table[V]) Overlapping(lo, hi uint64) iter.Seq[Range[V]] {
	return func(yield func(Range[V]) bool) {
		if lo >= hi {
			return
		}
		for i := t.search(lo); i < len(t.rs) && t.rs[i].Lo < hi; i++ {
			if !yield(t.rs[i]) {
				return
			}
		}
	}
}

// Covers reports whether [p, p+n) lies inside one range or, with adjacent,
// inside ranges that follow each other without a gap. n must be positive; a
// range that wraps around the address space is never covered.
func (t *Table[V]) Covers(p, n uint64, adjacent bool) bool {
	hi := p + n
	if n == 0 || hi < p {
		return false
	}
	i := t.search(p)
	if i >= len(t.rs) || t.rs[i].Lo > p {
		return false
	}
	for ; i < len(t.rs); i++ {
		if t.rs[i].Hi >= hi {
			return true
		}
		if !adjacent || i+1 >= len(t.rs) || t.rs[i+1].Lo != t.rs[i].Hi {
			return false
		}
	}
	return false
}

// Tiles returns the ranges that cover [lo, hi) exactly, with no gap and none
// crossing its ends, and whether they do.
func (t *Table[V]) Tiles(lo, hi uint64) ([]Range[V], bool) {
	i := t.search(lo)
	if i >= len(t.rs) || t.rs[i].Lo != lo || hi <= lo {
		return nil, false
	}
	j, at := i, lo
	for ; j < len(t.rs) && t.rs[j].Lo == at && t.rs[j].Hi <= hi; j++ {
		at = t.rs[j].Hi
	}
	if at != hi {
		return nil, false
	}
	return slices.Clone(t.rs[i:j]), true
}

// Insert adds r; it returns false, changing nothing, when r is empty or
// overlaps a range of t.
func (t *Table[V]) Insert(r Range[V]) bool {
	if r.Hi <= r.Lo || t.Overlaps(r.Lo, r.Hi) {
		return false
	}
	t.rs = slices.Insert(t.rs, t.search(r.Lo), r)
	return true
}

// Remove removes and returns the range starting at lo.
func (t *Table[V]) Remove(lo uint64) (Range[V], bool) {
	i := t.search(lo)
	if i >= len(t.rs) || t.rs[i].Lo != lo {
		return Range[V]{}, false
	}
	r := t.rs[i]
	t.rs = slices.Delete(t.rs, i, i+1)
	return r, true
}

// RemoveWithin removes every range that lies inside [lo, hi); a range
// crossing an end of [lo, hi) stays, and so do the ones after it.
func (t *Table[V]) RemoveWithin(lo, hi uint64) {
	i := t.search(lo)
	if i < len(t.rs) && t.rs[i].Lo < lo {
		i++ // crosses lo
	}
	j := i
	for j < len(t.rs) && t.rs[j].Hi <= hi {
		j++
	}
	t.rs = slices.Delete(t.rs, i, j)
}

// Clear removes every range.
func (t *Table[V]) Clear() { t.rs = nil }
