package pool

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

func TestVMMGrowth(t *testing.T) {
	const g = gran
	for _, tc := range []struct {
		name    string
		sizes   []uint64
		rounded []uint64 // Buffer.Size: each size rounded up to 128 B
		creates []uint64 // chunks mapped, in order
	}{
		{"small allocations share one chunk", []uint64{100, 1000, 60000}, []uint64{128, 1024, 60032}, []uint64{g}},
		{"exactly one granule", []uint64{g}, []uint64{g}, []uint64{g}},
		{"one byte past a granule maps another", []uint64{g, 1}, []uint64{g, 128}, []uint64{g, g}},
		{"a large request maps the shortfall rounded to the granularity",
			[]uint64{100, 200000}, []uint64{128, 200064}, []uint64{g, 3 * g}},
		{"one request of several granules is one chunk", []uint64{5*g - 10}, []uint64{5 * g}, []uint64{5 * g}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDriver(t, 64<<20)
			start := memFree(t, d)
			p, err := NewVMM(d, 0, g, Options{VMMReserve: 16 << 20})
			require.NoError(t, err)
			var bufs []Buffer
			var want uint64
			for i, s := range tc.sizes {
				b, err := p.Alloc(s)
				require.NoError(t, err)
				assert.Equal(t, tc.rounded[i], b.Size)
				if i > 0 {
					prev := bufs[i-1]
					assert.Equal(t, prev.Ptr.Add(prev.Size), b.Ptr, "allocations are contiguous")
				}
				bufs = append(bufs, b)
				want += b.Size
			}
			assert.Equal(t, tc.creates, d.creates)
			var mapped uint64
			for _, c := range tc.creates {
				mapped += c
			}
			st := p.Stats()
			assert.Equal(t, want, st.InUse)
			assert.Equal(t, mapped-want, st.Cached)
			assert.Equal(t, uint64(len(tc.creates)), st.DriverAllocs)
			assert.Equal(t, uint64(16<<20), st.Reserved)
			assert.Equal(t, start-mapped, memFree(t, d), "only mapped chunks count against memory")

			// Freed and allocated again: the mapped range is reused, nothing new is mapped.
			for _, b := range slices.Backward(bufs) {
				require.NoError(t, b.Free())
			}
			for _, s := range tc.sizes {
				b, err := p.Alloc(s)
				require.NoError(t, err)
				defer func() { require.NoError(t, b.Free()) }()
			}
			assert.Len(t, d.creates, len(tc.creates))
		})
		t.Run(tc.name+"/close unmaps each mapping", func(t *testing.T) {
			d, p, _ := newTestPool(t, vmmKind, 64<<20, Options{VMMReserve: 16 << 20})
			var base vendorapi.DevicePtr
			var bufs []Buffer
			for i, s := range tc.sizes {
				b, err := p.Alloc(s)
				require.NoError(t, err)
				if i == 0 {
					base = b.Ptr
				}
				bufs = append(bufs, b)
			}
			for _, b := range slices.Backward(bufs) {
				require.NoError(t, b.Free())
			}
			require.NoError(t, p.Close())
			var want []unmapCall
			off := uint64(0)
			for _, c := range tc.creates {
				want = append(want, unmapCall{base.Add(off), c})
				off += c
			}
			slices.Reverse(want)
			assert.Equal(t, want, d.unmaps, "one unmap per mapping, last first")
			assert.Equal(t, 1, d.vmmFrees, "the reserved range is freed")
			st := p.Stats()
			assert.Zero(t, st.Reserved)
			assert.Zero(t, st.Cached)
			assert.Equal(t, uint64(len(tc.creates)), st.DriverFrees)
		})
	}
}

func TestVMMReserveRoundedToGranularity(t *testing.T) {
	d := newHost(t, 64<<20)
	p, err := NewVMM(d, 0, gran, Options{VMMReserve: 100000})
	require.NoError(t, err)
	b, err := p.Alloc(1)
	require.NoError(t, err)
	assert.Equal(t, uint64(2*gran), p.Stats().Reserved)
	require.NoError(t, b.Free())
	require.NoError(t, p.Close())
}

func TestVMMLIFO(t *testing.T) {
	type step struct {
		op  string // "free" or "alloc"
		buf string
		err error
		at  string // alloc: the buffer whose place the new one takes
	}
	free := func(buf string, err error) step { return step{op: "free", buf: buf, err: err} }
	alloc := func(buf, at string) step { return step{op: "alloc", buf: buf, at: at} }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"reverse order", []step{free("c", nil), free("b", nil), free("a", nil)}},
		{"oldest first", []step{free("a", ErrOrder), free("c", nil), free("b", nil), free("a", nil)}},
		{"middle first", []step{free("b", ErrOrder), free("c", nil), free("b", nil), free("a", nil)}},
		{"twice out of order", []step{free("a", ErrOrder), free("a", ErrOrder), free("c", nil), free("b", nil), free("a", nil)}},
		{"double free of the top", []step{free("c", nil), free("c", ErrFreed), free("b", nil), free("a", nil)}},
		{"stale free after reuse", []step{free("c", nil), alloc("d", "c"), free("c", ErrFreed),
			free("d", nil), free("b", nil), free("a", nil)}},
		{"out of order after a new allocation", []step{alloc("d", ""), free("c", ErrOrder),
			free("d", nil), free("c", nil), free("b", nil), free("a", nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p, _ := newPool(t, vmmKind, 64<<20, Options{VMMReserve: 1 << 20})
			var err error
			bufs := map[string]Buffer{}
			for _, name := range []string{"a", "b", "c"} {
				bufs[name], err = p.Alloc(1000)
				require.NoError(t, err)
			}
			for i, s := range tc.steps {
				before := p.Stats()
				switch s.op {
				case "alloc":
					bufs[s.buf], err = p.Alloc(1000)
					require.NoError(t, err)
					if s.at != "" {
						assert.Equal(t, bufs[s.at].Ptr, bufs[s.buf].Ptr, "%s takes %s's place", s.buf, s.at)
					}
				case "free":
					err := bufs[s.buf].Free()
					if s.err == nil {
						require.NoError(t, err, "step %d", i)
						continue
					}
					require.ErrorIs(t, err, s.err, "step %d", i)
					assert.Equal(t, before, p.Stats(), "step %d: the pool is unchanged", i)
				}
			}
			st := p.Stats()
			assert.Zero(t, st.InUse)
			assert.Zero(t, st.Buffers)
		})
	}
}

func TestVMMFlushUnmapsTheUnusedTail(t *testing.T) {
	d, p, start := newTestPool(t, vmmKind, 64<<20, Options{VMMReserve: 16 << 20})
	a, err := p.Alloc(100) // maps one granule
	require.NoError(t, err)
	b, err := p.Alloc(200000) // maps three more
	require.NoError(t, err)
	require.NoError(t, b.Free())
	require.NoError(t, p.Flush())
	assert.Equal(t, []unmapCall{{a.Ptr.Add(gran), 3 * gran}}, d.unmaps, "only the mapping past the memory in use")
	st := p.Stats()
	assert.Equal(t, uint64(gran-128), st.Cached)
	assert.Equal(t, start-gran, memFree(t, d))

	// The pool grows again after a flush.
	b, err = p.Alloc(200000)
	require.NoError(t, err)
	assert.Equal(t, a.Ptr.Add(128), b.Ptr)
	require.NoError(t, b.Free())
	require.NoError(t, a.Free())
}

func TestVMMReserveExhausted(t *testing.T) {
	d := newHost(t, 64<<20)
	p, err := NewVMM(d, 0, gran, Options{VMMReserve: 1 << 20})
	require.NoError(t, err)
	a, err := p.Alloc(1<<20 - 1000)
	require.NoError(t, err)
	_, err = p.Alloc(2000)
	require.ErrorIs(t, err, vendorapi.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "address space")
	_, err = p.Alloc(1 << 62)
	require.ErrorIs(t, err, vendorapi.ErrOutOfMemory)
	_, err = p.Alloc(^uint64(0))
	require.ErrorIs(t, err, vendorapi.ErrOutOfMemory)
	b, err := p.Alloc(512)
	require.NoError(t, err, "what fits still fits")
	require.NoError(t, b.Free())
	require.NoError(t, a.Free())
	require.NoError(t, p.Close())
}

func TestNewVMMRejectsZeroGranularity(t *testing.T) {
	_, err := NewVMM(newHost(t, 1<<20), 0, 0, Options{})
	require.ErrorIs(t, err, vendorapi.ErrInvalidValue)
}
