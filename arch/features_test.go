package arch_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
)

func TestHighestCompiled(t *testing.T) {
	list := []arch.CC{750, 800, 900}
	tests := []struct {
		name     string
		cc       arch.CC
		compiled []arch.CC
		want     arch.CC
	}{
		{"exact match", arch.Hopper, list, 900},
		{"Ada runs the Ampere build", arch.AdaLovelace, list, 800},
		{"sm_86 runs the Ampere build", 860, list, 800},
		{"Turing", arch.Turing, list, 750},
		{"unsorted list", 860, []arch.CC{900, 750, 800}, 800},
		{"Blackwell runs the Hopper build", arch.Blackwell, list, 900},
		{"nothing low enough", arch.Volta, []arch.CC{750}, 0},
		{"empty list means cc", arch.Hopper, nil, arch.Hopper},
		{"AMD ignores the list", arch.CDNA2, list, arch.CDNA2},
		{"MThreads ignores the list", arch.QY2, list, arch.QY2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, arch.HighestCompiled(tt.cc, tt.compiled))
		})
	}
}

// features builds a Features from the names of the predicates that hold.
func features(names ...string) arch.Features {
	var f arch.Features
	set := map[string]*bool{
		"fp16": &f.FP16, "fast_fp16": &f.FastFP16, "fast_fp16_hardware": &f.FastFP16Hardware,
		"fp16_mma_hardware": &f.FP16MMAHardware, "bf16_mma_hardware": &f.BF16MMAHardware,
		"turing_mma": &f.TuringMMA, "ampere_mma": &f.AmpereMMA, "mfma": &f.MFMA, "wmma": &f.WMMA,
		"dp4a": &f.DP4A, "graphs": &f.Graphs,
	}
	for _, n := range names {
		p, ok := set[n]
		if !ok {
			panic("unknown feature " + n)
		}
		*p = true
	}
	return f
}

func TestFeaturesOf(t *testing.T) {
	all := []arch.CC{750, 800, 900}
	nvAll := features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware", "bf16_mma_hardware",
		"turing_mma", "ampere_mma", "dp4a", "graphs")
	cdna := features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware", "bf16_mma_hardware",
		"mfma", "dp4a", "graphs")
	rdnaWMMA := features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware", "bf16_mma_hardware",
		"wmma", "dp4a", "graphs")
	tests := []struct {
		name     string
		cc       arch.CC
		compiled []arch.CC
		want     arch.Features
	}{
		{"Maxwell", 520, nil, features()},
		{"Pascal 600", arch.Pascal, nil, features("fp16", "fast_fp16", "fast_fp16_hardware")},
		{"Pascal 610 has dp4a but slow fp16", arch.DP4A, nil, features("fp16", "dp4a")},
		{"Volta", arch.Volta, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware", "dp4a")},
		{"Turing", arch.Turing, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware", "turing_mma", "dp4a")},
		{"Turing with list", arch.Turing, all, features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware", "turing_mma", "dp4a")},
		{"Ampere", arch.Ampere, nil, nvAll},
		{"sm_86 with list", 860, all, nvAll},
		{"Hopper", arch.Hopper, nil, nvAll},
		{"Hopper with 750 800 900", arch.Hopper, all, nvAll},
		{"Hopper with 750 only", arch.Hopper, []arch.CC{750}, features("fp16", "fast_fp16", "fast_fp16_hardware",
			"fp16_mma_hardware", "bf16_mma_hardware", "turing_mma", "dp4a", "graphs")},
		{"Hopper with 610 only", arch.Hopper, []arch.CC{610}, features("fp16", "fast_fp16_hardware",
			"fp16_mma_hardware", "bf16_mma_hardware", "dp4a", "graphs")},
		{"Hopper with 520 only", arch.Hopper, []arch.CC{520}, features("fast_fp16_hardware",
			"fp16_mma_hardware", "bf16_mma_hardware", "graphs")},
		{"Volta with 750 only: nothing compiled", arch.Volta, []arch.CC{750}, features("fast_fp16_hardware", "fp16_mma_hardware")},
		{"Blackwell", arch.Blackwell, all, nvAll},

		{"GCN4", arch.GCN4, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "graphs")},
		{"Vega", arch.Vega, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "graphs")},
		{"Vega20 has sdot4", arch.Vega20, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "dp4a", "graphs")},
		{"CDNA1", arch.CDNA1, nil, cdna},
		{"CDNA2", arch.CDNA2, nil, cdna},
		{"CDNA2 ignores NVIDIA list", arch.CDNA2, all, cdna},
		{"CDNA3", arch.CDNA3, nil, cdna},
		{"CDNA4", arch.CDNA4, nil, cdna},
		{"RDNA1", arch.RDNA1, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "graphs")},
		{"RDNA2", arch.RDNA2, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "dp4a", "graphs")},
		{"RDNA3", arch.RDNA3, nil, rdnaWMMA},
		{"RDNA3_5", arch.OffsetAMD + 0x1151, nil, rdnaWMMA},
		{"RDNA4", arch.RDNA4, nil, rdnaWMMA},

		{"QY1", arch.QY1, nil, features("dp4a", "graphs")},
		{"QY2", arch.QY2, nil, features("fast_fp16_hardware", "fp16_mma_hardware", "dp4a", "graphs")},
		{"PH1", arch.PH1, nil, features("fp16", "fast_fp16", "fast_fp16_hardware", "fp16_mma_hardware",
			"bf16_mma_hardware", "dp4a", "graphs")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := arch.FeaturesOf(tt.cc, tt.compiled)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FeaturesOf(%v, %v) mismatch (-want +got):\n%s", tt.cc, tt.compiled, diff)
			}
			// The individual predicates agree with the struct.
			assert.Equal(t, got.FP16, arch.FP16Available(tt.cc, tt.compiled), "FP16Available")
			assert.Equal(t, got.FastFP16, arch.FastFP16Available(tt.cc, tt.compiled), "FastFP16Available")
			assert.Equal(t, got.FastFP16Hardware, arch.FastFP16Hardware(tt.cc), "FastFP16Hardware")
			assert.Equal(t, got.FP16MMAHardware, arch.FP16MMAHardware(tt.cc), "FP16MMAHardware")
			assert.Equal(t, got.BF16MMAHardware, arch.BF16MMAHardware(tt.cc), "BF16MMAHardware")
			assert.Equal(t, got.TuringMMA, arch.TuringMMAAvailable(tt.cc, tt.compiled), "TuringMMAAvailable")
			assert.Equal(t, got.AmpereMMA, arch.AmpereMMAAvailable(tt.cc, tt.compiled), "AmpereMMAAvailable")
			assert.Equal(t, got.AmpereMMA, arch.CPAsyncAvailable(tt.cc, tt.compiled), "CPAsyncAvailable")
			assert.Equal(t, got.MFMA, arch.MFMAAvailable(tt.cc), "MFMAAvailable")
			assert.Equal(t, got.WMMA, arch.WMMAAvailable(tt.cc), "WMMAAvailable")
			assert.Equal(t, got.DP4A, arch.DP4AAvailable(tt.cc, tt.compiled), "DP4AAvailable")
			assert.Equal(t, got.Graphs, arch.GraphsAllowed(tt.cc), "GraphsAllowed")
		})
	}
}

func TestGraphsAllowedBoundary(t *testing.T) {
	assert.False(t, arch.GraphsAllowed(arch.Ampere-1))
	assert.True(t, arch.GraphsAllowed(arch.Ampere))
}

func TestFeaturesJSON(t *testing.T) {
	b, err := json.Marshal(arch.FeaturesOf(arch.CDNA2, nil))
	require.NoError(t, err)
	assert.JSONEq(t, `{"fp16":true,"fast_fp16":true,"fast_fp16_hardware":true,"fp16_mma_hardware":true,
		"bf16_mma_hardware":true,"turing_mma":false,"ampere_mma":false,"mfma":true,"wmma":false,
		"dp4a":true,"graphs":true}`, string(b))
}

// TestClusterAvailable: clusters need an NVIDIA device of arch 9.0 or later
// with code for such an arch in the build.
func TestClusterAvailable(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cc       arch.CC
		compiled []arch.CC
		want     bool
	}{
		{"H200, sm_90 code", arch.Hopper, []arch.CC{arch.Hopper}, true},
		{"H200, only sm_80 code", arch.Hopper, []arch.CC{arch.Ampere}, false},
		{"A100, sm_90 code too", arch.Ampere, []arch.CC{arch.Ampere, arch.Hopper}, false},
		{"Blackwell runs sm_90 code", arch.CC(1000), []arch.CC{arch.Hopper}, true},
		{"AMD", arch.OffsetAMD + 0x90a, []arch.CC{arch.Hopper}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, arch.ClusterAvailable(tt.cc, tt.compiled))
		})
	}
}
