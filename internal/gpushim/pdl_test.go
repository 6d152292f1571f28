package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// TestPDLCode is the table of which code a device runs, and whether that
// code waits for its predecessor in every kernel (compiled for 9.0 or later).
func TestPDLCode(t *testing.T) {
	all := []arch.CC{750, 800, 860, 890, 900}
	for _, c := range []struct {
		name string
		cc   arch.CC
		sass []arch.CC
		ptx  arch.CC
		rtc  bool
		want bool
	}{
		{"H200, the default fatbin (sm_90 machine code)", arch.Hopper, all, 900, false, true},
		{"H200, machine code up to sm_89 and PTX 9.0: the PTX", arch.Hopper, []arch.CC{750, 800, 890}, 900, false, true},
		{"H200, machine code up to sm_89 and PTX 8.0: the PTX, before 9.0", arch.Hopper, []arch.CC{750, 800, 890}, 800, false, false},
		{"H200, sm_80 only, no PTX", arch.Hopper, []arch.CC{800}, 0, false, false},
		{"sm_100 device, sm_90 machine code does not run there: PTX 9.0", 1000, all, 900, false, true},
		{"sm_100 device, no PTX", 1000, all, 0, false, false},
		{"sm_100 device, its own machine code", 1000, append(all, 1000), 900, false, true},
		{"A100, the default fatbin", arch.Ampere, all, 900, false, false},
		{"H200, compiled at run time", arch.Hopper, nil, 0, true, true},
		{"A100, compiled at run time", arch.Ampere, nil, 0, true, false},
		{"AMD CDNA3", arch.CDNA3, []arch.CC{arch.CDNA3}, 0, false, false},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, pdlCode(c.cc, c.sass, c.ptx, c.rtc)) })
	}
}

// TestPDLDevice: CUDA, cuLaunchKernelEx found, arch 9.0 or later, and
// TERNION_NO_PDL not set.
func TestPDLDevice(t *testing.T) {
	on := func(string) (string, bool) { return "", false }
	off := func(name string) (string, bool) {
		if name == switches.NoPDL.Name {
			return "1", true
		}
		return "", false
	}
	for _, c := range []struct {
		name      string
		v         vendorInfo
		cc        arch.CC
		available bool
		driver    int
		env       Lookup
		want      bool
	}{
		{"CUDA H200, driver 13.0", cudaVendor, arch.Hopper, true, 13000, on, true},
		{"CUDA H200, driver 12.3", cudaVendor, arch.Hopper, true, 12030, on, true},
		{"CUDA H200, driver 12.2: no capture of PDL launches", cudaVendor, arch.Hopper, true, 12020, on, false},
		{"CUDA H200, TERNION_NO_PDL=1", cudaVendor, arch.Hopper, true, 13000, off, false},
		{"CUDA H200, no cuLaunchKernelEx", cudaVendor, arch.Hopper, false, 13000, on, false},
		{"CUDA A100", cudaVendor, arch.Ampere, true, 13000, on, false},
		{"HIP CDNA3", hipVendor, arch.CDNA3, true, 60443482, on, false},
		{"MUSA", musaVendor, arch.Hopper, true, 13000, on, false},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, pdlDevice(c.v, c.cc, c.available, c.driver, c.env)) })
	}
}

// TestPDLGrid: only grids of at most one block a multiprocessor launch early.
func TestPDLGrid(t *testing.T) {
	for _, c := range []struct {
		grid, block vendorapi.Dim3
		sms         int
		want        bool
	}{
		{vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1}, 132, true},
		{vendorapi.Dim3{X: 132}, vendorapi.Dim3{X: 1024}, 132, true},
		{vendorapi.Dim3{X: 133}, vendorapi.Dim3{X: 32}, 132, false},
		{vendorapi.Dim3{X: 12, Y: 11}, vendorapi.Dim3{X: 256}, 132, true},
		{vendorapi.Dim3{X: 12, Y: 11, Z: 2}, vendorapi.Dim3{X: 256}, 132, false},
		{vendorapi.Dim3{X: 256}, vendorapi.Dim3{X: 256}, 132, false}, // mmvq8t of m=4096
		{vendorapi.Dim3{}, vendorapi.Dim3{}, 0, false},
	} {
		assert.Equal(t, c.want, pdlGrid(dims(c.grid, c.block), c.sms), "grid %+v on %d SMs", c.grid, c.sms)
	}
}
