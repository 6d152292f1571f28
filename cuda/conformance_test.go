//go:build cuda

package cuda

import (
	"testing"

	"github.com/ternion/ternion/vendorapi/conformance"
)

// TestConformance holds the CUDA driver to the vendorapi contract; it skips
// without a driver or a device.
func TestConformance(t *testing.T) {
	conformance.Run(t, openOrSkip(t))
}
