package gpushim

import (
	"strconv"
	"strings"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/vendorapi"
)

// Lookup reads an environment variable (os.LookupEnv, or a test's map).
type Lookup func(string) (string, bool)

// envOn reports whether switch name is on: set to anything but "", "0",
// "false", "no" or "off".
func envOn(env Lookup, name string) bool {
	v, ok := env(name)
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

// peerMaxBatch is the seed's GGML_CUDA_PEER_MAX_BATCH_SIZE default.
const peerMaxBatch = 128

// features lists the build and run-time switches as ggml's
// ggml_backend_cuda_get_features does, with the TERNION_ environment
// switches in place of ggml's compile-time defines, plus KERNELS: where the
// device code comes from (embedded, the run-time compiler's name, or
// embedded+<compiler> when devices differ). v is the vendor: it names the
// compiled archs and says whether VMM is on by default.
func features(env Lookup, v vendorInfo, compiled []arch.CC, kernelSource string) []vendorapi.Feature {
	var f []vendorapi.Feature
	add := func(name, value string) { f = append(f, vendorapi.Feature{Name: name, Value: value}) }
	if len(compiled) > 0 {
		archs := make([]string, len(compiled))
		for i, c := range compiled {
			archs[i] = c.String() // NVIDIA: 750, as __CUDA_ARCH_LIST__
			if !c.IsNVIDIA() {
				archs[i] = c.Name() // gfx90a, mp_22
			}
		}
		add("ARCHS", strings.Join(archs, ","))
	}
	if envOn(env, "TERNION_FORCE_MMQ") {
		add("FORCE_MMQ", "1")
	}
	if envOn(env, "TERNION_FORCE_CUBLAS") || envOn(env, "TERNION_FORCE_BLAS") {
		add("FORCE_CUBLAS", "1")
	}
	if on, _ := v.vmmEnabled(env); !on {
		add("NO_VMM", "1")
	}
	if envOn(env, "TERNION_NO_PEER_COPY") {
		add("NO_PEER_COPY", "1")
	}
	if envOn(env, "TERNION_F16") {
		add("F16", "1")
	}
	if !envOn(env, "TERNION_DISABLE_GRAPHS") {
		add("USE_GRAPHS", "1")
	}
	batch := peerMaxBatch
	if v, ok := env("TERNION_PEER_MAX_BATCH_SIZE"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			batch = n
		}
	}
	add("PEER_MAX_BATCH_SIZE", strconv.Itoa(batch))
	add("KERNELS", kernelSource)
	return f
}
