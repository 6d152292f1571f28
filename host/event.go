package host

import (
	"time"

	"github.com/ternion/ternion/vendorapi"
)

// event is an EventCreate handle; its state is guarded by Driver.mu.
type event struct {
	id       uintptr
	dev      int
	timing   bool
	last     *record  // most recent EventRecord outside capture
	captured *capture // the capture of the most recent EventRecord, if it was captured
}

// lookupEvent finds a live event; the caller holds d.mu.
func (d *Driver) lookupEvent(call string, e vendorapi.Event) (*event, error) {
	ev := d.events[e.Handle]
	if ev == nil || ev.dev != e.Device {
		return nil, newErr(errInvalidHandle, call, e.Device, "unknown or destroyed event %d", e.Handle)
	}
	return ev, nil
}

// settled returns e's latest record, or an error when that record was
// captured: while the capture lasts as CUDA's cudaErrorCapturedEvent, after
// it as cudaErrorInvalidValue (what CUDA returns then, whether or not the
// graph ran). The caller holds d.mu.
func (ev *event) settled(call string) (*record, error) {
	switch {
	case ev.captured.active():
		return nil, newErr(errCapturedEvent, call, ev.dev,
			"event %d was last recorded in a capture of stream %d", ev.id, ev.captured.st.id)
	case ev.captured != nil:
		return nil, invalid(call, ev.dev,
			"event %d was last recorded in a capture of stream %d, which has ended: record it again outside a capture", ev.id, ev.captured.st.id)
	}
	return ev.last, nil
}

// EventCreate creates an event on dev; timing enables EventElapsed.
func (d *Driver) EventCreate(dev int, timing bool) (vendorapi.Event, error) {
	if err := d.checkDev("hostEventCreate", dev); err != nil {
		return vendorapi.Event{}, err
	}
	ev := &event{id: d.id(), dev: dev, timing: timing}
	d.mu.Lock()
	d.events[ev.id] = ev
	d.mu.Unlock()
	return vendorapi.Event{Device: dev, Handle: ev.id}, nil
}

// EventDestroy destroys e; work already waiting on it is unaffected.
func (d *Driver) EventDestroy(e vendorapi.Event) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.lookupEvent("hostEventDestroy", e); err != nil {
		return err
	}
	delete(d.events, e.Handle)
	return nil
}

// EventRecord records e at the current end of s (a stream of e's device).
func (d *Driver) EventRecord(e vendorapi.Event, s vendorapi.Stream) error {
	const call = "hostEventRecord"
	return d.submit(call, s, &node{kind: nodeRecord, call: call, dev: s.Device, event: e})
}

// EventSynchronize waits for e's latest record and returns the first error of
// the work queued before it on its stream, if not reported yet. An event never
// recorded is complete.
func (d *Driver) EventSynchronize(e vendorapi.Event) error {
	const call = "hostEventSynchronize"
	r, err := d.latestRecord(call, e)
	if err != nil || r == nil {
		return err
	}
	<-r.done
	return r.take()
}

// EventQuery returns nil when e's latest record has completed (or e was never
// recorded) and an error matching ErrNotReady otherwise.
func (d *Driver) EventQuery(e vendorapi.Event) error {
	const call = "hostEventQuery"
	r, err := d.latestRecord(call, e)
	if err != nil || r == nil {
		return err
	}
	select {
	case <-r.done:
		return nil
	default:
		return newErr(errNotReady, call, e.Device, "event %d has not completed", e.Handle)
	}
}

// EventElapsed returns the time from start's completion to end's. Both must be
// timing events of one device, recorded and completed.
func (d *Driver) EventElapsed(start, end vendorapi.Event) (time.Duration, error) {
	const call = "hostEventElapsedTime"
	if start.Device != end.Device {
		return 0, invalid(call, end.Device, "events of devices %d and %d", start.Device, end.Device)
	}
	d.mu.Lock()
	var recs [2]*record
	var err error
	for i, e := range []vendorapi.Event{start, end} {
		var ev *event
		if ev, err = d.lookupEvent(call, e); err != nil {
			break
		}
		if !ev.timing {
			err = newErr(errInvalidHandle, call, e.Device, "event %d was created without timing", ev.id)
			break
		}
		if recs[i], err = ev.settled(call); err != nil {
			break
		}
		if recs[i] == nil {
			err = newErr(errInvalidHandle, call, e.Device, "event %d has not been recorded", ev.id)
			break
		}
	}
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	for i, r := range recs {
		select {
		case <-r.done:
		default:
			e := []vendorapi.Event{start, end}[i]
			return 0, newErr(errNotReady, call, e.Device, "event %d has not completed", e.Handle)
		}
	}
	return recs[1].at.Sub(recs[0].at), nil
}

// latestRecord returns e's latest record, nil when e was never recorded.
func (d *Driver) latestRecord(call string, e vendorapi.Event) (*record, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ev, err := d.lookupEvent(call, e)
	if err != nil {
		return nil, err
	}
	return ev.settled(call)
}
