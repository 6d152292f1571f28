package gpushim

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpans(t *testing.T) {
	var s spans
	require.True(t, s.insert(span{100, 200, 0}))
	require.True(t, s.insert(span{300, 400, 0}))
	require.True(t, s.insert(span{200, 300, 1}), "adjacent spans do not overlap")
	assert.False(t, s.insert(span{150, 160, 0}), "inside a span")
	assert.False(t, s.insert(span{50, 101, 0}), "overlapping the start")
	assert.False(t, s.insert(span{10, 10, 0}), "empty")
	require.True(t, s.insert(span{10, 20, 0}))
	require.Len(t, s, 4)
	for i := 1; i < len(s); i++ {
		assert.Less(t, s[i-1].base, s[i].base, "sorted")
	}

	x, ok := s.at(200)
	assert.True(t, ok)
	assert.Equal(t, 1, x.dev)
	_, ok = s.at(201)
	assert.False(t, ok)
	x, ok = s.find(250)
	assert.True(t, ok)
	assert.Equal(t, uint64(200), x.base)
	_, ok = s.find(30)
	assert.False(t, ok)

	for _, c := range []struct {
		p, n     uint64
		adjacent bool
		want     bool
	}{
		{100, 100, false, true},
		{150, 50, false, true},
		{150, 51, false, false},
		{150, 51, true, true},
		{150, 250, true, true},
		{150, 251, true, false},
		{15, 10, true, false}, // gap between 20 and 100
		{5, 1, true, false},
		{^uint64(0) - 1, 5, true, false}, // overflow
	} {
		assert.Equal(t, c.want, s.covers(c.p, c.n, c.adjacent), "covers(%d, %d, %v)", c.p, c.n, c.adjacent)
	}

	assert.True(t, s.overlaps(0, 11))
	assert.False(t, s.overlaps(20, 100))
	assert.True(t, s.overlaps(399, 1000))
	assert.False(t, s.overlaps(400, 1000))

	n, ok := s.tiles(100, 400)
	assert.True(t, ok)
	assert.Equal(t, 3, n)
	_, ok = s.tiles(100, 350)
	assert.False(t, ok, "ends inside a span")
	_, ok = s.tiles(150, 200)
	assert.False(t, ok, "starts inside a span")
	_, ok = s.tiles(10, 200)
	assert.False(t, ok, "gap")
	_, ok = s.tiles(100, 100)
	assert.False(t, ok, "empty")

	s.removeWithin(100, 300)
	require.Len(t, s, 2)
	assert.Equal(t, uint64(10), s[0].base)
	assert.Equal(t, uint64(300), s[1].base)
	_, ok = s.removeAt(300)
	assert.True(t, ok)
	_, ok = s.removeAt(300)
	assert.False(t, ok)
	assert.Len(t, s, 1)
}

func TestMemTable(t *testing.T) {
	var m memTable
	require.True(t, m.add(&m.allocs, span{0x1000, 0x2000, 0}))
	require.True(t, m.add(&m.allocs, span{0x2000, 0x3000, 0}))
	require.True(t, m.add(&m.mapped, span{0x10000, 0x20000, 1}))
	require.True(t, m.add(&m.mapped, span{0x20000, 0x30000, 1}))
	require.True(t, m.add(&m.pinned, span{0x100000, 0x101000, -1}))
	m.grant(0, 0x10000, 0x20000)

	assert.True(t, m.device(0, 0x1800, 0x800))
	assert.False(t, m.device(0, 0x1800, 0x801), "separate allocations are not one buffer")
	assert.True(t, m.device(0, 0x1f000, 0x2000), "mapped chunks back to back are")
	assert.True(t, m.device(0, 0xdead, 0), "empty ranges are always fine")
	assert.False(t, m.device(0, 0x40000, 1))

	assert.False(t, m.device(1, 0x1800, 0x800), "device 0's memory, no peer access from 1")
	owner, ok := m.owner(0x1800)
	assert.True(t, ok)
	assert.Equal(t, 0, owner)
	m.setPeer(1, 0, true)
	assert.True(t, m.device(1, 0x1800, 0x800), "peer access enabled")
	assert.False(t, m.device(2, 0x1800, 0x800), "peer access is per device pair")
	m.setPeer(1, 0, false)
	assert.False(t, m.device(1, 0x1800, 0x800), "peer access disabled again")
	assert.False(t, m.device(1, 0x1f000, 0x2000), "VMM access was given to device 0 only")
	assert.True(t, m.host(0x100800, 0x800))
	assert.False(t, m.host(0x1000, 1), "device memory is not host memory")

	_, ok = m.take(&m.allocs, 0x1000, 1)
	assert.False(t, ok, "wrong device")
	_, ok = m.take(&m.allocs, 0x1000, 0)
	assert.True(t, ok)
	assert.False(t, m.device(0, 0x1000, 1), "freed")
	_, ok = m.take(&m.pinned, 0x100000, -1)
	assert.True(t, ok)
}

// HostRegister's check against pinned memory and its insertion are one step:
// of concurrent registrations of overlapping ranges exactly one wins, and a
// range overlapping pinned memory is never inserted.
func TestMemTableAddApart(t *testing.T) {
	var m memTable
	require.True(t, m.add(&m.pinned, span{0x1000, 0x2000, -1}))
	assert.False(t, m.addApart(&m.registered, &m.pinned, span{0x1800, 0x2800, -1}), "overlaps pinned")
	assert.False(t, m.host(0x2000, 0x800))

	var wg sync.WaitGroup
	var won atomic.Int32
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.addApart(&m.registered, &m.pinned, span{0x3000 + uint64(i), 0x4000 + uint64(i), -1}) {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), won.Load())
}
