package conformance

import (
	"errors"
	"math"
	"testing"

	"github.com/ternion/ternion/internal/le"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// checkIdleOrNotReady accepts nil or an error matching ErrNotReady: what a
// query may say while work could still be running.
func checkIdleOrNotReady(t *testing.T, call string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, vendorapi.ErrNotReady) {
		t.Errorf("%s while work may be pending: want nil or ErrNotReady, got %v", call, err)
	}
}

// streamOrder checks that one stream runs memset, kernels and copies in the
// order queued, and that StreamWaitEvent orders two streams.
func (s *suite) streamOrder(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		t.Run("one stream runs work in order", func(t *testing.T) { s.oneStream(t, dev) })
		t.Run("a stream waits for another's event", func(t *testing.T) { s.twoStreams(t, dev) })
		t.Run("destroy waits for queued work", func(t *testing.T) { s.destroyWaits(t, dev) })
	})
}

func (s *suite) oneStream(t *testing.T, dev int) {
	r := newRand(t)
	const n, k = 1000, 300 // fill only the first k elements
	st := s.stream(t, dev)
	status, err := s.d.CaptureStatus(st)
	require.NoError(t, err, "CaptureStatus")
	assert.Equal(t, vendorapi.CaptureNone, status, "a new stream is not capturing")

	yv := randF32(r, n)
	x := s.upload(t, dev, randBytes(r, 4*n))
	y := s.upload(t, dev, le.FromF32(yv))
	hb, got := s.pinned(t, 4*n)
	copy(got, randBytes(r, 4*n))

	v := byte(0x40 + r.IntN(4)) // 0x40404040 ... 0x43434343: ordinary floats
	fill := randValue(r)
	require.NoError(t, s.d.MemsetAsync(st, x, v, 4*n), "MemsetAsync")
	s.launch(t, st, "fill_f32", args().Ptr(x).F32(fill).I64(k))
	s.launch(t, st, "add_f32", args().Ptr(x).Ptr(x).Ptr(y).I64(n))
	require.NoError(t, s.d.CopyDtoHAsync(st, hb, x), "CopyDtoHAsync")
	checkIdleOrNotReady(t, "StreamQuery", s.d.StreamQuery(st))
	s.sync(t, st)
	require.NoError(t, s.d.StreamQuery(st), "StreamQuery after StreamSynchronize")

	m := math.Float32frombits(uint32(v) * 0x01010101)
	want := make([]float32, n)
	for i := range want {
		base := m
		if i < k {
			base = fill
		}
		want[i] = base + yv[i]
	}
	checkBytes(t, "memset, fill, add, copy in queue order", got, le.FromF32(want))
}

// twoStreams queues a long chain on s1, records an event, makes s2 wait for
// it and reads the chain's result on s2.
func (s *suite) twoStreams(t *testing.T, dev int) {
	r := newRand(t)
	const n, steps = 1 << 14, 8
	s1, s2 := s.stream(t, dev), s.stream(t, dev)
	e := s.event(t, dev, false)
	a := s.upload(t, dev, randBytes(r, 4*n))
	b := s.upload(t, dev, randBytes(r, 4*n))
	hb, got := s.pinned(t, 4*n)

	init := randValue(r)
	s.launch(t, s1, "fill_f32", args().Ptr(a).F32(init).I64(n))
	want := init
	for i := range steps {
		bias := float32(i + 1)
		s.launch(t, s1, "scale_f32", args().Ptr(a).Ptr(a).F32(0.5).F32(bias).I64(n))
		want = want*0.5 + bias // exact in float32: products by 0.5, small integers
	}
	require.NoError(t, s.d.EventRecord(e, s1), "EventRecord")
	require.NoError(t, s.d.StreamWaitEvent(s2, e), "StreamWaitEvent")
	s.launch(t, s2, "scale_f32", args().Ptr(b).Ptr(a).F32(2).F32(0).I64(n))
	require.NoError(t, s.d.CopyDtoHAsync(s2, hb, b), "CopyDtoHAsync")
	s.sync(t, s2) // only s2: the event must have ordered s1's work before it
	wantAll := make([]float32, n)
	for i := range wantAll {
		wantAll[i] = 2 * want
	}
	checkBytes(t, "s2 saw s1's finished chain", got, le.FromF32(wantAll))
	require.NoError(t, s.d.EventQuery(e), "EventQuery of an event s2 waited for")
}

// destroyWaits destroys a stream with work queued and checks the work ran.
func (s *suite) destroyWaits(t *testing.T, dev int) {
	r := newRand(t)
	const n = 1 << 12
	st, err := s.d.StreamCreate(dev)
	require.NoError(t, err, "StreamCreate")
	x := s.upload(t, dev, randBytes(r, 4*n))
	value := randValue(r)
	s.launch(t, st, "fill_f32", args().Ptr(x).F32(value).I64(n))
	require.NoError(t, s.d.StreamDestroy(st), "StreamDestroy with queued work")
	require.NoError(t, s.d.DeviceSynchronize(dev), "DeviceSynchronize")
	want := make([]float32, n)
	for i := range want {
		want[i] = value
	}
	checkBytes(t, "work queued before StreamDestroy ran", s.download(t, dev, x, 4*n), le.FromF32(want))
}

// events checks timing events around work, queries after synchronize, and
// that elapsed time on unsuitable events is an error.
func (s *suite) events(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		r := newRand(t)
		st := s.stream(t, dev)
		const n = 1 << 14
		x := s.malloc(t, dev, 4*n)

		t.Run("timing events measure work", func(t *testing.T) {
			start, end := s.event(t, dev, true), s.event(t, dev, true)
			require.NoError(t, s.d.EventRecord(start, st), "EventRecord start")
			for range 4 {
				s.launch(t, st, "fill_f32", args().Ptr(x).F32(randValue(r)).I64(n))
			}
			require.NoError(t, s.d.EventRecord(end, st), "EventRecord end")
			checkIdleOrNotReady(t, "EventQuery", s.d.EventQuery(end))
			require.NoError(t, s.d.EventSynchronize(end), "EventSynchronize")
			require.NoError(t, s.d.EventQuery(end), "EventQuery after EventSynchronize")
			require.NoError(t, s.d.EventQuery(start), "EventQuery of an earlier event")
			dt, err := s.d.EventElapsed(start, end)
			require.NoError(t, err, "EventElapsed")
			assert.GreaterOrEqual(t, dt.Nanoseconds(), int64(0), "EventElapsed")
			t.Logf("4 fills of %d floats: %v", n, dt)

			// Re-recording moves the event.
			require.NoError(t, s.d.EventRecord(start, st), "EventRecord again")
			require.NoError(t, s.d.EventRecord(end, st), "EventRecord again")
			require.NoError(t, s.d.EventSynchronize(end), "EventSynchronize")
			dt, err = s.d.EventElapsed(start, end)
			require.NoError(t, err, "EventElapsed after re-recording")
			assert.GreaterOrEqual(t, dt.Nanoseconds(), int64(0), "EventElapsed")
		})

		t.Run("an event never recorded counts as complete", func(t *testing.T) {
			e := s.event(t, dev, false)
			require.NoError(t, s.d.EventQuery(e), "EventQuery")
			require.NoError(t, s.d.EventSynchronize(e), "EventSynchronize")
			require.NoError(t, s.d.StreamWaitEvent(st, e), "StreamWaitEvent")
			s.sync(t, st)
		})

		t.Run("elapsed time of unsuitable events is an error", func(t *testing.T) {
			a, b := s.event(t, dev, false), s.event(t, dev, false)
			require.NoError(t, s.d.EventRecord(a, st), "EventRecord")
			require.NoError(t, s.d.EventRecord(b, st), "EventRecord")
			require.NoError(t, s.d.EventSynchronize(b), "EventSynchronize")
			_, err := s.d.EventElapsed(a, b)
			s.checkError(t, "EventElapsed of events created without timing", err, dev)

			c, d := s.event(t, dev, true), s.event(t, dev, true)
			_, err = s.d.EventElapsed(c, d)
			s.checkError(t, "EventElapsed of timing events never recorded", err, dev)
			require.NoError(t, s.d.EventRecord(c, st), "EventRecord")
			require.NoError(t, s.d.EventSynchronize(c), "EventSynchronize")
			_, err = s.d.EventElapsed(c, d)
			s.checkError(t, "EventElapsed with an end event never recorded", err, dev)
			s.healthy(t, dev)
		})
	})
}
