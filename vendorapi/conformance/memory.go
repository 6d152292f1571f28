package conformance

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/ternion/ternion/internal/le"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// memory checks allocation, memset and every copy, synchronous and queued,
// with sentinel bytes around each destination.
func (s *suite) memory(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		t.Run("malloc and free", func(t *testing.T) { s.mallocFree(t, dev) })
		t.Run("memset then read back", func(t *testing.T) { s.memset(t, dev) })
		t.Run("host to device round trip", func(t *testing.T) { s.roundTrip(t, dev) })
		t.Run("device to device copy", func(t *testing.T) { s.copyDtoD(t, dev) })
		t.Run("async copies through pinned memory", func(t *testing.T) { s.asyncCopies(t, dev) })
		t.Run("async 2D copy with pitches", func(t *testing.T) { s.copy2D(t, dev) })
		t.Run("async 2D peer copy within the device", func(t *testing.T) { s.copy2DBetween(t, "Copy2DPeerAsync", dev, dev, dev) })
		t.Run("registered host memory", func(t *testing.T) { s.hostRegister(t, dev) })
	})
	t.Run("pinned host memory", func(t *testing.T) {
		r := newRand(t)
		for _, size := range []uint64{1, 100, 4096, 70000} {
			hb, err := s.d.HostAlloc(size)
			require.NoError(t, err, "HostAlloc(%d)", size)
			require.NotZero(t, hb.Ptr, "HostAlloc(%d)", size)
			require.GreaterOrEqual(t, hb.Size, size, "HostAlloc(%d): Size", size)
			b := hb.Bytes()
			data := randBytes(r, int(size))
			copy(b, data) // the memory is ordinary host memory to Go
			checkBytes(t, "pinned memory holds what was written", b[:size], data)
			require.NoError(t, s.d.HostFree(hb), "HostFree")
		}
	})
}

func (s *suite) mallocFree(t *testing.T, dev int) {
	type alloc struct {
		p    vendorapi.DevicePtr
		size uint64
	}
	var all []alloc
	for _, size := range []uint64{1, 7, 256, 4096, 65537, 1 << 20} {
		p, err := s.d.Malloc(dev, size)
		require.NoError(t, err, "Malloc(%d, %d)", dev, size)
		require.NotZero(t, p, "Malloc(%d, %d)", dev, size)
		all = append(all, alloc{p, size})
	}
	sorted := append([]alloc(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].p < sorted[j].p })
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		assert.LessOrEqual(t, uint64(a.p)+a.size, uint64(b.p), "allocations [%#x,+%d) and [%#x,+%d) overlap", a.p, a.size, b.p, b.size)
	}
	for _, a := range all {
		require.NoError(t, s.d.Free(dev, a.p), "Free(%d, %#x)", dev, a.p)
	}
	// Memory freed can be allocated again.
	p, err := s.d.Malloc(dev, 1<<20)
	require.NoError(t, err, "Malloc after Free")
	require.NoError(t, s.d.Free(dev, p), "Free")
}

func (s *suite) memset(t *testing.T, dev int) {
	r := newRand(t)
	const size, off, n = 3000, 37, 2001
	before := randBytes(r, size)
	p := s.upload(t, dev, before)
	v := randByte(r)
	require.NoError(t, s.d.Memset(dev, p.Add(off), v, n), "Memset")
	checkRegion(t, "Memset", s.download(t, dev, p, size), before, off, repeat(v, n))
}

func (s *suite) roundTrip(t *testing.T, dev int) {
	r := newRand(t)
	const size, off, n = 5000, 123, 4001
	before := randBytes(r, size)
	p := s.upload(t, dev, before)
	checkBytes(t, "CopyHtoD then CopyDtoH of a whole buffer", s.download(t, dev, p, size), before)

	data := randBytes(r, n)
	require.NoError(t, s.d.CopyHtoD(dev, p.Add(off), data), "CopyHtoD into the middle")
	checkRegion(t, "CopyHtoD into the middle", s.download(t, dev, p, size), before, off, data)

	// A read of part of a buffer writes exactly len(dst) bytes of dst.
	dst := randBytes(r, n+64)
	dstBefore := append([]byte(nil), dst...)
	require.NoError(t, s.d.CopyDtoH(dev, dst[32:32+n], p.Add(off)), "CopyDtoH from the middle")
	checkRegion(t, "CopyDtoH from the middle", dst, dstBefore, 32, data)
}

func (s *suite) copyDtoD(t *testing.T, dev int) {
	r := newRand(t)
	const size, soff, doff, n = 4096, 11, 301, 3003
	src := randBytes(r, size)
	before := randBytes(r, size)
	ps := s.upload(t, dev, src)
	pd := s.upload(t, dev, before)
	require.NoError(t, s.d.CopyDtoD(dev, pd.Add(doff), ps.Add(soff), n), "CopyDtoD")
	checkRegion(t, "CopyDtoD", s.download(t, dev, pd, size), before, doff, src[soff:soff+n])
	checkBytes(t, "CopyDtoD leaves its source alone", s.download(t, dev, ps, size), src)
}

// asyncCopies queues H2D, D2D, memset and D2H on one stream, through pinned
// buffers, and checks device and host destinations with their sentinels.
func (s *suite) asyncCopies(t *testing.T, dev int) {
	r := newRand(t)
	const size, n = 6000, 4000
	const aOff, bOff, hOff = 100, 1001, 77
	const mOff, mLen = 555, 999 // memset inside b's copy
	st := s.stream(t, dev)

	aBefore, bBefore := randBytes(r, size), randBytes(r, size)
	a, b := s.upload(t, dev, aBefore), s.upload(t, dev, bBefore)

	hsrc, src := s.pinned(t, n)
	data := randBytes(r, n)
	copy(src, data)
	hdst, dst := s.pinned(t, n+2*hOff)
	dstBefore := randBytes(r, len(dst))
	copy(dst, dstBefore)

	v := randByte(r)
	require.NoError(t, s.d.CopyHtoDAsync(st, a.Add(aOff), hsrc), "CopyHtoDAsync")
	require.NoError(t, s.d.CopyDtoDAsync(st, b.Add(bOff), a.Add(aOff), n), "CopyDtoDAsync")
	require.NoError(t, s.d.MemsetAsync(st, b.Add(bOff+mOff), v, mLen), "MemsetAsync")
	require.NoError(t, s.d.CopyDtoHAsync(st, hdst.Slice(hOff, n), b.Add(bOff)), "CopyDtoHAsync into the middle of a pinned buffer")
	s.sync(t, st)
	require.NoError(t, s.d.StreamQuery(st), "StreamQuery after StreamSynchronize")

	want := expectWrite(data, mOff, repeat(v, mLen))
	checkRegion(t, "CopyHtoDAsync", s.download(t, dev, a, size), aBefore, aOff, data)
	checkRegion(t, "CopyDtoDAsync then MemsetAsync", s.download(t, dev, b, size), bBefore, bOff, want)
	checkRegion(t, "CopyDtoHAsync", dst, dstBefore, hOff, want)
	checkBytes(t, "async copies leave the pinned source alone", src, data)
}

// copy2D copies a block of rows between buffers of different pitches.
func (s *suite) copy2D(t *testing.T, dev int) {
	s.copy2DBetween(t, "Copy2DAsync", dev, dev, dev)
}

// copy2DBetween copies a block of rows from srcDev to dstDev between buffers
// of different pitches on a stream of device on: with Copy2DAsync (one
// device) or Copy2DPeerAsync (call names which).
func (s *suite) copy2DBetween(t *testing.T, call string, on, srcDev, dstDev int) {
	r := newRand(t)
	const spitch, dpitch, width, height = 48, 64, 37, 5
	const sOff, dOff = 5, 16
	st := s.stream(t, on)
	srcBytes := randBytes(r, sOff+spitch*height)
	dstBefore := randBytes(r, dOff+dpitch*height+dpitch)
	src, dst := s.upload(t, srcDev, srcBytes), s.upload(t, dstDev, dstBefore)
	if call == "Copy2DAsync" {
		require.NoError(t, s.d.Copy2DAsync(st, dst.Add(dOff), dpitch, src.Add(sOff), spitch, width, height), call)
	} else {
		require.NoError(t, s.d.Copy2DPeerAsync(st, dstDev, dst.Add(dOff), dpitch, srcDev, src.Add(sOff), spitch, width, height), call)
	}
	s.sync(t, st)
	want := append([]byte(nil), dstBefore...)
	for row := range height {
		copy(want[dOff+row*dpitch:dOff+row*dpitch+width], srcBytes[sOff+row*spitch:])
	}
	checkBytes(t, fmt.Sprintf("%s from device %d to %d on a stream of %d: rows copied, pitch padding and surroundings untouched", call, srcDev, dstDev, on),
		s.download(t, dstDev, dst, len(dstBefore)), want)
}

// peer checks peer-access queries and copies between devices 0 and 1 in both
// directions, synchronous and queued, and a cross-device event wait.
func (s *suite) peer(t *testing.T) {
	if s.n < 2 {
		t.Skipf("peer copies need two devices, %s has %d", s.d.Vendor(), s.n)
	}
	for _, pair := range [][2]int{{0, 1}, {1, 0}} {
		src, dst := pair[0], pair[1]
		t.Run(fmt.Sprintf("device %d to device %d", src, dst), func(t *testing.T) {
			r := newRand(t)
			can, err := s.d.CanAccessPeer(dst, src)
			require.NoError(t, err, "CanAccessPeer")
			if can {
				require.NoError(t, s.d.EnablePeerAccess(dst, src), "EnablePeerAccess")
				require.NoError(t, s.d.EnablePeerAccess(dst, src), "EnablePeerAccess twice is not an error")
				t.Cleanup(func() {
					assert.NoError(t, s.d.DisablePeerAccess(dst, src), "DisablePeerAccess")
					assert.NoError(t, s.d.DisablePeerAccess(dst, src), "DisablePeerAccess twice is not an error")
				})
			}
			const size, soff, doff, n = 5000, 17, 333, 4111
			data := randBytes(r, size)
			before := randBytes(r, size)
			ps := s.upload(t, src, data)
			pd := s.upload(t, dst, before)
			require.NoError(t, s.d.CopyPeer(dst, pd.Add(doff), src, ps.Add(soff), n), "CopyPeer")
			checkRegion(t, "CopyPeer", s.download(t, dst, pd, size), before, doff, data[soff:soff+n])

			// Queued on a stream of either end.
			for _, on := range []int{src, dst} {
				before2 := randBytes(r, size)
				require.NoError(t, s.d.CopyHtoD(dst, pd, before2), "CopyHtoD")
				st := s.stream(t, on)
				require.NoError(t, s.d.CopyPeerAsync(st, dst, pd.Add(doff), src, ps.Add(soff), n), "CopyPeerAsync on device %d's stream", on)
				s.sync(t, st)
				checkRegion(t, fmt.Sprintf("CopyPeerAsync on a stream of device %d (dst %d)", on, dst), s.download(t, dst, pd, size), before2, doff, data[soff:soff+n])
			}

			for _, on := range []int{src, dst} {
				s.copy2DBetween(t, "Copy2DPeerAsync", on, src, dst)
			}

			// Cross-device order: dst's stream waits for an event of src's stream.
			const nf = 1 << 14
			value := randValue(r)
			a := s.malloc(t, src, 4*nf)
			b := s.malloc(t, dst, 4*nf)
			ss, sd := s.stream(t, src), s.stream(t, dst)
			e := s.event(t, src, false)
			s.launch(t, ss, "fill_f32", args().Ptr(a).F32(value).I64(nf))
			require.NoError(t, s.d.EventRecord(e, ss), "EventRecord")
			require.NoError(t, s.d.StreamWaitEvent(sd, e), "StreamWaitEvent on another device's event")
			require.NoError(t, s.d.CopyPeerAsync(sd, dst, b, src, a, 4*nf), "CopyPeerAsync")
			hb, got := s.pinned(t, 4*nf)
			require.NoError(t, s.d.CopyDtoHAsync(sd, hb, b), "CopyDtoHAsync")
			s.sync(t, sd)
			want := make([]float32, nf)
			for i := range want {
				want[i] = value
			}
			checkBytes(t, "peer copy ordered after a fill on the other device", got, le.FromF32(want))
		})
	}
}

// outOfMemory asks for more than the device has and checks the error, then
// that the device still works.
func (s *suite) outOfMemory(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		p, err := s.d.Props(dev)
		require.NoError(t, err, "Props")
		twice := uint64(math.MaxUint64 / 2)
		if p.TotalMemory < twice/2 {
			twice = 2 * p.TotalMemory
		}
		for _, c := range []struct {
			what string
			size uint64
		}{{"2*TotalMemory", twice}, {"TotalMemory + 1 GiB", p.TotalMemory + 1<<30}} {
			ptr, err := s.d.Malloc(dev, c.size)
			if err == nil {
				_ = s.d.Free(dev, ptr)
				t.Errorf("Malloc(%d, %s = %d) succeeded on a device of %d bytes", dev, c.what, c.size, p.TotalMemory)
				continue
			}
			s.checkError(t, "Malloc("+c.what+")", err, dev, vendorapi.ErrOutOfMemory)
			t.Logf("Malloc(%s) fails with: %v", c.what, err)
		}
		if p.VMM {
			size := (p.TotalMemory/p.VMMGranularity + 1) * p.VMMGranularity
			c, err := s.d.VMMCreate(dev, size)
			if err == nil {
				_ = s.d.VMMRelease(c)
				t.Errorf("VMMCreate(%d, %d) succeeded on a device of %d bytes", dev, size, p.TotalMemory)
			} else {
				s.checkError(t, "VMMCreate of more than TotalMemory", err, dev, vendorapi.ErrOutOfMemory)
			}
		}
		s.healthy(t, dev)
	})
}
