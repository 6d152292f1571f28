package graph

import "github.com/ternion/ternion/core/tensor"

// AddID returns a + b's rows picked by ids (ggml_add_id, the per-expert
// bias of a mixture-of-experts layer): a is F32 [ne0, n_used, n_tokens], b
// F32 [ne0, n_rows] and ids I32 [n_used, n_tokens]; out[:, e, t] = a[:, e,
// t] + b[:, ids[e, t]].
func (a *Tensor) AddID(b, ids *Tensor) *Tensor {
	c, bad := operands(OpAddID, a, b, ids)
	if bad != nil {
		return bad
	}
	an, bn, in := a.layout.Ne, b.layout.Ne, ids.layout.Ne
	srcs := []*Tensor{a, b, ids}
	switch {
	case a.layout.Type != tensor.F32 || b.layout.Type != tensor.F32:
		return c.fail(OpAddID, srcs, "src0 %s and src1 %s must be f32", a.describe(), b.describe())
	case ids.layout.Type != tensor.I32:
		return c.fail(OpAddID, srcs, "ids %s must be i32", ids.describe())
	case an[3] != 1 || bn[2] != 1 || bn[3] != 1 || in[2] != 1 || in[3] != 1:
		return c.fail(OpAddID, srcs, "src0 %s must be 3-d, src1 %s and ids %s 2-d", a.describe(), b.describe(), ids.describe())
	case an[0] != bn[0]:
		return c.fail(OpAddID, srcs, "src0 %s and src1 %s differ in ne[0]", a.describe(), b.describe())
	case in[0] != an[1] || in[1] != an[2]:
		return c.fail(OpAddID, srcs, "ids %s must be [ne1, ne2] of src0 %s", ids.describe(), a.describe())
	}
	return c.node(OpAddID, dup(a), a, b, ids)
}
