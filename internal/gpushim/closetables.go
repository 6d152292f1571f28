package gpushim

import "sort"

// What Close takes out of the driver's tables (close.go releases it).

// drain removes every live handle and returns them. Ids keep counting up, so
// no handle from before is ever valid again.
func (t *handles) drain() []handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]handle, 0, len(t.m))
	for _, h := range t.m {
		out = append(out, h)
	}
	clear(t.m)
	return out
}

// drained is the content of a memTable, taken out by drain.
type drained struct {
	allocs, reserved, mapped, pinned, registered []span
	peers                                        [][2]int // {dev, owner} pairs with peer access, sorted
}

// drain empties m and returns what it held.
func (m *memTable) drain() drained {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := drained{allocs: m.allocs.Ranges(), reserved: m.reserved.Ranges(), mapped: m.mapped.Ranges(),
		pinned: m.pinned.Ranges(), registered: m.registered.Ranges()}
	for pair := range m.peers {
		out.peers = append(out.peers, pair)
	}
	sort.Slice(out.peers, func(i, j int) bool {
		a, b := out.peers[i], out.peers[j]
		return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
	})
	for _, t := range []*spans{&m.allocs, &m.reserved, &m.mapped, &m.pinned, &m.registered} {
		t.Clear()
	}
	clear(m.peers)
	clear(m.access)
	return out
}
