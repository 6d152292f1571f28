package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// access checks that a device uses another device's memory only with peer
// access enabled, and a VMM mapping only once VMMSetAccess gave it access.
func (s *suite) access(t *testing.T) {
	t.Run("peer access is enforced", s.peerAccess)
	s.eachDevice(t, func(t *testing.T, dev int) {
		p, err := s.d.Props(dev)
		require.NoError(t, err, "Props")
		if !p.VMM {
			t.Skipf("%s device %d reports no VMM", s.d.Vendor(), dev)
		}
		t.Run("VMM access is enforced", func(t *testing.T) { s.vmmAccess(t, dev, p.VMMGranularity) })
	})
}

// peerAccess has device 1 touch device 0's memory with copies and memsets:
// refused without peer access, done with it (where the devices can), refused
// again once it is disabled; CopyPeer needs none.
func (s *suite) peerAccess(t *testing.T) {
	if s.n < 2 {
		t.Skipf("needs two devices, %s has %d", s.d.Vendor(), s.n)
	}
	const owner, user = 0, 1
	r := newRand(t)
	const n = 3000
	data, other := randBytes(r, n), randBytes(r, n)
	pa, pb := s.upload(t, owner, data), s.upload(t, user, other)
	su := s.stream(t, user)

	for _, d := range []int{owner, user} {
		can, err := s.d.CanAccessPeer(d, d)
		require.NoError(t, err, "CanAccessPeer(%d, %d)", d, d)
		assert.False(t, can, "a device is not its own peer")
		s.checkError(t, "EnablePeerAccess of a device to itself", s.d.EnablePeerAccess(d, d), anyDevice, vendorapi.ErrInvalidValue)
	}
	require.NoError(t, s.d.DisablePeerAccess(user, owner), "DisablePeerAccess when not enabled")
	refused := func(what string) {
		t.Helper()
		v := randByte(r)
		for _, c := range []outcome{
			{"CopyDtoD from the peer's memory", s.d.CopyDtoD(user, pb, pa, n)},
			{"CopyDtoD to the peer's memory", s.d.CopyDtoD(user, pa, pb, n)},
			{"CopyHtoD to the peer's memory", s.d.CopyHtoD(user, pa, other)},
			{"CopyDtoH from the peer's memory", s.d.CopyDtoH(user, make([]byte, n), pa)},
			{"Memset of the peer's memory", s.d.Memset(user, pa, v, n)},
			{"MemsetAsync of the peer's memory", s.d.MemsetAsync(su, pa, v, n)},
			{"CopyDtoDAsync from the peer's memory", s.d.CopyDtoDAsync(su, pb, pa, n)},
			{"Copy2DAsync to the peer's memory", s.d.Copy2DAsync(su, pa, 100, pb, 100, 100, 3)},
		} {
			s.checkError(t, c.name+" "+what, c.err, user, vendorapi.ErrInvalidValue)
		}
		s.sync(t, su)
		checkBytes(t, "refused calls left the peer's memory alone "+what, s.download(t, owner, pa, n), data)
		checkBytes(t, "refused calls left the user's memory alone "+what, s.download(t, user, pb, n), other)
	}
	refused("without peer access")

	require.NoError(t, s.d.CopyPeer(user, pb, owner, pa, n), "CopyPeer needs no peer access")
	checkBytes(t, "CopyPeer", s.download(t, user, pb, n), data)
	require.NoError(t, s.d.CopyHtoD(user, pb, other), "CopyHtoD")

	can, err := s.d.CanAccessPeer(user, owner)
	require.NoError(t, err, "CanAccessPeer")
	if !can {
		t.Logf("device %d cannot access device %d's memory: only the refusals are checked", user, owner)
		return
	}
	require.NoError(t, s.d.EnablePeerAccess(user, owner), "EnablePeerAccess")
	require.NoError(t, s.d.CopyDtoD(user, pb, pa, n), "CopyDtoD from the peer's memory with peer access")
	checkBytes(t, "CopyDtoD from the peer's memory with peer access", s.download(t, user, pb, n), data)
	v := randByte(r)
	require.NoError(t, s.d.MemsetAsync(su, pa, v, n), "MemsetAsync of the peer's memory with peer access")
	s.sync(t, su)
	checkBytes(t, "MemsetAsync of the peer's memory with peer access", s.download(t, owner, pa, n), repeat(v, n))
	require.NoError(t, s.d.CopyHtoD(owner, pa, data), "CopyHtoD")
	require.NoError(t, s.d.CopyHtoD(user, pb, other), "CopyHtoD")
	require.NoError(t, s.d.DisablePeerAccess(user, owner), "DisablePeerAccess")
	refused("after peer access was disabled")
}

// vmmAccess maps a chunk and checks that copies and memsets into it are
// refused until VMMSetAccess, and on another device after it.
func (s *suite) vmmAccess(t *testing.T, dev int, gran uint64) {
	r := newRand(t)
	vr, err := s.d.VMMReserve(dev, 2*gran)
	require.NoError(t, err, "VMMReserve")
	c, err := s.d.VMMCreate(dev, gran)
	require.NoError(t, err, "VMMCreate")
	require.NoError(t, s.d.VMMMap(vr.Base, c), "VMMMap")
	st := s.stream(t, dev)
	const n = 512
	data := randBytes(r, n)
	src := s.upload(t, dev, data)
	inval := vendorapi.ErrInvalidValue
	s.checkError(t, "CopyHtoD into a mapping without access", s.d.CopyHtoD(dev, vr.Base, data), dev, inval)
	s.checkError(t, "CopyDtoH from a mapping without access", s.d.CopyDtoH(dev, make([]byte, n), vr.Base), dev, inval)
	s.checkError(t, "Memset of a mapping without access", s.d.Memset(dev, vr.Base, 1, n), dev, inval)
	s.checkError(t, "CopyDtoDAsync into a mapping without access", s.d.CopyDtoDAsync(st, vr.Base, src, n), dev, inval)
	s.checkError(t, "CopyHtoD into the unmapped half of a reserved range", s.d.CopyHtoD(dev, vr.Base.Add(gran), data), dev, inval)
	s.sync(t, st)

	require.NoError(t, s.d.VMMSetAccess(dev, vr.Base, gran), "VMMSetAccess")
	require.NoError(t, s.d.CopyDtoDAsync(st, vr.Base, src, n), "CopyDtoDAsync into the mapping with access")
	s.sync(t, st)
	checkBytes(t, "the mapping with access", s.download(t, dev, vr.Base, n), data)
	s.checkError(t, "CopyHtoD running past the mapping into unmapped space", s.d.CopyHtoD(dev, vr.Base.Add(gran-1), data[:2]), dev, inval)
	for other := range s.n {
		if other != dev {
			s.checkError(t, "CopyHtoD into a mapping from a device without access", s.d.CopyHtoD(other, vr.Base, data), other, inval)
		}
	}
	s.checkError(t, "VMMFree of a range with a mapping in it", s.d.VMMFree(vr), anyDevice, inval)
	s.checkError(t, "VMMUnmap of part of a mapping", s.d.VMMUnmap(dev, vr.Base, gran/2), anyDevice, inval)
	s.checkError(t, "VMMUnmap of a mapping and unmapped space after it", s.d.VMMUnmap(dev, vr.Base, 2*gran), anyDevice, inval)
	checkBytes(t, "a refused unmap leaves the mapping", s.download(t, dev, vr.Base, n), data)
	require.NoError(t, s.d.VMMUnmap(dev, vr.Base, gran), "VMMUnmap")
	s.checkError(t, "CopyHtoD into an unmapped range", s.d.CopyHtoD(dev, vr.Base, data), dev, inval)
	require.NoError(t, s.d.VMMRelease(c), "VMMRelease")
	require.NoError(t, s.d.VMMFree(vr), "VMMFree")
	s.healthy(t, dev)
}
