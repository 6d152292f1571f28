package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_outprod.go holds OUT_PROD's cases (test-backend-ops' test_out_prod):
// a = [m, k, bs0, bs1], b = [n, k, bs0·nr0, bs1·nr1] (stored [k, n] and
// transposed when transB), out = [m, n, ...].

func outProdCase(ta, tb tensor.Type, m, n, k int64, bs, nr [2]int64, transB bool) Case {
	return Case{Name: name("OUT_PROD", "type_a", ta, "type_b", tb, "m", m, "n", n, "k", k, "bs", bs, "nr", nr,
		"trans_b", transB), Op: graph.OpOutProd, MaxNMSE: nmseMulMat,
		FLOPs: float64(2 * m * n * k * bs[0] * nr[0] * bs[1] * nr[1]),
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := input(ctx, r, ta, [4]int64{m, k, bs[0], bs[1]})
			var b *graph.Tensor
			if transB {
				b = input(ctx, r, tb, [4]int64{k, n, bs[0] * nr[0], bs[1] * nr[1]}).Transpose()
			} else {
				b = input(ctx, r, tb, [4]int64{n, k, bs[0] * nr[0], bs[1] * nr[1]})
			}
			return a.OutProd(b)
		}}
}

func init() { register(outProdTests, outProdPerfs) }

func outProdTests() []Case {
	var out []Case
	for _, t := range []tensor.Type{tensor.F32, tensor.F16} {
		for _, c := range []struct {
			m, n, k int64
			bs, nr  [2]int64
			transB  bool
		}{
			{256, 16, 16, [2]int64{1, 1}, [2]int64{1, 1}, false},
			{256, 16, 16, [2]int64{1, 1}, [2]int64{1, 1}, true},
			{16, 33, 7, [2]int64{3, 2}, [2]int64{1, 1}, false},
			{16, 33, 7, [2]int64{3, 2}, [2]int64{2, 2}, false},
			{16, 16, 1, [2]int64{1, 1}, [2]int64{1, 1}, true},
		} {
			out = append(out, outProdCase(t, tensor.F32, c.m, c.n, c.k, c.bs, c.nr, c.transB))
		}
	}
	return out
}

func outProdPerfs() []Case {
	return []Case{outProdCase(tensor.F32, tensor.F32, 4096, 4096, 512, [2]int64{1, 1}, [2]int64{1, 1}, false)}
}
