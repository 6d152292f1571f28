package conformance

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// ranges checks that every call refuses memory it may not touch (one byte
// past an allocation, the zero pointer, host memory that is not pinned, a 2D
// copy whose width exceeds a pitch) with ErrInvalidValue and writes nothing;
// that zero sizes are no-ops; and the rules of Malloc and Free at the edges.
func (s *suite) ranges(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		t.Run("one byte past an allocation is refused", func(t *testing.T) { s.overrun(t, dev) })
		t.Run("2D copies", func(t *testing.T) { s.copy2DRules(t, dev) })
		t.Run("host memory of async copies must be pinned", func(t *testing.T) { s.hostRanges(t, dev) })
		t.Run("zero sizes touch nothing", func(t *testing.T) { s.zeroSizes(t, dev) })
		t.Run("malloc of zero bytes", func(t *testing.T) {
			p, err := s.d.Malloc(dev, 0)
			require.NoError(t, err, "Malloc(%d, 0)", dev)
			q, err := s.d.Malloc(dev, 0)
			require.NoError(t, err, "Malloc(%d, 0)", dev)
			assert.NotZero(t, p, "Malloc(0) returns a non-zero pointer")
			assert.NotEqual(t, p, q, "two live allocations of 0 bytes are distinct")
			require.NoError(t, s.d.Free(dev, p), "Free of a 0-byte allocation")
			require.NoError(t, s.d.Free(dev, q), "Free of a 0-byte allocation")
		})
		t.Run("free waits for the work queued before it", func(t *testing.T) { s.freeWaits(t, dev) })
		t.Run("free of the zero pointer is a no-op", func(t *testing.T) {
			require.NoError(t, s.d.Free(dev, 0), "Free(%d, 0)", dev)
			require.NoError(t, s.d.HostFree(vendorapi.HostBuffer{}), "HostFree of the zero buffer")
		})
	})
	t.Run("free on the wrong device", s.freeWrongDevice)
}

// overrun makes every copy and memset reach one byte past an allocation (or
// start at the zero pointer) and checks each is refused and writes nothing.
func (s *suite) overrun(t *testing.T, dev int) {
	r := newRand(t)
	const n = 4096 + 37
	const pitch = (n + 1) / 2 // two rows of pitch bytes are n+1 bytes
	pBefore, qBefore := randBytes(r, n), randBytes(r, n)
	p, q := s.upload(t, dev, pBefore), s.upload(t, dev, qBefore)
	big := s.upload(t, dev, randBytes(r, 2*n))
	hb, host := s.pinned(t, n+1)
	copy(host, randBytes(r, n+1))
	hostBefore := append([]byte(nil), host...)
	st := s.stream(t, dev)
	whole, plus1 := hb.Slice(0, n), hb.Slice(0, n+1)
	v := randByte(r)
	inval := vendorapi.ErrInvalidValue
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"CopyHtoD of n+1 bytes", func() error { return s.d.CopyHtoD(dev, p, make([]byte, n+1)) }},
		{"CopyHtoD of n bytes at p+1", func() error { return s.d.CopyHtoD(dev, p.Add(1), make([]byte, n)) }},
		{"CopyHtoD to the zero pointer", func() error { return s.d.CopyHtoD(dev, 0, make([]byte, 1)) }},
		{"CopyDtoH of n+1 bytes", func() error { return s.d.CopyDtoH(dev, make([]byte, n+1), p) }},
		{"CopyDtoH of one byte at p+n", func() error { return s.d.CopyDtoH(dev, make([]byte, 1), p.Add(n)) }},
		{"CopyDtoD of n+1 bytes", func() error { return s.d.CopyDtoD(dev, big, p, n+1) }},
		{"CopyDtoD of n bytes from p+1", func() error { return s.d.CopyDtoD(dev, q, p.Add(1), n) }},
		{"CopyDtoD of n bytes to q+1", func() error { return s.d.CopyDtoD(dev, q.Add(1), p, n) }},
		{"CopyPeer within the device, n+1 bytes", func() error { return s.d.CopyPeer(dev, big, dev, p, n+1) }},
		{"Memset of n+1 bytes", func() error { return s.d.Memset(dev, p, v, n+1) }},
		{"Memset of one byte at p+n", func() error { return s.d.Memset(dev, p.Add(n), v, 1) }},
		{"Memset of the zero pointer", func() error { return s.d.Memset(dev, 0, v, 1) }},
		{"MemsetAsync of n+1 bytes", func() error { return s.d.MemsetAsync(st, q, v, n+1) }},
		{"CopyHtoDAsync of n bytes at p+1", func() error { return s.d.CopyHtoDAsync(st, p.Add(1), whole) }},
		{"CopyHtoDAsync of n+1 bytes", func() error { return s.d.CopyHtoDAsync(st, p, plus1) }},
		{"CopyDtoHAsync of n+1 bytes", func() error { return s.d.CopyDtoHAsync(st, plus1, q) }},
		{"CopyDtoDAsync of n+1 bytes", func() error { return s.d.CopyDtoDAsync(st, big, p, n+1) }},
		{"CopyDtoDAsync to q+1", func() error { return s.d.CopyDtoDAsync(st, q.Add(1), p, n) }},
		{"CopyPeerAsync within the device, n+1 bytes", func() error { return s.d.CopyPeerAsync(st, dev, big, dev, p, n+1) }},
		{"Copy2DAsync reading one byte past src", func() error { return s.d.Copy2DAsync(st, big, pitch, p, pitch, pitch, 2) }},
		{"Copy2DAsync writing one byte past dst", func() error { return s.d.Copy2DAsync(st, q, pitch, big, pitch, pitch, 2) }},
		{"Copy2DPeerAsync reading one byte past src", func() error { return s.d.Copy2DPeerAsync(st, dev, big, pitch, dev, p, pitch, pitch, 2) }},
		{"Copy2DPeerAsync writing one byte past dst", func() error { return s.d.Copy2DPeerAsync(st, dev, q, pitch, dev, big, pitch, pitch, 2) }},
	} {
		s.checkError(t, c.name, c.call(), dev, inval)
	}
	s.sync(t, st)
	checkBytes(t, "refused calls wrote nothing to p", s.download(t, dev, p, n), pBefore)
	checkBytes(t, "refused calls wrote nothing to q", s.download(t, dev, q, n), qBefore)
	checkBytes(t, "refused calls wrote nothing to pinned memory", host, hostBefore)

	// The same ranges without the extra byte are accepted.
	require.NoError(t, s.d.CopyDtoD(dev, q, p, n), "CopyDtoD of exactly n bytes")
	require.NoError(t, s.d.Memset(dev, p.Add(n-1), v, 1), "Memset of the last byte")
	require.NoError(t, s.d.CopyDtoHAsync(st, whole, q), "CopyDtoHAsync of exactly n bytes")
	s.sync(t, st)
	checkBytes(t, "CopyDtoD of exactly n bytes", host[:n], pBefore)
	s.healthy(t, dev)
}

// copy2DRules checks that a width beyond either pitch is refused whatever
// the height, and that zero width or height copies nothing.
func (s *suite) copy2DRules(t *testing.T, dev int) {
	r := newRand(t)
	const size = 4096
	before := randBytes(r, size)
	src, dst := s.upload(t, dev, randBytes(r, size)), s.upload(t, dev, before)
	st := s.stream(t, dev)
	for _, h := range []uint64{1, 2, 5} {
		s.checkError(t, "Copy2DAsync with width > dpitch", s.d.Copy2DAsync(st, dst, 32, src, 64, 33, h), dev, vendorapi.ErrInvalidValue)
		s.checkError(t, "Copy2DAsync with width > spitch", s.d.Copy2DAsync(st, dst, 64, src, 32, 33, h), dev, vendorapi.ErrInvalidValue)
		s.checkError(t, "Copy2DPeerAsync with width > dpitch", s.d.Copy2DPeerAsync(st, dev, dst, 32, dev, src, 64, 33, h), dev, vendorapi.ErrInvalidValue)
		s.checkError(t, "Copy2DPeerAsync with width > spitch", s.d.Copy2DPeerAsync(st, dev, dst, 64, dev, src, 32, 33, h), dev, vendorapi.ErrInvalidValue)
	}
	require.NoError(t, s.d.Copy2DAsync(st, dst, 64, src, 64, 0, 5), "Copy2DAsync of zero width")
	require.NoError(t, s.d.Copy2DAsync(st, dst, 64, src, 64, 64, 0), "Copy2DAsync of zero height")
	s.sync(t, st)
	checkBytes(t, "refused and empty 2D copies wrote nothing", s.download(t, dev, dst, size), before)
}

// hostRanges checks that asynchronous copies refuse host memory that is not
// pinned or registered, and a pinned buffer one byte too long.
func (s *suite) hostRanges(t *testing.T, dev int) {
	r := newRand(t)
	const n = 1000
	before := randBytes(r, n+64) // room for the device side of a host buffer one byte too long
	p := s.upload(t, dev, before)
	st := s.stream(t, dev)
	goMem := randBytes(r, n)
	goBuf := vendorapi.HostBuffer{Ptr: uintptr(unsafe.Pointer(&goMem[0])), Size: n}
	hb, err := s.d.HostAlloc(n)
	require.NoError(t, err, "HostAlloc")
	t.Cleanup(func() { assert.NoError(t, s.d.HostFree(hb), "HostFree") })
	past := vendorapi.HostBuffer{Ptr: hb.Ptr, Size: hb.Size + 1}
	inval := vendorapi.ErrInvalidValue
	s.checkError(t, "CopyHtoDAsync from Go memory", s.d.CopyHtoDAsync(st, p, goBuf), dev, inval)
	s.checkError(t, "CopyDtoHAsync into Go memory", s.d.CopyDtoHAsync(st, goBuf, p), dev, inval)
	s.checkError(t, "CopyHtoDAsync from the zero host pointer", s.d.CopyHtoDAsync(st, p, vendorapi.HostBuffer{Size: 1}), dev, inval)
	s.checkError(t, "CopyDtoHAsync one byte past a pinned buffer", s.d.CopyDtoHAsync(st, past, p), dev, inval)
	s.checkError(t, "CopyHtoDAsync one byte past a pinned buffer", s.d.CopyHtoDAsync(st, p, past), dev, inval)
	s.checkError(t, "HostFree of a pointer inside a pinned buffer", s.d.HostFree(vendorapi.HostBuffer{Ptr: hb.Ptr + 1, Size: 1}), anyDevice, inval)
	s.sync(t, st)
	runtime.KeepAlive(goMem)
	checkBytes(t, "refused copies wrote nothing", s.download(t, dev, p, len(before)), before)
	s.checkError(t, "HostRegister of the zero pointer", s.d.HostRegister(0, 4096), anyDevice, inval)
	s.checkError(t, "HostRegister of zero bytes", s.d.HostRegister(hb.Ptr, 0), anyDevice, inval)
	s.checkError(t, "HostRegister of pinned memory", s.d.HostRegister(hb.Ptr, hb.Size), anyDevice, inval)
}

// zeroSizes checks that copies and memsets of zero bytes succeed and touch
// nothing, even at the zero pointer.
func (s *suite) zeroSizes(t *testing.T, dev int) {
	r := newRand(t)
	const n = 256
	before := randBytes(r, n)
	p, q := s.upload(t, dev, before), s.upload(t, dev, before)
	st := s.stream(t, dev)
	hb, _ := s.pinned(t, 1)
	empty := hb.Slice(0, 0)
	for _, c := range []outcome{
		{"Memset", s.d.Memset(dev, p, 1, 0)},
		{"CopyHtoD", s.d.CopyHtoD(dev, p, nil)},
		{"CopyDtoH", s.d.CopyDtoH(dev, nil, p)},
		{"CopyDtoD", s.d.CopyDtoD(dev, q, p, 0)},
		{"MemsetAsync", s.d.MemsetAsync(st, p, 1, 0)},
		{"CopyHtoDAsync", s.d.CopyHtoDAsync(st, p, empty)},
		{"CopyDtoHAsync", s.d.CopyDtoHAsync(st, empty, p)},
		{"CopyDtoDAsync", s.d.CopyDtoDAsync(st, q, p, 0)},
		{"Memset at the zero pointer", s.d.Memset(dev, 0, 1, 0)},
		{"CopyDtoD from the zero pointer", s.d.CopyDtoD(dev, q, 0, 0)},
		{"MemsetAsync at the zero pointer", s.d.MemsetAsync(st, 0, 1, 0)},
	} {
		assert.NoError(t, c.err, "%s of zero bytes", c.name)
	}
	s.sync(t, st)
	checkBytes(t, "zero-byte calls wrote nothing", s.download(t, dev, p, n), before)
}

// freeWrongDevice frees device 0's memory as device 1's: refused, and the
// memory stays live.
func (s *suite) freeWrongDevice(t *testing.T) {
	if s.n < 2 {
		t.Skipf("needs two devices, %s has %d", s.d.Vendor(), s.n)
	}
	r := newRand(t)
	data := randBytes(r, 512)
	p := s.upload(t, 0, data)
	s.checkError(t, "Free on the wrong device", s.d.Free(1, p), 1, vendorapi.ErrInvalidValue)
	checkBytes(t, "memory freed on the wrong device is still live", s.download(t, 0, p, len(data)), data)
	s.healthy(t, 1)
}

// freeWaits frees device and pinned memory that work queued before the call
// still uses (a one-thread fill of a large buffer keeps it queued): the
// frees wait for that work, which completes without error.
func (s *suite) freeWaits(t *testing.T, dev int) {
	r := newRand(t)
	const n, m = 1 << 20, 256 // floats filled; floats copied to pinned memory
	st := s.stream(t, dev)
	p, err := s.d.Malloc(dev, 4*n)
	require.NoError(t, err, "Malloc")
	q := s.malloc(t, dev, 4*n)
	hb, err := s.d.HostAlloc(4 * m)
	require.NoError(t, err, "HostAlloc")
	v := randValue(r)
	one := vendorapi.Dim3{X: 1}
	require.NoError(t, s.d.Launch(s.kernel(t, dev, "fill_f32"), one, one, 0, st, args().Ptr(p).F32(v).I64(n)), "Launch fill_f32 on one thread")
	require.NoError(t, s.d.CopyDtoDAsync(st, q, p, 4*n), "CopyDtoDAsync")
	require.NoError(t, s.d.CopyDtoHAsync(st, hb, p), "CopyDtoHAsync")
	require.NoError(t, s.d.Free(dev, p), "Free of memory queued work uses")
	require.NoError(t, s.d.HostFree(hb), "HostFree of memory queued work uses")
	require.NoError(t, s.d.StreamSynchronize(st), "the work queued before the frees completed without error")
	checkBytes(t, "the work queued before Free saw the memory", s.download(t, dev, q, 4*n), le.FromF32(fill32(v, n)))
}
