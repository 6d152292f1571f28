package conformance

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// Bounds of the busy checks: the largest buffer one thread fills, and how
// long a query may keep saying ErrNotReady before the check fails instead
// of hanging (the work takes milliseconds).
const (
	busyMaxBytes = 64 << 20
	busyDeadline = 2 * time.Minute
)

// busy checks that queries tell pending work from finished work: StreamQuery
// and EventQuery return ErrNotReady while work is pending and nil once it
// is done, never nil while it is provably still pending, and EventSynchronize
// returns only after the work before the event.
func (s *suite) busy(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) { s.busyQueries(t, dev) })
}

// busyQueries keeps a stream busy with one thread filling a large buffer
// (fill_f32 with a grid and block of one), then writes a marker and records
// an event. A query that says nil must be right: the marker, written after
// the fill, is then read with a synchronous copy (which does not wait for
// the stream). ErrNotReady must be seen at least once; when the device is so
// fast that the work is done before the first query, the fill doubles, up
// to busyMaxBytes.
func (s *suite) busyQueries(t *testing.T, dev int) {
	_, total, err := s.d.MemInfo(dev)
	require.NoError(t, err, "MemInfo")
	maxBytes := min(uint64(busyMaxBytes), total/8) &^ 3
	big := s.malloc(t, dev, maxBytes)
	marker := s.malloc(t, dev, 4)
	st := s.stream(t, dev)
	start, end := s.event(t, dev, true), s.event(t, dev, true)
	fill, mark := s.kernel(t, dev, "fill_f32"), s.kernel(t, dev, "fill_u32")
	one := vendorapi.Dim3{X: 1}
	markerIs := func(want uint32) bool {
		b := s.download(t, dev, marker, 4)
		return binary.LittleEndian.Uint32(b) == want
	}

	seen := map[string]bool{}
	for round, n := uint32(1), uint64(1<<18); ; round, n = round+1, 2*n {
		n = min(n, maxBytes/4)
		require.NoError(t, s.d.Memset(dev, marker, 0, 4), "Memset marker")
		require.NoError(t, s.d.EventRecord(start, st), "EventRecord start")
		require.NoError(t, s.d.Launch(fill, one, one, 0, st, args().Ptr(big).F32(float32(round)).I64(int64(n))), "Launch fill_f32 on one thread")
		require.NoError(t, s.d.Launch(mark, one, one, 0, st, args().Ptr(marker).U32(round).I64(1)), "Launch fill_u32 marker")
		require.NoError(t, s.d.EventRecord(end, st), "EventRecord end")

		deadline := time.Now().Add(busyDeadline)
		queries := []struct {
			name  string
			query func() error
		}{
			{"StreamQuery", func() error { return s.d.StreamQuery(st) }},
			{"EventQuery", func() error { return s.d.EventQuery(end) }},
			{"EventElapsed", func() error { _, err := s.d.EventElapsed(start, end); return err }},
		}
		for len(queries) > 0 {
			pending := queries[:0]
			for _, q := range queries {
				err := q.query()
				switch {
				case err == nil:
					if !markerIs(round) {
						t.Fatalf("%s returned nil while work queued before it had not run (round %d, %d floats)", q.name, round, n)
					}
				case errors.Is(err, vendorapi.ErrNotReady):
					s.checkError(t, q.name+" while work is pending", err, dev, vendorapi.ErrNotReady)
					seen[q.name] = true
					pending = append(pending, q)
				default:
					s.checkError(t, q.name+" while work is pending", err, dev, vendorapi.ErrNotReady)
					t.FailNow()
				}
			}
			queries = pending
			if len(queries) > 0 && time.Now().After(deadline) {
				t.Fatalf("%s still says not ready after %v", queries[0].name, busyDeadline)
			}
			runtime.Gosched()
		}
		require.NoError(t, s.d.EventSynchronize(end), "EventSynchronize")
		require.NoError(t, s.d.StreamQuery(st), "StreamQuery once the work is done")
		require.NoError(t, s.d.EventQuery(end), "EventQuery once the work is done")
		if seen["StreamQuery"] && seen["EventQuery"] || n == maxBytes/4 {
			break
		}
	}
	// EventSynchronize, StreamSynchronize and DeviceSynchronize return only after the work.
	waits := []string{"EventSynchronize", "StreamSynchronize", "DeviceSynchronize"}
	for i, wait := range []func() error{
		func() error { return s.d.EventSynchronize(end) },
		func() error { return s.d.StreamSynchronize(st) },
		func() error { return s.d.DeviceSynchronize(dev) },
	} {
		want := uint32(1000 + i)
		require.NoError(t, s.d.Memset(dev, marker, 0, 4), "Memset marker")
		require.NoError(t, s.d.Launch(fill, one, one, 0, st, args().Ptr(big).F32(1).I64(int64(maxBytes/4))), "Launch fill_f32")
		require.NoError(t, s.d.Launch(mark, one, one, 0, st, args().Ptr(marker).U32(want).I64(1)), "Launch fill_u32 marker")
		require.NoError(t, s.d.EventRecord(end, st), "EventRecord")
		require.NoError(t, wait(), waits[i])
		require.True(t, markerIs(want), "%s returned before the work queued before it had run", waits[i])
	}
	if !seen["StreamQuery"] || !seen["EventQuery"] {
		t.Skipf("the device finished %d bytes of one-thread work before the first query (ErrNotReady seen: %v)", maxBytes, seen)
	}
}
