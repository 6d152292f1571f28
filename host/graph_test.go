package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// launch queues kernel name on s with a small grid.
func launch(t *testing.T, d *Driver, s vendorapi.Stream, name string, args *vendorapi.Args) error {
	t.Helper()
	f, err := d.Kernel(s.Device, name)
	require.NoError(t, err)
	return d.Launch(f, vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 32}, 0, s, args)
}

// captureGraph captures body's work on s into a graph destroyed when t ends.
func captureGraph(t *testing.T, d *Driver, s vendorapi.Stream, body func()) vendorapi.Graph {
	t.Helper()
	require.NoError(t, d.BeginCapture(s))
	body()
	g, err := d.EndCapture(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.GraphDestroy(g) })
	return g
}

// status returns s's capture status.
func status(t *testing.T, d *Driver, s vendorapi.Stream) vendorapi.CaptureStatus {
	t.Helper()
	st, err := d.CaptureStatus(s)
	require.NoError(t, err)
	return st
}

func TestCaptureAndReplay(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	const n = 100
	x := upload(t, d, 0, make([]float32, n))
	y := upload(t, d, 0, make([]float32, n))
	hb, err := d.HostAlloc(4 * n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.HostFree(hb) })
	h, err := d.BLASCreate(s)
	require.NoError(t, err)
	ev, err := d.EventCreate(0, true)
	require.NoError(t, err)

	assert.Equal(t, vendorapi.CaptureNone, status(t, d, s))
	g := captureGraph(t, d, s, func() {
		assert.Equal(t, vendorapi.CaptureActive, status(t, d, s))
		require.NoError(t, launch(t, d, s, "fill_f32", vendorapi.NewArgs().Ptr(x).F32(1).I64(n)))
		require.NoError(t, launch(t, d, s, "add_f32", vendorapi.NewArgs().Ptr(y).Ptr(y).Ptr(x).I64(n)))
		// y[0:4] as a 2×2 C += A*B with A = B = x[0:4], all ones: adds 2.
		require.NoError(t, d.Gemm(h, vendorapi.Gemm{M: 2, N: 2, K: 2, Alpha: 1, Beta: 1, A: x, AType: vendorapi.F32, LDA: 2,
			B: x, BType: vendorapi.F32, LDB: 2, C: y, CType: vendorapi.F32, LDC: 2, Compute: vendorapi.Compute32F}))
		require.NoError(t, d.EventRecord(ev, s))
		requireHostErr(t, d.EventQuery(ev), vendorapi.ErrNotSupported, "an event recorded in a capture")
		require.NoError(t, d.CopyDtoHAsync(s, hb, y))
		// Synchronous calls that do not need the stream run at once.
		require.NoError(t, d.Memset(0, x, 0, 4))
	})
	assert.Equal(t, vendorapi.CaptureNone, status(t, d, s))
	requireHostErr(t, d.EventQuery(ev), vendorapi.ErrInvalidValue, "after capture the event is still the capture's, as on CUDA")
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, make([]float32, n), download(t, d, 0, y, n), "captured work did not run")

	e, err := d.GraphInstantiate(g)
	require.NoError(t, err)
	for round := 1; round <= 3; round++ {
		require.NoError(t, d.GraphLaunch(e, s))
		require.NoError(t, d.StreamSynchronize(s))
		requireHostErr(t, d.EventSynchronize(ev), vendorapi.ErrInvalidValue, "the graph records no event")
		got := download(t, d, 0, y, n)
		want := float32(round)
		assert.Equal(t, 3*want, got[0], "round %d: the gemm adds 2 to y[0:4] each launch", round)
		assert.Equal(t, want, got[n-1], "round %d: y += 1 each launch", round)
		// The copy was captured after the event record: the event does not cover it.
		require.NoError(t, d.StreamSynchronize(s))
		assert.Equal(t, le.FromF32(got), bytesAt(hb.Ptr, 4*n), "the captured copy ran too")
	}
	_, err = d.EventElapsed(ev, ev)
	requireHostErr(t, err, vendorapi.ErrInvalidValue, "an event last recorded in a capture is not timed")
	require.NoError(t, d.EventRecord(ev, s), "recorded again outside a capture")
	require.NoError(t, d.EventSynchronize(ev))
	require.NoError(t, d.GraphExecDestroy(e))
	requireHostErr(t, d.GraphLaunch(e, s), vendorapi.ErrInvalidValue, "destroyed exec")
	requireHostErr(t, d.GraphExecDestroy(e), vendorapi.ErrInvalidValue)
}

func TestCaptureInvalidatedBySync(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s := mkStream(t, d, 0)
	p := upload(t, d, 0, make([]float32, 4))
	for _, tc := range []struct {
		name string
		sync func() error
	}{
		{"StreamSynchronize", func() error { return d.StreamSynchronize(s) }},
		{"StreamQuery", func() error { return d.StreamQuery(s) }},
		{"DeviceSynchronize", func() error { return d.DeviceSynchronize(0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, d.BeginCapture(s))
			require.NoError(t, d.MemsetAsync(s, p, 1, 16))
			ve := requireHostErr(t, tc.sync(), vendorapi.ErrNotSupported)
			assert.Equal(t, "hostErrorStreamCaptureUnsupported", ve.CodeName)
			assert.Equal(t, vendorapi.CaptureInvalid, status(t, d, s))
			requireHostErr(t, d.MemsetAsync(s, p, 1, 16), vendorapi.ErrNotSupported, "work after invalidation")
			_, err := d.EndCapture(s)
			requireHostErr(t, err, vendorapi.ErrNotSupported)
			assert.Equal(t, vendorapi.CaptureNone, status(t, d, s))
			require.NoError(t, d.StreamSynchronize(s), "the stream works again")
			require.NoError(t, d.DeviceSynchronize(1), "other devices are unaffected")
		})
	}
	b := make([]byte, 16)
	require.NoError(t, d.CopyDtoH(0, b, p))
	assert.Equal(t, make([]byte, 16), b, "no captured memset ever ran")
}

func TestCaptureErrors(t *testing.T) {
	d := newDriver(t, Options{})
	s1, s2 := mkStream(t, d, 0), mkStream(t, d, 0)
	p := upload(t, d, 0, make([]float32, 4))
	_, err := d.EndCapture(s1)
	requireHostErr(t, err, vendorapi.ErrInvalidValue, "not capturing")

	require.NoError(t, d.BeginCapture(s1))
	requireHostErr(t, d.BeginCapture(s1), vendorapi.ErrInvalidValue, "already capturing")
	requireHostErr(t, d.MemsetAsync(s1, p, 0, 17), vendorapi.ErrInvalidValue, "bad ranges are refused while capturing too")
	// Another stream waiting on an event recorded in the capture: not supported.
	ev, err := d.EventCreate(0, false)
	require.NoError(t, err)
	require.NoError(t, d.EventRecord(ev, s1))
	requireHostErr(t, d.EventSynchronize(ev), vendorapi.ErrNotSupported)
	requireHostErr(t, d.StreamWaitEvent(s2, ev), vendorapi.ErrNotSupported)
	assert.Equal(t, vendorapi.CaptureInvalid, status(t, d, s1))
	_, err = d.EndCapture(s1)
	requireHostErr(t, err, vendorapi.ErrNotSupported)

	// Launching a graph whose memory was freed is refused before anything runs.
	q, err := d.Malloc(0, 16)
	require.NoError(t, err)
	g := captureGraph(t, d, s1, func() { require.NoError(t, d.MemsetAsync(s1, q, 1, 16)) })
	e, err := d.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, d.Free(0, q))
	requireHostErr(t, d.GraphLaunch(e, s1), vendorapi.ErrInvalidValue)
	require.NoError(t, d.StreamSynchronize(s1))

	require.NoError(t, d.GraphDestroy(g))
	requireHostErr(t, d.GraphDestroy(g), vendorapi.ErrInvalidValue)
	_, err = d.GraphInstantiate(g)
	requireHostErr(t, err, vendorapi.ErrInvalidValue)
}

func TestGraphExecUpdate(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	const n = 64
	x := upload(t, d, 0, make([]float32, n))
	y := upload(t, d, 0, make([]float32, n))
	fillWith := func(p vendorapi.DevicePtr, v float32) func() {
		return func() {
			require.NoError(t, launch(t, d, s, "fill_f32", vendorapi.NewArgs().Ptr(p).F32(v).I64(n)))
			require.NoError(t, d.MemsetAsync(s, p, 0, 4))
		}
	}
	run := func(e vendorapi.GraphExec) {
		require.NoError(t, d.GraphLaunch(e, s))
		require.NoError(t, d.StreamSynchronize(s))
	}
	g1 := captureGraph(t, d, s, fillWith(x, 1))
	e, err := d.GraphInstantiate(g1)
	require.NoError(t, err)
	run(e)
	assert.Equal(t, float32(1), download(t, d, 0, x, n)[n-1])

	// Same topology, new parameters (value and pointer): updated in place.
	g2 := captureGraph(t, d, s, fillWith(y, 2))
	require.NoError(t, d.GraphExecUpdate(e, g2))
	run(e)
	assert.Equal(t, float32(2), download(t, d, 0, y, n)[n-1])

	for _, tc := range []struct {
		name string
		body func()
	}{
		{"another kernel", func() {
			require.NoError(t, launch(t, d, s, "fill_u32", vendorapi.NewArgs().Ptr(x).U32(3).I64(n)))
			require.NoError(t, d.MemsetAsync(s, x, 0, 4))
		}},
		{"fewer nodes", func() {
			require.NoError(t, launch(t, d, s, "fill_f32", vendorapi.NewArgs().Ptr(x).F32(3).I64(n)))
		}},
		{"another node kind", func() {
			require.NoError(t, launch(t, d, s, "fill_f32", vendorapi.NewArgs().Ptr(x).F32(3).I64(n)))
			require.NoError(t, d.CopyDtoDAsync(s, x, y, 4))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := captureGraph(t, d, s, tc.body)
			ve := requireHostErr(t, d.GraphExecUpdate(e, g), vendorapi.ErrGraphUpdate)
			assert.Equal(t, "hostErrorGraphExecUpdateFailure", ve.CodeName)
			require.NoError(t, d.Memset(0, y, 0, 4*n))
			run(e)
			assert.Equal(t, float32(2), download(t, d, 0, y, n)[n-1], "the exec is unchanged")
		})
	}
}
