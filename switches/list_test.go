package switches

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			assert.False(t, seen[s.Name], "listed twice")
			seen[s.Name] = true
			assert.Regexp(t, `^[A-Z][A-Z0-9_]*$`, s.Name)
			assert.NotEmpty(t, s.Meaning)
			assert.NotContains(t, s.Meaning, "\n", "one line")
			assert.Contains(t, kindNames, s.Kind)
			assert.NotZero(t, s.ReadBy, "some layer reads it")
			assert.NotNil(t, s.check)
			if s.NoEffectYet {
				assert.NotZero(t, s.ReadBy&LayerCore, "no effect yet: core/ reads it")
			}
			if !strings.HasPrefix(s.Name, Prefix) {
				assert.True(t, s.Owner != "" || s.ReadBy == LayerGenerator,
					"a name without %s is another program's (Owner) or a generator setting", Prefix)
			}
			if suffix, ok := strings.CutPrefix(s.GGML, "GGML_CUDA_"); ok && s != ForceBLAS.Switch {
				// FORCE_BLAS aside (BLAS is cuBLAS, rocBLAS or muBLAS), ggml's name under the TERNION_ prefix.
				assert.Equal(t, Prefix+suffix, s.Name)
			}
			if s.Kind == KindInt {
				assert.NoError(t, s.check(s.Default), "the default is a valid value")
			}
			assert.Same(t, s, Find(s.Name))
		})
	}
}

func TestNoEffectYet(t *testing.T) {
	var got []string
	for _, s := range All() {
		if s.NoEffectYet {
			got = append(got, strings.TrimPrefix(s.Name, Prefix))
		}
	}
	assert.ElementsMatch(t, []string{"F16", "ENABLE_UNIFIED_MEMORY", "REGISTER_HOST"}, got)
}

func TestFind(t *testing.T) {
	assert.Same(t, NoVMM.Switch, Find("TERNION_NO_VMM"))
	assert.Same(t, HSAOverride.Switch, Find("HSA_OVERRIDE_GFX_VERSION_1"))
	assert.Same(t, HSAOverride.Switch, Find("HSA_OVERRIDE_GFX_VERSION_12"))
	for _, name := range []string{"HSA_OVERRIDE_GFX_VERSION_", "HSA_OVERRIDE_GFX_VERSION_x", "TERNION_NO_VMM_1", "TERNION_FORCE_CUBLAS", ""} {
		assert.Nil(t, Find(name), name)
	}
}

func TestDescribe(t *testing.T) {
	assert.Equal(t, "enable peer access only for batches of at most N rows; default 128 [GGML_CUDA_PEER_MAX_BATCH_SIZE]",
		PeerMaxBatchSize.Describe())
	assert.Equal(t, "use the legacy best-fit pool instead of the VMM pool (the GPU vendors already report VMM off); default off [GGML_CUDA_NO_VMM]",
		NoVMM.Describe())
	assert.Equal(t, "half-precision intermediates in the dequantize and mul_mat_vec kernels; default off [GGML_CUDA_F16] "+NoEffectYetNote,
		F16.Describe())
	assert.Equal(t, "compile the kernels at run time (NVRTC, hipRTC) even when an embedded code object would run; default off",
		ForceRTC.Describe())
	assert.True(t, strings.HasPrefix(HSAOverride.Describe(), "ROCm's own: "))
	assert.Equal(t, "core,gpu", (LayerCore | LayerGPU).String())
	assert.Equal(t, "-", Layer(0).String())
	assert.Equal(t, "arch list", KindArchs.String())
}

// readmeRow is one row of README.md's environment table.
type readmeRow struct {
	names []string // the variables of the first cell
	text  string   // the whole row
}

// readmeSwitches reads the table under "## Environment variables".
func readmeSwitches(t *testing.T) []readmeRow {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Environment variables\n")
	require.True(t, ok, "README.md has no Environment variables section")
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]*)`")
	var rows []readmeRow
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		r := readmeRow{text: line}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			r.names = append(r.names, m[1])
		}
		rows = append(rows, r)
	}
	require.NotEmpty(t, rows, "no table rows")
	return rows
}

// TestREADME checks that README.md's environment table lists exactly the
// switches of All, in the same order, and agrees on the ggml name and on
// which switches have no effect yet.
func TestREADME(t *testing.T) {
	var names []string
	for _, r := range readmeSwitches(t) {
		names = append(names, r.names...)
		for _, n := range r.names {
			s := Find(n)
			if s == nil || s.Name != n {
				continue // reported by the comparison below
			}
			if s.GGML != "" {
				assert.Contains(t, r.text, "`"+s.GGML+"`", "%s: README names the ggml variable", n)
			}
			assert.Equal(t, s.NoEffectYet, strings.Contains(r.text, "no effect yet"), "%s: README on its effect", n)
		}
	}
	var want []string
	for _, s := range All() {
		want = append(want, s.Name)
	}
	assert.Equal(t, want, names, "README.md's environment table and switches.All differ")
	assert.False(t, slices.Contains(names, "TERNION_FORCE_CUBLAS"))
}
