package gpushim

import (
	"strconv"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// Lookup reads an environment variable (os.LookupEnv, or a test's map).
type Lookup = switches.Lookup

// switchFeatures returns the build switches the TERNION_ environment
// switches set, named and ordered as ggml's ggml_backend_cuda_get_features
// names its compile-time defines; v says whether VMM is on by default. A
// malformed switch is an error naming it.
func switchFeatures(env Lookup, v vendorInfo) ([]vendorapi.Feature, error) {
	batch, err := switches.Int(env, switches.PeerMaxBatchSize)
	if err != nil {
		return nil, err
	}
	var f []vendorapi.Feature
	add := func(name, value string) { f = append(f, vendorapi.Feature{Name: name, Value: value}) }
	if switches.On(env, switches.ForceMMQ) {
		add("FORCE_MMQ", "1")
	}
	if switches.On(env, switches.ForceBLAS) {
		add("FORCE_CUBLAS", "1")
	}
	if on, _ := v.vmmEnabled(env); !on {
		add("NO_VMM", "1")
	}
	if switches.On(env, switches.NoPeerCopy) {
		add("NO_PEER_COPY", "1")
	}
	if switches.On(env, switches.F16) {
		add("F16", "1")
	}
	if !switches.On(env, switches.DisableGraphs) {
		add("USE_GRAPHS", "1")
	}
	add("PEER_MAX_BATCH_SIZE", strconv.Itoa(batch))
	return f, nil
}

// features lists the build and run-time switches as ggml's
// ggml_backend_cuda_get_features does: ARCHS (the compiled archs), the
// environment's switches (switchFeatures), then KERNELS: where the device
// code comes from (embedded, the run-time compiler's name, or
// embedded+<compiler> when devices differ).
func features(compiled []arch.CC, sw []vendorapi.Feature, kernelSource string) []vendorapi.Feature {
	var f []vendorapi.Feature
	if len(compiled) > 0 {
		archs := make([]string, len(compiled))
		for i, c := range compiled {
			archs[i] = c.String() // NVIDIA: 750, as __CUDA_ARCH_LIST__
			if !c.IsNVIDIA() {
				archs[i] = c.Name() // gfx90a, mp_22
			}
		}
		f = append(f, vendorapi.Feature{Name: "ARCHS", Value: strings.Join(archs, ",")})
	}
	f = append(f, sw...)
	return append(f, vendorapi.Feature{Name: "KERNELS", Value: kernelSource})
}
