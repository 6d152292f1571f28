package ref

import (
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// shape.go: REPEAT, CONCAT, PAD, UPSCALE, ARANGE and TIMESTEP_EMBEDDING, as
// ggml's CPU backend computes them (values in float64; UPSCALE's source
// positions in float32, as ggml computes the indices).

func init() {
	register(shapeRepeat, graph.OpRepeat)
	register(shapeConcat, graph.OpConcat)
	register(shapePad, graph.OpPad)
	register(shapeUpscale, graph.OpUpscale)
	register(shapeArange, graph.OpArange)
	register(shapeTimestep, graph.OpTimestepEmbedding)
}

// shapeRepeat: dst[i] = a[i mod a.ne].
func shapeRepeat(_ *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	n := a.l.Ne
	tensor.Each(dst.l.Ne, func(i [4]int64) {
		dst.set(i, a.get([4]int64{i[0] % n[0], i[1] % n[1], i[2] % n[2], i[3] % n[3]}))
	})
	return nil
}

// shapeConcat: dst is a followed by b along op_params[0].
func shapeConcat(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	s, err := srcViews(src, 2)
	if err != nil {
		return err
	}
	dim := n.ParamI32(0)
	tensor.Each(dst.l.Ne, func(i [4]int64) {
		if i[dim] < s[0].l.Ne[dim] {
			dst.set(i, s[0].get(i))
			return
		}
		j := i
		j[dim] -= s[0].l.Ne[dim]
		dst.set(i, s[1].get(j))
	})
	return nil
}

// shapePad: dst[i] = a[i - lp] inside a, 0 outside (lp_d = op_params[2d]).
func shapePad(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	tensor.Each(dst.l.Ne, func(i [4]int64) {
		v := 0.0
		j, inside := i, true
		for d := range 4 {
			j[d] -= int64(n.ParamI32(2 * d))
			inside = inside && j[d] >= 0 && j[d] < a.l.Ne[d]
		}
		if inside {
			v = a.get(j)
		}
		dst.set(i, v)
	})
	return nil
}

// shapeUpscale resamples a to dst's shape: nearest (i / sf truncated), or
// bilinear in dims 0 and 1 with a half-pixel offset (none with align
// corners, where sf = (ne-1)/(ne_src-1)), nearest in dims 2 and 3.
func shapeUpscale(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	mode := graph.ScaleMode(n.ParamI32(0))
	an, dn := a.l.Ne, dst.l.Ne
	var sf [4]float32
	for d := range 4 {
		sf[d] = float32(dn[d]) / float32(an[d])
	}
	off := float32(0.5)
	if mode&graph.ScaleAlignCorners != 0 {
		off = 0
		for d := range 2 {
			if dn[d] > 1 && an[d] > 1 {
				sf[d] = float32(dn[d]-1) / float32(an[d]-1)
			}
		}
	}
	nearest := func(i int64, d int) int64 { return min(int64(float32(i)/sf[d]), an[d]-1) }
	// lerp returns the two source neighbours of dst index i along d and the
	// weight of the second.
	lerp := func(i int64, d int) (int64, int64, float64) {
		p := (float32(i)+off)/sf[d] - off
		k := int64(math.Floor(float64(p)))
		k0, k1 := max(0, min(k, an[d]-1)), max(0, min(k+1, an[d]-1))
		return k0, k1, max(0, min(float64(p)-float64(k0), 1))
	}
	bilinear := mode&0xff == graph.ScaleBilinear
	tensor.Each(dn, func(i [4]int64) {
		j2, j3 := nearest(i[2], 2), nearest(i[3], 3)
		if !bilinear {
			dst.set(i, a.get([4]int64{nearest(i[0], 0), nearest(i[1], 1), j2, j3}))
			return
		}
		x0, x1, dx := lerp(i[0], 0)
		y0, y1, dy := lerp(i[1], 1)
		v := a.get([4]int64{x0, y0, j2, j3})*(1-dx)*(1-dy) + a.get([4]int64{x1, y0, j2, j3})*dx*(1-dy) +
			a.get([4]int64{x0, y1, j2, j3})*(1-dx)*dy + a.get([4]int64{x1, y1, j2, j3})*dx*dy
		dst.set(i, v)
	})
	return nil
}

// shapeArange: dst[i] = start + i·step.
func shapeArange(n *graph.Tensor, dst view, _ func(int) (view, error)) error {
	start, step := float64(n.ParamF32(0)), float64(n.ParamF32(2))
	tensor.Each(dst.l.Ne, func(i [4]int64) { dst.set(i, start+float64(i[0])*step) })
	return nil
}

// shapeTimestep: row r holds cos(t·f_j) at j and sin(t·f_j) at j+half, t =
// a[r], f_j = max_period^(-j/half), half = dim/2; 0 at 2·half for odd dim.
func shapeTimestep(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	a, err := src(0)
	if err != nil {
		return err
	}
	dim, period := int64(n.ParamI32(0)), float64(n.ParamI32(1))
	half := dim / 2
	for r := range a.l.Ne[0] {
		t := a.get([4]int64{r, 0, 0, 0})
		for j := range half {
			f := math.Pow(period, -float64(j)/float64(half))
			dst.set([4]int64{j, r, 0, 0}, math.Cos(t*f))
			dst.set([4]int64{j + half, r, 0, 0}, math.Sin(t*f))
		}
		if dim%2 != 0 {
			dst.set([4]int64{2 * half, r, 0, 0}, 0)
		}
	}
	return nil
}
