//go:build cuda || hip || musa

package gpushim

/*
#include <stdlib.h>
#include "shim.h"
#cgo noescape tn_launch
#cgo nocallback tn_launch
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// Kernel returns catalog kernel name on dev, loading the device's code object
// (embedded, or compiled at run time) on first use.
func (d *Driver) Kernel(dev int, name string) (vendorapi.Function, error) {
	if err := d.checkDev("Kernel", dev); err != nil {
		return vendorapi.Function{}, err
	}
	k, err := kernels.Lookup(name)
	if err != nil {
		return vendorapi.Function{}, contractError(d.vendor, "Kernel", dev, err)
	}
	dv := d.devs[dev]
	dv.mu.Lock()
	defer dv.mu.Unlock()
	if f, ok := dv.funcs[name]; ok {
		return f, nil
	}
	if err := d.loadModule(dev, dv); err != nil {
		if errors.Is(err, vendorapi.ErrNoKernel) {
			return vendorapi.Function{}, ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, "%s",
				noKernelMessage(name, dv.props.CC, d.cfg.Image, err.Error()))
		}
		return vendorapi.Function{}, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var raw C.uint64_t
	if err := d.fail(C.tn_module_function(C.int32_t(dev), C.uint64_t(dv.module), cname, &raw), dev); err != nil {
		if errors.Is(err, vendorapi.ErrNoKernel) {
			return vendorapi.Function{}, ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, "%s",
				noKernelMessage(name, dv.props.CC, d.cfg.Image, "the loaded code object lacks it: "+err.Error()))
		}
		return vendorapi.Function{}, err
	}
	id := d.h.add(handle{kind: kindFunction, dev: dev, raw: uint64(raw), params: k.Kinds()})
	f := vendorapi.Function{Device: dev, Name: name, Handle: id}
	dv.funcs[name] = f
	return f, nil
}

// loadModule loads dev's code object once: the embedded image when the plan
// says so (falling back to run-time compilation if the driver refuses it),
// else code compiled at run time. A failure matching ErrNoKernel is kept, so
// later calls do not retry a slow compilation. dv.mu is held.
func (d *Driver) loadModule(dev int, dv *device) error {
	if dv.module != 0 {
		return nil
	}
	if dv.loadErr != nil {
		return dv.loadErr
	}
	var err error
	if dv.plan.embedded {
		if err = d.moduleLoad(dev, dv, d.cfg.Image.Code(dv.props.CC)); err == nil {
			d.log.Info(fmt.Sprintf("%s: device %d (%s): kernels from the embedded code object (%s)", d.vendor, dev,
				dv.props.ArchName, d.cfg.Image.Describe()))
			return nil
		}
		d.log.Warn(fmt.Sprintf("%s: device %d (%s): the embedded code object does not load (%v); compiling at run time",
			d.vendor, dev, dv.props.ArchName, err))
		dv.plan = kernelPlan{reason: "the embedded code object does not load: " + err.Error()}
		dv.archsMu.Lock()
		dv.props.CompiledArchs = nil
		dv.archsMu.Unlock()
	}
	code, err := d.rtcCode(dev, dv)
	if err == nil {
		err = d.moduleLoad(dev, dv, code)
	}
	if errors.Is(err, vendorapi.ErrNoKernel) {
		dv.loadErr = err
	}
	return err
}

// moduleLoad loads code on dev; the C side gets a C copy of it.
func (d *Driver) moduleLoad(dev int, dv *device, code []byte) error {
	if len(code) == 0 {
		return ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, "empty code object")
	}
	buf := C.CBytes(code)
	defer C.free(buf)
	var mod C.uint64_t
	if err := d.fail(C.tn_module_load(C.int32_t(dev), buf, &mod), dev); err != nil {
		return err
	}
	dv.module = uint64(mod)
	return nil
}

// SetMaxDynamicSharedMemory allows f launches with up to bytes of dynamic
// shared memory (at most the device's opt-in maximum).
func (d *Driver) SetMaxDynamicSharedMemory(f vendorapi.Function, bytes int) error {
	h, err := d.lookup("SetMaxDynamicSharedMemory", f.Handle, kindFunction, f.Device)
	if err != nil {
		return err
	}
	if optin := d.devs[f.Device].props.SharedMemPerBlockOptin; bytes < 0 || bytes > optin {
		return d.invalid("SetMaxDynamicSharedMemory", f.Device, "%d bytes is outside [0, %d], the opt-in maximum", bytes, optin)
	}
	return d.fail(C.tn_func_set_max_dyn_smem(C.int32_t(f.Device), C.uint64_t(h.raw), C.int32_t(bytes)), f.Device)
}

// Launch queues f on s after checking args against the catalog: one cgo call.
func (d *Driver) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args []vendorapi.Arg) error {
	hf, hs, okf, oks := d.h.get2(f.Handle, kindFunction, f.Device, s.Handle, kindStream, s.Device)
	switch {
	case !okf:
		return d.invalid("Launch", f.Device, "%#x is not a live function of device %d", f.Handle, f.Device)
	case !oks:
		return d.invalid("Launch", s.Device, "%#x is not a live stream of device %d", s.Handle, s.Device)
	case f.Device != s.Device:
		return d.invalid("Launch", s.Device, "function of device %d launched on a stream of device %d", f.Device, s.Device)
	}
	var slots argSlots
	n, err := slots.pack(f.Name, hf.params, args)
	if err != nil {
		return contractError(d.vendor, "Launch", f.Device, err)
	}
	dm := dims(grid, block)
	return d.fail(C.tn_launch(C.int32_t(f.Device), C.uint64_t(hf.raw), (*C.uint32_t)(unsafe.Pointer(&dm[0])),
		C.uint32_t(sharedMem), C.uint64_t(hs.raw), (*C.uint64_t)(unsafe.Pointer(&slots[0])), C.int32_t(n)), f.Device)
}
