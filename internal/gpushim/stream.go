//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
*/
import "C"

import (
	"time"

	"github.com/ternion/ternion/vendorapi"
)

// lookup returns the live handle id of kind k on dev, or an ErrInvalidValue error.
func (d *Driver) lookup(call string, id uintptr, k handleKind, dev int) (handle, error) {
	h, ok := d.h.get(id, k, dev)
	if !ok {
		return handle{}, d.invalid(call, dev, "%#x is not a live %s of device %d", id, k, dev)
	}
	return h, nil
}

// release removes the live handle id of kind k on dev, or returns an ErrInvalidValue error.
func (d *Driver) release(call string, id uintptr, k handleKind, dev int) (handle, error) {
	h, ok := d.h.remove(id, k, dev)
	if !ok {
		return handle{}, d.invalid(call, dev, "%#x is not a live %s of device %d", id, k, dev)
	}
	return h, nil
}

// stream resolves s.
func (d *Driver) stream(call string, s vendorapi.Stream) (handle, error) {
	return d.lookup(call, s.Handle, kindStream, s.Device)
}

// event resolves e.
func (d *Driver) event(call string, e vendorapi.Event) (handle, error) {
	return d.lookup(call, e.Handle, kindEvent, e.Device)
}

// StreamCreate creates a non-blocking stream on dev.
func (d *Driver) StreamCreate(dev int) (vendorapi.Stream, error) {
	if err := d.checkDev("StreamCreate", dev); err != nil {
		return vendorapi.Stream{}, err
	}
	var raw C.uint64_t
	if err := d.fail(C.tn_stream_create(C.int32_t(dev), &raw), dev); err != nil {
		return vendorapi.Stream{}, err
	}
	return vendorapi.Stream{Device: dev, Handle: d.h.add(handle{kind: kindStream, dev: dev, raw: uint64(raw)})}, nil
}

// StreamDestroy destroys s; its queued work still completes.
func (d *Driver) StreamDestroy(s vendorapi.Stream) error {
	h, err := d.release("StreamDestroy", s.Handle, kindStream, s.Device)
	if err != nil {
		return err
	}
	return d.fail(C.tn_stream_destroy(C.int32_t(s.Device), C.uint64_t(h.raw)), s.Device)
}

// StreamSynchronize waits for all work queued on s.
func (d *Driver) StreamSynchronize(s vendorapi.Stream) error {
	h, err := d.stream("StreamSynchronize", s)
	if err != nil {
		return err
	}
	return d.fail(C.tn_stream_sync(C.int32_t(s.Device), C.uint64_t(h.raw)), s.Device)
}

// StreamQuery returns nil when s is idle and an error matching ErrNotReady otherwise.
func (d *Driver) StreamQuery(s vendorapi.Stream) error {
	h, err := d.stream("StreamQuery", s)
	if err != nil {
		return err
	}
	return d.fail(C.tn_stream_query(C.int32_t(s.Device), C.uint64_t(h.raw)), s.Device)
}

// StreamWaitEvent makes later work on s wait for e (which may be another device's).
func (d *Driver) StreamWaitEvent(s vendorapi.Stream, e vendorapi.Event) error {
	hs, err := d.stream("StreamWaitEvent", s)
	if err != nil {
		return err
	}
	he, err := d.event("StreamWaitEvent", e)
	if err != nil {
		return err
	}
	return d.fail(C.tn_stream_wait_event(C.int32_t(s.Device), C.uint64_t(hs.raw), C.uint64_t(he.raw)), s.Device)
}

// EventCreate creates an event on dev; timing enables EventElapsed.
func (d *Driver) EventCreate(dev int, timing bool) (vendorapi.Event, error) {
	if err := d.checkDev("EventCreate", dev); err != nil {
		return vendorapi.Event{}, err
	}
	var raw C.uint64_t
	t := C.int32_t(0)
	if timing {
		t = 1
	}
	if err := d.fail(C.tn_event_create(C.int32_t(dev), t, &raw), dev); err != nil {
		return vendorapi.Event{}, err
	}
	id := d.h.add(handle{kind: kindEvent, dev: dev, raw: uint64(raw), timing: timing})
	return vendorapi.Event{Device: dev, Handle: id}, nil
}

// EventDestroy destroys e.
func (d *Driver) EventDestroy(e vendorapi.Event) error {
	h, err := d.release("EventDestroy", e.Handle, kindEvent, e.Device)
	if err != nil {
		return err
	}
	return d.fail(C.tn_event_destroy(C.int32_t(e.Device), C.uint64_t(h.raw)), e.Device)
}

// EventRecord records e at the current end of s (a stream of e's device).
func (d *Driver) EventRecord(e vendorapi.Event, s vendorapi.Stream) error {
	he, hs, oke, oks := d.h.get2(e.Handle, kindEvent, e.Device, s.Handle, kindStream, s.Device)
	switch {
	case !oke:
		return d.invalid("EventRecord", e.Device, "%#x is not a live event of device %d", e.Handle, e.Device)
	case !oks:
		return d.invalid("EventRecord", s.Device, "%#x is not a live stream of device %d", s.Handle, s.Device)
	case e.Device != s.Device:
		return d.invalid("EventRecord", s.Device, "event of device %d recorded on a stream of device %d", e.Device, s.Device)
	}
	return d.fail(C.tn_event_record(C.int32_t(s.Device), C.uint64_t(he.raw), C.uint64_t(hs.raw)), s.Device)
}

// EventSynchronize waits until e has completed.
func (d *Driver) EventSynchronize(e vendorapi.Event) error {
	h, err := d.event("EventSynchronize", e)
	if err != nil {
		return err
	}
	return d.fail(C.tn_event_sync(C.int32_t(e.Device), C.uint64_t(h.raw)), e.Device)
}

// EventQuery returns nil when e has completed and an error matching ErrNotReady otherwise.
func (d *Driver) EventQuery(e vendorapi.Event) error {
	h, err := d.event("EventQuery", e)
	if err != nil {
		return err
	}
	return d.fail(C.tn_event_query(C.int32_t(e.Device), C.uint64_t(h.raw)), e.Device)
}

// EventElapsed returns the time between two completed timing events of one device.
func (d *Driver) EventElapsed(start, end vendorapi.Event) (time.Duration, error) {
	hs, err := d.event("EventElapsed", start)
	if err != nil {
		return 0, err
	}
	he, err := d.event("EventElapsed", end)
	if err != nil {
		return 0, err
	}
	if start.Device != end.Device {
		return 0, d.invalid("EventElapsed", end.Device, "events of devices %d and %d", start.Device, end.Device)
	}
	var ms C.float
	if err := d.fail(C.tn_event_elapsed(C.int32_t(start.Device), C.uint64_t(hs.raw), C.uint64_t(he.raw), &ms), start.Device); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}
