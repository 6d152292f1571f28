package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVMMAccess(t *testing.T) {
	var m memTable
	m.reserved.Insert(span{Lo: 0x1000, Hi: 0x9000, Val: 0})
	for _, s := range []span{{Lo: 0x1000, Hi: 0x3000, Val: 0}, {Lo: 0x3000, Hi: 0x5000, Val: 0}, {Lo: 0x7000, Hi: 0x9000, Val: 0}} {
		m.mapped.Insert(s)
	}
	m.grant(0, 0x1000, 0x2000) // the first mapping only
	m.grant(1, 0x1000, 0x4000) // the first two, for device 1
	for _, c := range []struct {
		name string
		dev  int
		p, n uint64
		ok   bool
	}{
		{"inside a mapping with access", 0, 0x1800, 0x100, true},
		{"into a mapping without access", 0, 0x2f00, 0x200, false},
		{"a mapping without access", 0, 0x3000, 0x10, false},
		{"across two mappings with access", 1, 0x2f00, 0x200, true},
		{"past the mappings into unmapped space", 1, 0x4f00, 0x200, false},
		{"a mapping nobody was given access to", 1, 0x7000, 0x10, false},
		{"zero bytes", 0, 0x7000, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.ok, m.device(c.dev, c.p, c.n))
		})
	}
	m.revoke(0x1000, 0x4000)
	m.mapped.RemoveWithin(0x1000, 0x5000)
	m.mapped.Insert(span{Lo: 0x1000, Hi: 0x3000, Val: 0})
	assert.False(t, m.device(0, 0x1000, 0x10), "a new mapping at an unmapped address starts without access")
	assert.Empty(t, m.access, "revoke forgets the unmapped mappings")
}
