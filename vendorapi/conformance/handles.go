package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// handles checks that a handle is valid only as it was returned: the zero
// handle of every kind and a live handle with another Device are
// ErrInvalidValue everywhere; objects of one device are not used with
// another's; Kernel returns the same Function twice.
func (s *suite) handles(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		t.Run("zero handles are invalid", func(t *testing.T) { s.zeroHandles(t, dev) })
		t.Run("handles with another device are invalid", func(t *testing.T) { s.movedHandles(t, dev) })
		t.Run("kernel twice is the same function", func(t *testing.T) {
			f := s.kernel(t, dev, "add_f32")
			assert.Equal(t, f, s.kernel(t, dev, "add_f32"), "Kernel(%d, add_f32) twice", dev)
		})
	})
	t.Run("objects of one device with another's", s.crossDevice)
}

// handleCalls returns every call that takes a handle, given the handles to
// pass (and live objects for the other arguments), each returning its error.
func (s *suite) handleCalls(st vendorapi.Stream, e vendorapi.Event, g vendorapi.Graph, x vendorapi.GraphExec,
	f vendorapi.Function, h vendorapi.BLASHandle, live vendorapi.Stream, liveEvent vendorapi.Event, p vendorapi.DevicePtr) map[string]func() error {
	gemm := vendorapi.Gemm{M: 1, N: 1, K: 1, Alpha: 1, A: p, AType: vendorapi.F32, LDA: 1, B: p, BType: vendorapi.F32, LDB: 1,
		C: p, CType: vendorapi.F32, LDC: 1, Compute: vendorapi.Compute32F}
	return map[string]func() error{
		"StreamSynchronize": func() error { return s.d.StreamSynchronize(st) },
		"StreamQuery":       func() error { return s.d.StreamQuery(st) },
		"StreamWaitEvent":   func() error { return s.d.StreamWaitEvent(st, liveEvent) },
		"MemsetAsync":       func() error { return s.d.MemsetAsync(st, p, 1, 4) },
		"BeginCapture":      func() error { return s.d.BeginCapture(st) },
		"CaptureStatus":     func() error { _, err := s.d.CaptureStatus(st); return err },
		"BLASCreate":        func() error { _, err := s.d.BLASCreate(st); return err },
		"EventRecord":       func() error { return s.d.EventRecord(e, live) },
		"EventQuery":        func() error { return s.d.EventQuery(e) },
		"EventSynchronize":  func() error { return s.d.EventSynchronize(e) },
		"StreamWaitEvent on the event": func() error {
			return s.d.StreamWaitEvent(live, e)
		},
		"GraphInstantiate":          func() error { _, err := s.d.GraphInstantiate(g); return err },
		"GraphLaunch":               func() error { return s.d.GraphLaunch(x, live) },
		"GraphExecUpdate":           func() error { return s.d.GraphExecUpdate(x, g) },
		"SetMaxDynamicSharedMemory": func() error { return s.d.SetMaxDynamicSharedMemory(f, 0) },
		"Launch":                    func() error { return s.d.Launch(f, smallGrid, smallBlock, 0, live, args().Ptr(p).F32(1).I64(1)) },
		"BLASSetStream":             func() error { return s.d.BLASSetStream(h, live) },
		"Gemm":                      func() error { return s.d.Gemm(h, gemm) },
	}
}

// zeroHandles passes the zero handle of every kind (with dev as its device).
func (s *suite) zeroHandles(t *testing.T, dev int) {
	live := s.stream(t, dev)
	liveEvent := s.event(t, dev, false)
	p := s.malloc(t, dev, 64)
	calls := s.handleCalls(vendorapi.Stream{Device: dev}, vendorapi.Event{Device: dev}, vendorapi.Graph{Device: dev},
		vendorapi.GraphExec{Device: dev}, vendorapi.Function{Device: dev, Name: "fill_f32"}, vendorapi.BLASHandle{Device: dev},
		live, liveEvent, p)
	calls["StreamDestroy"] = func() error { return s.d.StreamDestroy(vendorapi.Stream{Device: dev}) }
	calls["EventDestroy"] = func() error { return s.d.EventDestroy(vendorapi.Event{Device: dev}) }
	calls["GraphDestroy"] = func() error { return s.d.GraphDestroy(vendorapi.Graph{Device: dev}) }
	calls["GraphExecDestroy"] = func() error { return s.d.GraphExecDestroy(vendorapi.GraphExec{Device: dev}) }
	calls["BLASDestroy"] = func() error { return s.d.BLASDestroy(vendorapi.BLASHandle{Device: dev}) }
	calls["VMMRelease"] = func() error { return s.d.VMMRelease(vendorapi.PhysicalChunk{Device: dev, Size: 1 << 21}) }
	for name, call := range calls {
		s.checkError(t, name+" with a zero handle", call(), anyDevice, vendorapi.ErrInvalidValue)
	}
	s.sync(t, live)
	s.healthy(t, dev)
}

// movedHandles passes live handles of dev with Device set to another index
// (another device's, or one that does not exist).
func (s *suite) movedHandles(t *testing.T, dev int) {
	other := (dev + 1) % max(s.n, 2) // device 1 when there is only one: no such device
	live := s.stream(t, dev)
	liveEvent := s.event(t, dev, false)
	p := s.malloc(t, dev, 64)
	e := s.event(t, dev, false)
	st := s.stream(t, dev)
	h := s.blasHandle(t, st)
	f := s.kernel(t, dev, "fill_f32")
	g := s.capture(t, st, func() { s.launch(t, st, "fill_f32", args().Ptr(p).F32(1).I64(16)) })
	x := s.instantiate(t, g)

	mst, me, mg, mx, mf, mh := st, e, g, x, f, h
	mst.Device, me.Device, mg.Device, mx.Device, mf.Device, mh.Device = other, other, other, other, other, other
	otherLive, otherEvent := live, liveEvent
	if other < s.n {
		otherLive, otherEvent = s.stream(t, other), s.event(t, other, false)
	}
	// Calls pairing a moved handle with a live object pass one of the moved
	// handle's claimed device where they must agree.
	calls := s.handleCalls(mst, me, mg, mx, mf, mh, otherLive, otherEvent, p)
	for name, call := range calls {
		s.checkError(t, name+" with a handle whose Device was changed", call(), anyDevice, vendorapi.ErrInvalidValue)
	}
	s.sync(t, live)
	s.healthy(t, dev)
}

// crossDevice pairs live objects of devices 0 and 1 where the contract
// wants one device: each call is refused with ErrInvalidValue.
func (s *suite) crossDevice(t *testing.T) {
	if s.n < 2 {
		t.Skipf("needs two devices, %s has %d", s.d.Vendor(), s.n)
	}
	p0 := s.malloc(t, 0, 64)
	s0, s1 := s.stream(t, 0), s.stream(t, 1)
	e0 := s.event(t, 0, false)
	f0 := s.kernel(t, 0, "fill_f32")
	h0 := s.blasHandle(t, s0)
	inval := vendorapi.ErrInvalidValue
	s.checkError(t, "EventRecord of device 0's event on device 1's stream", s.d.EventRecord(e0, s1), anyDevice, inval)
	s.checkError(t, "Launch of device 0's function on device 1's stream",
		s.d.Launch(f0, smallGrid, smallBlock, 0, s1, args().Ptr(p0).F32(1).I64(16)), anyDevice, inval)
	s.checkError(t, "BLASSetStream of device 0's handle to device 1's stream", s.d.BLASSetStream(h0, s1), anyDevice, inval)
	t0, t1 := s.event(t, 0, true), s.event(t, 1, true)
	require.NoError(t, s.d.EventRecord(t0, s0), "EventRecord")
	require.NoError(t, s.d.EventRecord(t1, s1), "EventRecord")
	require.NoError(t, s.d.EventSynchronize(t0), "EventSynchronize")
	require.NoError(t, s.d.EventSynchronize(t1), "EventSynchronize")
	_, err := s.d.EventElapsed(t0, t1)
	s.checkError(t, "EventElapsed between events of two devices", err, anyDevice, inval)
	q0 := s.malloc(t, 0, 64)
	s.checkError(t, "CopyPeerAsync on a stream of neither device", s.d.CopyPeerAsync(s1, 0, q0, 0, p0, 64), anyDevice, inval)
	s.checkError(t, "Copy2DPeerAsync on a stream of neither device", s.d.Copy2DPeerAsync(s1, 0, q0, 8, 0, p0, 8, 8, 8), anyDevice, inval)
}
