package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi/conformance"
)

// TestConformance holds the host device to the vendorapi contract with one
// device, two devices (peer copies) and a small memory limit.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"one device", Options{Devices: 1}},
		{"two devices", Options{Devices: 2}},
		{"64 MiB limit", Options{Devices: 1, MemoryLimit: 64 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(tc.opts)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, d.Close()) })
			conformance.Run(t, d)
		})
	}
}
