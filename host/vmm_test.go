package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

func TestVMM(t *testing.T) {
	d := newDriver(t, Options{Devices: 2, MemoryLimit: 64 << 20})
	g := d.gran
	r, err := d.VMMReserve(0, 8*g)
	require.NoError(t, err)
	assert.Zero(t, uint64(r.Base)%g, "reserved ranges are aligned to the granularity")
	assert.Equal(t, 8*g, r.Size)

	c1, err := d.VMMCreate(0, 2*g)
	require.NoError(t, err)
	c2, err := d.VMMCreate(0, g)
	require.NoError(t, err)
	free, _, err := d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, 64<<20-3*g, free, "chunks count against the limit")

	require.NoError(t, d.VMMMap(r.Base, c1))
	require.NoError(t, d.VMMMap(r.Base.Add(2*g), c2))
	// Mapped but not yet accessible: refused, not a segfault.
	requireHostErr(t, d.Memset(0, r.Base, 1, 16), vendorapi.ErrInvalidValue)
	require.NoError(t, d.VMMSetAccess(0, r.Base, 3*g))

	// The two chunks are one contiguous range.
	data := make([]float32, 3*int(g)/4)
	for i := range data {
		data[i] = float32(i)
	}
	require.NoError(t, d.CopyHtoD(0, r.Base, le.FromF32(data)))
	assert.Equal(t, data, download(t, d, 0, r.Base, len(data)))
	requireHostErr(t, d.Memset(0, r.Base, 0, 3*g+1), vendorapi.ErrInvalidValue, "past the mapped part")
	requireHostErr(t, d.Memset(1, r.Base, 0, 16), vendorapi.ErrInvalidValue, "no access for device 1")

	// Releasing a mapped chunk keeps its memory alive.
	require.NoError(t, d.VMMRelease(c1))
	requireHostErr(t, d.VMMRelease(c1), vendorapi.ErrInvalidValue, "double release")
	assert.Equal(t, data[:4], download(t, d, 0, r.Base, 4))

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"map over a mapping", func() error { return d.VMMMap(r.Base.Add(2*g), c2) }},
		{"map outside any reserve", func() error { return d.VMMMap(0x10000, c2) }},
		{"map a released chunk", func() error { return d.VMMMap(r.Base.Add(4*g), c1) }},
		{"map unaligned", func() error { return d.VMMMap(r.Base.Add(4*g+1), c2) }},
		{"map past the end", func() error { return d.VMMMap(r.Base.Add(8*g), c2) }},
		{"set access on part of a mapping", func() error { return d.VMMSetAccess(0, r.Base, g) }},
		{"set access unmapped", func() error { return d.VMMSetAccess(0, r.Base.Add(4*g), g) }},
		{"unmap part of a mapping", func() error { return d.VMMUnmap(0, r.Base, g) }},
		{"free with mappings", func() error { return d.VMMFree(r) }},
		{"free a wrong size", func() error { return d.VMMFree(vendorapi.VirtualRange{Device: 0, Base: r.Base, Size: g}) }},
		{"reserve a non-multiple", func() error { _, err := d.VMMReserve(0, g+1); return err }},
		{"create a non-multiple", func() error { _, err := d.VMMCreate(0, g/2); return err }},
		{"create zero", func() error { _, err := d.VMMCreate(0, 0); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) { requireHostErr(t, tc.call(), vendorapi.ErrInvalidValue) })
	}

	require.NoError(t, d.VMMUnmap(0, r.Base, 3*g), "unmapping several whole mappings at once")
	requireHostErr(t, d.Memset(0, r.Base, 0, 16), vendorapi.ErrInvalidValue, "unmapped memory")
	free, _, err = d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, 64<<20-g, free, "the released chunk's memory returned on unmap; c2 is still held")

	// Remap c2 elsewhere: its contents are the chunk's, not the address's.
	require.NoError(t, d.VMMMap(r.Base.Add(5*g), c2))
	require.NoError(t, d.VMMSetAccess(1, r.Base.Add(5*g), g))
	got := make([]byte, 8)
	require.NoError(t, d.CopyDtoH(1, got, r.Base.Add(5*g)))
	assert.Equal(t, le.FromF32(data[2*int(g)/4:2*int(g)/4+2]), got)
	require.NoError(t, d.VMMUnmap(0, r.Base.Add(5*g), g))
	require.NoError(t, d.VMMRelease(c2))
	require.NoError(t, d.VMMFree(r))
	requireHostErr(t, d.VMMFree(r), vendorapi.ErrInvalidValue, "double free")
	free, _, err = d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(64<<20), free)
}
