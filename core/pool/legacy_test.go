package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

func TestLookAheadSize(t *testing.T) {
	for _, tc := range []struct {
		size, want uint64
	}{
		{1, 256},
		{243, 256},             // 255.15 → 255 → 256
		{244, 256},             // 256.2 → 256, already a multiple of 256
		{245, 512},             // 257.25 → 257 → 512
		{256, 512},             // 268.8 → 268 → 512
		{1000, 1280},           // 1050 → 1280
		{4096, 4352},           // 4300.8 → 4300 → 4352
		{1 << 20, 1101056},     // 1101004.8 → 1101004 → 1101056
		{100 << 20, 110100480}, // 110100480 exactly
	} {
		assert.Equal(t, tc.want, lookAheadSize(tc.size), "size %d", tc.size)
	}
}

// warm returns a legacy pool over a fake allocator whose cache holds one
// buffer per request in sizes (each allocated at its look-ahead size, then
// freed), and the pointers of those buffers by their size.
func warm(t *testing.T, sizes ...uint64) (*Legacy, *fakeAlloc, map[uint64]vendorapi.DevicePtr) {
	t.Helper()
	a := newFakeAlloc(0)
	p := NewLegacy(a, 0, Options{})
	var bufs []Buffer
	ptrs := map[uint64]vendorapi.DevicePtr{}
	for _, s := range sizes {
		b, err := p.Alloc(s)
		require.NoError(t, err)
		require.Equal(t, lookAheadSize(s), b.Size)
		bufs = append(bufs, b)
		ptrs[b.Size] = b.Ptr
	}
	for _, b := range bufs {
		require.NoError(t, b.Free())
	}
	require.Len(t, a.mallocs, len(sizes))
	return p, a, ptrs
}

func TestLegacyBestFit(t *testing.T) {
	// Cached: 1280 (from 1000), 2304 (from 2000), 4352 (from 4096).
	cached := []uint64{1000, 2000, 4096}
	for _, tc := range []struct {
		name    string
		ask     uint64
		want    uint64 // Size of the buffer handed out
		fromNew bool   // a driver allocation rather than a cached buffer
	}{
		{"exact fit of the smallest", 1280, 1280, false},
		{"exact fit of the middle", 2304, 2304, false},
		{"exact fit of the largest", 4352, 4352, false},
		{"smaller than all takes the smallest", 100, 1280, false},
		{"one byte over takes the next", 1281, 2304, false},
		{"best fit, not first fit", 2000, 2304, false},
		{"between the two largest", 3000, 4352, false},
		{"larger than all allocates the look-ahead size", 5000, 5376, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, a, ptrs := warm(t, cached...)
			b, err := p.Alloc(tc.ask)
			require.NoError(t, err)
			assert.Equal(t, tc.want, b.Size)
			st := p.Stats()
			if tc.fromNew {
				assert.Equal(t, []uint64{1280, 2304, 4352, tc.want}, a.mallocs)
				assert.Equal(t, uint64(1280+2304+4352), st.Cached)
			} else {
				assert.Equal(t, ptrs[tc.want], b.Ptr, "the cached buffer is reused")
				assert.Len(t, a.mallocs, len(cached), "no driver allocation")
				assert.Equal(t, uint64(1280+2304+4352)-tc.want, st.Cached)
			}
			assert.Equal(t, tc.want, st.InUse)
			assert.Equal(t, 1, st.Buffers)
			require.NoError(t, b.Free())
			require.NoError(t, p.Close())
			assert.Empty(t, a.live, "everything returned to the driver")
		})
	}
}

func TestLegacyExactFitAmongEqualSizes(t *testing.T) {
	// Two cached buffers of one size and a larger one: both requests of that
	// size are served from the cache, the larger buffer stays.
	p, a, _ := warm(t, 1000, 1000, 2000)
	b1, err := p.Alloc(1280)
	require.NoError(t, err)
	b2, err := p.Alloc(1280)
	require.NoError(t, err)
	assert.NotEqual(t, b1.Ptr, b2.Ptr)
	assert.Equal(t, uint64(1280), b1.Size)
	assert.Equal(t, uint64(1280), b2.Size)
	assert.Equal(t, uint64(2304), p.Stats().Cached)
	assert.Len(t, a.mallocs, 3)
	require.NoError(t, b2.Free())
	require.NoError(t, b1.Free())
	require.NoError(t, p.Close())
}

func TestLegacyFullSlots(t *testing.T) {
	d, p, start := newPool(t, legacyKind, 64<<20, Options{})
	bufs := make([]Buffer, MaxBuffers+1)
	for i := range bufs {
		var err error
		bufs[i], err = p.Alloc(1000)
		require.NoError(t, err)
	}
	assert.Equal(t, start-(MaxBuffers+1)*1280, memFree(t, d))
	for i, b := range bufs {
		require.NoError(t, b.Free())
		st := p.Stats()
		if i < MaxBuffers {
			assert.Equal(t, uint64(i+1)*1280, st.Cached, "free %d goes to a slot", i+1)
			assert.Zero(t, st.DriverFrees)
		}
	}
	st := p.Stats()
	assert.Equal(t, uint64(1), st.DriverFrees, "the 257th free goes to the driver")
	assert.Equal(t, uint64(MaxBuffers*1280), st.Cached)
	assert.Zero(t, st.InUse)
	assert.Equal(t, start-MaxBuffers*1280, memFree(t, d))
	require.NoError(t, p.Close())
	assert.Equal(t, uint64(MaxBuffers+1), p.Stats().DriverFrees)
}

func TestLegacyFlush(t *testing.T) {
	d, p, start := newPool(t, legacyKind, 64<<20, Options{})
	a, err := p.Alloc(1000)
	require.NoError(t, err)
	b, err := p.Alloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, b.Free())
	require.NoError(t, p.Flush())
	st := p.Stats()
	assert.Zero(t, st.Cached)
	assert.Equal(t, uint64(1280), st.InUse, "a buffer out is not flushed")
	assert.Equal(t, start-1280, memFree(t, d))
	require.NoError(t, a.Free())
}

func TestLegacyStaleFree(t *testing.T) {
	// A buffer freed, its memory handed out again, then freed a second time:
	// the second Free is refused and the new owner keeps its buffer.
	p := NewLegacy(newFakeAlloc(0), 0, Options{})
	a, err := p.Alloc(1000)
	require.NoError(t, err)
	require.NoError(t, a.Free())
	b, err := p.Alloc(1000)
	require.NoError(t, err)
	require.Equal(t, a.Ptr, b.Ptr, "the cached buffer is reused")
	before := p.Stats()
	require.ErrorIs(t, a.Free(), ErrFreed)
	assert.Equal(t, before, p.Stats())
	require.NoError(t, b.Free())
	require.NoError(t, p.Close())
}

func TestLegacyFlushAndRetrySequence(t *testing.T) {
	// Pure logic over a fake allocator of 4000 bytes: two cached 1280-byte
	// buffers leave no room for a 2304-byte one until they are flushed.
	a := newFakeAlloc(4000)
	p := NewLegacy(a, 0, Options{})
	b1, err := p.Alloc(1000)
	require.NoError(t, err)
	b2, err := p.Alloc(1000)
	require.NoError(t, err)
	require.NoError(t, b1.Free())
	require.NoError(t, b2.Free())

	b3, err := p.Alloc(2000)
	require.NoError(t, err)
	assert.Equal(t, uint64(2304), b3.Size)
	assert.Equal(t, []uint64{1280, 1280, 2304}, a.mallocs, "successful driver allocations")
	assert.Equal(t, []uint64{1280, 1280}, a.frees, "the flush freed both cached buffers")
	st := p.Stats()
	assert.Equal(t, Stats{InUse: 2304, Buffers: 1, PeakInUse: 2560, PeakHeld: 2560,
		DriverAllocs: 3, DriverFrees: 2, Flushes: 1}, st)

	// Out of memory with nothing cached: one flush, one retry, an error; the
	// pool keeps its buffer and serves what fits.
	_, err = p.Alloc(2000)
	require.ErrorIs(t, err, vendorapi.ErrOutOfMemory)
	assert.Equal(t, uint64(2), p.Stats().Flushes)
	require.NoError(t, b3.Free())
	b4, err := p.Alloc(2304)
	require.NoError(t, err)
	assert.Equal(t, b3.Ptr, b4.Ptr)
	require.NoError(t, b4.Free())
	require.NoError(t, p.Close())
	assert.Empty(t, a.live)
	assert.Zero(t, a.used)
}
