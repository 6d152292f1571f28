package ranges

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sample is [10,20) [100,200) [200,300) [300,400): a gap, then three
// adjacent ranges.
func sample(t *testing.T) *Table[string] {
	t.Helper()
	var tb Table[string]
	// Out of order on purpose: Insert keeps the table sorted.
	for _, r := range []Range[string]{{100, 200, "b"}, {300, 400, "d"}, {200, 300, "c"}, {10, 20, "a"}} {
		require.True(t, tb.Insert(r), "insert %v", r)
	}
	return &tb
}

// los returns the starts of t's ranges in order.
func los(t *Table[string]) []uint64 {
	var out []uint64
	for _, r := range t.Ranges() {
		out = append(out, r.Lo)
	}
	return out
}

func TestInsert(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Range[string]
		ok   bool
	}{
		{"inside a range", Range[string]{150, 160, ""}, false},
		{"overlapping a start", Range[string]{50, 101, ""}, false},
		{"overlapping an end", Range[string]{399, 500, ""}, false},
		{"spanning several", Range[string]{0, 1000, ""}, false},
		{"empty", Range[string]{30, 30, ""}, false},
		{"reversed", Range[string]{40, 30, ""}, false},
		{"in the gap", Range[string]{20, 100, "gap"}, true},
		{"before all", Range[string]{0, 10, "first"}, true},
		{"after all", Range[string]{400, 401, "last"}, true},
		{"at the top of the address space", Range[string]{math.MaxUint64 - 1, math.MaxUint64, "top"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := sample(t)
			assert.Equal(t, c.ok, tb.Insert(c.r))
			want := 4
			if c.ok {
				want = 5
			}
			assert.Equal(t, want, tb.Len())
			assert.True(t, slices.IsSorted(los(tb)), "sorted: %v", los(tb))
		})
	}
}

func TestFindAt(t *testing.T) {
	tb := sample(t)
	for _, c := range []struct {
		p           uint64
		find, at    string // "" when there is none
		overlapsOne bool   // [p, p+1) overlaps a range
	}{
		{0, "", "", false},
		{10, "a", "a", true},
		{19, "a", "", true},
		{20, "", "", false},
		{99, "", "", false},
		{100, "b", "b", true},
		{199, "b", "", true},
		{200, "c", "c", true},
		{399, "d", "", true},
		{400, "", "", false},
		{math.MaxUint64, "", "", false},
	} {
		r, ok := tb.Find(c.p)
		assert.Equal(t, c.find != "", ok, "Find(%d)", c.p)
		assert.Equal(t, c.find, r.Val, "Find(%d)", c.p)
		r, ok = tb.At(c.p)
		assert.Equal(t, c.at != "", ok, "At(%d)", c.p)
		assert.Equal(t, c.at, r.Val, "At(%d)", c.p)
		if c.p < math.MaxUint64 {
			assert.Equal(t, c.overlapsOne, tb.Overlaps(c.p, c.p+1), "Overlaps(%d, +1)", c.p)
		}
	}
}

func TestOverlaps(t *testing.T) {
	tb := sample(t)
	for _, c := range []struct {
		lo, hi uint64
		want   bool
		vals   []string
	}{
		{0, 11, true, []string{"a"}},
		{20, 100, false, nil},
		{15, 150, true, []string{"a", "b"}},
		{199, 201, true, []string{"b", "c"}},
		{399, 1000, true, []string{"d"}},
		{400, 1000, false, nil},
		{150, 150, false, nil}, // empty
		{160, 150, false, nil}, // reversed
		{0, math.MaxUint64, true, []string{"a", "b", "c", "d"}},
	} {
		assert.Equal(t, c.want, tb.Overlaps(c.lo, c.hi), "Overlaps(%d, %d)", c.lo, c.hi)
		var vals []string
		for r := range tb.Overlapping(c.lo, c.hi) {
			vals = append(vals, r.Val)
		}
		assert.Equal(t, c.vals, vals, "Overlapping(%d, %d)", c.lo, c.hi)
	}
	n := 0
	for range tb.Overlapping(0, 1000) {
		n++
		break
	}
	assert.Equal(t, 1, n, "Overlapping stops when the loop does")
}

func TestCovers(t *testing.T) {
	tb := sample(t)
	for _, c := range []struct {
		p, n     uint64
		adjacent bool
		want     bool
	}{
		{100, 100, false, true},
		{150, 50, false, true},
		{150, 51, false, false}, // into the next range
		{150, 51, true, true},
		{150, 250, true, true},
		{150, 251, true, false}, // past the last
		{15, 10, true, false},   // the gap between 20 and 100
		{5, 1, true, false},     // before all
		{150, 0, false, false},  // empty
		{math.MaxUint64 - 1, 5, true, false},
	} {
		assert.Equal(t, c.want, tb.Covers(c.p, c.n, c.adjacent), "Covers(%d, %d, %v)", c.p, c.n, c.adjacent)
	}
}

func TestTiles(t *testing.T) {
	tb := sample(t)
	for _, c := range []struct {
		name   string
		lo, hi uint64
		vals   []string
	}{
		{"one range", 10, 20, []string{"a"}},
		{"three adjacent", 100, 400, []string{"b", "c", "d"}},
		{"two adjacent", 200, 400, []string{"c", "d"}},
		{"ends inside a range", 100, 350, nil},
		{"starts inside a range", 150, 200, nil},
		{"gap", 10, 200, nil},
		{"past the last", 300, 500, nil},
		{"empty", 100, 100, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, ok := tb.Tiles(c.lo, c.hi)
			assert.Equal(t, c.vals != nil, ok)
			var vals []string
			for _, r := range rs {
				vals = append(vals, r.Val)
			}
			assert.Equal(t, c.vals, vals)
		})
	}
	rs, _ := tb.Tiles(100, 200)
	rs[0].Val = "changed"
	r, _ := tb.At(100)
	assert.Equal(t, "b", r.Val, "Tiles returns a copy")
}

func TestRemove(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(tb *Table[string])
		left []uint64
	}{
		{"one", func(tb *Table[string]) {
			r, ok := tb.Remove(200)
			assert.True(t, ok)
			assert.Equal(t, "c", r.Val)
		}, []uint64{10, 100, 300}},
		{"not a start", func(tb *Table[string]) {
			_, ok := tb.Remove(201)
			assert.False(t, ok)
		}, []uint64{10, 100, 200, 300}},
		{"twice", func(tb *Table[string]) {
			_, ok := tb.Remove(10)
			assert.True(t, ok)
			_, ok = tb.Remove(10)
			assert.False(t, ok)
		}, []uint64{100, 200, 300}},
		{"within exactly", func(tb *Table[string]) { tb.RemoveWithin(100, 300) }, []uint64{10, 300}},
		{"within a wider range", func(tb *Table[string]) { tb.RemoveWithin(0, 250) }, []uint64{200, 300}},
		{"within leaves ranges crossing the ends", func(tb *Table[string]) { tb.RemoveWithin(150, 350) }, []uint64{10, 100, 300}},
		{"within nothing", func(tb *Table[string]) { tb.RemoveWithin(20, 100) }, []uint64{10, 100, 200, 300}},
		{"clear", func(tb *Table[string]) { tb.Clear() }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := sample(t)
			c.edit(tb)
			assert.Equal(t, c.left, los(tb))
		})
	}
}

func TestRangesIsACopy(t *testing.T) {
	tb := sample(t)
	rs := tb.Ranges()
	require.Len(t, rs, 4)
	rs[0].Val = "changed"
	tb.Clear()
	assert.Equal(t, "changed", rs[0].Val)
	assert.Zero(t, tb.Len())
	var empty Table[int]
	_, ok := empty.Find(0)
	assert.False(t, ok, "the zero table is empty")
}
