package conformance

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// graphs checks capture, replay, exec update with new arguments, the refusal
// of an update with another topology, and capture of memsets and copies.
func (s *suite) graphs(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		t.Run("capture replay and update", func(t *testing.T) { s.captureReplayUpdate(t, dev) })
		t.Run("capture records memset and copies", func(t *testing.T) { s.captureCopies(t, dev) })
	})
}

// fillAdd is the buffers of one captured "out = fill(x, v) + y" graph.
type fillAdd struct {
	x, y, out vendorapi.DevicePtr
	v         float32
}

const graphN = 700

func (s *suite) newFillAdd(t *testing.T, r *rand.Rand, dev int) fillAdd {
	return fillAdd{
		x:   s.upload(t, dev, randBytes(r, 4*graphN)),
		y:   s.upload(t, dev, le.FromF32(randF32(r, graphN))),
		out: s.upload(t, dev, randBytes(r, 4*graphN)),
		v:   randValue(r),
	}
}

// queue queues fill(x, v) then out = x + y, plus a scale of out when extra is set.
func (s *suite) queue(t *testing.T, st vendorapi.Stream, g fillAdd, extra bool) {
	t.Helper()
	s.launch(t, st, "fill_f32", args().Ptr(g.x).F32(g.v).I64(graphN))
	s.launch(t, st, "add_f32", args().Ptr(g.out).Ptr(g.x).Ptr(g.y).I64(graphN))
	if extra {
		s.launch(t, st, "scale_f32", args().Ptr(g.out).Ptr(g.out).F32(2).F32(0).I64(graphN))
	}
}

// capture captures the work queue adds to st and returns the graph, destroyed when t ends.
func (s *suite) capture(t *testing.T, st vendorapi.Stream, queue func()) vendorapi.Graph {
	t.Helper()
	for _, k := range []string{"fill_f32", "add_f32", "scale_f32"} {
		s.kernel(t, st.Device, k) // loaded before capture, not during it
	}
	require.NoError(t, s.d.BeginCapture(st), "BeginCapture")
	status, err := s.d.CaptureStatus(st)
	require.NoError(t, err, "CaptureStatus")
	require.Equal(t, vendorapi.CaptureActive, status, "CaptureStatus while capturing")
	queue()
	g, err := s.d.EndCapture(st)
	require.NoError(t, err, "EndCapture")
	assert.Equal(t, st.Device, g.Device, "Graph.Device")
	t.Cleanup(func() { assert.NoError(t, s.d.GraphDestroy(g), "GraphDestroy") })
	status, err = s.d.CaptureStatus(st)
	require.NoError(t, err, "CaptureStatus")
	require.Equal(t, vendorapi.CaptureNone, status, "CaptureStatus after EndCapture")
	return g
}

// checkFillAdd checks out == v + y (times 2 when extra).
func (s *suite) checkFillAdd(t *testing.T, what string, dev int, g fillAdd, extra bool) {
	t.Helper()
	y := le.ToF32(s.download(t, dev, g.y, 4*graphN))
	want := make([]float32, graphN)
	for i := range want {
		want[i] = g.v + y[i]
		if extra {
			want[i] *= 2
		}
	}
	checkBytes(t, what, s.download(t, dev, g.out, 4*graphN), le.FromF32(want))
}

func (s *suite) captureReplayUpdate(t *testing.T, dev int) {
	r := newRand(t)
	st := s.stream(t, dev)
	g1 := s.newFillAdd(t, r, dev)
	xBefore := s.download(t, dev, g1.x, 4*graphN)
	outBefore := s.download(t, dev, g1.out, 4*graphN)

	graph1 := s.capture(t, st, func() { s.queue(t, st, g1, false) })
	s.sync(t, st)
	checkBytes(t, "capture did not run the fill", s.download(t, dev, g1.x, 4*graphN), xBefore)
	checkBytes(t, "capture did not run the add", s.download(t, dev, g1.out, 4*graphN), outBefore)

	exec, err := s.d.GraphInstantiate(graph1)
	require.NoError(t, err, "GraphInstantiate")
	assert.Equal(t, dev, exec.Device, "GraphExec.Device")
	t.Cleanup(func() { assert.NoError(t, s.d.GraphExecDestroy(exec), "GraphExecDestroy") })

	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
	s.sync(t, st)
	s.checkFillAdd(t, "first replay", dev, g1, false)

	require.NoError(t, s.d.CopyHtoD(dev, g1.y, le.FromF32(randF32(r, graphN))), "CopyHtoD new y")
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
	s.sync(t, st)
	s.checkFillAdd(t, "second replay recomputes with the new input", dev, g1, false)

	// Two launches queued back to back.
	require.NoError(t, s.d.CopyHtoD(dev, g1.y, le.FromF32(randF32(r, graphN))), "CopyHtoD new y")
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
	s.sync(t, st)
	s.checkFillAdd(t, "two launches queued back to back", dev, g1, false)

	// Same topology, other pointers and values: the update succeeds in place.
	g2 := s.newFillAdd(t, r, dev)
	out2Before := s.download(t, dev, g2.out, 4*graphN)
	graph2 := s.capture(t, st, func() { s.queue(t, st, g2, false) })
	s.sync(t, st)
	checkBytes(t, "second capture did not run", s.download(t, dev, g2.out, 4*graphN), out2Before)
	require.NoError(t, s.d.GraphExecUpdate(exec, graph2), "GraphExecUpdate with the same topology")
	// A new y for the old graph: were its nodes still run, g1.out would change.
	require.NoError(t, s.d.CopyHtoD(dev, g1.y, le.FromF32(randF32(r, graphN))), "CopyHtoD new y")
	out1Before := s.download(t, dev, g1.out, 4*graphN)
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch after update")
	s.sync(t, st)
	s.checkFillAdd(t, "updated exec uses the new arguments", dev, g2, false)
	checkBytes(t, "updated exec no longer writes the old output", s.download(t, dev, g1.out, 4*graphN), out1Before)

	// Another topology (an extra node): the update fails and exec stays as it was.
	g3 := s.newFillAdd(t, r, dev)
	out3Before := s.download(t, dev, g3.out, 4*graphN)
	graph3 := s.capture(t, st, func() { s.queue(t, st, g3, true) })
	err = s.d.GraphExecUpdate(exec, graph3)
	s.checkError(t, "GraphExecUpdate with an extra node", err, dev, vendorapi.ErrGraphUpdate)
	require.NoError(t, s.d.CopyHtoD(dev, g2.y, le.FromF32(randF32(r, graphN))), "CopyHtoD new y")
	require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch after a failed update")
	s.sync(t, st)
	s.checkFillAdd(t, "exec still runs as before the failed update", dev, g2, false)
	checkBytes(t, "failed update did not run the new graph", s.download(t, dev, g3.out, 4*graphN), out3Before)

	// The new topology instantiates and runs on its own.
	exec3, err := s.d.GraphInstantiate(graph3)
	require.NoError(t, err, "GraphInstantiate")
	require.NoError(t, s.d.GraphLaunch(exec3, st), "GraphLaunch")
	s.sync(t, st)
	s.checkFillAdd(t, "graph with the extra node", dev, g3, true)
	require.NoError(t, s.d.GraphExecDestroy(exec3), "GraphExecDestroy")

	// An exec outlives the graph it came from.
	exec2, err := s.d.GraphInstantiate(graph2)
	require.NoError(t, err, "GraphInstantiate")
	require.NoError(t, s.d.CopyHtoD(dev, g2.y, le.FromF32(randF32(r, graphN))), "CopyHtoD new y")
	require.NoError(t, s.d.GraphLaunch(exec2, st), "GraphLaunch")
	s.sync(t, st)
	s.checkFillAdd(t, "exec instantiated from the second graph", dev, g2, false)
	require.NoError(t, s.d.GraphExecDestroy(exec2), "GraphExecDestroy")
}

// captureCopies captures memset, device and pinned-host copies and a kernel.
func (s *suite) captureCopies(t *testing.T, dev int) {
	r := newRand(t)
	const n = 512
	st := s.stream(t, dev)
	aBefore := randBytes(r, 4*n)
	a := s.upload(t, dev, aBefore)
	bBefore := randBytes(r, 4*n)
	b := s.upload(t, dev, bBefore)
	hin, in := s.pinned(t, 4*n)
	hout, out := s.pinned(t, 4*n)
	outBefore := randBytes(r, 4*n)
	copy(out, outBefore)
	copy(in, le.FromF32(randF32(r, n)))
	v := byte(0x3c + r.IntN(4)) // 0x3c3c3c3c ... 0x3f3f3f3f: ordinary floats

	graph := s.capture(t, st, func() {
		require.NoError(t, s.d.MemsetAsync(st, a, v, 4*n), "MemsetAsync")
		require.NoError(t, s.d.CopyHtoDAsync(st, b, hin), "CopyHtoDAsync")
		s.launch(t, st, "add_f32", args().Ptr(b).Ptr(a).Ptr(b).I64(n))
		require.NoError(t, s.d.CopyDtoDAsync(st, a, b, 4*n), "CopyDtoDAsync")
		require.NoError(t, s.d.CopyDtoHAsync(st, hout, a), "CopyDtoHAsync")
	})
	s.sync(t, st)
	checkBytes(t, "capture did not run the memset", s.download(t, dev, a, 4*n), aBefore)
	checkBytes(t, "capture did not run the host to device copy", s.download(t, dev, b, 4*n), bBefore)
	checkBytes(t, "capture did not run the device to host copy", out, outBefore)

	exec, err := s.d.GraphInstantiate(graph)
	require.NoError(t, err, "GraphInstantiate")
	t.Cleanup(func() { assert.NoError(t, s.d.GraphExecDestroy(exec), "GraphExecDestroy") })
	for replay := range 2 {
		inv := randF32(r, n)
		copy(in, le.FromF32(inv)) // the graph reads the pinned buffer when it runs
		require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
		s.sync(t, st)
		m := le.ToF32(repeat(v, 4))[0]
		want := make([]float32, n)
		for i := range want {
			want[i] = m + inv[i]
		}
		checkBytes(t, []string{"first replay", "second replay"}[replay], out, le.FromF32(want))
	}
}
