package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// properties checks DeviceCount, Props and MemInfo of every device, and that
// bad device indices are errors rather than panics.
func (s *suite) properties(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		p, err := s.d.Props(dev)
		require.NoError(t, err, "Props(%d)", dev)
		t.Logf("%s device %d: %q arch %q cc %d.%d (encoded %#x), %d SMs, warp %d, shared %d/%d, memory %d, VMM %v (granularity %d)",
			s.d.Vendor(), dev, p.Name, p.ArchName, p.Major, p.Minor, int(p.CC), p.SMs, p.WarpSize,
			p.SharedMemPerBlock, p.SharedMemPerBlockOptin, p.TotalMemory, p.VMM, p.VMMGranularity)
		assert.Equal(t, dev, p.Index, "Props.Index")
		assert.NotEmpty(t, p.Name, "Props.Name")
		assert.NotEmpty(t, p.ArchName, "Props.ArchName")
		assert.Contains(t, []int{32, 64}, p.WarpSize, "Props.WarpSize")
		assert.Positive(t, p.SMs, "Props.SMs")
		assert.Positive(t, p.TotalMemory, "Props.TotalMemory")
		assert.Positive(t, p.SharedMemPerBlock, "Props.SharedMemPerBlock")
		assert.GreaterOrEqual(t, p.SharedMemPerBlockOptin, p.SharedMemPerBlock, "Props.SharedMemPerBlockOptin")
		assert.GreaterOrEqual(t, p.Major, 0, "Props.Major")
		assert.GreaterOrEqual(t, p.Minor, 0, "Props.Minor")
		if p.VMM {
			g := p.VMMGranularity
			assert.True(t, g > 0 && g&(g-1) == 0, "Props.VMMGranularity %d must be a power of two when VMM is set", g)
		}

		free, total, err := s.d.MemInfo(dev)
		require.NoError(t, err, "MemInfo(%d)", dev)
		assert.Positive(t, total, "MemInfo total")
		assert.LessOrEqual(t, free, total, "MemInfo: free <= total")

		q, err := s.d.Props(dev)
		require.NoError(t, err, "Props(%d) again", dev)
		assert.Equal(t, p.Name, q.Name, "Props is stable across calls")
		assert.Equal(t, p.TotalMemory, q.TotalMemory, "Props is stable across calls")
		t.Run("MemInfo reflects allocations", func(t *testing.T) { s.memInfoTracks(t, dev) })
	})

	t.Run("bad device indices are errors", func(t *testing.T) {
		for _, dev := range []int{-1, s.n, s.n + 7} {
			_, err := s.d.Props(dev)
			s.checkError(t, "Props(bad index)", err, anyDevice, vendorapi.ErrInvalidValue)
			_, _, err = s.d.MemInfo(dev)
			s.checkError(t, "MemInfo(bad index)", err, anyDevice, vendorapi.ErrInvalidValue)
			_, err = s.d.CanAccessPeer(0, dev)
			s.checkError(t, "CanAccessPeer(0, bad index)", err, anyDevice, vendorapi.ErrInvalidValue)
			err = s.d.DeviceSynchronize(dev)
			s.checkError(t, "DeviceSynchronize(bad index)", err, anyDevice, vendorapi.ErrInvalidValue)
		}
	})

	if fl, ok := s.d.(vendorapi.FeatureLister); ok {
		t.Run("features are named", func(t *testing.T) {
			seen := map[string]bool{}
			for _, f := range fl.Features() {
				assert.NotEmpty(t, f.Name, "Feature.Name (value %q)", f.Value)
				assert.False(t, seen[f.Name], "feature %s listed twice", f.Name)
				seen[f.Name] = true
			}
		})
	}

	t.Run("device count is stable", func(t *testing.T) {
		n, err := s.d.DeviceCount()
		require.NoError(t, err)
		assert.Equal(t, s.n, n)
	})
}

// memInfoTracks checks that free memory falls while an allocation (Malloc,
// and VMMCreate where there is VMM) lives and rises when it is freed. Half
// the allocation's size is the threshold, so that a vendor rounding sizes or
// another user of the device changing free memory a little does not fail it.
func (s *suite) memInfoTracks(t *testing.T, dev int) {
	p, err := s.d.Props(dev)
	require.NoError(t, err, "Props")
	_, total, err := s.d.MemInfo(dev)
	require.NoError(t, err, "MemInfo")
	size := min(uint64(64<<20), total/8) &^ (1<<20 - 1)
	if p.VMM {
		size = max(size/p.VMMGranularity, 1) * p.VMMGranularity
	}
	check := func(what string, alloc func() (release func() error, err error)) {
		before, _, err := s.d.MemInfo(dev)
		require.NoError(t, err, "MemInfo")
		release, err := alloc()
		require.NoError(t, err, "%s of %d bytes", what, size)
		during, _, err := s.d.MemInfo(dev)
		require.NoError(t, err, "MemInfo")
		require.NoError(t, release(), "releasing the %s", what)
		after, _, err := s.d.MemInfo(dev)
		require.NoError(t, err, "MemInfo")
		assert.LessOrEqual(t, during, before-size/2, "free memory falls by about %d bytes while a %s lives (before %d, during %d)", size, what, before, during)
		assert.GreaterOrEqual(t, after, during+size/2, "free memory rises by about %d bytes once the %s is released (during %d, after %d)", size, what, during, after)
	}
	check("Malloc", func() (func() error, error) {
		ptr, err := s.d.Malloc(dev, size)
		return func() error { return s.d.Free(dev, ptr) }, err
	})
	if p.VMM {
		check("VMMCreate", func() (func() error, error) {
			c, err := s.d.VMMCreate(dev, size)
			return func() error { return s.d.VMMRelease(c) }, err
		})
		// A chunk released while mapped lives on until it is unmapped.
		check("chunk released while mapped", func() (func() error, error) {
			vr, err := s.d.VMMReserve(dev, size)
			require.NoError(t, err, "VMMReserve")
			c, err := s.d.VMMCreate(dev, size)
			require.NoError(t, err, "VMMCreate")
			require.NoError(t, s.d.VMMMap(vr.Base, c), "VMMMap")
			return func() error {
				if err := s.d.VMMUnmap(dev, vr.Base, size); err != nil {
					return err
				}
				return s.d.VMMFree(vr)
			}, s.d.VMMRelease(c)
		})
	}
}
