package gpushim

import (
	"sync"

	"github.com/ternion/ternion/internal/ranges"
)

// span is a live range [Lo, Hi) of addresses of device Val (-1: host memory).
type span = ranges.Range[int]

// spans is a table of disjoint spans.
type spans = ranges.Table[int]

// memTable is every range of memory the driver handed out and is live, so
// that copies, memsets and frees are checked before they reach the vendor
// library: a stale or foreign pointer is an ErrInvalidValue error, not a
// fault that poisons the device context or a silent write into memory that
// was freed (the vendor's allocator reuses pages, so it cannot tell).
type memTable struct {
	mu         sync.RWMutex
	allocs     spans           // Malloc, MallocManaged
	reserved   spans           // VMMReserve
	mapped     spans           // VMMMap: each mapped chunk
	pinned     spans           // HostAlloc
	registered spans           // HostRegister
	peers      map[[2]int]bool // {dev, owner}: dev has peer access to owner's memory

	// access: mapping base → bit d set when VMMSetAccess gave device d access (vmmaccess.go).
	access map[uint64]uint64
}

// device reports whether dev may use [p, p+n) as device memory: inside one
// allocation of dev itself or of a device whose memory dev has peer access to,
// or inside mapped VMM chunks that follow each other, each of which
// VMMSetAccess gave dev access to.
func (m *memTable) device(dev int, p, n uint64) bool {
	if n == 0 {
		return true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.allocs.Covers(p, n, false) {
		s, _ := m.allocs.Find(p)
		return s.Val == dev || m.peers[[2]int{dev, s.Val}]
	}
	return m.mapped.Covers(p, n, true) && m.accessible(dev, p, n)
}

// owner returns the device whose allocation holds p (false when none does).
func (m *memTable) owner(p uint64) (int, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.allocs.Find(p)
	return s.Val, ok
}

// setPeer records whether dev has peer access to peer's memory.
func (m *memTable) setPeer(dev, peer int, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.peers == nil {
		m.peers = map[[2]int]bool{}
	}
	if on {
		m.peers[[2]int{dev, peer}] = true
	} else {
		delete(m.peers, [2]int{dev, peer})
	}
}

// host reports whether [p, p+n) is pinned or registered host memory.
func (m *memTable) host(p, n uint64) bool {
	if n == 0 {
		return true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pinned.Covers(p, n, false) || m.registered.Covers(p, n, false)
}

// add inserts s into the table t points to; false when it overlaps.
func (m *memTable) add(t *spans, s span) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return t.Insert(s)
}

// addApart inserts s into t unless it overlaps a span of t or of apart,
// both checked under the one lock that inserts it; false when it overlaps.
func (m *memTable) addApart(t, apart *spans, s span) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !apart.Overlaps(s.Lo, s.Hi) && t.Insert(s)
}

// take removes the span of t starting at base whose device is dev (any
// device when dev is -1).
func (m *memTable) take(t *spans, base uint64, dev int) (span, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := t.At(base)
	if !ok || (dev != -1 && s.Val != dev) {
		return span{}, false
	}
	return t.Remove(base)
}
