package gpushim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
)

// kernelPlan says where one device's kernels (or one kernel family's) come
// from.
type kernelPlan struct {
	embedded bool                // load the embedded image; otherwise compile at run time
	reason   string              // why, for the log and for errors
	code     kernels.FamilyImage // a family's embedded plan (planFamily): the family's code in the image
}

// planKernels chooses between the embedded image and run-time compilation
// for a device of compute capability cc.
func planKernels(cc arch.CC, img kernels.Image, forceRTC bool) kernelPlan {
	switch {
	case forceRTC:
		return kernelPlan{reason: switches.ForceRTC.Name + " is set"}
	case img.Empty():
		return kernelPlan{reason: "no code object is embedded (go generate ./kernels was not run)"}
	case !runsOn(cc, img):
		return kernelPlan{reason: fmt.Sprintf("the embedded code objects (%s) have no code %s runs", img.Describe(), cc.Name())}
	}
	return kernelPlan{embedded: true, reason: "embedded code object (" + img.Describe() + ")"}
}

// planFamily refines a device's plan for one kernel family: a family the
// image lacks, or whose sources changed since go generate, is compiled at
// run time; the others keep their embedded code, which the plan holds.
func planFamily(dev kernelPlan, img kernels.Image, family string) kernelPlan {
	if !dev.embedded {
		return dev
	}
	if spec, err := kernels.LookupFamily(family); err == nil && spec.ArchSpecific != "" {
		return kernelPlan{reason: "family " + family + " is " + spec.ArchSpecific + " code, which only the run-time compiler builds"}
	}
	f, ok := img.Family(family)
	switch {
	case !ok:
		return kernelPlan{reason: "the embedded code objects lack family " + family + " (go generate ./kernels predates it)"}
	case !f.Fresh():
		return kernelPlan{reason: "the embedded code of family " + family + " is stale (its sources changed since go generate)"}
	}
	dev.code = f
	return dev
}

// familySources says where the kernel families come from on devices with
// the given plans: KERNELS ("embedded", the run-time compiler's feature name
// rtc, or "embedded+<rtc>" when some families or devices need it), and the
// families prebuilt for at least one device and those compiled at run time
// on at least one (comma lists, "none" when empty). With no device, the
// answer for a device the image covers.
func familySources(plans []kernelPlan, img kernels.Image, forceRTC bool, rtc string) (source, prebuilt, runtime string) {
	if len(plans) == 0 {
		plans = []kernelPlan{{embedded: !img.Empty() && !forceRTC}}
	}
	var emb, run []string // kernels.Families is sorted by name
	for _, f := range kernels.Families {
		if f.ArchSpecific != "" {
			continue // built at run time for its one arch only: Props.ArchSpecific says where
		}
		e, r := false, false
		for _, p := range plans {
			if planFamily(p, img, f.Name).embedded {
				e = true
			} else {
				r = true
			}
		}
		if e {
			emb = append(emb, f.Name)
		}
		if r {
			run = append(run, f.Name)
		}
	}
	list := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ",")
	}
	switch {
	case len(emb) > 0 && len(run) > 0:
		source = "embedded+" + rtc
	case len(emb) > 0:
		source = "embedded"
	default:
		source = rtc
	}
	return source, list(emb), list(run)
}

// runsOn reports whether a device of compute capability cc runs img. NVIDIA:
// machine code for sm_XY runs on the same major version with minor >= Y, PTX
// for compute_XY on any cc >= XY through the driver's JIT. AMD and Moore
// Threads: only code built for the device's own arch (one code object per
// gfx or mp target in the bundle).
func runsOn(cc arch.CC, img kernels.Image) bool {
	if !cc.IsNVIDIA() {
		return slices.Contains(img.Archs, cc)
	}
	for _, a := range img.Archs {
		if a/100 == cc/100 && a <= cc {
			return true
		}
	}
	return img.PTX != 0 && img.PTX <= cc
}

// codeKind is what a run-time compilation produces.
type codeKind uint8

const (
	ptxCode    codeKind = iota // NVRTC's PTX: text, NUL-terminated for the loader
	cubinCode                  // NVRTC's machine code (cubin)
	codeObject                 // hipRTC's output: an AMD code object for one gfx
)

// rtcTarget is what the run-time compiler builds for a device: NVIDIA machine
// code (cubin) for the device's own arch or PTX of an older virtual arch; an
// AMD code object for the device's gfx.
type rtcTarget struct {
	name string   // "sm_90", "compute_90", "gfx90a": logs and the cache file's name
	opt  string   // the compiler option selecting it
	kind codeKind // what comes out
}

func (t rtcTarget) String() string { return t.name }

// ext is the cache file extension of t's code.
func (t rtcTarget) ext() string {
	switch t.kind {
	case cubinCode:
		return ".cubin"
	case codeObject:
		return ".hsaco"
	}
	return ".ptx"
}

// chooseRTCTarget picks the NVRTC target for a device of arch dev
// (10*major+minor): its own arch when the compiler supports it, else PTX for
// the newest arch the compiler knows when that is older than the device (the
// driver JITs it).
func chooseRTCTarget(dev int, supported bool, newest int) (rtcTarget, error) {
	if supported {
		return rtcTarget{name: fmt.Sprintf("sm_%d", dev), opt: fmt.Sprintf("--gpu-architecture=sm_%d", dev), kind: cubinCode}, nil
	}
	if newest > 0 && newest < dev {
		return rtcTarget{name: fmt.Sprintf("compute_%d", newest), opt: fmt.Sprintf("--gpu-architecture=compute_%d", newest)}, nil
	}
	return rtcTarget{}, fmt.Errorf("the run-time compiler cannot build for sm_%d (the newest arch it knows is sm_%d)", dev, newest)
}

// archSpecificTarget is the NVRTC target of a family of arch-specific code
// (kernels.Family.ArchSpecific, e.g. "sm_90a") on a device of arch dev
// (10*major+minor; 0 for one not NVIDIA's) with NVRTC of major version
// rtcMajor: machine code for that target when the device is of its arch and
// the compiler knows "a" targets (NVRTC 12.0 and later), else an error
// naming both.
func archSpecificTarget(target string, dev, rtcMajor int) (rtcTarget, error) {
	var want int
	if _, err := fmt.Sscanf(target, "sm_%da", &want); err != nil || fmt.Sprintf("sm_%da", want) != target {
		return rtcTarget{}, fmt.Errorf("arch-specific target %q is not of the form sm_XYa", target)
	}
	switch {
	case dev != want:
		return rtcTarget{}, fmt.Errorf("%s code runs only on compute capability %d.%d, not on this device (%s)", target,
			want/10, want%10, map[bool]string{true: "not NVIDIA", false: fmt.Sprintf("sm_%d", dev)}[dev == 0])
	case rtcMajor < 12:
		return rtcTarget{}, fmt.Errorf("%s code needs NVRTC 12.0 or later (this is %d.x)", target, rtcMajor)
	}
	return rtcTarget{name: target, opt: "--gpu-architecture=" + target, kind: cubinCode}, nil
}

// gfxRTCTarget is the hipRTC target for an AMD device of arch name archName
// (gcnArchName) and cc.
func gfxRTCTarget(archName string, cc arch.CC) rtcTarget {
	gfx := gfxTarget(archName, cc)
	return rtcTarget{name: gfx, opt: "--offload-arch=" + gfx, kind: codeObject}
}

// rtcCachePath is where run-time compiled code of family (whose sources
// hash to familyHash) for (target, compiler version) lives under dir.
func rtcCachePath(dir, family, familyHash string, t rtcTarget, compiler string) string {
	sum := sha256.Sum256([]byte("ternion-rtc-2\x00" + family + "\x00" + familyHash + "\x00" + t.String() + "\x00" + compiler))
	return filepath.Join(dir, family+"-"+t.String()+"-"+hex.EncodeToString(sum[:12])+t.ext())
}

// cacheDir resolves Config.CacheDir: "" is the user cache dir's
// ternion/kernels, "-" no cache ("" returned).
func cacheDir(configured string) string {
	switch configured {
	case "-":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "ternion", "kernels")
	}
	return configured
}

// readCache returns the cached code at path, if any.
func readCache(path string) ([]byte, bool) {
	if path == "" {
		return nil, false
	}
	b, err := os.ReadFile(path)
	return b, err == nil && len(b) > 0
}

// writeCache stores code at path atomically (temporary file and rename), so
// concurrent processes never read a partial file.
func writeCache(path string, code []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(code)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
	}
	return werr
}

// noKernelMessage explains why kernel has no code on a device of cc.
func noKernelMessage(kernel string, cc arch.CC, img kernels.Image, why string) string {
	return fmt.Sprintf("no code object for kernel %s on %s: compiled in: %s; %s", kernel, cc.Name(), img.Describe(), why)
}

// ptxTerminated makes PTX text NUL-terminated, as the module loader wants it.
func ptxTerminated(t rtcTarget, code []byte) []byte {
	if t.kind == ptxCode && (len(code) == 0 || code[len(code)-1] != 0) {
		code = append(code, 0)
	}
	return code
}
