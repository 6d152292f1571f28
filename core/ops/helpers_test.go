package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/vendorapi"
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
