package gpushim

import (
	"fmt"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/switches"
)

// vendorInfo is what the Go side of the shim knows about one vendor. The
// values are data (and pure functions) so that every vendor's logic is tested
// by the default `go test ./...`; each cgo_<vendor>.go only picks its entry.
type vendorInfo struct {
	name       string           // "cuda", "hip", "musa"
	blasName   string           // "cuBLAS", "rocBLAS", "muBLAS"
	rtcName    string           // "NVRTC", "hipRTC"; "" when the vendor has no run-time compiler
	rtcFeature string           // the KERNELS feature value of run-time compiled kernels
	version    func(int) string // formats a driver or runtime version number
	// vmmOptIn, when set, is the switch without which VMM stays off (HIP:
	// ggml builds HIP without VMM by default); switches.NoVMM always turns it off.
	vmmOptIn switches.Of[bool]
	// unmapEach unmaps each VMM mapping with its own call (HIP cannot unmap a
	// range spanning several mappings: ROCm/ROCR-Runtime#285, as the seed).
	unmapEach bool
	// pdl: the vendor's kernels may be launched with programmatic dependent
	// launch (CUDA; see pdlDevice).
	pdl bool
	// carveout: the vendor's kernels take a preferred shared-memory
	// carveout (CUDA; see carveoutDevice).
	carveout bool
	// warpSize, when set, replaces the device's warp size (MUSA: 32, as the
	// seed does for every MUSA arch).
	warpSize int
	// arch reads a device's architecture from what the runtime reported.
	arch func(r rawArch, env Lookup) devArch
}

// rawArch is what the runtime reports about a device's architecture.
type rawArch struct {
	dev          int    // device index (for per-device overrides)
	major, minor int    // compute capability as reported
	name         string // the vendor's arch name, "" where it has none (HIP: gcnArchName)
}

// devArch is a device's architecture as ternion uses it.
type devArch struct {
	cc       arch.CC  // ggml encoding
	name     string   // Props.ArchName
	override string   // Props.ArchOverride
	warnings []string // for the log
}

var (
	// cudaVendor is NVIDIA's CUDA: versions like 12080 ("12.8").
	cudaVendor = vendorInfo{name: "cuda", pdl: true, carveout: true, blasName: "cuBLAS", rtcName: "NVRTC", rtcFeature: "nvrtc",
		version: cudaVersion, arch: nvidiaArch}
	// hipVendor is AMD's HIP: versions like 50221153 ("5.2.21153"), gfx
	// target ids, VMM only on request.
	hipVendor = vendorInfo{name: "hip", blasName: "rocBLAS", rtcName: "hipRTC", rtcFeature: "hiprtc",
		version: hipVersion, vmmOptIn: switches.HIPVMM, unmapEach: true, arch: amdArch}
	// musaVendor is Moore Threads' MUSA: CUDA-like versions, no run-time
	// compiler ternion can use, warp size 32.
	musaVendor = vendorInfo{name: "musa", blasName: "muBLAS", rtcFeature: "none", version: cudaVersion,
		warpSize: 32, arch: mthreadsArch}
)

// cudaVersion formats a CUDA-style version number (12080 is "12.8").
func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// hipVersion formats a HIP version number, major*10^7 + minor*10^5 + patch
// (50221153 is "5.2.21153").
func hipVersion(v int) string { return fmt.Sprintf("%d.%d.%d", v/10000000, v/100000%100, v%100000) }

// nvidiaArch encodes a CUDA device: 100*major + 10*minor, named sm_XY.
func nvidiaArch(r rawArch, _ Lookup) devArch {
	cc := arch.NVIDIA(r.major, r.minor)
	return devArch{cc: cc, name: cc.Name()}
}

// mthreadsArch encodes a MUSA device as the seed does: 0x100000 +
// major*0x100 + minor*0x10, named mp_XY.
func mthreadsArch(r rawArch, _ Lookup) devArch {
	cc := arch.MThreads(r.major, r.minor)
	return devArch{cc: cc, name: cc.Name()}
}

// amdArch reads an AMD device as the seed does: the cc from gcnArchName, or,
// when the name cannot be read, from major.minor with a warning (the stepping
// and often the family are lost). HSA_OVERRIDE_GFX_VERSION[_<dev>] makes ROCm
// load code for another gfx: the runtime's gcnArchName already reflects it, so
// it is reported (Props.ArchOverride and the log), not applied a second time.
func amdArch(r rawArch, env Lookup) devArch {
	a := devArch{name: r.name}
	cc, fallback, err := arch.ResolveGfx(r.name, r.major, r.minor)
	switch {
	case err != nil:
		a.cc = arch.OffsetAMD // unknown: no embedded code object matches; hipRTC compiles for the name
		a.warnings = append(a.warnings, fmt.Sprintf("device %d: cannot read the architecture %q (cc %d.%d): %v",
			r.dev, r.name, r.major, r.minor, err))
	case fallback:
		a.cc = cc
		a.warnings = append(a.warnings, fmt.Sprintf("device %d: invalid architecture ID %q; using cc %d.%d (%s)",
			r.dev, r.name, r.major, r.minor, cc.Name()))
	default:
		a.cc = cc
	}
	if a.name == "" {
		a.name = a.cc.Name()
	}
	o, ok, err := arch.HSAOverrideFor(env, r.dev)
	switch {
	case err != nil:
		a.override = o.Env + "=" + o.Value
		a.warnings = append(a.warnings, fmt.Sprintf("device %d: %v", r.dev, err))
	case ok:
		a.override = o.Env + "=" + o.Value
		if o.CC != a.cc {
			a.warnings = append(a.warnings, fmt.Sprintf("device %d: %s selects %s but the runtime reports %s",
				r.dev, a.override, o.CC.Name(), a.name))
		}
	}
	return a
}

// gfxTarget is the --offload-arch value for a device: its gcnArchName
// without feature flags (code for "gfx90a" runs whatever the xnack and sramecc
// modes), or the canonical name of its cc.
func gfxTarget(archName string, cc arch.CC) string {
	if base, _, _ := strings.Cut(archName, ":"); strings.HasPrefix(base, "gfx") {
		return base
	}
	return cc.Name()
}

// vmmEnabled says whether VMM is used on a device that supports it, and why
// not otherwise ("" when it is).
func (v vendorInfo) vmmEnabled(env Lookup) (bool, string) {
	switch {
	case switches.On(env, switches.NoVMM):
		return false, switches.NoVMM.Name
	case v.vmmOptIn.Switch != nil && !switches.On(env, v.vmmOptIn):
		return false, "off by default; " + v.vmmOptIn.Name + "=1 enables it"
	}
	return true, ""
}
