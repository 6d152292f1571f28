package ops

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// outprod.go plans OUT_PROD through the vendor BLAS, as the seed does: one
// f32 gemm per output matrix, dst = src0 · src1ᵀ in column-major terms.

func init() { register(graph.OpOutProd, impl{supports: supportsOutProd, run: runOutProd}) }

func supportsOutProd(n *graph.Tensor, _ vendorapi.Props) string {
	for i := range 2 {
		if _, ok := floatType(n.Src(i).Type()); !ok {
			return fmt.Sprintf("src%d of type %s (OUT_PROD takes f32, f16 or bf16)", i, n.Src(i).Type())
		}
	}
	an, bn := n.Src(0).Ne(), n.Src(1).Ne()
	if an[0] > 1<<31-1 || an[1] > 1<<31-1 || bn[0] > 1<<31-1 {
		return "a dimension exceeds 2^31"
	}
	return ""
}

// runOutProd converts the operands to f32 with packed rows where they are
// not (a transposed src1 included), then runs a gemm per matrix of dst:
// M = ne00, N = ne10, K = ne01, C = A·Bᵀ with A = src0 (lda its row stride)
// and B = src1 (ldb its row stride).
func runOutProd(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	dst := ds[0]
	a, abuf, err := operand(d, ds[1], n.Src(0).Type(), tensor.F32)
	if err != nil {
		return err
	}
	defer abuf.Free()
	b, bbuf, err := operand(d, ds[2], n.Src(1).Type(), tensor.F32)
	if err != nil {
		return err
	}
	defer bbuf.Free()
	if dst.Ne[0] == 0 || dst.Ne[1] == 0 {
		return nil
	}
	h, err := d.BLAS()
	if err != nil {
		return err
	}
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	g := vendorapi.Gemm{TransB: true, M: int(a.Ne[0]), N: int(b.Ne[0]), K: int(a.Ne[1]), Alpha: 1,
		AType: vendorapi.F32, LDA: int(max(a.Nb[1]/4, a.Ne[0])), BType: vendorapi.F32, LDB: int(max(b.Nb[1]/4, b.Ne[0])),
		CType: vendorapi.F32, LDC: int(dst.Nb[1] / 4), Compute: vendorapi.Compute32F}
	for i3 := range b.Ne[3] {
		for i2 := range b.Ne[2] {
			g.A = a.Data.Add(uint64((i2/r2)*a.Nb[2] + (i3/r3)*a.Nb[3]))
			g.B = b.Data.Add(uint64(i2*b.Nb[2] + i3*b.Nb[3]))
			g.C = dst.Data.Add(uint64(i2*dst.Nb[2] + i3*dst.Nb[3]))
			if err := d.Driver().Gemm(h, g); err != nil {
				return err
			}
		}
	}
	return nil
}
