package kernels

import (
	"os"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
)

func TestLoadImage(t *testing.T) {
	fresh := FamilyHash("fill")
	manifest := `{"vendor":"cuda","archs":[750,900],"ptx":900,"compiler":"nvcc 12.8","families":[
		{"name":"fill","source_hash":"` + fresh + `","file":"fill.fatbin"},
		{"name":"binary","source_hash":"old","file":"binary.fatbin"}]}`
	fsys := fstest.MapFS{
		"gen/cuda/manifest.json":   {Data: []byte(manifest)},
		"gen/cuda/fill.fatbin":     {Data: []byte{0xde, 0xad}},
		"gen/cuda/binary.fatbin":   {Data: []byte{0xbe, 0xef}},
		"gen/empty/README.md":      {Data: []byte("placeholder")},
		"gen/bad/manifest.json":    {Data: []byte("{")},
		"gen/nofam/manifest.json":  {Data: []byte(`{"vendor":"cuda"}`)},
		"gen/nofile/manifest.json": {Data: []byte(`{"families":[{"name":"fill","file":"missing.fatbin"}]}`)},
		"gen/escape/manifest.json": {Data: []byte(`{"families":[{"name":"fill","file":"../cuda/fill.fatbin"}]}`)},
		"gen/twice/manifest.json":  {Data: []byte(`{"families":[{"name":"a","file":"x"},{"name":"a","file":"x"}]}`)},
		"gen/twice/x":              {Data: []byte("x")},
		"gen/nocode/manifest.json": {Data: []byte(`{"families":[{"name":"fill"}]}`)},
	}
	im, err := LoadImage(fsys, "gen/cuda")
	require.NoError(t, err)
	assert.Equal(t, []arch.CC{750, 900}, im.Archs)
	assert.Equal(t, arch.CC(900), im.PTX)
	assert.Equal(t, "nvcc 12.8", im.Compiler)
	assert.False(t, im.Empty())
	assert.Equal(t, []arch.CC{750, 900}, im.Compiled(), "the PTX arch is listed once")
	assert.Equal(t, "sm_75 sm_90 + compute_90", im.Describe())
	f, ok := im.Family("fill")
	require.True(t, ok)
	assert.True(t, f.Fresh())
	code, err := f.Code(900)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xde, 0xad}, code, "a fatbin serves every arch")
	b, ok := im.Family("binary")
	require.True(t, ok)
	assert.False(t, b.Fresh(), "built from other sources")
	_, ok = im.Family("scale")
	assert.False(t, ok)
	assert.Equal(t, []string{"fill"}, im.Prebuilt(), "stale families are not prebuilt")

	im, err = LoadImage(fsys, "gen/empty")
	require.NoError(t, err, "no manifest: go generate was not run")
	assert.True(t, im.Empty())
	assert.Nil(t, im.Compiled())
	assert.Equal(t, "none", im.Describe())
	assert.Empty(t, im.Prebuilt())

	for _, dir := range []string{"gen/bad", "gen/nofam", "gen/nofile", "gen/escape", "gen/twice", "gen/nocode"} {
		_, err := LoadImage(fsys, dir)
		assert.Error(t, err, dir)
	}
}

func TestLoadImagePerArch(t *testing.T) {
	manifest := `{"vendor":"hip","archs":[16779530,16781360],"compiler":"hipcc 5.2.21153","families":[{"name":"fill",
		"objects":[{"arch":16779530,"file":"fill-gfx90a.hsaco"},{"arch":16781360,"file":"fill-gfx1030.hsaco"}]}]}`
	fsys := fstest.MapFS{
		"gen/hip/manifest.json":      {Data: []byte(manifest)},
		"gen/hip/fill-gfx90a.hsaco":  {Data: []byte("a")},
		"gen/hip/fill-gfx1030.hsaco": {Data: []byte("b")},
		"gen/lost/manifest.json":     {Data: []byte(`{"families":[{"name":"fill","objects":[{"arch":1,"file":"gone.hsaco"}]}]}`)},
	}
	im, err := LoadImage(fsys, "gen/hip")
	require.NoError(t, err)
	assert.False(t, im.Empty())
	f, ok := im.Family("fill")
	require.True(t, ok)
	code, err := f.Code(arch.CDNA2)
	require.NoError(t, err)
	assert.Equal(t, []byte("a"), code)
	code, err = f.Code(arch.RDNA2)
	require.NoError(t, err)
	assert.Equal(t, []byte("b"), code)
	code, err = f.Code(arch.RDNA3)
	require.NoError(t, err)
	assert.Nil(t, code, "no object for gfx1100 and no single code object")
	assert.Equal(t, "gfx90a gfx1030", im.Describe())
	assert.Equal(t, []arch.CC{arch.CDNA2, arch.RDNA2}, im.Compiled())
	_, err = LoadImage(fsys, "gen/lost")
	assert.Error(t, err)
}

func TestCUDAArchs(t *testing.T) {
	require.NotEmpty(t, CUDAArchs)
	for i, a := range CUDAArchs {
		assert.True(t, a.IsNVIDIA(), a.Name())
		assert.GreaterOrEqual(t, a, arch.Turing, "CUDA 13 cannot build below sm_75")
		if i > 0 {
			assert.Greater(t, a, CUDAArchs[i-1], "sorted, no duplicates")
		}
	}
}

func TestHIPAndMUSAArchs(t *testing.T) {
	for _, list := range []struct {
		archs []arch.CC
		is    func(arch.CC) bool
	}{{HIPArchs, arch.CC.IsAMD}, {MUSAArchs, arch.CC.IsMThreads}} {
		require.NotEmpty(t, list.archs)
		for i, a := range list.archs {
			assert.True(t, list.is(a), a.Name())
			if i > 0 {
				assert.Greater(t, a, list.archs[i-1], "sorted, no duplicates")
			}
		}
	}
	names := map[string]bool{}
	for _, a := range HIPArchs {
		names[a.Name()] = true
	}
	for _, g := range []string{"gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1200"} {
		assert.True(t, names[g], g)
	}
	assert.Equal(t, []string{"mp_21", "mp_22", "mp_31"}, []string{MUSAArchs[0].Name(), MUSAArchs[1].Name(), MUSAArchs[2].Name()})
}

func TestGenPlaceholderIsCommitted(t *testing.T) {
	// //go:embed gen/<vendor> needs at least one file there on a fresh clone.
	for _, v := range []string{"cuda", "hip", "musa"} {
		_, err := os.Stat("gen/" + v + "/README.md")
		require.NoError(t, err, v)
	}
}
