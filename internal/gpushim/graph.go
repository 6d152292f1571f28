//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
*/
import "C"

import "github.com/ternion/ternion/vendorapi"

// BeginCapture starts capturing s in relaxed mode.
func (d *Driver) BeginCapture(s vendorapi.Stream) error {
	h, err := d.stream("BeginCapture", s)
	if err != nil {
		return err
	}
	return d.fail(C.tn_capture_begin(C.int32_t(s.Device), C.uint64_t(h.raw)), s.Device)
}

// EndCapture ends capture on s and returns the captured graph.
func (d *Driver) EndCapture(s vendorapi.Stream) (vendorapi.Graph, error) {
	h, err := d.stream("EndCapture", s)
	if err != nil {
		return vendorapi.Graph{}, err
	}
	var g C.uint64_t
	if err := d.fail(C.tn_capture_end(C.int32_t(s.Device), C.uint64_t(h.raw), &g), s.Device); err != nil {
		return vendorapi.Graph{}, err
	}
	return vendorapi.Graph{Device: s.Device, Handle: d.h.add(handle{kind: kindGraph, dev: s.Device, raw: uint64(g)})}, nil
}

// CaptureStatus reports whether s is capturing.
func (d *Driver) CaptureStatus(s vendorapi.Stream) (vendorapi.CaptureStatus, error) {
	h, err := d.stream("CaptureStatus", s)
	if err != nil {
		return vendorapi.CaptureNone, err
	}
	var st C.int32_t
	if err := d.fail(C.tn_capture_status(C.int32_t(s.Device), C.uint64_t(h.raw), &st), s.Device); err != nil {
		return vendorapi.CaptureNone, err
	}
	switch st {
	case 1:
		return vendorapi.CaptureActive, nil
	case 2:
		return vendorapi.CaptureInvalid, nil
	}
	return vendorapi.CaptureNone, nil
}

// GraphInstantiate makes an executable graph of g.
func (d *Driver) GraphInstantiate(g vendorapi.Graph) (vendorapi.GraphExec, error) {
	h, err := d.lookup("GraphInstantiate", g.Handle, kindGraph, g.Device)
	if err != nil {
		return vendorapi.GraphExec{}, err
	}
	var x C.uint64_t
	if err := d.fail(C.tn_graph_instantiate(C.int32_t(g.Device), C.uint64_t(h.raw), &x), g.Device); err != nil {
		return vendorapi.GraphExec{}, err
	}
	return vendorapi.GraphExec{Device: g.Device, Handle: d.h.add(handle{kind: kindExec, dev: g.Device, raw: uint64(x)})}, nil
}

// GraphExecUpdate updates e in place to g's parameters; any failure matches
// ErrGraphUpdate (with the vendor's update result in the message) and leaves e
// usable as it was.
func (d *Driver) GraphExecUpdate(e vendorapi.GraphExec, g vendorapi.Graph) error {
	he, err := d.lookup("GraphExecUpdate", e.Handle, kindExec, e.Device)
	if err != nil {
		return err
	}
	hg, err := d.lookup("GraphExecUpdate", g.Handle, kindGraph, g.Device)
	if err != nil {
		return err
	}
	if e.Device != g.Device {
		return d.invalid("GraphExecUpdate", e.Device, "exec of device %d, graph of device %d", e.Device, g.Device)
	}
	return d.fail(C.tn_graph_exec_update(C.int32_t(e.Device), C.uint64_t(he.raw), C.uint64_t(hg.raw)), e.Device)
}

// GraphLaunch queues e on s.
func (d *Driver) GraphLaunch(e vendorapi.GraphExec, s vendorapi.Stream) error {
	he, hs, oke, oks := d.h.get2(e.Handle, kindExec, e.Device, s.Handle, kindStream, s.Device)
	switch {
	case !oke:
		return d.invalid("GraphLaunch", e.Device, "%#x is not a live graph exec of device %d", e.Handle, e.Device)
	case !oks:
		return d.invalid("GraphLaunch", s.Device, "%#x is not a live stream of device %d", s.Handle, s.Device)
	case e.Device != s.Device:
		return d.invalid("GraphLaunch", s.Device, "exec of device %d launched on a stream of device %d", e.Device, s.Device)
	}
	return d.fail(C.tn_graph_launch(C.int32_t(s.Device), C.uint64_t(he.raw), C.uint64_t(hs.raw)), s.Device)
}

// GraphDestroy destroys a captured graph.
func (d *Driver) GraphDestroy(g vendorapi.Graph) error {
	h, err := d.release("GraphDestroy", g.Handle, kindGraph, g.Device)
	if err != nil {
		return err
	}
	return d.fail(C.tn_graph_destroy(C.int32_t(g.Device), C.uint64_t(h.raw)), g.Device)
}

// GraphExecDestroy destroys an executable graph.
func (d *Driver) GraphExecDestroy(e vendorapi.GraphExec) error {
	h, err := d.release("GraphExecDestroy", e.Handle, kindExec, e.Device)
	if err != nil {
		return err
	}
	return d.fail(C.tn_graph_exec_destroy(C.int32_t(e.Device), C.uint64_t(h.raw)), e.Device)
}
