package host

import (
	"encoding/binary"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// gate blocks s until the returned function is called, or until t ends: a
// failing assertion must not leave the stream blocked (and the package
// hanging until the test binary times out). release may be called again.
func gate(t *testing.T, d *Driver, s vendorapi.Stream) (release func()) {
	t.Helper()
	release = blockStream(lookup(t, d, s))
	t.Cleanup(release)
	return release
}

// lookup returns the stream behind s.
func lookup(t *testing.T, d *Driver, s vendorapi.Stream) *stream {
	t.Helper()
	d.mu.Lock()
	st := d.streams[s.Handle]
	d.mu.Unlock()
	require.NotNil(t, st)
	return st
}

// blockStream queues on st an item that waits until release is called; release
// may be called more than once.
func blockStream(st *stream) (release func()) {
	r := &record{done: make(chan struct{})}
	st.push([]item{{wait: r}})
	var once sync.Once
	return func() { once.Do(func() { close(r.done) }) }
}

func TestStreamOrder(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	const n = 1000
	p := upload(t, d, 0, make([]float32, n))
	fill, err := d.Kernel(0, "fill_f32")
	require.NoError(t, err)
	scale, err := d.Kernel(0, "scale_f32")
	require.NoError(t, err)
	release := gate(t, d, s)
	require.NoError(t, d.Launch(fill, vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 32}, 0, s,
		vendorapi.NewArgs().Ptr(p).F32(1).I64(n)))
	for range 10 {
		require.NoError(t, d.Launch(scale, vendorapi.Dim3{X: 3}, vendorapi.Dim3{X: 7}, 0, s,
			vendorapi.NewArgs().Ptr(p).Ptr(p).F32(2).F32(1).I64(n)))
	}
	requireHostErr(t, d.StreamQuery(s), vendorapi.ErrNotReady)
	assert.Equal(t, float32(0), download(t, d, 0, p, 1)[0], "nothing ran while the stream was gated")
	release()
	require.NoError(t, d.StreamSynchronize(s))
	require.NoError(t, d.StreamQuery(s))
	got := download(t, d, 0, p, n)
	for i := range got {
		require.Equal(t, float32(2047), got[i], "element %d", i) // x → 2x+1 ten times from 1
	}
}

func TestEvents(t *testing.T) {
	d := newDriver(t, Options{})
	s1, s2 := mkStream(t, d, 0), mkStream(t, d, 0)
	start, err := d.EventCreate(0, true)
	require.NoError(t, err)
	end, err := d.EventCreate(0, true)
	require.NoError(t, err)
	plain, err := d.EventCreate(0, false)
	require.NoError(t, err)

	require.NoError(t, d.EventQuery(end), "an event never recorded is complete")
	require.NoError(t, d.EventSynchronize(end))
	_, err = d.EventElapsed(start, end)
	requireHostErr(t, err, vendorapi.ErrInvalidValue, "not recorded")

	p := upload(t, d, 0, []float32{0})
	release := gate(t, d, s1)
	require.NoError(t, d.EventRecord(start, s1))
	require.NoError(t, d.MemsetAsync(s1, p, 0x3f, 4))
	require.NoError(t, d.EventRecord(end, s1))
	require.NoError(t, d.EventRecord(plain, s1))
	// s2 waits for end: its copy must see the memset.
	q := upload(t, d, 0, []float32{0})
	require.NoError(t, d.StreamWaitEvent(s2, end))
	require.NoError(t, d.CopyDtoDAsync(s2, q, p, 4))

	requireHostErr(t, d.EventQuery(end), vendorapi.ErrNotReady)
	requireHostErr(t, d.StreamQuery(s2), vendorapi.ErrNotReady, "s2 waits for s1")
	_, err = d.EventElapsed(start, end)
	requireHostErr(t, err, vendorapi.ErrNotReady)
	release()
	require.NoError(t, d.EventSynchronize(end))
	require.NoError(t, d.StreamSynchronize(s2))
	b := make([]byte, 4)
	require.NoError(t, d.CopyDtoH(0, b, q))
	assert.Equal(t, []byte{0x3f, 0x3f, 0x3f, 0x3f}, b)

	el, err := d.EventElapsed(start, end)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, el, time.Duration(0))
	_, err = d.EventElapsed(start, plain)
	requireHostErr(t, err, vendorapi.ErrInvalidValue, "an event without timing")

	other := mkStream(t, newDriver(t, Options{}), 0)
	requireHostErr(t, d.EventRecord(start, other), vendorapi.ErrInvalidValue, "a stream of another driver")
	require.NoError(t, d.EventDestroy(plain))
	requireHostErr(t, d.EventDestroy(plain), vendorapi.ErrInvalidValue)
	requireHostErr(t, d.EventRecord(plain, s1), vendorapi.ErrInvalidValue)
	requireHostErr(t, d.StreamWaitEvent(s1, plain), vendorapi.ErrInvalidValue)
}

// badBatchedGemm queues a gemm whose pointer arrays are valid but hold a bad
// matrix pointer: the failure can only show when the work runs.
func badBatchedGemm(t *testing.T, d *Driver, s vendorapi.Stream) {
	t.Helper()
	h, err := d.BLASCreate(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.BLASDestroy(h) })
	arr := make([]byte, 8)
	binary.LittleEndian.PutUint64(arr, 0x1000)
	pa, err := d.Malloc(0, 8)
	require.NoError(t, err)
	require.NoError(t, d.CopyHtoD(0, pa, arr))
	g := vendorapi.Gemm{M: 2, N: 2, K: 2, Alpha: 1, A: pa, AType: vendorapi.F32, LDA: 2, B: pa, BType: vendorapi.F32,
		LDB: 2, C: pa, CType: vendorapi.F32, LDC: 2, Compute: vendorapi.Compute32F, BatchCount: 1}
	require.NoError(t, d.GemmBatched(h, g), "the arrays themselves are valid")
}

func TestAsyncErrorsAreStickyOnce(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	badBatchedGemm(t, d, s)
	ve := requireHostErr(t, d.StreamSynchronize(s), vendorapi.ErrInvalidValue)
	assert.Equal(t, "hostGemmBatchedEx", ve.Call)
	assert.Equal(t, "hostErrorIllegalAddress", ve.CodeName)
	require.NoError(t, d.StreamSynchronize(s), "reported once")

	// An event recorded after the failure reports it instead.
	e, err := d.EventCreate(0, false)
	require.NoError(t, err)
	badBatchedGemm(t, d, s)
	require.NoError(t, d.EventRecord(e, s))
	requireHostErr(t, d.EventSynchronize(e), vendorapi.ErrInvalidValue)
	require.NoError(t, d.EventSynchronize(e))
	require.NoError(t, d.StreamSynchronize(s))

	// And DeviceSynchronize reports it too.
	badBatchedGemm(t, d, s)
	requireHostErr(t, d.DeviceSynchronize(0), vendorapi.ErrInvalidValue)
	require.NoError(t, d.StreamSynchronize(s))
}

func TestDeviceSynchronize(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s0, s1 := mkStream(t, d, 0), mkStream(t, d, 1)
	r0 := gate(t, d, s0)
	r1 := gate(t, d, s1)
	done := async(func() error { return d.DeviceSynchronize(0) })
	stillWaiting(t, done, "DeviceSynchronize while a stream of its device is blocked")
	r0()
	require.NoError(t, await(t, done, "DeviceSynchronize"), "device 1's blocked stream does not matter")
	r1()
	require.NoError(t, d.DeviceSynchronize(1))
	requireHostErr(t, d.DeviceSynchronize(2), vendorapi.ErrInvalidValue)
}

func TestStreamHandles(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s, err := d.StreamCreate(1)
	require.NoError(t, err)
	p, err := d.Malloc(1, 1<<20)
	require.NoError(t, err)
	for range 4 {
		require.NoError(t, d.MemsetAsync(s, p, 9, 1<<20))
	}
	require.NoError(t, d.StreamDestroy(s), "destroy runs the queued work first")
	b := make([]byte, 1)
	require.NoError(t, d.CopyDtoH(1, b, p.Add(1<<20-1)))
	assert.Equal(t, byte(9), b[0])
	for name, err := range map[string]error{
		"synchronize":  d.StreamSynchronize(s),
		"query":        d.StreamQuery(s),
		"destroy":      d.StreamDestroy(s),
		"memset async": d.MemsetAsync(s, p, 0, 1),
		"wrong device": d.StreamSynchronize(vendorapi.Stream{Device: 0, Handle: s.Handle}),
		"zero handle":  d.StreamSynchronize(vendorapi.Stream{}),
	} {
		requireHostErr(t, err, vendorapi.ErrInvalidValue, name)
	}
	_, err = d.StreamCreate(2)
	requireHostErr(t, err, vendorapi.ErrInvalidValue)
}

func TestNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	d, err := New(Options{Devices: 2})
	require.NoError(t, err)
	p, err := d.Malloc(0, 1<<20)
	require.NoError(t, err)
	var streams []vendorapi.Stream
	for i := range 16 {
		s, err := d.StreamCreate(i % 2)
		require.NoError(t, err)
		streams = append(streams, s)
		if i%2 == 0 {
			require.NoError(t, d.MemsetAsync(s, p, byte(i), 1<<20))
		}
	}
	assert.GreaterOrEqual(t, runtime.NumGoroutine(), base+16)
	for _, s := range streams[:8] {
		require.NoError(t, d.StreamDestroy(s))
	}
	require.NoError(t, d.Close(), "Close stops the rest")
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), base, "stream goroutines end")
}
