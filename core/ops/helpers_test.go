package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// ccProps are the props of a device of compute capability cc running code
// compiled for the archs compiled (the inputs of the tensor-core rules).
func ccProps(cc arch.CC, compiled ...arch.CC) vendorapi.Props {
	return vendorapi.Props{CC: cc, CompiledArchs: compiled}
}

// checkSupports asserts what Supports says of node n on an H200-like device
// (132 SMs, warps of 32): nil when why is "", else an error matching
// ErrNotSupported that names the op and contains why.
func checkSupports(t *testing.T, n *graph.Tensor, why string) {
	t.Helper()
	err := Supports(n, vendorapi.Props{SMs: 132, WarpSize: 32})
	if why == "" {
		assert.NoError(t, err)
		return
	}
	require.ErrorIs(t, err, ErrNotSupported)
	assert.Contains(t, err.Error(), n.Op().String())
	assert.Contains(t, err.Error(), why)
}

// TestRaiseSharedLimit checks that a kernel's dynamic shared memory limit
// is raised whenever a launch needs more than the last limit set, and only
// then (mmvq8w asks for more as k grows: a limit set once for the first
// size would refuse a larger one).
func TestRaiseSharedLimit(t *testing.T) {
	hd, err := host.New(host.Options{})
	require.NoError(t, err)
	drv := faulty.New(hd)
	f, err := drv.Kernel(0, "mmvq8w_q4_0")
	require.NoError(t, err)
	for _, c := range []struct{ bytes, calls int }{{60 << 10, 1}, {50 << 10, 1}, {60 << 10, 1}, {100 << 10, 2}, {90 << 10, 2}} {
		require.NoError(t, raiseSharedLimit(drv, f, c.bytes))
		require.Equal(t, c.calls, drv.Calls("SetMaxDynamicSharedMemory"), "after asking for %d bytes", c.bytes)
	}
}
