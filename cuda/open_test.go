//go:build cuda

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// openOrSkip opens the cuda vendor, skipping tb when there is no driver or
// no device, with the reason.
func openOrSkip(tb testing.TB) vendorapi.Driver {
	tb.Helper()
	d, err := vendorapi.Open("cuda")
	if errors.Is(err, vendorapi.ErrNoDriver) {
		tb.Skipf("cuda: no driver: %v", err)
	}
	require.NoError(tb, err, "vendorapi.Open(cuda)")
	n, err := d.DeviceCount()
	require.NoError(tb, err)
	if n == 0 {
		tb.Skip("cuda: 0 devices")
	}
	return d
}

// TestOpen checks what Open says on any machine: no driver is ErrNoDriver
// naming libcuda.so.1; otherwise the driver describes itself.
func TestOpen(t *testing.T) {
	d, err := vendorapi.Open("cuda")
	if err != nil {
		require.ErrorIs(t, err, vendorapi.ErrNoDriver, "without a usable driver Open reports ErrNoDriver")
		var ve *vendorapi.Error
		require.True(t, errors.As(err, &ve), "%T is a *vendorapi.Error", err)
		assert.Equal(t, "cuda", ve.Vendor)
		if ve.Call == "dlopen" {
			assert.True(t, strings.HasPrefix(ve.Message, "libcuda.so.1"), "message %q names the library", ve.Message)
		}
		t.Skipf("cuda: %v", err)
	}
	n, err := d.DeviceCount()
	require.NoError(t, err)
	t.Logf("cuda: %d devices", n)
	fl, ok := d.(vendorapi.FeatureLister)
	require.True(t, ok, "the cuda driver lists features")
	names := map[string]string{}
	for _, f := range fl.Features() {
		names[f.Name] = f.Value
	}
	t.Logf("features: %v", names)
	assert.Contains(t, []string{"embedded", "nvrtc", "embedded+nvrtc"}, names["KERNELS"])
	assert.Equal(t, "128", names["PEER_MAX_BATCH_SIZE"])
	v, err := d.BLASVersion()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v, "cuBLAS "), v)
	for dev := range n {
		p, err := d.Props(dev)
		require.NoError(t, err)
		t.Logf("device %d: %s %s, compiled archs %v", dev, p.Name, p.ArchName, p.CompiledArchs)
		assert.Equal(t, p.CC.Name(), p.ArchName)
	}
}
