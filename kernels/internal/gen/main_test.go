package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
)

func TestParseVersion(t *testing.T) {
	out := "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2022 NVIDIA Corporation\n" +
		"Built on Wed_Sep_21_10:33:58_PDT_2022\nCuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n"
	assert.Equal(t, "11.8.89", parseVersion(out))
	assert.Equal(t, "13.0", parseVersion("Cuda compilation tools, release 13.0, something"))
	assert.Equal(t, "", parseVersion("garbage"))
}

func TestParseGPUCodes(t *testing.T) {
	codes := parseGPUCodes("sm_75\nsm_80\nsm_86\nsm_87\nsm_89\nsm_90\nsm_100\n")
	assert.True(t, codes["sm_90"])
	assert.True(t, codes["sm_100"])
	assert.False(t, codes["sm_70"], "CUDA 13 lists no sm_70")
}

func TestToolchainSwitches(t *testing.T) {
	var vendors []string
	for _, tc := range toolchains {
		vendors = append(vendors, tc.vendor)
		assert.Equal(t, strings.ToUpper(tc.compiler), tc.path.Name)
		assert.Equal(t, "TERNION_REQUIRE_"+strings.ToUpper(tc.compiler), tc.require.Name)
		assert.Equal(t, "TERNION_"+strings.ToUpper(tc.vendor)+"_ARCHS", tc.archEnv.Name)
	}
	assert.Equal(t, switches.Vendors, vendors, "TERNION_GEN_VENDORS accepts exactly the toolchains' vendors")
}

func TestParseHIPVersion(t *testing.T) {
	out := "HIP version: 5.2.21153-0\nDebian clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\n"
	assert.Equal(t, "5.2.21153", parseHIPVersion(out))
	assert.Equal(t, "6.4.43482", parseHIPVersion("HIP version: 6.4.43482-0f2d60242\nAMD clang version 19.0.0"))
	assert.Equal(t, "", parseHIPVersion("clang version 15"))
}

func TestParseMCCVersion(t *testing.T) {
	assert.Equal(t, "4.1.0", parseMCCVersion("mcc version 4.1.0\nTarget: x86_64-unknown-linux-gnu\n"))
	assert.Equal(t, "", parseMCCVersion("clang version 14"))
}

func TestPerArchArgs(t *testing.T) {
	args := strings.Join(hipBuild.args(arch.CDNA2, "/k", "/t/all.cu", "/t/o.hsaco"), " ")
	assert.Equal(t, "--genco --offload-arch=gfx90a -O3 -I /k -o /t/o.hsaco /t/all.cu", args)
	assert.Equal(t, "fill-gfx90a.hsaco", hipBuild.objectFile("fill", arch.CDNA2))
	args = strings.Join(musaBuild.args(arch.QY2, "/k", "/t/all.cu", "/t/o.mubin"), " ")
	assert.Contains(t, args, "--cuda-gpu-arch=mp_22")
	assert.Contains(t, args, "--cuda-device-only")
	assert.Equal(t, "fill-mp_22.mubin", musaBuild.objectFile("fill", arch.QY2))
}

func TestHIPEnv(t *testing.T) {
	t.Setenv("HIP_PLATFORM", "")
	env, err := hipEnv()
	require.NoError(t, err)
	assert.Equal(t, "HIP_PLATFORM=amd", env[len(env)-1], "the last setting wins")
	t.Setenv("HIP_PLATFORM", "nvidia")
	_, err = hipEnv()
	assert.ErrorContains(t, err, "AMD")
}

func TestVendorSet(t *testing.T) {
	env := func(v string) switches.Lookup {
		return func(k string) (string, bool) { return v, k == switches.GenVendors.Name }
	}
	for _, tc := range []struct {
		name, value string
		want        map[string]bool
	}{
		{"unset means all", "", map[string]bool{"cuda": true, "hip": true, "musa": true}},
		{"one", "hip", map[string]bool{"hip": true}},
		{"two", "cuda, hip", map[string]bool{"cuda": true, "hip": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := vendorSet(env(tc.value))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := vendorSet(env("rocm"))
	assert.ErrorContains(t, err, `TERNION_GEN_VENDORS="rocm": unknown value "rocm"`)
}

func TestWriteImage(t *testing.T) {
	tmp, dir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "fill-gfx90a.hsaco"), []byte("co"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fill-gfx906.hsaco"), []byte("stale"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kernels-gfx90a.hsaco"), []byte("old layout"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("keep"), 0o644))
	im := kernels.Image{Vendor: "hip", Archs: []arch.CC{arch.CDNA2}, Families: []kernels.FamilyImage{{Name: "fill",
		SourceHash: kernels.FamilyHash("fill"), Objects: []kernels.Object{{Arch: arch.CDNA2, File: "fill-gfx90a.hsaco"}}}}}
	require.NoError(t, writeImage(dir, tmp, im))
	loaded, err := kernels.LoadImage(os.DirFS(dir), ".")
	require.NoError(t, err)
	f, ok := loaded.Family("fill")
	require.True(t, ok)
	assert.True(t, f.Fresh())
	code, err := f.Code(arch.CDNA2)
	require.NoError(t, err)
	assert.Equal(t, []byte("co"), code)
	for _, stale := range []string{"fill-gfx906.hsaco", "kernels-gfx90a.hsaco"} {
		_, err = os.Stat(filepath.Join(dir, stale))
		assert.True(t, os.IsNotExist(err), "a stale code object (%s) is removed", stale)
	}
	_, err = os.Stat(filepath.Join(dir, "README.md"))
	assert.NoError(t, err, "the placeholder stays")
}

func TestWriteUnits(t *testing.T) {
	units, err := writeUnits(t.TempDir())
	require.NoError(t, err)
	var portable []string
	for _, f := range kernels.Families {
		if f.ArchSpecific == "" {
			portable = append(portable, f.Name)
		}
	}
	require.Less(t, len(portable), len(kernels.Families), "gemm90 is arch-specific: not prebuilt")
	require.Len(t, units, len(portable))
	for i, u := range units {
		assert.Equal(t, portable[i], u.family)
		b, err := os.ReadFile(u.path)
		require.NoError(t, err)
		want, err := kernels.Unit(u.family)
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
}

func TestParallel(t *testing.T) {
	var mu sync.Mutex
	ran := map[int]bool{}
	err := parallel(20, func(i int) error {
		mu.Lock()
		ran[i] = true
		mu.Unlock()
		if i == 7 || i == 13 {
			return fmt.Errorf("job %d failed", i)
		}
		return nil
	})
	assert.Len(t, ran, 20, "every job runs, failed or not")
	assert.ErrorContains(t, err, "job 7 failed")
	assert.ErrorContains(t, err, "job 13 failed")
	assert.NoError(t, parallel(0, func(int) error { return errors.New("never") }))
}

func TestNVCCArgs(t *testing.T) {
	args := nvccArgs([]arch.CC{750, 900, 860}, "/k", "/t/all.cu", "/t/out.fatbin")
	line := strings.Join(args, " ")
	for _, want := range []string{
		"-fatbin", "-I /k", "-o /t/out.fatbin",
		"arch=compute_75,code=sm_75", "arch=compute_86,code=sm_86", "arch=compute_90,code=sm_90",
		"arch=compute_90,code=compute_90",
	} {
		assert.Contains(t, line, want)
	}
	assert.Equal(t, "/t/all.cu", args[len(args)-1])
	assert.NotContains(t, line, "code=compute_75", "PTX of the newest arch only")
}

func TestFindTool(t *testing.T) {
	none := func(string) (string, error) { return "", errors.New("not found") }
	_, err := findTool("/no/such/nvcc", "NVCC", "nvcc", "/usr/local/cuda/bin/nvcc", none)
	assert.ErrorContains(t, err, "$NVCC")
	p, err := findTool("", "NVCC", "nvcc", "/usr/local/cuda/bin/nvcc", func(string) (string, error) { return "/opt/bin/nvcc", nil })
	require.NoError(t, err)
	assert.Equal(t, "/opt/bin/nvcc", p)
	_, err = findTool("", "MCC", "mcc", "/no/such/musa/bin/mcc", none)
	assert.ErrorContains(t, err, "mcc not found")
}

func TestFirstLine(t *testing.T) {
	assert.Equal(t, "clang: error: invalid target ID 'gfx942'",
		firstLine([]byte("Traceback (most recent call last):\n  File x\nclang: error: invalid target ID 'gfx942'\n")))
	assert.Equal(t, "warning only", firstLine([]byte("\nwarning only\n")))
	assert.Equal(t, "(no output)", firstLine(nil))
}
