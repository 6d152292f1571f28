//go:build (cuda || hip || musa) && ternion_bench

package gpushim

/*
#include "shim.h"
#cgo noescape tn_launch_raw
#cgo nocallback tn_launch_raw
*/
import "C"

import "github.com/ternion/ternion/vendorapi"

// RawKernel (built only with the ternion_bench tag, for the overhead
// benchmarks) is a resolved function and stream for measuring the floor of a
// launch from Go: Launch is one cgo call doing exactly one kernel launch, with
// no argument check, no handle lookup and no device switch.
type RawKernel struct {
	d       *Driver
	dev     int
	fn, st  uint64
	offsets []uint32
}

// Raw resolves f and s (of one device) for RawKernel.Launch.
func (d *Driver) Raw(f vendorapi.Function, s vendorapi.Stream) (RawKernel, error) {
	hf, err := d.lookup("Raw", f.Handle, kindFunction, f.Device)
	if err != nil {
		return RawKernel{}, err
	}
	hs, err := d.stream("Raw", s)
	if err != nil {
		return RawKernel{}, err
	}
	if f.Device != s.Device {
		return RawKernel{}, d.invalid("Raw", s.Device, "function and stream of different devices")
	}
	return RawKernel{d: d, dev: f.Device, fn: hf.raw, st: hs.raw, offsets: hf.offsets}, nil
}

// Bind makes the kernel's device and its driver context current on the
// calling OS thread; call it after runtime.LockOSThread, before Launch.
func (r RawKernel) Bind() error {
	return r.d.fail(C.tn_bind_device(C.int32_t(r.dev)), r.dev)
}

// Launch launches the kernel on a 1×1 grid and block with args (packed
// as the kernel's parameters, unchecked), on a thread Bind prepared.
func (r RawKernel) Launch(args *vendorapi.Args) error {
	n := args.Len()
	bp, op := launchArgs(args, r.offsets, n)
	return r.d.fail(C.tn_launch_raw(C.uint64_t(r.fn), C.uint64_t(r.st), bp, op, C.int32_t(n)), r.dev)
}
