package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

func envMap(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// envFeatures is features over the switches env sets.
func envFeatures(t *testing.T, env map[string]string, v vendorInfo, compiled []arch.CC, source string) []vendorapi.Feature {
	t.Helper()
	sw, err := switchFeatures(envMap(env), v)
	require.NoError(t, err)
	return features(compiled, sw, source)
}

func TestFeaturesDefault(t *testing.T) {
	f := envFeatures(t, nil, cudaVendor, []arch.CC{750, 800, 900}, "embedded")
	assert.Equal(t, []vendorapi.Feature{
		{Name: "ARCHS", Value: "750,800,900"},
		{Name: "USE_GRAPHS", Value: "1"},
		{Name: "PEER_MAX_BATCH_SIZE", Value: "128"},
		{Name: "KERNELS", Value: "embedded"},
	}, f)
}

func TestFeaturesFromEnv(t *testing.T) {
	env := map[string]string{
		switches.ForceMMQ.Name: "1", switches.ForceBLAS.Name: "yes", switches.NoVMM.Name: "1", switches.NoPeerCopy.Name: "on",
		switches.F16.Name: "1", switches.DisableGraphs.Name: "1", switches.PeerMaxBatchSize.Name: "64",
	}
	f := envFeatures(t, env, cudaVendor, nil, "nvrtc")
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

func TestFeaturesMalformedSwitch(t *testing.T) {
	for _, v := range []string{"lots", "-1", "1.5"} {
		_, err := switchFeatures(envMap(map[string]string{switches.PeerMaxBatchSize.Name: v}), cudaVendor)
		assert.ErrorIs(t, err, switches.ErrMalformed, "a bad batch size is an error, not the default")
		assert.ErrorContains(t, err, switches.PeerMaxBatchSize.Name)
	}
	// The dropped alias is not read: ggml's FORCE_CUBLAS is TERNION_FORCE_BLAS.
	f := envFeatures(t, map[string]string{"TERNION_FORCE_CUBLAS": "1"}, cudaVendor, nil, "nvrtc")
	assert.NotContains(t, f, vendorapi.Feature{Name: "FORCE_CUBLAS", Value: "1"})
}

func TestFeaturesHIP(t *testing.T) {
	f := envFeatures(t, nil, hipVendor, []arch.CC{arch.CDNA2, arch.RDNA2}, "embedded")
	assert.Contains(t, f, vendorapi.Feature{Name: "ARCHS", Value: "gfx90a,gfx1030"})
	assert.Contains(t, f, vendorapi.Feature{Name: "NO_VMM", Value: "1"}, "HIP: VMM is off by default")
	f = envFeatures(t, map[string]string{switches.HIPVMM.Name: "1"}, hipVendor, nil, "hiprtc")
	assert.NotContains(t, f, vendorapi.Feature{Name: "NO_VMM", Value: "1"})
	f = envFeatures(t, map[string]string{switches.HIPVMM.Name: "1", switches.NoVMM.Name: "1"}, hipVendor, nil, "hiprtc")
	assert.Contains(t, f, vendorapi.Feature{Name: "NO_VMM", Value: "1"}, "TERNION_NO_VMM wins")
	f = envFeatures(t, nil, musaVendor, []arch.CC{arch.QY2}, "embedded")
	assert.Contains(t, f, vendorapi.Feature{Name: "ARCHS", Value: "mp_22"})
}
