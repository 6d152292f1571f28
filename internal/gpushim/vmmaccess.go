package gpushim

// VMM access: which devices VMMSetAccess gave access to each mapping, so that
// a copy or memset into a mapping the device has no access to is refused
// before the vendor sees it (a device touching such memory faults, and on
// CUDA a fault is sticky). The vendor does not answer this cheaply
// (cuMemGetAccess is one call per mapping and device), hence the table.

// accessible reports whether dev has access to every mapping covering
// [p, p+n); the range is known to be covered by mappings. The caller holds m.mu.
func (m *memTable) accessible(dev int, p, n uint64) bool {
	for at := p; at < p+n; {
		s, ok := m.mapped.Find(at)
		if !ok || m.access[s.Lo]&(1<<dev) == 0 {
			return false
		}
		at = s.Hi
	}
	return true
}

// grant records that dev has access to the mappings covering [p, p+size).
// The caller holds m.mu for writing.
func (m *memTable) grant(dev int, p, size uint64) {
	if m.access == nil {
		m.access = map[uint64]uint64{}
	}
	for at := p; at < p+size; {
		s, ok := m.mapped.Find(at)
		if !ok {
			return
		}
		m.access[s.Lo] |= 1 << dev
		at = s.Hi
	}
}

// revoke forgets the access to the mappings inside [p, p+size), which are
// being unmapped. The caller holds m.mu for writing.
func (m *memTable) revoke(p, size uint64) {
	for at := p; at < p+size; {
		s, ok := m.mapped.Find(at)
		if !ok {
			return
		}
		delete(m.access, s.Lo)
		at = s.Hi
	}
}
