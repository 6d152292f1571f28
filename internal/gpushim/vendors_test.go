package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/vendorapi"
)

func TestVersions(t *testing.T) {
	assert.Equal(t, "12.8", cudaVersion(12080))
	assert.Equal(t, "13.0", cudaVersion(13000))
	assert.Equal(t, "5.2.21153", hipVersion(50221153))
	assert.Equal(t, "6.4.43482", hipVersion(60443482))
}

func TestNVIDIAAndMThreadsArch(t *testing.T) {
	a := nvidiaArch(rawArch{major: 9, minor: 0}, envMap(nil))
	assert.Equal(t, devArch{cc: arch.Hopper, name: "sm_90"}, a)
	a = mthreadsArch(rawArch{major: 2, minor: 2}, envMap(nil))
	assert.Equal(t, devArch{cc: arch.QY2, name: "mp_22"}, a, "the seed's encoding: 0x100000 + 0x220")
	assert.Equal(t, 32, musaVendor.warpSize, "the seed fixes MUSA's warp size")
}

func TestAMDArch(t *testing.T) {
	for _, c := range []struct {
		name         string
		raw          rawArch
		env          map[string]string
		cc           arch.CC
		archName     string
		override     string
		warns        int
		warnContains string
	}{
		{name: "target id with features", raw: rawArch{major: 9, minor: 0, name: "gfx90a:sramecc+:xnack-"},
			cc: arch.CDNA2, archName: "gfx90a:sramecc+:xnack-"},
		{name: "rdna3", raw: rawArch{major: 11, minor: 0, name: "gfx1100"}, cc: arch.RDNA3, archName: "gfx1100"},
		{name: "generic", raw: rawArch{major: 10, minor: 3, name: "gfx10-3-generic"}, cc: arch.RDNA2, archName: "gfx10-3-generic"},
		{name: "fallback to major.minor warns", raw: rawArch{major: 9, minor: 0, name: "gfx"}, cc: arch.AMD(9, 0),
			archName: "gfx", warns: 1, warnContains: "invalid architecture ID"},
		{name: "no name at all", raw: rawArch{major: 9, minor: 4}, cc: arch.AMD(9, 4), archName: "gfx940",
			warns: 1, warnContains: "using cc 9.4"},
		{name: "unreadable", raw: rawArch{name: "sm_90"}, cc: arch.OffsetAMD, archName: "sm_90", warns: 1,
			warnContains: "cannot read"},
		{name: "override applied by the runtime", raw: rawArch{dev: 1, major: 10, minor: 3, name: "gfx1030"},
			env: map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, cc: arch.RDNA2, archName: "gfx1030",
			override: "HSA_OVERRIDE_GFX_VERSION=10.3.0"},
		{name: "per-device override beats the global one", raw: rawArch{dev: 1, major: 10, minor: 3, name: "gfx1030"},
			env: map[string]string{"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "HSA_OVERRIDE_GFX_VERSION_1": "10.3.0"},
			cc:  arch.RDNA2, archName: "gfx1030", override: "HSA_OVERRIDE_GFX_VERSION_1=10.3.0"},
		{name: "override the runtime did not apply", raw: rawArch{major: 10, minor: 3, name: "gfx1031"},
			env: map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, cc: arch.OffsetAMD + 0x1031, archName: "gfx1031",
			override: "HSA_OVERRIDE_GFX_VERSION=10.3.0", warns: 1, warnContains: "selects gfx1030"},
		{name: "bad override", raw: rawArch{major: 10, minor: 3, name: "gfx1030"},
			env: map[string]string{"HSA_OVERRIDE_GFX_VERSION": "ten"}, cc: arch.RDNA2, archName: "gfx1030",
			override: "HSA_OVERRIDE_GFX_VERSION=ten", warns: 1, warnContains: "HSA_OVERRIDE_GFX_VERSION"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := amdArch(c.raw, envMap(c.env))
			assert.Equal(t, c.cc, a.cc, "cc %v", a.cc)
			assert.Equal(t, c.archName, a.name)
			assert.Equal(t, c.override, a.override)
			assert.Len(t, a.warnings, c.warns, "%q", a.warnings)
			if c.warnContains != "" && len(a.warnings) > 0 {
				assert.Contains(t, a.warnings[0], c.warnContains)
			}
		})
	}
}

func TestVMMEnabled(t *testing.T) {
	on, why := cudaVendor.vmmEnabled(envMap(nil))
	assert.True(t, on)
	assert.Empty(t, why)
	on, why = cudaVendor.vmmEnabled(envMap(map[string]string{"TERNION_NO_VMM": "1"}))
	assert.False(t, on)
	assert.Equal(t, "TERNION_NO_VMM", why)
	on, why = hipVendor.vmmEnabled(envMap(nil))
	assert.False(t, on, "HIP: off by default, as ggml builds HIP")
	assert.Contains(t, why, "TERNION_HIP_VMM=1")
	on, _ = hipVendor.vmmEnabled(envMap(map[string]string{"TERNION_HIP_VMM": "1"}))
	assert.True(t, on)
	on, _ = musaVendor.vmmEnabled(envMap(nil))
	assert.True(t, on)
}

func TestVendorStatusTables(t *testing.T) {
	for _, c := range []struct {
		vendor string
		code   int
		name   string
		kind   error
	}{
		{"hip", 5, "rocblas_status_memory_error", vendorapi.ErrOutOfMemory},
		{"hip", 2, "rocblas_status_not_implemented", vendorapi.ErrNotSupported},
		{"hip", 15, "rocblas_status_arch_mismatch", vendorapi.ErrNotSupported},
		{"hip", 11, "rocblas_status_invalid_value", vendorapi.ErrInvalidValue},
		{"musa", 3, "MUBLAS_STATUS_ALLOC_FAILED", vendorapi.ErrOutOfMemory},
		{"musa", 15, "MUBLAS_STATUS_NOT_SUPPORTED", vendorapi.ErrNotSupported},
		{"cuda", 7, "CUBLAS_STATUS_INVALID_VALUE", vendorapi.ErrInvalidValue},
	} {
		e := status{src: srcBLAS, code: c.code, call: "gemm"}.toError(c.vendor, 0)
		assert.Equal(t, c.name, e.CodeName, "%s %d", c.vendor, c.code)
		assert.ErrorIs(t, e, c.kind, c.name)
		assert.NotEmpty(t, e.Message)
	}
	assert.Contains(t, blasStatus("musa", 14).Message, "muBLAS")
	assert.Equal(t, "BLAS_STATUS_99", blasStatus("hip", 99).Name)
	for code, info := range rocblasStatuses {
		assert.Contains(t, info.Name, "rocblas_status_", code)
	}
}

func TestVendorErrorNames(t *testing.T) {
	for name, kind := range map[string]error{
		"hipErrorOutOfMemory":            vendorapi.ErrOutOfMemory,
		"hipErrorNotReady":               vendorapi.ErrNotReady,
		"hipErrorGraphExecUpdateFailure": vendorapi.ErrGraphUpdate,
		"hipErrorNoBinaryForGpu":         vendorapi.ErrNoKernel,
		"musaErrorMemoryAllocation":      vendorapi.ErrOutOfMemory,
		"MUSA_ERROR_NOT_READY":           vendorapi.ErrNotReady,
		"MUBLAS_STATUS_INVALID_VALUE":    vendorapi.ErrInvalidValue,
	} {
		e := status{src: srcRuntime, name: name}.toError("x", 0)
		assert.ErrorIs(t, e, kind, name)
	}
	assert.Equal(t, "musaErrorNotReady", musaName("cudaErrorNotReady"))
	assert.Equal(t, "", musaName("hipErrorNotReady"))
	assert.Equal(t, "hipGraphExecUpdateErrorTopologyChanged", graphUpdateResult("hip", 2))
}
