package graph

import "github.com/ternion/ternion/core/tensor"

// MulMatID returns the mixture-of-experts product (ggml_mul_mat_id): as
// holds one matrix per expert ([k, m, n_expert]), b the inputs ([k,
// n_b, n_tokens], n_b dividing n_used), ids the experts each token uses
// (I32 [n_used, n_tokens]); the result is F32 [m, n_used, n_tokens] with
// out[:, e, t] = as[:, :, ids[e, t]] · b[:, e % n_b, t].
func (as *Tensor) MulMatID(b, ids *Tensor) *Tensor {
	c, bad := operands(OpMulMatID, as, b, ids)
	if bad != nil {
		return bad
	}
	an, bn, in := as.layout.Ne, b.layout.Ne, ids.layout.Ne
	srcs := []*Tensor{as, b, ids}
	switch {
	case as.layout.IsTransposed():
		return c.fail(OpMulMatID, srcs, "src0 %s is transposed", as.describe())
	case ids.layout.Type != tensor.I32:
		return c.fail(OpMulMatID, srcs, "ids %s must be i32", ids.describe())
	case an[3] != 1 || bn[3] != 1 || in[2] != 1 || in[3] != 1:
		return c.fail(OpMulMatID, srcs, "src0 %s and src1 %s must be 3-d and ids %s 2-d", as.describe(), b.describe(), ids.describe())
	case in[1] != bn[2]:
		return c.fail(OpMulMatID, srcs, "ids %s has %d token columns, src1 %s has %d", ids.describe(), in[1], b.describe(), bn[2])
	case an[0] != bn[0]:
		return c.fail(OpMulMatID, srcs, "src0 %s and src1 %s differ in ne[0] (the shared dimension k)", as.describe(), b.describe())
	case bn[1] == 0 || in[0]%bn[1] != 0:
		return c.fail(OpMulMatID, srcs, "src1 %s's ne[1] does not divide the %d experts used per token", b.describe(), in[0])
	case b.layout.Type.IsQuantized():
		return c.fail(OpMulMatID, srcs, "src1 %s is quantized", b.describe())
	}
	l, err := tensor.Contiguous(tensor.F32, an[1], in[0], bn[2], 1)
	if err != nil {
		return c.fail(OpMulMatID, srcs, "%v", err)
	}
	return c.node(OpMulMatID, l, as, b, ids)
}
