package optest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// TestRoPENames checks ROPE case names read as test-backend-ops' test_rope
// names them, so perf figures line up with ggml's.
func TestRoPENames(t *testing.T) {
	for _, c := range []struct {
		c    Case
		want string
	}{
		{ropeCase(tensor.F32, [4]int64{128, 32, 2, 1}, 128, graph.RoPENormal, 512, 1, 0, 1, false, 0, false),
			"ROPE(type=f32,ne_a=[128,32,2,1],n_dims=128,mode=0,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=0,v=0,inplace=0)"},
		{ropeCase(tensor.F16, [4]int64{80, 16, 2, 1}, 80, graph.RoPEVision, 512, 1.4245, 0.7465, 1.4245, true, 1, true),
			"ROPE(type=f16,ne_a=[80,16,2,1],n_dims=80,mode=24,n_ctx=512,fs=1.424500,ef=0.746500,af=1.424500,ff=1,v=1,inplace=1)"},
	} {
		assert.Equal(t, c.want, c.c.Name)
	}
}
