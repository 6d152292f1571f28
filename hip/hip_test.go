//go:build hip

package hip

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/gpushim/gputest"
	"github.com/ternion/ternion/kernels"
)

// TestHIP runs the GPU vendor tests against the hip driver: without ROCm or
// an AMD GPU they skip ("hip: driver not found", "hip: 0 devices"), except
// Open, which checks what Open and BLASVersion say then.
func TestHIP(t *testing.T) {
	img, err := kernels.HIPImage()
	require.NoError(t, err)
	gputest.Suite(t, gputest.Vendor{Name: "hip", DriverLib: "libamdhip64.so", BLASName: "rocBLAS",
		BLASLib: "librocblas", RTC: "hiprtc", Image: img})
}
