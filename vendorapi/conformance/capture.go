package conformance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// captureRules checks what capture forbids and what a captured event is,
// and which graph updates are refused.
func (s *suite) captureRules(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		t.Run("synchronizing a capturing stream fails and invalidates the capture", func(t *testing.T) { s.syncDuringCapture(t, dev) })
		t.Run("begin capture twice", func(t *testing.T) { s.beginTwice(t, dev) })
		t.Run("an event recorded in a capture", func(t *testing.T) { s.capturedEvent(t, dev) })
		t.Run("update refuses nodes of another kind", func(t *testing.T) { s.updateKinds(t, dev) })
		t.Run("update of a kernel node to another kernel", func(t *testing.T) { s.updateKernel(t, dev) })
	})
	t.Run("graphs and streams of different devices", s.graphDevices)
}

// syncDuringCapture calls each synchronizing call on a capturing stream (or
// its device): it fails with ErrNotSupported (CUDA's
// cudaErrorStreamCaptureUnsupported, in every capture mode: for
// cudaDeviceSynchronize see NVIDIA/TensorRT#2888 and ggml-org/llama.cpp#14033),
// the capture is invalidated, EndCapture fails, the captured work never ran
// and the stream works afterwards.
func (s *suite) syncDuringCapture(t *testing.T, dev int) {
	r := newRand(t)
	const n = 256
	before := randBytes(r, 4*n)
	x := s.upload(t, dev, before)
	for _, c := range []struct {
		name string
		call func(st vendorapi.Stream) error
	}{
		{"StreamSynchronize", func(st vendorapi.Stream) error { return s.d.StreamSynchronize(st) }},
		{"StreamQuery", func(st vendorapi.Stream) error { return s.d.StreamQuery(st) }},
		{"DeviceSynchronize", func(st vendorapi.Stream) error { return s.d.DeviceSynchronize(st.Device) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := s.stream(t, dev)
			s.kernel(t, dev, "fill_f32")
			require.NoError(t, s.d.BeginCapture(st), "BeginCapture")
			s.launch(t, st, "fill_f32", args().Ptr(x).F32(randValue(r)).I64(n))
			s.checkError(t, c.name+" during capture", c.call(st), dev, vendorapi.ErrNotSupported)
			status, err := s.d.CaptureStatus(st)
			require.NoError(t, err, "CaptureStatus")
			assert.Equal(t, vendorapi.CaptureInvalid, status, "CaptureStatus after %s during capture", c.name)
			_, err = s.d.EndCapture(st)
			s.checkError(t, "EndCapture of an invalidated capture", err, dev)
			status, err = s.d.CaptureStatus(st)
			require.NoError(t, err, "CaptureStatus")
			assert.Equal(t, vendorapi.CaptureNone, status, "EndCapture ends the capture, invalidated or not")
			s.sync(t, st)
			checkBytes(t, "captured work never ran", s.download(t, dev, x, 4*n), before)
			s.healthy(t, dev)
		})
	}
}

// beginTwice starts a capture on a capturing stream: an error.
func (s *suite) beginTwice(t *testing.T, dev int) {
	st := s.stream(t, dev)
	require.NoError(t, s.d.BeginCapture(st), "BeginCapture")
	s.checkError(t, "BeginCapture of a capturing stream", s.d.BeginCapture(st), dev)
	if g, err := s.d.EndCapture(st); err == nil {
		assert.NoError(t, s.d.GraphDestroy(g), "GraphDestroy")
	}
	status, err := s.d.CaptureStatus(st)
	require.NoError(t, err, "CaptureStatus")
	assert.Equal(t, vendorapi.CaptureNone, status, "after EndCapture")
	s.sync(t, st)
}

// capturedEvent records an event in a capture: it cannot be queried or
// waited for while the capture lasts, nor after the graph ran, until it is
// recorded again outside a capture (vendorapi.Events).
func (s *suite) capturedEvent(t *testing.T, dev int) {
	r := newRand(t)
	const n = 256
	x := s.upload(t, dev, randBytes(r, 4*n))
	st := s.stream(t, dev)
	e := s.event(t, dev, false)
	v := randValue(r)
	require.NoError(t, s.d.EventRecord(e, st), "EventRecord outside capture")
	s.sync(t, st)

	// While the capture lasts (a capture of its own: whether the query
	// invalidates it is not part of the contract).
	require.NoError(t, s.d.BeginCapture(st), "BeginCapture")
	require.NoError(t, s.d.EventRecord(e, st), "EventRecord during capture")
	s.checkError(t, "EventQuery of an event recorded in the capture in progress", s.d.EventQuery(e), dev)
	if g, err := s.d.EndCapture(st); err == nil {
		assert.NoError(t, s.d.GraphDestroy(g), "GraphDestroy")
	}

	graph := s.capture(t, st, func() {
		s.launch(t, st, "fill_f32", args().Ptr(x).F32(v).I64(n))
		require.NoError(t, s.d.EventRecord(e, st), "EventRecord during capture")
	})
	exec := s.instantiate(t, graph)
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
	s.sync(t, st)
	checkBytes(t, "the graph ran", s.download(t, dev, x, 4*n), le.FromF32(fill32(v, n)))
	s.checkError(t, "EventQuery of an event last recorded in a capture, after the graph ran", s.d.EventQuery(e), dev, vendorapi.ErrInvalidValue)
	s.checkError(t, "EventSynchronize of an event last recorded in a capture, after the graph ran", s.d.EventSynchronize(e), dev, vendorapi.ErrInvalidValue)
	require.NoError(t, s.d.EventRecord(e, st), "EventRecord again outside capture")
	require.NoError(t, s.d.EventSynchronize(e), "EventSynchronize once recorded again")
	require.NoError(t, s.d.EventQuery(e), "EventQuery once recorded again")
}

// updateKinds captures memset then kernel, and graphs with the same number
// of nodes of other kinds: each update is refused with ErrGraphUpdate and
// the exec runs as before.
func (s *suite) updateKinds(t *testing.T, dev int) {
	r := newRand(t)
	const n = 300
	st := s.stream(t, dev)
	x, y := s.upload(t, dev, randBytes(r, 4*n)), s.upload(t, dev, randBytes(r, 4*n))
	src := s.upload(t, dev, randBytes(r, 4*n))
	m, v := byte(0x3f), randValue(r)
	exec := s.instantiate(t, s.capture(t, st, func() {
		require.NoError(t, s.d.MemsetAsync(st, x, m, 4*n), "MemsetAsync")
		s.launch(t, st, "fill_f32", args().Ptr(y).F32(v).I64(n))
	}))
	for _, c := range []struct {
		name  string
		queue func()
	}{
		{"kernel then memset", func() {
			s.launch(t, st, "fill_f32", args().Ptr(y).F32(v).I64(n))
			require.NoError(t, s.d.MemsetAsync(st, x, m, 4*n), "MemsetAsync")
		}},
		{"memset then copy", func() {
			require.NoError(t, s.d.MemsetAsync(st, x, m, 4*n), "MemsetAsync")
			require.NoError(t, s.d.CopyDtoDAsync(st, y, src, 4*n), "CopyDtoDAsync")
		}},
		{"copy then kernel", func() {
			require.NoError(t, s.d.CopyDtoDAsync(st, x, src, 4*n), "CopyDtoDAsync")
			s.launch(t, st, "fill_f32", args().Ptr(y).F32(v).I64(n))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := s.capture(t, st, c.queue)
			err := s.d.GraphExecUpdate(exec, g)
			s.checkError(t, "GraphExecUpdate to "+c.name, err, dev, vendorapi.ErrGraphUpdate)
			require.NoError(t, s.d.CopyHtoD(dev, x, randBytes(r, 4*n)), "CopyHtoD")
			require.NoError(t, s.d.CopyHtoD(dev, y, randBytes(r, 4*n)), "CopyHtoD")
			require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch after a refused update")
			s.sync(t, st)
			checkBytes(t, "exec still runs its memset", s.download(t, dev, x, 4*n), repeat(m, 4*n))
			checkBytes(t, "exec still runs its kernel", s.download(t, dev, y, 4*n), le.FromF32(fill32(v, n)))
		})
	}
}

// updateKernel updates a graph of one fill_f32 node to one of scale_f32:
// CUDA 12 updates it, host refuses it; either way the exec must then run the
// kernel it says it has.
func (s *suite) updateKernel(t *testing.T, dev int) {
	r := newRand(t)
	const n = 300
	st := s.stream(t, dev)
	xv := randF32(r, n)
	x, y := s.upload(t, dev, le.FromF32(xv)), s.upload(t, dev, randBytes(r, 4*n))
	v := randValue(r)
	exec := s.instantiate(t, s.capture(t, st, func() { s.launch(t, st, "fill_f32", args().Ptr(y).F32(v).I64(n)) }))
	g := s.capture(t, st, func() { s.launch(t, st, "scale_f32", args().Ptr(y).Ptr(x).F32(2).F32(0).I64(n)) })
	err := s.d.GraphExecUpdate(exec, g)
	want := fill32(v, n)
	if err != nil {
		s.checkError(t, "GraphExecUpdate to another kernel", err, dev, vendorapi.ErrGraphUpdate)
		t.Logf("%s refuses to update a kernel node to another kernel: %v", s.d.Vendor(), err)
	} else {
		t.Logf("%s updates a kernel node to another kernel", s.d.Vendor())
		for i := range want {
			want[i] = 2 * xv[i] // exact
		}
	}
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
	s.sync(t, st)
	checkBytes(t, "the exec runs the kernel the update left it", s.download(t, dev, y, 4*n), le.FromF32(want))
}

// graphDevices checks that an exec runs only on streams of its device and
// updates only from graphs of its device.
func (s *suite) graphDevices(t *testing.T) {
	if s.n < 2 {
		t.Skipf("needs two devices, %s has %d", s.d.Vendor(), s.n)
	}
	r := newRand(t)
	const n = 64
	var execs [2]vendorapi.GraphExec
	var graphs [2]vendorapi.Graph
	var streams [2]vendorapi.Stream
	for dev := range 2 {
		x := s.upload(t, dev, randBytes(r, 4*n))
		streams[dev] = s.stream(t, dev)
		graphs[dev] = s.capture(t, streams[dev], func() { s.launch(t, streams[dev], "fill_f32", args().Ptr(x).F32(1).I64(n)) })
		execs[dev] = s.instantiate(t, graphs[dev])
	}
	s.checkError(t, "GraphLaunch on a stream of another device", s.d.GraphLaunch(execs[0], streams[1]), anyDevice, vendorapi.ErrInvalidValue)
	err := s.d.GraphExecUpdate(execs[0], graphs[1])
	s.checkError(t, "GraphExecUpdate from a graph of another device", err, anyDevice, vendorapi.ErrInvalidValue)
	if errors.Is(err, vendorapi.ErrGraphUpdate) {
		t.Errorf("GraphExecUpdate from a graph of another device is an invalid argument, not a topology change: %v", err)
	}
	for dev := range 2 {
		require.NoError(t, s.d.GraphLaunch(execs[dev], streams[dev]), "GraphLaunch")
		s.sync(t, streams[dev])
	}
}

// instantiate makes an exec of g, destroyed when t ends.
func (s *suite) instantiate(t *testing.T, g vendorapi.Graph) vendorapi.GraphExec {
	t.Helper()
	x, err := s.d.GraphInstantiate(g)
	require.NoError(t, err, "GraphInstantiate")
	t.Cleanup(func() { assert.NoError(t, s.d.GraphExecDestroy(x), "GraphExecDestroy") })
	return x
}
