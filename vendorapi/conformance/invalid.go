package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// errors makes invalid calls of every kind and checks each returns a filled
// *vendorapi.Error matching the sentinel the contract names, and that the
// device keeps working after each.
func (s *suite) errors(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		inval := vendorapi.ErrInvalidValue
		t.Run("bad device index", func(t *testing.T) {
			for _, bad := range []int{-1, s.n} {
				_, err := s.d.Malloc(bad, 256)
				s.checkError(t, "Malloc(bad device)", err, anyDevice, inval)
				_, err = s.d.StreamCreate(bad)
				s.checkError(t, "StreamCreate(bad device)", err, anyDevice, inval)
				_, err = s.d.EventCreate(bad, true)
				s.checkError(t, "EventCreate(bad device)", err, anyDevice, inval)
				s.checkError(t, "Memset(bad device)", s.d.Memset(bad, 0x1000, 1, 1), anyDevice, inval)
			}
			s.healthy(t, dev)
		})

		t.Run("free of a bogus pointer", func(t *testing.T) {
			p, err := s.d.Malloc(dev, 4096)
			require.NoError(t, err, "Malloc")
			s.checkError(t, "Free of a pointer inside an allocation", s.d.Free(dev, p.Add(16)), dev, inval)
			require.NoError(t, s.d.Free(dev, p), "Free")
			s.checkError(t, "Free twice", s.d.Free(dev, p), dev, inval)
			s.checkError(t, "Free of a pointer never allocated", s.d.Free(dev, vendorapi.DevicePtr(0xdead0000)), dev, inval)
			s.healthy(t, dev)
		})

		t.Run("copies to and from freed memory", func(t *testing.T) {
			r := newRand(t)
			const n = 1 << 16
			buf := randBytes(r, 256)
			// q is allocated before p is freed, so a vendor allocator that
			// reuses addresses cannot hand p's range back as q.
			q := s.upload(t, dev, buf)
			p, err := s.d.Malloc(dev, n)
			require.NoError(t, err, "Malloc")
			require.NoError(t, s.d.Free(dev, p), "Free")
			s.checkError(t, "CopyHtoD to freed memory", s.d.CopyHtoD(dev, p, buf), dev, inval)
			s.checkError(t, "CopyDtoH from freed memory", s.d.CopyDtoH(dev, buf, p), dev, inval)
			s.checkError(t, "Memset of freed memory", s.d.Memset(dev, p, 7, 256), dev, inval)
			s.checkError(t, "CopyDtoD to freed memory", s.d.CopyDtoD(dev, p, q, 256), dev, inval)
			s.checkError(t, "CopyDtoD from freed memory", s.d.CopyDtoD(dev, q, p, 256), dev, inval)
			checkBytes(t, "source of the refused copy", s.download(t, dev, q, 256), buf)
			s.healthy(t, dev)
		})

		t.Run("destroyed stream", func(t *testing.T) {
			st, err := s.d.StreamCreate(dev)
			require.NoError(t, err, "StreamCreate")
			require.NoError(t, s.d.StreamDestroy(st), "StreamDestroy")
			p := s.malloc(t, dev, 256)
			f := s.kernel(t, dev, "fill_f32")
			e := s.event(t, dev, false)
			s.checkError(t, "StreamSynchronize of a destroyed stream", s.d.StreamSynchronize(st), dev, inval)
			s.checkError(t, "StreamQuery of a destroyed stream", s.d.StreamQuery(st), dev, inval)
			s.checkError(t, "MemsetAsync on a destroyed stream", s.d.MemsetAsync(st, p, 1, 256), dev, inval)
			s.checkError(t, "Launch on a destroyed stream", s.d.Launch(f, smallGrid, smallBlock, 0, st,
				args().Ptr(p).F32(1).I64(64)), dev, inval)
			s.checkError(t, "EventRecord on a destroyed stream", s.d.EventRecord(e, st), dev, inval)
			s.checkError(t, "BeginCapture of a destroyed stream", s.d.BeginCapture(st), dev, inval)
			_, err = s.d.BLASCreate(st)
			s.checkError(t, "BLASCreate on a destroyed stream", err, dev, inval)
			s.checkError(t, "StreamDestroy twice", s.d.StreamDestroy(st), dev, inval)
			s.healthy(t, dev)
		})

		t.Run("destroyed event", func(t *testing.T) {
			st := s.stream(t, dev)
			e, err := s.d.EventCreate(dev, true)
			require.NoError(t, err, "EventCreate")
			require.NoError(t, s.d.EventDestroy(e), "EventDestroy")
			s.checkError(t, "EventRecord of a destroyed event", s.d.EventRecord(e, st), dev, inval)
			s.checkError(t, "EventQuery of a destroyed event", s.d.EventQuery(e), dev, inval)
			s.checkError(t, "EventSynchronize of a destroyed event", s.d.EventSynchronize(e), dev, inval)
			s.checkError(t, "StreamWaitEvent on a destroyed event", s.d.StreamWaitEvent(st, e), dev, inval)
			s.checkError(t, "EventDestroy twice", s.d.EventDestroy(e), dev, inval)
			s.healthy(t, dev)
		})

		t.Run("destroyed graph and exec", func(t *testing.T) {
			st := s.stream(t, dev)
			p := s.malloc(t, dev, 256)
			require.NoError(t, s.d.BeginCapture(st), "BeginCapture")
			s.launch(t, st, "fill_f32", args().Ptr(p).F32(1).I64(64))
			g, err := s.d.EndCapture(st)
			require.NoError(t, err, "EndCapture")
			x, err := s.d.GraphInstantiate(g)
			require.NoError(t, err, "GraphInstantiate")
			require.NoError(t, s.d.GraphDestroy(g), "GraphDestroy")
			require.NoError(t, s.d.GraphExecDestroy(x), "GraphExecDestroy")
			_, err = s.d.GraphInstantiate(g)
			s.checkError(t, "GraphInstantiate of a destroyed graph", err, dev, inval)
			s.checkError(t, "GraphLaunch of a destroyed exec", s.d.GraphLaunch(x, st), dev, inval)
			s.checkError(t, "GraphDestroy twice", s.d.GraphDestroy(g), dev, inval)
			s.checkError(t, "GraphExecDestroy twice", s.d.GraphExecDestroy(x), dev, inval)
			_, err = s.d.EndCapture(st)
			s.checkError(t, "EndCapture of a stream not capturing", err, dev)
			s.sync(t, st)
			s.healthy(t, dev)
		})

		t.Run("destroyed blas handle", func(t *testing.T) {
			st := s.stream(t, dev)
			h, err := s.d.BLASCreate(st)
			require.NoError(t, err, "BLASCreate")
			require.NoError(t, s.d.BLASDestroy(h), "BLASDestroy")
			p := s.malloc(t, dev, 4*16)
			g := vendorapi.Gemm{M: 4, N: 4, K: 4, Alpha: 1, A: p, AType: vendorapi.F32, LDA: 4, B: p, BType: vendorapi.F32,
				LDB: 4, C: p, CType: vendorapi.F32, LDC: 4, Compute: vendorapi.Compute32F}
			s.checkError(t, "Gemm on a destroyed handle", s.d.Gemm(h, g), dev, inval)
			s.checkError(t, "BLASSetStream on a destroyed handle", s.d.BLASSetStream(h, st), dev, inval)
			s.checkError(t, "BLASDestroy twice", s.d.BLASDestroy(h), dev, inval)
			s.healthy(t, dev)
		})
	})

	t.Run("bogus host buffers", func(t *testing.T) {
		hb, err := s.d.HostAlloc(4096)
		require.NoError(t, err, "HostAlloc")
		require.NoError(t, s.d.HostFree(hb), "HostFree")
		s.checkError(t, "HostFree twice", s.d.HostFree(hb), anyDevice, vendorapi.ErrInvalidValue)
		s.checkError(t, "HostUnregister of memory never registered", s.d.HostUnregister(hb.Ptr), anyDevice)
		s.healthy(t, 0)
	})
}
