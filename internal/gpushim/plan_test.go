package gpushim

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// testImage holds every family, built from the current sources, except
// scale (from older sources); cpy is missing.
var testImage = func() kernels.Image {
	im := kernels.Image{Vendor: "cuda", Archs: []arch.CC{750, 800, 860, 890, 900}, PTX: 900}
	for _, f := range kernels.Families {
		switch f.Name {
		case "cpy":
		case "scale":
			im.Families = append(im.Families, kernels.FamilyImage{Name: f.Name, File: "scale.fatbin", SourceHash: "old"})
		default:
			im.Families = append(im.Families, kernels.FamilyImage{Name: f.Name, File: f.Name + ".fatbin",
				SourceHash: kernels.FamilyHash(f.Name)})
		}
	}
	return im
}()

func TestRunsOn(t *testing.T) {
	for _, c := range []struct {
		cc   arch.CC
		want bool
	}{
		{750, true}, {800, true}, {860, true}, {870, true}, // sm_86 code runs on 8.7
		{890, true}, {900, true}, {1000, true}, {1200, true}, // PTX JIT
		{700, false}, {610, false}, // older than every arch and the PTX
	} {
		assert.Equal(t, c.want, runsOn(c.cc, testImage), c.cc.Name())
	}
	noPTX := testImage
	noPTX.PTX = 0
	assert.False(t, runsOn(1000, noPTX), "sm_90 machine code does not run on sm_100")
	assert.True(t, runsOn(900, noPTX))
}

func TestPlanKernels(t *testing.T) {
	p := planKernels(900, testImage, false)
	assert.True(t, p.embedded)
	assert.Contains(t, p.reason, "sm_75 sm_80 sm_86 sm_89 sm_90 + compute_90")
	for name, c := range map[string]struct {
		cc     arch.CC
		img    kernels.Image
		force  bool
		reason string
	}{
		"forced":   {900, testImage, true, "TERNION_FORCE_RTC"},
		"no image": {900, kernels.Image{}, false, "go generate"},
		"too old":  {700, testImage, false, "no code sm_70 runs"},
	} {
		p := planKernels(c.cc, c.img, c.force)
		assert.False(t, p.embedded, name)
		assert.Contains(t, p.reason, c.reason, name)
	}
}

func TestPlanFamily(t *testing.T) {
	dev := planKernels(900, testImage, false)
	assert.True(t, planFamily(dev, testImage, "fill").embedded, "a fresh family keeps its embedded code")
	p := planFamily(dev, testImage, "scale")
	assert.False(t, p.embedded)
	assert.Contains(t, p.reason, "stale")
	p = planFamily(dev, testImage, "cpy")
	assert.False(t, p.embedded)
	assert.Contains(t, p.reason, "lack family cpy")
	forced := planKernels(900, testImage, true)
	assert.Equal(t, forced, planFamily(forced, testImage, "fill"), "the device's reason stands")
}

func TestFamilySources(t *testing.T) {
	dev := planKernels(900, testImage, false)
	src, pre, run := familySources([]kernelPlan{dev}, testImage, false, "nvrtc")
	assert.Equal(t, "embedded+nvrtc", src)
	assert.NotContains(t, pre, "scale")
	assert.Contains(t, pre, "fill")
	assert.Equal(t, "cpy,scale", run)

	fresh := kernels.Image{Vendor: "cuda", Archs: []arch.CC{900}}
	for _, f := range kernels.Families {
		fresh.Families = append(fresh.Families, kernels.FamilyImage{Name: f.Name, File: "x", SourceHash: kernels.FamilyHash(f.Name)})
	}
	var portable, specific []string
	for _, f := range kernels.Families {
		if f.ArchSpecific == "" {
			portable = append(portable, f.Name)
		} else {
			specific = append(specific, f.Name)
		}
	}
	require.NotEmpty(t, specific)
	src, pre, run = familySources([]kernelPlan{planKernels(900, fresh, false)}, fresh, false, "nvrtc")
	assert.Equal(t, "embedded", src, "arch-specific families are not counted")
	assert.Equal(t, strings.Join(portable, ","), pre)
	assert.Equal(t, "none", run)

	src, pre, run = familySources([]kernelPlan{planKernels(900, fresh, false), planKernels(700, fresh, false)}, fresh, false, "nvrtc")
	assert.Equal(t, "embedded+nvrtc", src, "one device the image does not cover")
	assert.Equal(t, pre, run)

	src, pre, run = familySources(nil, kernels.Image{}, false, "hiprtc")
	assert.Equal(t, "hiprtc", src)
	assert.Equal(t, "none", pre)
	assert.Equal(t, strings.Join(portable, ","), run)
	src, _, _ = familySources(nil, fresh, false, "nvrtc")
	assert.Equal(t, "embedded", src, "no device: as for a device the image covers")
}

func TestChooseRTCTarget(t *testing.T) {
	tg, err := chooseRTCTarget(90, true, 90)
	require.NoError(t, err)
	assert.Equal(t, rtcTarget{name: "sm_90", opt: "--gpu-architecture=sm_90", kind: cubinCode}, tg)
	assert.Equal(t, "sm_90", tg.String())
	tg, err = chooseRTCTarget(120, false, 90)
	require.NoError(t, err)
	assert.Equal(t, "compute_90", tg.String(), "a device newer than the compiler gets PTX the driver JITs")
	assert.Equal(t, ptxCode, tg.kind)
	assert.Equal(t, "--gpu-architecture=compute_90", tg.opt)
	_, err = chooseRTCTarget(50, false, 120)
	assert.ErrorContains(t, err, "cannot build for sm_50")
}

func TestArchSpecificTarget(t *testing.T) {
	tg, err := archSpecificTarget("sm_90a", 90, 12)
	require.NoError(t, err)
	assert.Equal(t, rtcTarget{name: "sm_90a", opt: "--gpu-architecture=sm_90a", kind: cubinCode}, tg)
	for _, c := range []struct {
		target      string
		dev, major  int
		errContains string
	}{
		{"sm_90a", 89, 12, "only on compute capability 9.0, not on this device (sm_89)"},
		{"sm_90a", 100, 13, "not on this device (sm_100)"},
		{"sm_90a", 0, 13, "not NVIDIA"},
		{"sm_90a", 90, 11, "NVRTC 12.0 or later (this is 11.x)"},
		{"sm_90", 90, 12, "not of the form sm_XYa"},
		{"gfx90a", 90, 12, "not of the form"},
	} {
		_, err := archSpecificTarget(c.target, c.dev, c.major)
		assert.ErrorContains(t, err, c.errContains, "%+v", c)
	}
	dev := planKernels(900, testImage, false)
	p := planFamily(dev, testImage, "gemm90")
	assert.False(t, p.embedded, "arch-specific code is never taken from the image")
	assert.Contains(t, p.reason, "family gemm90 is sm_90a code, which only the run-time compiler builds")
}

func TestGfxRTCTarget(t *testing.T) {
	tg := gfxRTCTarget("gfx90a:sramecc+:xnack-", arch.CDNA2)
	assert.Equal(t, rtcTarget{name: "gfx90a", opt: "--offload-arch=gfx90a", kind: codeObject}, tg,
		"feature flags dropped: code for gfx90a runs in every xnack/sramecc mode")
	assert.Equal(t, "--offload-arch=gfx1030", gfxRTCTarget("", arch.RDNA2).opt, "no name: the cc's")
	assert.Equal(t, "gfx10-3-generic", gfxRTCTarget("gfx10-3-generic", arch.RDNA2).name)
	assert.Equal(t, ".hsaco", tg.ext())
}

func TestRunsOnExactArch(t *testing.T) {
	img := kernels.Image{Vendor: "hip", Archs: []arch.CC{arch.CDNA2, arch.RDNA2}}
	assert.True(t, runsOn(arch.CDNA2, img))
	assert.True(t, runsOn(arch.RDNA2, img))
	assert.False(t, runsOn(arch.OffsetAMD+0x1031, img), "gfx1031 needs its own code (or HSA_OVERRIDE_GFX_VERSION=10.3.0)")
	assert.False(t, runsOn(arch.CDNA3, img))
	mt := kernels.Image{Vendor: "musa", Archs: []arch.CC{arch.QY2}}
	assert.True(t, runsOn(arch.QY2, mt))
	assert.False(t, runsOn(arch.PH1, mt))
}

func TestRTCCache(t *testing.T) {
	dir := t.TempDir()
	sm90 := rtcTarget{name: "sm_90", kind: cubinCode}
	a := rtcCachePath(dir, "fill", "src1", sm90, "NVRTC 12.8")
	assert.True(t, strings.HasPrefix(filepath.Base(a), "fill-sm_90-"))
	assert.Equal(t, ".cubin", filepath.Ext(a))
	for _, other := range []string{
		rtcCachePath(dir, "scale", "src1", sm90, "NVRTC 12.8"),
		rtcCachePath(dir, "fill", "src2", sm90, "NVRTC 12.8"),
		rtcCachePath(dir, "fill", "src1", rtcTarget{name: "sm_89", kind: cubinCode}, "NVRTC 12.8"),
		rtcCachePath(dir, "fill", "src1", rtcTarget{name: "compute_90"}, "NVRTC 12.8"),
		rtcCachePath(dir, "fill", "src1", sm90, "NVRTC 13.0"),
		rtcCachePath(dir, "fill", "src1", gfxRTCTarget("gfx90a", arch.CDNA2), "hipRTC 5.2"),
	} {
		assert.NotEqual(t, a, other, "the key covers family, sources, target and compiler")
	}
	_, ok := readCache(a)
	assert.False(t, ok)
	require.NoError(t, writeCache(a, []byte("code")))
	b, ok := readCache(a)
	assert.True(t, ok)
	assert.Equal(t, []byte("code"), b)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
	_, ok = readCache("")
	assert.False(t, ok)

	assert.Equal(t, "", cacheDir("-"))
	assert.Equal(t, "/x", cacheDir("/x"))
	if base, err := os.UserCacheDir(); err == nil {
		assert.Equal(t, filepath.Join(base, "ternion", "kernels"), cacheDir(""))
	}
}

func TestPTXTerminated(t *testing.T) {
	ptx := rtcTarget{name: "compute_90"}
	assert.Equal(t, []byte("ptx\x00"), ptxTerminated(ptx, []byte("ptx")))
	assert.Equal(t, []byte("ptx\x00"), ptxTerminated(ptx, []byte("ptx\x00")))
	assert.Equal(t, []byte("elf"), ptxTerminated(rtcTarget{name: "sm_90", kind: cubinCode}, []byte("elf")), "cubin is binary")
	assert.Equal(t, []byte("elf"), ptxTerminated(gfxRTCTarget("gfx90a", arch.CDNA2), []byte("elf")), "so is a code object")
}

func TestNoKernelMessage(t *testing.T) {
	m := noKernelMessage("fill_f32", 1000, testImage, "no run-time compiler")
	for _, s := range []string{"fill_f32", "sm_100", "sm_75 sm_80 sm_86 sm_89 sm_90 + compute_90", "no run-time compiler"} {
		assert.Contains(t, m, s)
	}
	assert.Contains(t, noKernelMessage("add_f32", 900, kernels.Image{}, "x"), "compiled in: none")
}

func TestExtent2D(t *testing.T) {
	n, ok := vendorapi.Extent2D(256, 100, 3)
	assert.True(t, ok)
	assert.Equal(t, uint64(2*256+100), n)
	n, ok = vendorapi.Extent2D(100, 100, 1)
	assert.True(t, ok)
	assert.Equal(t, uint64(100), n)
	_, ok = vendorapi.Extent2D(1<<63, 16, 3)
	assert.False(t, ok, "2^63 x 2 wraps to 0")
	_, ok = vendorapi.Extent2D(1<<62, math.MaxUint64-(1<<62)+1, 2)
	assert.False(t, ok, "the sum wraps")
}
