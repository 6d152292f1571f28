package gpushim

import "sort"

// span is a live range [base, end) of addresses on device dev (-1: host).
type span struct {
	base, end uint64
	dev       int
}

// spans is a set of disjoint spans sorted by base.
type spans []span

// search returns the index of the first span ending after p.
func (t spans) search(p uint64) int {
	return sort.Search(len(t), func(i int) bool { return t[i].end > p })
}

// at returns the span starting exactly at base.
func (t spans) at(base uint64) (span, bool) {
	i := t.search(base)
	if i < len(t) && t[i].base == base {
		return t[i], true
	}
	return span{}, false
}

// find returns the span containing p.
func (t spans) find(p uint64) (span, bool) {
	i := t.search(p)
	if i < len(t) && t[i].base <= p {
		return t[i], true
	}
	return span{}, false
}

// overlaps reports whether any span intersects [lo, hi).
func (t spans) overlaps(lo, hi uint64) bool {
	i := t.search(lo)
	return i < len(t) && t[i].base < hi
}

// covers reports whether [p, p+n) lies inside one span or, with adjacent,
// inside spans that follow each other without a gap. n must be positive.
func (t spans) covers(p, n uint64, adjacent bool) bool {
	hi := p + n
	if hi < p {
		return false
	}
	i := t.search(p)
	if i >= len(t) || t[i].base > p {
		return false
	}
	for ; i < len(t); i++ {
		if t[i].end >= hi {
			return true
		}
		if !adjacent || i+1 >= len(t) || t[i+1].base != t[i].end {
			return false
		}
	}
	return false
}

// tiles reports whether the spans inside [lo, hi) cover it exactly, with no
// gap and no span crossing its ends, and returns how many there are.
func (t spans) tiles(lo, hi uint64) (int, bool) {
	i := t.search(lo)
	if i >= len(t) || t[i].base != lo || hi <= lo {
		return 0, false
	}
	n, at := 0, lo
	for ; i < len(t) && t[i].base == at && t[i].end <= hi; i++ {
		at = t[i].end
		n++
	}
	return n, at == hi
}

// insert adds s; false (and no change) when it overlaps a span or is empty.
func (t *spans) insert(s span) bool {
	if s.end <= s.base || t.overlaps(s.base, s.end) {
		return false
	}
	i := t.search(s.base)
	*t = append(*t, span{})
	copy((*t)[i+1:], (*t)[i:])
	(*t)[i] = s
	return true
}

// removeAt removes the span starting at base.
func (t *spans) removeAt(base uint64) (span, bool) {
	i := t.search(base)
	if i >= len(*t) || (*t)[i].base != base {
		return span{}, false
	}
	s := (*t)[i]
	*t = append((*t)[:i], (*t)[i+1:]...)
	return s, true
}

// removeWithin removes every span inside [lo, hi).
func (t *spans) removeWithin(lo, hi uint64) {
	i := t.search(lo)
	j := i
	for j < len(*t) && (*t)[j].end <= hi && (*t)[j].base >= lo {
		j++
	}
	*t = append((*t)[:i], (*t)[j:]...)
}
