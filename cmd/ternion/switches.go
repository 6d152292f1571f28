package main

import (
	"slices"
	"strings"
)

// envSwitch is one environment variable ternion reads, with the meaning it
// keeps from ggml-cuda (the seed's GGML_CUDA_* name in brackets).
type envSwitch struct {
	Name    string
	Meaning string
}

// notYet marks switches whose reader, core/, is not written yet: they are
// listed and reported, but change nothing today.
const notYet = " (no effect yet: read by core/, not written)"

// envSwitches lists every environment switch, in the order ternion devices
// --features prints them. README.md's table says the same.
var envSwitches = []envSwitch{
	{"TERNION_DISABLE_GRAPHS", "never capture GPU graphs; launch eagerly [GGML_CUDA_DISABLE_GRAPHS]" + notYet},
	{"TERNION_ENABLE_UNIFIED_MEMORY", "device buffers from managed (unified) memory, may spill to RAM [GGML_CUDA_ENABLE_UNIFIED_MEMORY]" + notYet},
	{"TERNION_NO_PINNED", "host buffers pageable, not pinned [GGML_CUDA_NO_PINNED]" + notYet},
	{"TERNION_REGISTER_HOST", "page-lock (register) host buffers such as mmap'd files [GGML_CUDA_REGISTER_HOST]" + notYet},
	{"TERNION_FORCE_MMQ", "quantized mul_mat always through mmq kernels, never BLAS [GGML_CUDA_FORCE_MMQ]" + notYet},
	{"TERNION_FORCE_BLAS", "mul_mat always through BLAS where it can [GGML_CUDA_FORCE_CUBLAS]" + notYet},
	{"TERNION_NO_VMM", "legacy memory pool instead of the VMM pool [GGML_CUDA_NO_VMM]"},
	{"TERNION_NO_PEER_COPY", "copies between devices go through the host [GGML_CUDA_NO_PEER_COPY]" + notYet},
	{"TERNION_PEER_MAX_BATCH_SIZE", "enable peer access only for batches up to N rows, default 128 [GGML_CUDA_PEER_MAX_BATCH_SIZE]" + notYet},
	{"TERNION_F16", "half-precision intermediates in dequantize and mul_mat_vec kernels [GGML_CUDA_F16]" + notYet},
	{"TERNION_FORCE_RTC", "compile kernels at run time (NVRTC, hipRTC) even when an embedded code object would run"},
	{"TERNION_HIP_VMM", "=1: use VMM on AMD devices that support it (off by default, as ggml builds HIP)"},
	{"TERNION_REQUIRE_NVCC", "go generate ./kernels: =1 fails instead of skipping when nvcc is missing"},
	{"TERNION_REQUIRE_HIPCC", "go generate ./kernels: =1 fails instead of skipping when hipcc is missing"},
	{"TERNION_REQUIRE_MCC", "go generate ./kernels: =1 fails instead of skipping when mcc is missing"},
	{"TERNION_CUDA_ARCHS", "go generate ./kernels: arch list for nvcc (\"75,80,90\"), replacing kernels.CUDAArchs"},
	{"TERNION_HIP_ARCHS", "go generate ./kernels: gfx list for hipcc (\"gfx90a,gfx1100\"), replacing kernels.HIPArchs"},
	{"TERNION_MUSA_ARCHS", "go generate ./kernels: arch list for mcc (\"mp_22\"), replacing kernels.MUSAArchs"},
	{"TERNION_GEN_VENDORS", "go generate ./kernels: build only these vendors (\"hip\", \"cuda,hip\")"},
	{"TERNION_HOST_DEVICES", "number of simulated host devices, default 1"},
	{"TERNION_HOST_MEMORY", "memory limit of each host device"},
	{"HSA_OVERRIDE_GFX_VERSION", "ROCm: treat every AMD device as this gfx version (X.Y.Z); _<n> suffix: device n only"},
}

// setting is one environment variable and its value.
type setting struct {
	Name, Value string
	Set         bool
}

// switchesInEffect returns the known switches that are set, then any other
// TERNION_* or HSA_OVERRIDE_GFX_VERSION_<n> variable that is set, sorted, so
// that nothing in the environment that may change behaviour goes unreported.
func switchesInEffect(lookup func(string) (string, bool), environ []string) []setting {
	var out []setting
	known := map[string]bool{}
	for _, s := range envSwitches {
		known[s.Name] = true
		if v, ok := lookup(s.Name); ok {
			out = append(out, setting{s.Name, v, true})
		}
	}
	var extra []setting
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if known[name] {
			continue
		}
		if strings.HasPrefix(name, "TERNION_") || strings.HasPrefix(name, "HSA_OVERRIDE_GFX_VERSION_") {
			extra = append(extra, setting{name, value, true})
		}
	}
	slices.SortFunc(extra, func(a, b setting) int { return strings.Compare(a.Name, b.Name) })
	return append(out, extra...)
}

// allSwitches returns every known switch with its value, set or not.
func allSwitches(lookup func(string) (string, bool)) []setting {
	out := make([]setting, len(envSwitches))
	for i, s := range envSwitches {
		v, ok := lookup(s.Name)
		out[i] = setting{s.Name, v, ok}
	}
	return out
}
