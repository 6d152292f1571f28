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

// family is one kernel family's code on one device: its plan and, once
// loaded, its module.
type family struct {
	plan    kernelPlan
	module  uint64 // 0 until loaded
	loadErr error  // why it could not be loaded (kept: compiling is slow)
	pdl     bool   // the loaded code waits for its predecessor in every kernel (pdlCode)
}

// Kernel returns catalog kernel name on dev, loading its family's code
// object (embedded, or compiled at run time) on first use.
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
	fam, err := d.loadFamily(dev, dv, k.Family)
	if err != nil {
		if errors.Is(err, vendorapi.ErrNoKernel) {
			return vendorapi.Function{}, ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, "%s",
				noKernelMessage(name, dv.props.CC, d.cfg.Image, err.Error()))
		}
		return vendorapi.Function{}, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var raw C.uint64_t
	if err := d.fail(C.tn_module_function(C.int32_t(dev), C.uint64_t(fam.module), cname, &raw), dev); err != nil {
		if errors.Is(err, vendorapi.ErrNoKernel) {
			return vendorapi.Function{}, ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, "%s",
				noKernelMessage(name, dv.props.CC, d.cfg.Image, "the loaded code object of family "+k.Family+" lacks it: "+err.Error()))
		}
		return vendorapi.Function{}, err
	}
	if dv.carveout >= 0 {
		if err := d.fail(C.tn_func_set_carveout(C.int32_t(dev), raw, C.int32_t(dv.carveout)), dev); err != nil {
			return vendorapi.Function{}, err
		}
	}
	kinds := k.Kinds()
	offsets, _ := vendorapi.Layout(kinds)
	id := d.h.add(handle{kind: kindFunction, dev: dev, raw: uint64(raw), params: kinds, offsets: offsets, pdl: dv.pdl && fam.pdl})
	f := vendorapi.Function{Device: dev, Name: name, Handle: id}
	dv.funcs[name] = f
	return f, nil
}

// loadFamily loads family name's code object on dev once: the embedded code
// when the plan says so (compiling at run time instead if the driver refuses
// it), else code compiled at run time. A failure matching ErrNoKernel is
// kept, so later calls do not retry a slow compilation. dv.mu is held.
func (d *Driver) loadFamily(dev int, dv *device, name string) (*family, error) {
	fam := dv.families[name]
	if fam == nil {
		fam = &family{plan: planFamily(dv.plan, d.cfg.Image, name)}
		dv.families[name] = fam
	}
	if fam.module != 0 || fam.loadErr != nil {
		return fam, fam.loadErr
	}
	where := fmt.Sprintf("%s: device %d (%s): family %s", d.vendor, dev, dv.props.ArchName, name)
	var err error
	if fam.plan.embedded {
		var code []byte
		if code, err = fam.plan.code.Code(dv.props.CC); err == nil {
			err = d.moduleLoad(dev, fam, code)
		}
		if err == nil {
			fam.pdl = pdlCode(dv.props.CC, d.cfg.Image.Archs, d.cfg.Image.PTX, false)
			d.log.Info(fmt.Sprintf("%s from the embedded code object (%s)", where, d.cfg.Image.Describe()))
			return fam, nil
		}
		d.log.Warn(fmt.Sprintf("%s: the embedded code object does not load (%v); compiling at run time", where, err))
		fam.plan = kernelPlan{reason: "the embedded code object of family " + name + " does not load: " + err.Error()}
	}
	code, err := d.rtcCode(dev, dv, name, where, fam.plan.reason)
	if err == nil {
		err = d.moduleLoad(dev, fam, code)
	}
	if err == nil {
		fam.pdl = pdlCode(dv.props.CC, nil, 0, true)
	}
	if errors.Is(err, vendorapi.ErrNoKernel) {
		fam.loadErr = err
	}
	return fam, err
}

// moduleLoad loads code on dev as fam's module; the C side gets a C copy of it.
func (d *Driver) moduleLoad(dev int, fam *family, code []byte) error {
	if len(code) == 0 {
		return ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, "empty code object")
	}
	buf := C.CBytes(code)
	defer C.free(buf)
	var mod C.uint64_t
	if err := d.fail(C.tn_module_load(C.int32_t(dev), buf, &mod), dev); err != nil {
		return err
	}
	fam.module = uint64(mod)
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

// Launch queues f on s after checking args against the catalog
// (checkLaunch): one cgo call, which points the vendor's launch at each
// argument in the packed bytes.
func (d *Driver) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args *vendorapi.Args) error {
	hf, hs, dm, err := checkLaunch(&d.h, d.vendor, f, grid, block, s, args)
	if err != nil {
		return err
	}
	n := len(hf.offsets)
	bp, op := launchArgs(args, hf.offsets, n)
	pdl := C.int32_t(0)
	if hf.pdl && pdlGrid(dm, d.devs[f.Device].props.SMs) {
		pdl = 1
	}
	return d.fail(C.tn_launch(C.int32_t(f.Device), C.uint64_t(hf.raw), (*C.uint32_t)(unsafe.Pointer(&dm[0])),
		C.uint32_t(sharedMem), C.uint64_t(hs.raw), bp, op, C.int32_t(n), pdl), f.Device)
}

// launchArgs returns the C view of the first n arguments packed in args, at
// offsets, for tn_launch and tn_launch_raw: nil pointers when n is 0.
func launchArgs(args *vendorapi.Args, offsets []uint32, n int) (*C.uint8_t, *C.uint32_t) {
	if n == 0 {
		return nil, nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&args.Bytes()[0])), (*C.uint32_t)(unsafe.Pointer(&offsets[0]))
}
