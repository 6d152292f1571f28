package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// virtualMemory reserves a range, backs part of it with two chunks mapped
// back to back, copies across the chunk boundary and tears everything down;
// then checks that bad VMM calls are errors.
func (s *suite) virtualMemory(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		p, err := s.d.Props(dev)
		require.NoError(t, err, "Props")
		if !p.VMM {
			t.Skipf("%s device %d reports no VMM", s.d.Vendor(), dev)
		}
		gran := p.VMMGranularity
		t.Run("two chunks mapped back to back", func(t *testing.T) { s.vmmMap(t, dev, gran) })
		t.Run("bad calls are errors", func(t *testing.T) { s.vmmBad(t, dev, gran) })
	})
}

func (s *suite) vmmMap(t *testing.T, dev int, gran uint64) {
	r := newRand(t)
	vr, err := s.d.VMMReserve(dev, 4*gran)
	require.NoError(t, err, "VMMReserve(4 granules)")
	require.NotZero(t, vr.Base, "VMMReserve: base")
	assert.Equal(t, dev, vr.Device, "VirtualRange.Device")
	assert.GreaterOrEqual(t, vr.Size, 4*gran, "VirtualRange.Size")
	assert.Zero(t, uint64(vr.Base)%gran, "VMMReserve: base %#x is not aligned to the granularity %d", vr.Base, gran)

	c1, err := s.d.VMMCreate(dev, gran)
	require.NoError(t, err, "VMMCreate")
	c2, err := s.d.VMMCreate(dev, gran)
	require.NoError(t, err, "VMMCreate")
	assert.Equal(t, dev, c1.Device, "PhysicalChunk.Device")
	assert.Equal(t, gran, c1.Size, "PhysicalChunk.Size")

	require.NoError(t, s.d.VMMMap(vr.Base, c1), "VMMMap first chunk")
	require.NoError(t, s.d.VMMMap(vr.Base.Add(gran), c2), "VMMMap second chunk right after it")
	require.NoError(t, s.d.VMMSetAccess(dev, vr.Base, 2*gran), "VMMSetAccess")
	// A chunk released while mapped lives on until it is unmapped.
	require.NoError(t, s.d.VMMRelease(c1), "VMMRelease of a mapped chunk")

	n := min(gran, 64<<10)
	off := gran - n/2 // straddles the boundary between the chunks
	data := randBytes(r, int(n))
	require.NoError(t, s.d.CopyHtoD(dev, vr.Base.Add(off), data), "CopyHtoD across the chunk boundary")
	got := make([]byte, n)
	require.NoError(t, s.d.CopyDtoH(dev, got, vr.Base.Add(off)), "CopyDtoH across the chunk boundary")
	checkBytes(t, "data across the chunk boundary", got, data)

	// Kernels and queued work see the mapping too.
	st := s.stream(t, dev)
	nf := int64(n / 4)
	value := randValue(r)
	s.launch(t, st, "fill_f32", args().Ptr(vr.Base.Add(off)).F32(value).I64(nf))
	s.sync(t, st)
	want := make([]float32, nf)
	for i := range want {
		want[i] = value
	}
	require.NoError(t, s.d.CopyDtoH(dev, got, vr.Base.Add(off)), "CopyDtoH")
	checkBytes(t, "fill_f32 across the chunk boundary", got, le.FromF32(want))

	require.NoError(t, s.d.VMMUnmap(dev, vr.Base, 2*gran), "VMMUnmap both chunks")
	require.NoError(t, s.d.VMMRelease(c2), "VMMRelease")

	// The range can be backed again after unmapping.
	c3, err := s.d.VMMCreate(dev, 2*gran)
	require.NoError(t, err, "VMMCreate two granules")
	require.NoError(t, s.d.VMMMap(vr.Base.Add(2*gran), c3), "VMMMap into the second half")
	require.NoError(t, s.d.VMMSetAccess(dev, vr.Base.Add(2*gran), 2*gran), "VMMSetAccess")
	require.NoError(t, s.d.CopyHtoD(dev, vr.Base.Add(4*gran-n), data), "CopyHtoD at the end of the range")
	require.NoError(t, s.d.CopyDtoH(dev, got, vr.Base.Add(4*gran-n)), "CopyDtoH")
	checkBytes(t, "data at the end of the range", got, data)
	require.NoError(t, s.d.VMMUnmap(dev, vr.Base.Add(2*gran), 2*gran), "VMMUnmap")
	require.NoError(t, s.d.VMMRelease(c3), "VMMRelease")
	require.NoError(t, s.d.VMMFree(vr), "VMMFree")
	s.healthy(t, dev)
}

func (s *suite) vmmBad(t *testing.T, dev int, gran uint64) {
	_, err := s.d.VMMReserve(dev, gran+1)
	s.checkError(t, "VMMReserve of a size that is not a multiple of the granularity", err, dev, vendorapi.ErrInvalidValue)
	_, err = s.d.VMMCreate(dev, gran+1)
	s.checkError(t, "VMMCreate of a size that is not a multiple of the granularity", err, dev, vendorapi.ErrInvalidValue)
	_, err = s.d.VMMReserve(-1, gran)
	s.checkError(t, "VMMReserve on a bad device", err, anyDevice, vendorapi.ErrInvalidValue)

	vr, err := s.d.VMMReserve(dev, 2*gran)
	require.NoError(t, err, "VMMReserve")
	c, err := s.d.VMMCreate(dev, gran)
	require.NoError(t, err, "VMMCreate")

	s.checkError(t, "VMMMap outside any reserved range", s.d.VMMMap(vr.Base.Add(vr.Size), c), anyDevice)
	s.checkError(t, "VMMMap at an address not aligned to the granularity", s.d.VMMMap(vr.Base.Add(gran/2), c), anyDevice)
	require.NoError(t, s.d.VMMMap(vr.Base, c), "VMMMap")
	s.checkError(t, "VMMMap onto an address already mapped", s.d.VMMMap(vr.Base, c), anyDevice)
	require.NoError(t, s.d.VMMSetAccess(dev, vr.Base, gran), "VMMSetAccess")
	require.NoError(t, s.d.VMMUnmap(dev, vr.Base, gran), "VMMUnmap")
	require.NoError(t, s.d.VMMRelease(c), "VMMRelease")
	s.checkError(t, "VMMRelease twice", s.d.VMMRelease(c), anyDevice, vendorapi.ErrInvalidValue)
	require.NoError(t, s.d.VMMFree(vr), "VMMFree")
	s.checkError(t, "VMMFree twice", s.d.VMMFree(vr), anyDevice, vendorapi.ErrInvalidValue)

	bogus := vendorapi.VirtualRange{Device: dev, Base: vr.Base.Add(gran), Size: gran}
	s.checkError(t, "VMMFree of a range never reserved", s.d.VMMFree(bogus), anyDevice, vendorapi.ErrInvalidValue)
	s.checkError(t, "VMMRelease of a chunk never created", s.d.VMMRelease(vendorapi.PhysicalChunk{Device: dev, Handle: 0x7e57, Size: gran}), anyDevice, vendorapi.ErrInvalidValue)
	s.healthy(t, dev)
}
