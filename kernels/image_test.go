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
	manifest := `{"vendor":"cuda","file":"k.fatbin","archs":[750,900],"ptx":900,"compiler":"nvcc 12.8","source_hash":"abc"}`
	fsys := fstest.MapFS{
		"gen/cuda/manifest.json":   {Data: []byte(manifest)},
		"gen/cuda/k.fatbin":        {Data: []byte{0xde, 0xad}},
		"gen/empty/README.md":      {Data: []byte("placeholder")},
		"gen/bad/manifest.json":    {Data: []byte("{")},
		"gen/nofile/manifest.json": {Data: []byte(`{"file":"missing.fatbin"}`)},
		"gen/escape/manifest.json": {Data: []byte(`{"file":"../cuda/k.fatbin"}`)},
	}
	im, err := LoadImage(fsys, "gen/cuda")
	require.NoError(t, err)
	assert.Equal(t, []arch.CC{750, 900}, im.Archs)
	assert.Equal(t, arch.CC(900), im.PTX)
	assert.Equal(t, "nvcc 12.8", im.Compiler)
	assert.Equal(t, []byte{0xde, 0xad}, im.Data)
	assert.False(t, im.Empty())
	assert.Equal(t, []arch.CC{750, 900}, im.Compiled(), "the PTX arch is listed once")
	assert.Equal(t, "sm_75 sm_90 + compute_90", im.Describe())

	im, err = LoadImage(fsys, "gen/empty")
	require.NoError(t, err, "no manifest: go generate was not run")
	assert.True(t, im.Empty())
	assert.Nil(t, im.Compiled())
	assert.Equal(t, "none", im.Describe())

	for _, dir := range []string{"gen/bad", "gen/nofile", "gen/escape"} {
		_, err := LoadImage(fsys, dir)
		assert.Error(t, err, dir)
	}
}

func TestSourceHash(t *testing.T) {
	h := SourceHash()
	assert.Len(t, h, 64)
	assert.Equal(t, h, SourceHash(), "stable")
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

func TestGenPlaceholderIsCommitted(t *testing.T) {
	// //go:embed gen/cuda needs at least one file there on a fresh clone.
	_, err := os.Stat("gen/cuda/README.md")
	require.NoError(t, err)
}
