//go:build cuda || hip || musa

package gpushim

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// rtcState is the run-time compiler, loaded on first use, and the code it
// produced in this process, by target.
type rtcState struct {
	mu      sync.Mutex
	loaded  bool
	err     error  // why the compiler is unavailable
	version string // e.g. "NVRTC 12.8"
	major   int    // its major version: 12
	lib     string // library it was loaded from
	code    map[rtcKey][]byte
}

// rtcKey is one compilation: a family for a target.
type rtcKey struct {
	family string
	target rtcTarget
}

// noKernel is an own ErrNoKernel error of a device's kernel loading.
func (d *Driver) noKernel(dev int, format string, args ...any) error {
	return ownError(d.vendor, "Kernel", dev, vendorapi.ErrNoKernel, format, args...)
}

// rtcCode returns family's code for dev compiled at run time from
// kernels.Sources: from this process's earlier compilations, the on-disk
// cache, or a compilation, and logs which of the three it was (where: the
// device and family, as loadFamily logs them) and why (reason: why the
// embedded code is not used).
func (d *Driver) rtcCode(dev int, dv *device, family, where, reason string) ([]byte, error) {
	if d.cfg.DisableRTC {
		return nil, d.noKernel(dev, "run-time compilation is disabled (%s)", reason)
	}
	r := &d.rtc
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := d.rtcOpen(dev); err != nil {
		return nil, err
	}
	t, err := d.rtcTarget(dev, dv, family)
	if err != nil {
		return nil, d.noKernel(dev, "%s: %v", r.version, err)
	}
	key := rtcKey{family, t}
	if code, ok := r.code[key]; ok {
		return code, nil
	}
	path := ""
	if dir := cacheDir(d.cfg.CacheDir); dir != "" {
		path = rtcCachePath(dir, family, kernels.FamilyHash(family), t, r.version)
	}
	if code, ok := readCache(path); ok {
		d.log.Info(fmt.Sprintf("%s: %s cache hit for %s (%s): %s", where, vendor.rtcName, t, reason, path))
		code = ptxTerminated(t, code)
		r.code[key] = code
		return code, nil
	}
	start := time.Now()
	code, err := d.rtcCompile(dev, family, t)
	if err != nil {
		return nil, err
	}
	d.log.Info(fmt.Sprintf("%s: %s compiled for %s in %v (%s; %s)", where, r.version, t,
		time.Since(start).Round(time.Millisecond), reason, r.lib))
	if path != "" {
		if err := writeCache(path, code); err != nil {
			d.log.Warn(fmt.Sprintf("%s: not cached: %v", where, err))
		}
	}
	r.code[key] = code
	return code, nil
}

// rtcTarget is what the run-time compiler builds of family for dv: a
// family of arch-specific code for its one target (archSpecificTarget); else
// a code object for the gfx of an AMD device; for NVIDIA the device's sm when
// NVRTC knows it, else PTX of the newest arch it knows. r.mu is held and the
// compiler open.
func (d *Driver) rtcTarget(dev int, dv *device, family string) (rtcTarget, error) {
	if f, err := kernels.LookupFamily(family); err == nil && f.ArchSpecific != "" {
		arch := 0
		if vendor.name == "cuda" {
			arch = dv.props.Major*10 + dv.props.Minor
		}
		return archSpecificTarget(f.ArchSpecific, arch, d.rtc.major)
	}
	if dv.props.CC.IsAMD() {
		return gfxRTCTarget(dv.props.ArchName, dv.props.CC), nil
	}
	devArch := dv.props.Major*10 + dv.props.Minor
	var yes, newest C.int32_t
	if err := d.fail(C.tn_rtc_supports(C.int32_t(devArch), &yes, &newest), dev); err != nil {
		return rtcTarget{}, err
	}
	return chooseRTCTarget(devArch, yes != 0, int(newest))
}

// archSpecific lists the arch-specific targets of kernels.Families that the
// run-time compiler can build for device dev of NVIDIA arch devArch
// (10*major+minor): the compiler is opened only when some target is the
// device's arch, and a device without one (or with it disabled) gets none,
// saying why in the log. Open calls it, holding openMu.
func (d *Driver) archSpecific(dev, devArch int) []string {
	var out []string
	for _, f := range kernels.Families {
		t := f.ArchSpecific
		if t == "" || slices.Contains(out, t) || vendor.name != "cuda" {
			continue
		}
		if _, err := archSpecificTarget(t, devArch, 12); err != nil {
			continue // not this device's arch
		}
		if d.cfg.DisableRTC {
			d.log.Info(fmt.Sprintf("%s: device %d: no %s kernels: run-time compilation is disabled", d.vendor, dev, t))
			continue
		}
		r := &d.rtc
		r.mu.Lock()
		err := d.rtcLoad(dev, false) // called by Open, which holds openMu
		if err == nil {
			_, err = archSpecificTarget(t, devArch, r.major)
		}
		r.mu.Unlock()
		if err != nil {
			d.log.Info(fmt.Sprintf("%s: device %d: no %s kernels: %v", d.vendor, dev, t, err))
			continue
		}
		out = append(out, t)
	}
	return out
}

// rtcOpen loads the run-time compiler once. r.mu is held, openMu not.
func (d *Driver) rtcOpen(dev int) error { return d.rtcLoad(dev, true) }

// rtcLoad is rtcOpen; lock false when the caller already holds openMu
// (Open, through initDevice and archSpecific: openMu is not reentrant).
func (d *Driver) rtcLoad(dev int, lock bool) error {
	r := &d.rtc
	if !r.loaded {
		r.loaded = true
		r.code = map[rtcKey][]byte{}
		var major, minor C.int32_t
		var lib *C.char
		if lock {
			openMu.Lock() // the C side's library state is process-wide
		}
		st := C.tn_rtc_open(&major, &minor, &lib)
		if lock {
			openMu.Unlock()
		}
		if err := d.fail(st, dev); err != nil {
			r.err = d.noKernel(dev, "no run-time compiler: %v", err)
		} else {
			r.version = fmt.Sprintf("%s %d.%d", vendor.rtcName, int(major), int(minor))
			r.major = int(major)
			r.lib = C.GoString(lib)
		}
	}
	return r.err
}

// rtcCompile compiles family's translation unit for t.
func (d *Driver) rtcCompile(dev int, family string, t rtcTarget) ([]byte, error) {
	main, names, bodies, err := kernels.RTCProgram(family)
	if err != nil {
		return nil, d.noKernel(dev, "kernel sources: %v", err)
	}
	var allocated []unsafe.Pointer
	defer func() {
		for _, p := range allocated {
			C.free(p)
		}
	}()
	cstrings := func(ss []string) []*C.char {
		out := make([]*C.char, len(ss))
		for i, s := range ss {
			out[i] = C.CString(s)
			allocated = append(allocated, unsafe.Pointer(out[i]))
		}
		return out
	}
	cubin := C.int32_t(0)
	if t.kind == cubinCode {
		cubin = 1
	}
	src := cstrings([]string{main})
	cnames, cbodies := cstrings(names), cstrings(bodies)
	opts := cstrings([]string{t.opt, "-DTERNION_RTC=1"})
	var out unsafe.Pointer
	var size C.uint64_t
	var clog *C.char
	st := C.tn_rtc_compile(src[0], C.int32_t(len(names)), &cbodies[0], &cnames[0], C.int32_t(len(opts)), &opts[0],
		cubin, &out, &size, &clog)
	log := C.GoString(clog)
	C.tn_free_host_copy(unsafe.Pointer(clog))
	code := C.GoBytes(out, C.int(size))
	C.tn_free_host_copy(out)
	if err := d.fail(st, dev); err != nil {
		const max = 4000
		if len(log) > max {
			log = log[:max] + "..."
		}
		return nil, d.noKernel(dev, "%s of family %s for %s failed: %v\n%s", d.rtc.version, family, t, err, log)
	}
	return ptxTerminated(t, code), nil
}
