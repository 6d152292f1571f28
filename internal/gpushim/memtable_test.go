package gpushim

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemTable(t *testing.T) {
	var m memTable
	require.True(t, m.add(&m.allocs, span{Lo: 0x1000, Hi: 0x2000, Val: 0}))
	require.True(t, m.add(&m.allocs, span{Lo: 0x2000, Hi: 0x3000, Val: 0}))
	require.True(t, m.add(&m.mapped, span{Lo: 0x10000, Hi: 0x20000, Val: 1}))
	require.True(t, m.add(&m.mapped, span{Lo: 0x20000, Hi: 0x30000, Val: 1}))
	require.True(t, m.add(&m.pinned, span{Lo: 0x100000, Hi: 0x101000, Val: -1}))
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
	require.True(t, m.add(&m.pinned, span{Lo: 0x1000, Hi: 0x2000, Val: -1}))
	assert.False(t, m.addApart(&m.registered, &m.pinned, span{Lo: 0x1800, Hi: 0x2800, Val: -1}), "overlaps pinned")
	assert.False(t, m.host(0x2000, 0x800))

	var wg sync.WaitGroup
	var won atomic.Int32
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.addApart(&m.registered, &m.pinned, span{Lo: 0x3000 + uint64(i), Hi: 0x4000 + uint64(i), Val: -1}) {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), won.Load())
}
