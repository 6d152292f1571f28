package ref

import (
	"math"

	"github.com/ternion/ternion/core/graph"
)

// softmax.go is the reference of SOFT_MAX and DIAG_MASK_INF, as ggml's CPU
// computes them (ggml_compute_forward_soft_max_f32, diag_mask_f32).

func init() {
	register(softmaxRef, graph.OpSoftMax)
	register(softmaxDiagMaskInfRef, graph.OpDiagMaskInf)
}

// softmaxSlope is head h's ALiBi slope for n_head heads (1 when maxBias
// is 0): m0^(h+1) for the first n_head_log2 heads, m1^(2(h-n_head_log2)+1)
// after, with n_head_log2 the largest power of two ≤ n_head.
func softmaxSlope(h, nHead int64, maxBias float64) float64 {
	if maxBias <= 0 {
		return 1
	}
	log2 := math.Exp2(math.Floor(math.Log2(float64(nHead))))
	if float64(h) < log2 {
		return math.Pow(math.Exp2(-maxBias/log2), float64(h+1))
	}
	return math.Pow(math.Exp2(-maxBias/2/log2), 2*(float64(h)-log2)+1)
}

// softmaxRef: each row's softmax of x*scale + slope*mask, the head's sink
// (when given) an extra logit in the max and the sum.
func softmaxRef(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	var mask, sinks *view
	if n.Src(1) != nil {
		m, err := src(1)
		if err != nil {
			return err
		}
		mask = &m
	}
	if n.Src(2) != nil {
		s, err := src(2)
		if err != nil {
			return err
		}
		sinks = &s
	}
	scale, maxBias := float64(n.ParamF32(0)), float64(n.ParamF32(1))
	ne := a.l.Ne
	w := make([]float64, ne[0])
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			slope := softmaxSlope(i2, ne[2], maxBias)
			for i1 := range ne[1] {
				mx := math.Inf(-1)
				for i0 := range ne[0] {
					w[i0] = a.get([4]int64{i0, i1, i2, i3}) * scale
					if mask != nil {
						mn := mask.l.Ne
						w[i0] += slope * mask.get([4]int64{i0, i1, i2 % mn[2], i3 % mn[3]})
					}
					mx = math.Max(mx, w[i0])
				}
				sink := math.Inf(-1)
				if sinks != nil {
					sink = sinks.get([4]int64{i2, 0, 0, 0})
					mx = math.Max(mx, sink)
				}
				sum := math.Exp(sink - mx)
				for i0 := range ne[0] {
					w[i0] = math.Exp(w[i0] - mx)
					sum += w[i0]
				}
				for i0 := range ne[0] {
					dst.set([4]int64{i0, i1, i2, i3}, w[i0]/sum)
				}
			}
		}
	}
	return nil
}

// softmaxDiagMaskInfRef: a with every element (i0, i1, ...) where i0 > n_past + i1
// set to -inf.
func softmaxDiagMaskInfRef(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	nPast := int64(n.ParamI32(0))
	ne := a.l.Ne
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					i := [4]int64{i0, i1, i2, i3}
					v := a.get(i)
					if i0 > nPast+i1 {
						v = math.Inf(-1)
					}
					dst.set(i, v)
				}
			}
		}
	}
	return nil
}
