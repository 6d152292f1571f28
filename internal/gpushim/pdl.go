package gpushim

import (
	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/switches"
)

// pdlMinDriver is the first CUDA driver that captures launches with
// programmatic dependent launch into graphs (12.3; cuLaunchKernelEx itself
// came with 12.0): an older one would fail every capture of Compute.
const pdlMinDriver = 12030

// pdlMinCC is the first arch with programmatic dependent launch
// (griddepcontrol, which vendor.h's TERNION_KERNEL_ENTRY uses from there on).
const pdlMinCC = arch.Hopper

// pdlCode reports whether the code a CUDA device of compute capability cc
// runs from a fatbin with machine code for sass and PTX for ptx (0: none)
// was compiled for pdlMinCC or later, so that every kernel in it waits for
// its predecessor (TERNION_KERNEL_ENTRY) and may be launched with
// programmatic dependent launch. The driver runs the machine code of cc's
// major version with the highest minor at most cc's, else compiles the PTX
// (when its arch is at most cc); code compiled at run time (rtc) is built
// for cc itself.
func pdlCode(cc arch.CC, sass []arch.CC, ptx arch.CC, rtc bool) bool {
	if !cc.IsNVIDIA() || cc < pdlMinCC {
		return false
	}
	if rtc {
		return true
	}
	best := arch.CC(0)
	for _, a := range sass {
		if a/100 == cc/100 && a <= cc && a > best {
			best = a
		}
	}
	if best != 0 {
		return best >= pdlMinCC
	}
	return ptx != 0 && ptx <= cc && ptx >= pdlMinCC
}

// pdlDevice reports whether a device of the vendor v with compute capability
// cc may launch its kernels with programmatic dependent launch: the vendor
// has it (CUDA), the shim found cuLaunchKernelEx (available) in a driver of
// version pdlMinDriver or later, the device is of pdlMinCC or later, and
// TERNION_NO_PDL is not set. Measured on the H200
// (bench/README.md, session of 2026-12-03, late): a 1000-node chain of
// one-element ops through Compute 1.11 → 0.84 µs a node with graphs, 4.93 →
// 4.19 without; every op case passed with every launch early.
func pdlDevice(v vendorInfo, cc arch.CC, available bool, driver int, env Lookup) bool {
	return v.pdl && available && driver >= pdlMinDriver && cc.IsNVIDIA() && cc >= pdlMinCC && !switches.On(env, switches.NoPDL)
}

// pdlGrid reports whether a launch of the packed grid and block dm (as
// dims makes them) goes with programmatic dependent launch on a device of
// sms multiprocessors: grids of at most one block a multiprocessor. Such a
// kernel's blocks, launched while the one before still runs, wait on
// multiprocessors that are free by then, and it starts as soon as its
// predecessor ends (a 1000-node chain of one-element ops: 1.09 → 0.83 µs a
// node on the H200). A larger grid launched early lands unevenly (more
// blocks where the predecessor's finished first) and one wave of a
// bandwidth-bound kernel then takes longer: with every launch early, q4_0
// MUL_MAT n=1 went 12.2 → 13.1 µs, f16 30.1 → 33.5, MUL_MAT_ID 10.8 → 14.4
// (bench/README.md, session of 2026-12-03, late).
func pdlGrid(dm [6]uint32, sms int) bool {
	return uint64(dm[0])*uint64(dm[1])*uint64(dm[2]) <= uint64(max(sms, 0))
}
