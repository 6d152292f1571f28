package graph

import "github.com/ternion/ternion/core/tensor"

// Softmax is the softmax of each row of a (ggml_soft_max): scale 1, no mask,
// no ALiBi, no sinks.
func (a *Tensor) Softmax() *Tensor { return a.softmax(nil, nil, 1, 0, false) }

// SoftmaxExt is ggml_soft_max_ext with ggml_soft_max_add_sinks: the softmax
// of each row of a (contiguous) of w = a*scale + slope*mask, where mask
// (nil, or F16/F32, contiguous, [a.ne0, ≥ a.ne1, dividing a.ne2, dividing
// a.ne3]) row i1 of matrix (i2 % mask.ne2, i3 % mask.ne3) serves row (i1,
// i2, i3), slope is head i2's ALiBi slope when maxBias > 0 (1 otherwise; a
// mask is then required), and sinks (nil, or an F32 vector of a.ne2 values)
// adds one extra logit per head to each row's max and sum.
func (a *Tensor) SoftmaxExt(mask, sinks *Tensor, scale, maxBias float32) *Tensor {
	return a.softmax(mask, sinks, scale, maxBias, false)
}

// SoftmaxExtInplace is SoftmaxExt written over a (ggml_soft_max_ext_inplace).
func (a *Tensor) SoftmaxExtInplace(mask, sinks *Tensor, scale, maxBias float32) *Tensor {
	return a.softmax(mask, sinks, scale, maxBias, true)
}

// softmax makes the SOFT_MAX node (ggml_soft_max_impl): op_params scale,
// max_bias; src0 a, src1 the mask, src2 the sinks.
func (a *Tensor) softmax(mask, sinks *Tensor, scale, maxBias float32, inplace bool) *Tensor {
	srcs := []*Tensor{a, mask, sinks}
	check := []*Tensor{a}
	for _, s := range []*Tensor{mask, sinks} {
		if s != nil {
			check = append(check, s)
		}
	}
	c, bad := operands(OpSoftMax, check...)
	if bad != nil {
		return bad
	}
	fail := func(format string, args ...any) *Tensor { return c.fail(OpSoftMax, check, format, args...) }
	ne := a.layout.Ne
	if !a.layout.IsContiguous() {
		return fail("src0 %s is not contiguous", a.describe())
	}
	if m := mask; m != nil {
		mn := m.layout.Ne
		switch {
		case m.layout.Type != tensor.F16 && m.layout.Type != tensor.F32:
			return fail("mask (src1) %s must be f16 or f32", m.describe())
		case !m.layout.IsContiguous():
			return fail("mask (src1) %s is not contiguous", m.describe())
		case mn[0] != ne[0]:
			return fail("mask (src1) %s and src0 %s differ in ne[0]", m.describe(), a.describe())
		case mn[1] < ne[1]:
			return fail("mask (src1) %s has fewer rows (ne[1]) than src0 %s", m.describe(), a.describe())
		case mn[2] == 0 || mn[3] == 0 || ne[2]%mn[2] != 0 || ne[3]%mn[3] != 0:
			return fail("mask (src1) %s does not broadcast over src0 %s (its ne[2] and ne[3] must divide src0's)",
				m.describe(), a.describe())
		}
	}
	if maxBias > 0 && mask == nil {
		return fail("max_bias %g (ALiBi) needs a mask", maxBias)
	}
	if s := sinks; s != nil {
		switch {
		case s.layout.Type != tensor.F32:
			return fail("sinks (src2) %s must be f32", s.describe())
		case s.layout.Ne[0] != ne[2] || s.layout.Ne[1] != 1 || s.layout.Ne[2] != 1 || s.layout.Ne[3] != 1:
			return fail("sinks (src2) %s must be a vector of one value per head (src0 ne[2] = %d)", s.describe(), ne[2])
		case !s.layout.IsContiguous():
			return fail("sinks (src2) %s is not contiguous", s.describe())
		}
	}
	var t *Tensor
	if inplace {
		t = c.view(OpSoftMax, a, a.layout, 0).withSrc(srcs...)
	} else {
		t = c.node(OpSoftMax, dup(a), srcs...)
	}
	t.setF32(0, scale)
	t.setF32(1, maxBias)
	return t
}

// DiagMaskInf sets the elements above the diagonal shifted by nPast of each
// matrix of a to -inf: element (i0, i1, ...) where i0 > nPast + i1
// (ggml_diag_mask_inf).
func (a *Tensor) DiagMaskInf(nPast int) *Tensor { return a.softmaxDiagMaskInf(nPast, false) }

// DiagMaskInfInplace is DiagMaskInf written over a
// (ggml_diag_mask_inf_inplace).
func (a *Tensor) DiagMaskInfInplace(nPast int) *Tensor { return a.softmaxDiagMaskInf(nPast, true) }

// softmaxDiagMaskInf makes the DIAG_MASK_INF node: op_params n_past.
func (a *Tensor) softmaxDiagMaskInf(nPast int, inplace bool) *Tensor {
	c, bad := operands(OpDiagMaskInf, a)
	if bad != nil {
		return bad
	}
	if nPast < 0 || nPast > 1<<31-1 {
		return c.fail(OpDiagMaskInf, []*Tensor{a}, "n_past %d must be between 0 and 2^31-1", nPast)
	}
	var t *Tensor
	if inplace {
		t = c.view(OpDiagMaskInf, a, a.layout, 0).withSrc(a)
	} else {
		t = c.node(OpDiagMaskInf, dup(a), a)
	}
	t.setI32(0, int32(nPast))
	return t
}
