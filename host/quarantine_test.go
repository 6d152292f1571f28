package host

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// reserved reports whether address a is in any mapping of this process,
// accessible or not. The host device is Linux-only (memfd, mmap), so
// /proc/self/maps exists wherever this package builds: a missing one is a
// broken environment and fails the test rather than skipping it.
func reserved(t *testing.T, a uintptr) bool {
	t.Helper()
	maps, err := procMaps()
	require.NoError(t, err, "the quarantine checks read the process's mappings")
	for _, m := range maps {
		if a >= m.lo && a < m.hi {
			return true
		}
	}
	return false
}

// allocator is one kind of memory: allocate, free, and use (a synchronous
// access through the pointer).
type allocator struct {
	name  string
	alloc func(d *Driver) (uintptr, error)
	free  func(d *Driver, p uintptr) error
	use   func(d *Driver, p uintptr) error
}

func allocators(t *testing.T) []allocator {
	const size = 4096
	return []allocator{
		{"Malloc",
			func(d *Driver) (uintptr, error) { p, err := d.Malloc(0, size); return uintptr(p), err },
			func(d *Driver, p uintptr) error { return d.Free(0, vendorapi.DevicePtr(p)) },
			func(d *Driver, p uintptr) error { return d.Memset(0, vendorapi.DevicePtr(p), 1, size) }},
		{"HostAlloc",
			func(d *Driver) (uintptr, error) { b, err := d.HostAlloc(size); return b.Ptr, err },
			func(d *Driver, p uintptr) error { return d.HostFree(vendorapi.HostBuffer{Ptr: p, Size: size}) },
			func(d *Driver, p uintptr) error { return d.Memset(0, vendorapi.DevicePtr(p), 1, size) }},
		{"VMMReserve",
			func(d *Driver) (uintptr, error) { vr, err := d.VMMReserve(0, d.gran); return uintptr(vr.Base), err },
			func(d *Driver, p uintptr) error {
				return d.VMMFree(vendorapi.VirtualRange{Device: 0, Base: vendorapi.DevicePtr(p), Size: d.gran})
			},
			func(d *Driver, p uintptr) error {
				c, err := d.VMMCreate(0, d.gran)
				require.NoError(t, err)
				defer func() { require.NoError(t, d.VMMRelease(c)) }()
				return d.VMMMap(vendorapi.DevicePtr(p), c)
			}},
	}
}

// TestFreedAddressesStayReserved checks the cure for the ABA double free:
// mmap would give a freed range's addresses to the next allocation at once,
// and a second free of the stale pointer then freed the new owner's memory.
func TestFreedAddressesStayReserved(t *testing.T) {
	for _, a := range allocators(t) {
		t.Run(a.name, func(t *testing.T) {
			d := newDriver(t, Options{})
			p, err := a.alloc(d)
			require.NoError(t, err)
			require.NoError(t, a.free(d, p))
			assert.True(t, reserved(t, p), "the freed range is still reserved")

			q, err := a.alloc(d)
			require.NoError(t, err)
			assert.NotEqual(t, p, q, "a new allocation does not get the freed addresses")
			ve := requireHostErr(t, a.free(d, p), vendorapi.ErrInvalidValue, "a second free of the stale pointer")
			assert.Contains(t, ve.Message, "freed already")
			ve = requireHostErr(t, a.use(d, p), vendorapi.ErrInvalidValue, "use after free")
			assert.Contains(t, ve.Message, "freed")
			require.NoError(t, a.use(d, q), "the new allocation is untouched by the stale free")
		})
	}
}

func TestUseAfterFreeAsync(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	p := mustMalloc(t, d, 0, 64)
	hb, err := d.HostAlloc(64)
	require.NoError(t, err)
	require.NoError(t, d.Free(0, p))
	require.NoError(t, d.HostFree(hb))
	q := mustMalloc(t, d, 0, 64)

	ve := requireHostErr(t, d.MemsetAsync(s, p, 0, 64), vendorapi.ErrInvalidValue)
	assert.Contains(t, ve.Message, "device allocation")
	assert.Contains(t, ve.Message, "freed")
	ve = requireHostErr(t, d.CopyHtoDAsync(s, q, hb), vendorapi.ErrInvalidValue)
	assert.Contains(t, ve.Message, "pinned host allocation")
	assert.Contains(t, ve.Message, "freed")
	requireHostErr(t, d.CopyDtoD(0, q, p, 64), vendorapi.ErrInvalidValue)

	// Work queued before Free runs before the memory goes (Free waits for
	// it); work that reaches a range freed since it was queued fails when
	// it runs, as an illegal address, instead of writing freed memory.
	release := gate(t, d, s)
	require.NoError(t, d.MemsetAsync(s, q, 3, 64))
	done := async(func() error { return d.Free(0, q) })
	stillWaiting(t, done, "Free")
	release()
	require.NoError(t, await(t, done, "Free"))
	require.NoError(t, d.StreamSynchronize(s))
}

// TestGuardPage checks that an address one past the end of an allocation is
// never inside another one: mmap places mappings next to each other, so a
// copy one byte past the end of one allocation used to land in the next.
func TestGuardPage(t *testing.T) {
	d := newDriver(t, Options{})
	for _, size := range []uint64{d.page, 2 * d.page, 100, 1, 0} {
		var ps []vendorapi.DevicePtr
		for range 16 {
			p := mustMalloc(t, d, 0, size)
			ps = append(ps, p)
			require.NoError(t, d.Memset(0, p, 1, size), "the whole allocation is usable")
			ve := requireHostErr(t, d.Memset(0, p.Add(size), 0, 1), vendorapi.ErrInvalidValue, "one past the end (size %d)", size)
			assert.Contains(t, ve.Message, "past the end")
			if size > 0 {
				requireHostErr(t, d.CopyDtoD(0, p, p.Add(size-1), 2), vendorapi.ErrInvalidValue, "a copy one byte past the end")
			}
		}
		for i, p := range ps {
			for j, q := range ps {
				if i != j {
					assert.False(t, q <= p.Add(size) && p.Add(size) < q.Add(max(size, 1)),
						"one past allocation %d is inside allocation %d", i, j)
				}
			}
		}
	}
	hb, err := d.HostAlloc(d.page)
	require.NoError(t, err)
	requireHostErr(t, d.Memset(0, vendorapi.DevicePtr(hb.Ptr+uintptr(d.page)), 0, 1), vendorapi.ErrInvalidValue)
}

// TestQuarantineEvicts checks that the quarantine is bounded: past
// quarantineRanges freed ranges the oldest are unmapped for real.
func TestQuarantineEvicts(t *testing.T) {
	d := newDriver(t, Options{MemoryLimit: 1 << 20})
	first := mustMalloc(t, d, 0, 1)
	require.NoError(t, d.Free(0, first))
	for range quarantineRanges {
		require.NoError(t, d.Free(0, mustMalloc(t, d, 0, 1)))
	}
	d.memMu.RLock()
	n, bytes := len(d.freed.fifo), d.freed.bytes
	d.memMu.RUnlock()
	assert.Equal(t, quarantineRanges, n)
	assert.Equal(t, quarantineRanges*2*d.page, bytes, "a page and its guard page each")
	// (Whether its addresses are unmapped cannot be read from /proc reliably:
	// the runtime may map something there at once.)
	d.memMu.RLock()
	gone := d.regions.at(uintptr(first)) == nil && d.freed.fifo[0].base != uintptr(first)
	d.memMu.RUnlock()
	assert.True(t, gone, "the oldest freed range left the quarantine and the table")
	ve := requireHostErr(t, d.Free(0, first), vendorapi.ErrInvalidValue, "and is forgotten")
	assert.Contains(t, ve.Message, "not the start of a live allocation")
	free, total, err := d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, total, free, "freed memory counts as free at once")
}

// TestConcurrentDoubleFrees reproduces the race that corrupted other
// goroutines' data: goroutines allocate, fill, check, free and free again;
// the second free must fail and no buffer may change under its owner.
func TestConcurrentDoubleFrees(t *testing.T) {
	d := newDriver(t, Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := bytes.Repeat([]byte{byte(g + 1)}, 256)
			got := make([]byte, 256)
			for range 200 {
				p, err := d.Malloc(0, 256)
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, d.CopyHtoD(0, p, want))
				assert.NoError(t, d.CopyDtoH(0, got, p))
				assert.Equal(t, want, got, "goroutine %d's buffer changed under it", g)
				assert.NoError(t, d.Free(0, p))
				assert.Error(t, d.Free(0, p), "a double free is refused")
			}
		}()
	}
	wg.Wait()
}

// TestCloseUnmapsQuarantine checks that Close unmaps freed ranges too (that
// it forgets them; /proc cannot show reliably that they are unmapped, as the
// runtime may map something there at once).
func TestCloseUnmapsQuarantine(t *testing.T) {
	d, err := New(Options{})
	require.NoError(t, err)
	for _, a := range allocators(t) {
		p, err := a.alloc(d)
		require.NoError(t, err)
		require.NoError(t, a.free(d, p))
	}
	d.memMu.RLock()
	require.Equal(t, 3, d.regions.Len())
	require.Len(t, d.freed.fifo, 3)
	d.memMu.RUnlock()
	require.NoError(t, d.Close())
	assert.Zero(t, d.regions.Len())
	assert.Empty(t, d.freed.fifo)
	assert.Zero(t, d.freed.bytes)
}
