package ref

import (
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// matmul.go holds the references of the matrix products (MUL_MAT,
// OUT_PROD, MUL_MAT_ID) and of ADD_ID, which picks rows by ids as
// MUL_MAT_ID picks experts.

// pick returns ids[i1, i2] and whether it lies in [0, n); the kernels write
// NaN where it does not, and so does the reference.
func pick(ids view, i1, i2, n int64) (int64, bool) {
	id := int64(ids.get([4]int64{i1, i2, 0, 0}))
	return id, id >= 0 && id < n
}

func init() {
	// MUL_MAT: out[m, n, i12, i13] = Σ_k a[k, m, i12/r2, i13/r3]·b[k, n, i12, i13].
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 2)
		if err != nil {
			return err
		}
		a, b := s[0], s[1]
		r2, r3 := b.l.Ne[2]/a.l.Ne[2], b.l.Ne[3]/a.l.Ne[3]
		// Each matrix's rows and columns read once (the sums as written
		// above, in the same order).
		k := a.l.Ne[0]
		row := func(v view, i1, i2, i3 int64, out []float64) {
			for j := range out {
				out[j] = v.get([4]int64{int64(j), i1, i2, i3})
			}
		}
		cols, arow := make([]float64, dst.l.Ne[1]*k), make([]float64, k)
		for i3 := range dst.l.Ne[3] {
			for i2 := range dst.l.Ne[2] {
				for n := range dst.l.Ne[1] {
					row(b, n, i2, i3, cols[n*k:(n+1)*k])
				}
				for m := range dst.l.Ne[0] {
					row(a, m, i2/r2, i3/r3, arow)
					for n := range dst.l.Ne[1] {
						var sum float64
						for j, x := range cols[n*k : (n+1)*k] {
							sum += arow[j] * x
						}
						dst.set([4]int64{m, n, i2, i3}, sum)
					}
				}
			}
		}
		return nil
	}, graph.OpMulMat)
	// OUT_PROD: out[i0, i1, i2, i3] = Σ_k a[i0, k, i2/r2, i3/r3]·b[i1, k, i2, i3].
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 2)
		if err != nil {
			return err
		}
		a, b := s[0], s[1]
		r2, r3 := b.l.Ne[2]/a.l.Ne[2], b.l.Ne[3]/a.l.Ne[3]
		tensor.Each(dst.l.Ne, func(i [4]int64) {
			var sum float64
			for k := range a.l.Ne[1] {
				sum += a.get([4]int64{i[0], k, i[2] / r2, i[3] / r3}) * b.get([4]int64{i[1], k, i[2], i[3]})
			}
			dst.set(i, sum)
		})
		return nil
	}, graph.OpOutProd)
	// MUL_MAT_ID: out[:, e, t] = as[:, :, ids[e, t]] · b[:, e % n_b, t].
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 3)
		if err != nil {
			return err
		}
		as, b, ids := s[0], s[1], s[2]
		tensor.Each(dst.l.Ne, func(i [4]int64) { // i = (row, e, t)
			expert, ok := pick(ids, i[1], i[2], as.l.Ne[2])
			if !ok {
				dst.set(i, math.NaN())
				return
			}
			var sum float64
			for k := range as.l.Ne[0] {
				sum += as.get([4]int64{k, i[0], expert, 0}) * b.get([4]int64{k, i[1] % b.l.Ne[1], i[2], 0})
			}
			dst.set(i, sum)
		})
		return nil
	}, graph.OpMulMatID)
	// ADD_ID: out[i0, i1, i2] = a[i0, i1, i2] + b[i0, ids[i1, i2]].
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 3)
		if err != nil {
			return err
		}
		a, b, ids := s[0], s[1], s[2]
		tensor.Each(dst.l.Ne, func(i [4]int64) {
			row, ok := pick(ids, i[1], i[2], b.l.Ne[1])
			if !ok {
				dst.set(i, math.NaN())
				return
			}
			dst.set(i, a.get(i)+b.get([4]int64{i[0], row, 0, 0}))
		})
		return nil
	}, graph.OpAddID)
}
