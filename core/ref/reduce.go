package ref

import (
	"math"
	"sort"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// reduce.go is the reference of GET_ROWS, ARGMAX, COUNT_EQUAL, SUM,
// SUM_ROWS, MEAN and ARGSORT, as ggml's CPU computes them.

func init() {
	register(reduceGetRows, graph.OpGetRows)
	register(reduceArgmax, graph.OpArgmax)
	register(reduceCountEqual, graph.OpCountEqual)
	register(reduceSum, graph.OpSum)
	register(reduceRows, graph.OpSumRows, graph.OpMean)
	register(reduceArgsort, graph.OpArgsort)
}

// reduceGetRows: dst[i0, i, j, k] = a[i0, rows[i, j, k], j, k]; an index out
// of range gives zeros (ternion's choice: ggml asserts).
func reduceGetRows(_ *graph.Tensor, dst view, src func(int) (view, error)) error {
	s, err := srcViews(src, 2)
	if err != nil {
		return err
	}
	a, rows := s[0], s[1]
	tensor.Each(dst.l.Ne, func(i [4]int64) {
		r := int64(rows.get([4]int64{i[1], i[2], i[3], 0}))
		if r < 0 || r >= a.l.Ne[1] {
			dst.set(i, 0)
			return
		}
		dst.set(i, a.get([4]int64{i[0], r, i[2], i[3]}))
	})
	return nil
}

// reduceArgmax: the first index of each row's maximum (ggml starts from
// -inf at index 0, so a row of -inf or NaN gives 0).
func reduceArgmax(_ *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	for r := range a.l.Ne[1] {
		best, at := math.Inf(-1), int64(0)
		for i := range a.l.Ne[0] {
			if v := a.get([4]int64{i, r, 0, 0}); v > best {
				best, at = v, i
			}
		}
		dst.set([4]int64{r, 0, 0, 0}, float64(at))
	}
	return nil
}

// reduceCountEqual: how many elements of a and b are equal.
func reduceCountEqual(_ *graph.Tensor, dst view, src func(int) (view, error)) error {
	s, err := srcViews(src, 2)
	if err != nil {
		return err
	}
	var n int64
	tensor.Each(s[0].l.Ne, func(i [4]int64) {
		if s[0].get(i) == s[1].get(i) {
			n++
		}
	})
	dst.set([4]int64{}, float64(n))
	return nil
}

// reduceSum: the sum of every element.
func reduceSum(_ *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	var sum float64
	tensor.Each(a.l.Ne, func(i [4]int64) { sum += a.get(i) })
	dst.set([4]int64{}, sum)
	return nil
}

// reduceRows: each row's sum (SUM_ROWS) or mean (MEAN).
func reduceRows(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	ne := a.l.Ne
	tensor.Each([4]int64{1, ne[1], ne[2], ne[3]}, func(i [4]int64) {
		var sum float64
		for i0 := range ne[0] {
			sum += a.get([4]int64{i0, i[1], i[2], i[3]})
		}
		if n.Op() == graph.OpMean {
			sum /= float64(ne[0])
		}
		dst.set(i, sum)
	})
	return nil
}

// reduceArgsort: each row's column indices in key order (ascending, or
// descending for order 1), equal keys in column order.
func reduceArgsort(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	desc := n.ParamI32(0) == int32(graph.SortDesc)
	ne := a.l.Ne
	keys := make([]float64, ne[0])
	idx := make([]int64, ne[0])
	tensor.Each([4]int64{1, ne[1], ne[2], ne[3]}, func(i [4]int64) {
		for i0 := range ne[0] {
			keys[i0], idx[i0] = a.get([4]int64{i0, i[1], i[2], i[3]}), i0
		}
		sort.SliceStable(idx, func(x, y int) bool {
			if desc {
				return keys[idx[x]] > keys[idx[y]]
			}
			return keys[idx[x]] < keys[idx[y]]
		})
		for i0, j := range idx {
			dst.set([4]int64{int64(i0), i[1], i[2], i[3]}, float64(j))
		}
	})
	return nil
}
