package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/vendorapi"
)

func envMap(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFeaturesDefault(t *testing.T) {
	f := features(envMap(nil), cudaVendor, []arch.CC{750, 800, 900}, "embedded")
	assert.Equal(t, []vendorapi.Feature{
		{Name: "ARCHS", Value: "750,800,900"},
		{Name: "USE_GRAPHS", Value: "1"},
		{Name: "PEER_MAX_BATCH_SIZE", Value: "128"},
		{Name: "KERNELS", Value: "embedded"},
	}, f)
}

func TestFeaturesFromEnv(t *testing.T) {
	env := envMap(map[string]string{
		"TERNION_FORCE_MMQ": "1", "TERNION_FORCE_BLAS": "yes", "TERNION_NO_VMM": "1", "TERNION_NO_PEER_COPY": "on",
		"TERNION_F16": "1", "TERNION_DISABLE_GRAPHS": "1", "TERNION_PEER_MAX_BATCH_SIZE": "64",
	})
	f := features(env, cudaVendor, nil, "nvrtc")
	assert.Equal(t, []vendorapi.Feature{
		{Name: "FORCE_MMQ", Value: "1"},
		{Name: "FORCE_CUBLAS", Value: "1"},
		{Name: "NO_VMM", Value: "1"},
		{Name: "NO_PEER_COPY", Value: "1"},
		{Name: "F16", Value: "1"},
		{Name: "PEER_MAX_BATCH_SIZE", Value: "64"},
		{Name: "KERNELS", Value: "nvrtc"},
	}, f)
}

func TestEnvOn(t *testing.T) {
	env := envMap(map[string]string{"A": "1", "B": "0", "C": "", "D": "false", "E": "Off", "F": "x"})
	for k, want := range map[string]bool{"A": true, "B": false, "C": false, "D": false, "E": false, "F": true, "G": false} {
		assert.Equal(t, want, envOn(env, k), k)
	}
	// A bad batch size keeps the default.
	f := features(envMap(map[string]string{"TERNION_PEER_MAX_BATCH_SIZE": "lots"}), cudaVendor, nil, "nvrtc")
	assert.Contains(t, f, vendorapi.Feature{Name: "PEER_MAX_BATCH_SIZE", Value: "128"})
}

func TestFeaturesHIP(t *testing.T) {
	f := features(envMap(nil), hipVendor, []arch.CC{arch.CDNA2, arch.RDNA2}, "embedded")
	assert.Contains(t, f, vendorapi.Feature{Name: "ARCHS", Value: "gfx90a,gfx1030"})
	assert.Contains(t, f, vendorapi.Feature{Name: "NO_VMM", Value: "1"}, "HIP: VMM is off by default")
	f = features(envMap(map[string]string{"TERNION_HIP_VMM": "1"}), hipVendor, nil, "hiprtc")
	assert.NotContains(t, f, vendorapi.Feature{Name: "NO_VMM", Value: "1"})
	f = features(envMap(map[string]string{"TERNION_HIP_VMM": "1", "TERNION_NO_VMM": "1"}), hipVendor, nil, "hiprtc")
	assert.Contains(t, f, vendorapi.Feature{Name: "NO_VMM", Value: "1"}, "TERNION_NO_VMM wins")
	f = features(envMap(nil), musaVendor, []arch.CC{arch.QY2}, "embedded")
	assert.Contains(t, f, vendorapi.Feature{Name: "ARCHS", Value: "mp_22"})
}
