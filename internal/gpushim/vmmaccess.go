package gpushim

// VMM access: which devices VMMSetAccess gave access to each mapping, so that
// a copy or memset into a mapping the device has no access to is refused
// before the vendor sees it (a device touching such memory faults, and on
// CUDA a fault is sticky). The vendor does not answer this cheaply
// (cuMemGetAccess is one call per mapping and device), hence the table.

// eachMapped calls f, in address order, with each mapping of the run of
// adjacent mappings covering [p, p+n) from p on, until f returns false or a
// gap stops the run. It reports whether f accepted mappings up to p+n.
func (m *memTable) eachMapped(p, n uint64, f func(span) bool) bool {
	at, end := p, p+n
	for s := range m.mapped.Overlapping(p, end) {
		if s.Lo > at || !f(s) {
			return false
		}
		at = s.Hi
	}
	return at >= end
}

// accessible reports whether dev has access to every mapping covering
// [p, p+n); the range is known to be covered by mappings. The caller holds m.mu.
func (m *memTable) accessible(dev int, p, n uint64) bool {
	return m.eachMapped(p, n, func(s span) bool { return m.access[s.Lo]&(1<<dev) != 0 })
}

// grant records that dev has access to the mappings covering [p, p+size).
// The caller holds m.mu for writing.
func (m *memTable) grant(dev int, p, size uint64) {
	if m.access == nil {
		m.access = map[uint64]uint64{}
	}
	m.eachMapped(p, size, func(s span) bool {
		m.access[s.Lo] |= 1 << dev
		return true
	})
}

// revoke forgets the access to the mappings inside [p, p+size), which are
// being unmapped. The caller holds m.mu for writing.
func (m *memTable) revoke(p, size uint64) {
	m.eachMapped(p, size, func(s span) bool {
		delete(m.access, s.Lo)
		return true
	})
}
