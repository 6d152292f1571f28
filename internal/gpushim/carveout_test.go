package gpushim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/switches"
)

// TestCarveoutDevice pins TERNION_CARVEOUT's reading: applied on CUDA only,
// noted elsewhere, an error when malformed or out of range.
func TestCarveoutDevice(t *testing.T) {
	env := func(v string) Lookup {
		return func(name string) (string, bool) { return v, name == switches.Carveout.Name && v != "" }
	}
	for _, c := range []struct {
		name   string
		v      vendorInfo
		value  string
		want   int
		noted  bool
		failed bool
	}{
		{"CUDA, unset", cudaVendor, "", -1, false, false},
		{"CUDA, 100", cudaVendor, "100", 100, false, false},
		{"CUDA, 0", cudaVendor, "0", 0, false, false},
		{"CUDA, -1: the driver's choice", cudaVendor, "-1", -1, false, false},
		{"CUDA, 101", cudaVendor, "101", -1, false, true},
		{"CUDA, malformed", cudaVendor, "max", -1, false, true},
		{"HIP, 100: noted, not applied", hipVendor, "100", -1, true, false},
		{"MUSA, 50: noted, not applied", musaVendor, "50", -1, true, false},
		{"HIP, unset", hipVendor, "", -1, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, note, err := carveoutDevice(c.v, env(c.value))
			if c.failed {
				require.Error(t, err)
				assert.Contains(t, err.Error(), switches.Carveout.Name)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.noted, note != "", "note %q", note)
			if c.noted {
				assert.Contains(t, note, c.v.name)
			}
		})
	}
}
