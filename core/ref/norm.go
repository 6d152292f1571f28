package ref

import (
	"math"

	"github.com/ternion/ternion/core/graph"
)

// norm.go: NORM, RMS_NORM and L2_NORM along rows and GROUP_NORM over groups
// of channels, in float64 (ggml's CPU ops.cpp semantics: population
// variance; L2_NORM divides by max(‖x‖, eps)).

func init() {
	register(normRowsEval, graph.OpNorm, graph.OpRMSNorm, graph.OpL2Norm)
	register(normGroupEval, graph.OpGroupNorm)
}

// normRowsEval normalises each row of src0 into dst.
func normRowsEval(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	eps := float64(n.ParamF32(0))
	ne := dst.l.Ne
	row := make([]float64, ne[0])
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				var sum, sq float64
				for i0 := range ne[0] {
					row[i0] = a.get([4]int64{i0, i1, i2, i3})
					sum += row[i0]
					sq += row[i0] * row[i0]
				}
				mean, scale := 0.0, 0.0
				switch n.Op() {
				case graph.OpNorm:
					mean = sum / float64(ne[0])
					var dev float64
					for _, x := range row {
						dev += (x - mean) * (x - mean)
					}
					scale = 1 / math.Sqrt(dev/float64(ne[0])+eps)
				case graph.OpRMSNorm:
					scale = 1 / math.Sqrt(sq/float64(ne[0])+eps)
				default:
					scale = 1 / math.Max(math.Sqrt(sq), eps)
				}
				for i0, x := range row {
					dst.set([4]int64{int64(i0), i1, i2, i3}, (x-mean)*scale)
				}
			}
		}
	}
	return nil
}

// normGroupEval normalises each group of ceil(ne2/n_groups) channels of each
// sample over all its elements.
func normGroupEval(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	groups, eps := int64(n.ParamI32(0)), float64(n.ParamF32(1))
	ne := dst.l.Ne
	per := (ne[2] + groups - 1) / groups
	for i3 := range ne[3] {
		for c0 := int64(0); c0 < ne[2]; c0 += per {
			c1 := min(c0+per, ne[2])
			each := func(f func(i [4]int64)) {
				for i2 := c0; i2 < c1; i2++ {
					for i1 := range ne[1] {
						for i0 := range ne[0] {
							f([4]int64{i0, i1, i2, i3})
						}
					}
				}
			}
			count := float64((c1 - c0) * ne[0] * ne[1])
			var sum float64
			each(func(i [4]int64) { sum += a.get(i) })
			mean := sum / count
			var dev float64
			each(func(i [4]int64) { dev += (a.get(i) - mean) * (a.get(i) - mean) })
			scale := 1 / math.Sqrt(dev/count+eps)
			each(func(i [4]int64) { dst.set(i, (a.get(i)-mean)*scale) })
		}
	}
	return nil
}
