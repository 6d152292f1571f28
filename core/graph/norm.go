package graph

import (
	"math"

	"github.com/ternion/ternion/core/tensor"
)

// norm.go: ggml's normalisations along rows (NORM, RMS_NORM, L2_NORM) and
// over groups of channels (GROUP_NORM). Each result has a's shape and type
// (contiguous), eps in op_params[0] (GROUP_NORM: n_groups in [0], eps in [1]).

// normInput checks the operand and eps of a norm: a float tensor, and
// eps ≥ 0 and finite (ggml-cuda asserts eps ≥ 0). It returns the context
// and, on failure, the failed tensor.
func normInput(op Op, a *Tensor, eps float32) (*Context, *Tensor) {
	c, bad := operands(op, a)
	if bad != nil {
		return c, bad
	}
	switch t := a.layout.Type; {
	case t != tensor.F32 && t != tensor.F16 && t != tensor.BF16:
		return c, c.fail(op, []*Tensor{a}, "src0 %s is not a float tensor (f32, f16 or bf16)", a.describe())
	case math.IsNaN(float64(eps)) || math.IsInf(float64(eps), 0) || eps < 0:
		return c, c.fail(op, []*Tensor{a}, "eps = %g must be finite and ≥ 0", eps)
	}
	return c, nil
}

// normRow makes a NORM, RMS_NORM or L2_NORM node of a with eps.
func (a *Tensor) normRow(op Op, eps float32) *Tensor {
	c, bad := normInput(op, a, eps)
	if bad != nil {
		return bad
	}
	t := c.node(op, dup(a), a)
	t.setF32(0, eps)
	return t
}

// Norm returns each row of a (along dimension 0) less its mean, divided by
// sqrt(variance + eps), the population variance (ggml_norm).
func (a *Tensor) Norm(eps float32) *Tensor { return a.normRow(OpNorm, eps) }

// RMSNorm returns each row of a divided by sqrt(mean(x²) + eps) (ggml_rms_norm).
func (a *Tensor) RMSNorm(eps float32) *Tensor { return a.normRow(OpRMSNorm, eps) }

// L2Norm returns each row of a divided by max(‖row‖₂, eps): eps is a floor
// on the norm (ggml_l2_norm).
func (a *Tensor) L2Norm(eps float32) *Tensor { return a.normRow(OpL2Norm, eps) }

// GroupNorm splits the channels (dimension 2) of each sample (dimension 3)
// of a into nGroups groups of ceil(ne2/nGroups) consecutive channels (the
// last one may be smaller or empty) and normalises each group over all its
// elements: (x - mean)/sqrt(variance + eps) (ggml_group_norm).
func (a *Tensor) GroupNorm(nGroups int, eps float32) *Tensor {
	c, bad := normInput(OpGroupNorm, a, eps)
	if bad != nil {
		return bad
	}
	if nGroups < 1 || nGroups > math.MaxInt32 {
		return c.fail(OpGroupNorm, []*Tensor{a}, "n_groups = %d must be from 1 to 2^31-1", nGroups)
	}
	t := c.node(OpGroupNorm, dup(a), a)
	t.setI32(0, int32(nGroups))
	t.setF32(1, eps)
	return t
}
