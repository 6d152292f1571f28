package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHandlesDrain(t *testing.T) {
	var h handles
	a := h.add(handle{kind: kindStream, dev: 0, raw: 1})
	b := h.add(handle{kind: kindEvent, dev: 1, raw: 2})
	got := h.drain()
	assert.Len(t, got, 2)
	for _, id := range []uintptr{a, b} {
		_, ok := h.get(id, kindStream, 0)
		assert.False(t, ok, "handle %d is gone", id)
	}
	c := h.add(handle{kind: kindStream, dev: 0, raw: 1})
	assert.Greater(t, c, b, "ids are not reused after a drain")
	assert.Empty(t, h.drain()[1:], "only the new handle is left")
}

func TestMemTableDrain(t *testing.T) {
	var m memTable
	require.True(t, m.add(&m.allocs, span{Lo: 0x1000, Hi: 0x2000, Val: 0}))
	require.True(t, m.add(&m.reserved, span{Lo: 0x10000, Hi: 0x30000, Val: 1}))
	require.True(t, m.add(&m.mapped, span{Lo: 0x10000, Hi: 0x20000, Val: 1}))
	require.True(t, m.add(&m.pinned, span{Lo: 0x100000, Hi: 0x101000, Val: -1}))
	require.True(t, m.add(&m.registered, span{Lo: 0x200000, Hi: 0x201000, Val: -1}))
	m.grant(1, 0x10000, 0x10000)
	m.setPeer(1, 0, true)
	m.setPeer(0, 1, true)
	got := m.drain()
	for _, c := range []struct {
		name string
		s    []span
	}{{"allocs", got.allocs}, {"reserved", got.reserved}, {"mapped", got.mapped}, {"pinned", got.pinned}, {"registered", got.registered}} {
		assert.Len(t, c.s, 1, c.name)
	}
	assert.Equal(t, [][2]int{{0, 1}, {1, 0}}, got.peers)
	assert.False(t, m.device(0, 0x1000, 1), "no allocation is left")
	assert.False(t, m.device(1, 0x10000, 1), "no mapping is left")
	assert.False(t, m.host(0x100000, 1), "no pinned memory is left")
	assert.Empty(t, m.access)
	assert.Empty(t, m.drain().peers)
}
