package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
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

func TestArchList(t *testing.T) {
	def := []arch.CC{750, 900}
	got, err := archList("", def)
	require.NoError(t, err)
	assert.Equal(t, def, got)
	got, err = archList("90,80 sm_86;80", def)
	require.NoError(t, err)
	assert.Equal(t, []arch.CC{800, 860, 900}, got, "sorted, deduplicated")
	_, err = archList("nine", def)
	assert.Error(t, err)
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

func TestUnitySource(t *testing.T) {
	s := unitySource([]string{"a.cu", "b.cu"})
	assert.Contains(t, s, "#include \"a.cu\"\n#include \"b.cu\"\n")
}

func TestFindNVCC(t *testing.T) {
	none := func(string) (string, error) { return "", errors.New("not found") }
	_, err := findNVCC("/no/such/nvcc", none)
	assert.ErrorContains(t, err, "$NVCC")
	p, err := findNVCC("", func(string) (string, error) { return "/opt/bin/nvcc", nil })
	require.NoError(t, err)
	assert.Equal(t, "/opt/bin/nvcc", p)
	if p, err := findNVCC("", none); err == nil {
		assert.Equal(t, "/usr/local/cuda/bin/nvcc", p)
	} else {
		assert.ErrorContains(t, err, "nvcc not found")
	}
}
