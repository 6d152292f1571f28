package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

// TestNorms: the norm constructors keep a's shape (contiguous), store eps
// (and GROUP_NORM's group count) in ggml's op_params slots, and reject
// non-float inputs, eps that is negative or not finite and group counts
// below 1 at build time, naming the op.
func TestNorms(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		name  string
		ty    tensor.Type
		build func(a *Tensor) *Tensor
		op    Op
		err   string // "" when the node builds
	}{
		{"norm", tensor.F32, func(a *Tensor) *Tensor { return a.Norm(1e-5) }, OpNorm, ""},
		{"rms_norm", tensor.F32, func(a *Tensor) *Tensor { return a.RMSNorm(1e-6) }, OpRMSNorm, ""},
		{"l2_norm of f16", tensor.F16, func(a *Tensor) *Tensor { return a.L2Norm(0) }, OpL2Norm, ""},
		{"group_norm", tensor.F32, func(a *Tensor) *Tensor { return a.GroupNorm(3, 1e-6) }, OpGroupNorm, ""},
		{"negative eps", tensor.F32, func(a *Tensor) *Tensor { return a.RMSNorm(-1e-6) }, OpRMSNorm, "eps"},
		{"NaN eps", tensor.F32, func(a *Tensor) *Tensor { return a.Norm(nan) }, OpNorm, "eps"},
		{"infinite eps", tensor.F32, func(a *Tensor) *Tensor { return a.GroupNorm(2, inf) }, OpGroupNorm, "eps"},
		{"i32 input", tensor.I32, func(a *Tensor) *Tensor { return a.RMSNorm(1e-6) }, OpRMSNorm, "not a float tensor"},
		{"zero groups", tensor.F32, func(a *Tensor) *Tensor { return a.GroupNorm(0, 1e-6) }, OpGroupNorm, "n_groups"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := NewContext()
			a := ctx.Empty(c.ty, 8, 3, 5, 2).Permute(1, 0, 2, 3)
			n := c.build(a)
			if c.err != "" {
				require.ErrorIs(t, ctx.Err(), ErrInvalidOp)
				assert.Contains(t, ctx.Err().Error(), c.op.String()+": ")
				assert.Contains(t, ctx.Err().Error(), c.err)
				assert.True(t, n.Failed())
				return
			}
			require.NoError(t, ctx.Err())
			assert.Equal(t, c.op, n.Op())
			assert.Same(t, a, n.Src(0))
			assert.Equal(t, a.Ne(), n.Ne())
			assert.True(t, n.Layout().IsContiguous())
			assert.Equal(t, c.ty, n.Type())
			if c.op == OpGroupNorm {
				assert.Equal(t, int32(3), n.ParamI32(0))
				assert.Equal(t, float32(1e-6), n.ParamF32(1))
			} else {
				assert.Equal(t, map[Op]float32{OpNorm: 1e-5, OpRMSNorm: 1e-6, OpL2Norm: 0}[c.op], n.ParamF32(0))
			}
		})
	}
}
