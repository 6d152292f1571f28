package graph

import "github.com/ternion/ternion/core/tensor"

// OutProd returns the outer-product sum of a ([m, k, ...]) and b ([n, k,
// ...]) over their shared dimension 1 (ggml_out_prod): an F32 tensor [m, n,
// b.ne2, b.ne3] with out[i0, i1] = Σ_k a[i0, k]·b[i1, k]; a's dimensions 2
// and 3 broadcast over b's by division, as in MulMat.
func (a *Tensor) OutProd(b *Tensor) *Tensor {
	c, bad := operands(OpOutProd, a, b)
	if bad != nil {
		return bad
	}
	an, bn := a.layout.Ne, b.layout.Ne
	switch {
	case an[1] != bn[1]:
		return c.fail(OpOutProd, []*Tensor{a, b}, "src0 %s and src1 %s differ in ne[1] (the shared dimension k)", a.describe(), b.describe())
	case an[2] == 0 || an[3] == 0 || bn[2]%an[2] != 0 || bn[3]%an[3] != 0:
		return c.fail(OpOutProd, []*Tensor{a, b}, "src0 %s does not broadcast over src1 %s in dimensions 2 and 3", a.describe(), b.describe())
	case a.layout.Type.IsQuantized() || b.layout.Type.IsQuantized():
		return c.fail(OpOutProd, []*Tensor{a, b}, "quantized operands (%s, %s)", a.describe(), b.describe())
	}
	l, err := tensor.Contiguous(tensor.F32, an[0], bn[0], bn[2], bn[3])
	if err != nil {
		return c.fail(OpOutProd, []*Tensor{a, b}, "%v", err)
	}
	return c.node(OpOutProd, l, a, b)
}
