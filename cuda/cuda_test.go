//go:build cuda

package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/gpushim/gputest"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// TestCUDA runs the GPU vendor tests against the cuda driver (Open,
// Conformance, RuntimeCompilation, EmbeddedImage, NoKernel, FreshThreads);
// without the driver or a device they skip, saying why.
func TestCUDA(t *testing.T) {
	img, err := kernels.CUDAImage()
	require.NoError(t, err)
	gputest.Suite(t, gputest.Vendor{Name: "cuda", DriverLib: "libcuda.so.1", BLASName: "cuBLAS", RTC: "nvrtc", Image: img})
}

// openOrSkip opens the cuda vendor for the benchmarks.
func openOrSkip(tb testing.TB) vendorapi.Driver { return gputest.OpenOrSkip(tb, "cuda") }
