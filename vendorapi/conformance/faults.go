package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
)

// asyncFaults runs where queued work can fail without damaging the device
// (vendorapi.FaultInjector): each synchronizing call reports a failure of
// the work before it once, as a *vendorapi.Error of the stream's device;
// later calls report nothing; work queued after the failure still runs.
func (s *suite) asyncFaults(t *testing.T) {
	fi, ok := s.d.(vendorapi.FaultInjector)
	if !ok {
		t.Skipf("%s cannot fail queued work without damaging the device (no vendorapi.FaultInjector)", s.d.Vendor())
	}
	s.eachDevice(t, func(t *testing.T, dev int) {
		for _, c := range []struct {
			name   string
			report func(st vendorapi.Stream, e vendorapi.Event) error
		}{
			{"StreamSynchronize", func(st vendorapi.Stream, _ vendorapi.Event) error { return s.d.StreamSynchronize(st) }},
			{"EventSynchronize of a later event", func(_ vendorapi.Stream, e vendorapi.Event) error { return s.d.EventSynchronize(e) }},
			{"DeviceSynchronize", func(st vendorapi.Stream, _ vendorapi.Event) error { return s.d.DeviceSynchronize(st.Device) }},
		} {
			t.Run("reported by "+c.name, func(t *testing.T) {
				r := newRand(t)
				const n = 500
				st := s.stream(t, dev)
				e := s.event(t, dev, false)
				x := s.upload(t, dev, randBytes(r, 4*n))
				v := randValue(r)
				require.NoError(t, fi.InjectFault(st), "InjectFault")
				s.launch(t, st, "fill_f32", args().Ptr(x).F32(v).I64(n))
				require.NoError(t, s.d.EventRecord(e, st), "EventRecord")
				s.checkError(t, c.name+" after queued work failed", c.report(st, e), dev)
				require.NoError(t, s.d.StreamSynchronize(st), "StreamSynchronize: the failure was reported already")
				require.NoError(t, s.d.EventSynchronize(e), "EventSynchronize: the failure was reported already")
				require.NoError(t, s.d.DeviceSynchronize(dev), "DeviceSynchronize: the failure was reported already")
				checkBytes(t, "work queued after the failure ran", s.download(t, dev, x, 4*n), le.FromF32(fill32(v, n)))
				s.healthy(t, dev)
			})
		}
		t.Run("a failure in a graph", func(t *testing.T) {
			st := s.stream(t, dev)
			g := s.capture(t, st, func() { require.NoError(t, fi.InjectFault(st), "InjectFault during capture") })
			s.sync(t, st)
			x := s.instantiate(t, g)
			for range 2 {
				require.NoError(t, s.d.GraphLaunch(x, st), "GraphLaunch")
				s.checkError(t, "StreamSynchronize after a graph whose node failed", s.d.StreamSynchronize(st), dev)
			}
			s.sync(t, st)
		})
	})
}
