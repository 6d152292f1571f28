//go:build musa

package musa

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/gpushim/gputest"
	"github.com/ternion/ternion/kernels"
)

// TestMUSA runs the GPU vendor tests against the musa driver; they skip
// without the Moore Threads driver or a device.
func TestMUSA(t *testing.T) {
	img, err := kernels.MUSAImage()
	require.NoError(t, err)
	gputest.Suite(t, gputest.Vendor{Name: "musa", DriverLib: "libmusa.so", BLASName: "muBLAS", RTC: "none", Image: img})
}
