package ref

import (
	"math"

	"github.com/ternion/ternion/core/graph"
)

// rope.go: ROPE as ggml's CPU computes it (ggml-cpu ops.cpp rope_yarn,
// ggml_rope_cache_init, ggml_mrope_cache_init), in float64.

// ropeRef holds a ROPE node's parameters.
type ropeRef struct {
	nDims                               int
	mode                                graph.RoPEMode
	base, scale, ext, mscale, low, high float64
	sections                            [4]int
}

func ropeRefOf(n *graph.Tensor) ropeRef {
	r := ropeRef{nDims: int(n.ParamI32(1)), mode: graph.RoPEMode(n.ParamI32(2)), base: float64(n.ParamF32(5)),
		scale: float64(n.ParamF32(6)), ext: float64(n.ParamF32(7)), mscale: float64(n.ParamF32(8))}
	for i := range r.sections {
		r.sections[i] = int(n.ParamI32(11 + i))
	}
	// ggml_rope_yarn_corr_dims: the pairs where the ramp starts and ends.
	nCtxOrig := float64(n.ParamI32(4))
	corr := func(beta float64) float64 {
		return float64(r.nDims) * math.Log(nCtxOrig/(beta*2*math.Pi)) / (2 * math.Log(r.base))
	}
	r.low = math.Max(0, math.Floor(corr(float64(n.ParamF32(9)))))
	r.high = math.Min(float64(r.nDims-1), math.Ceil(corr(float64(n.ParamF32(10)))))
	if r.ext != 0 {
		r.mscale *= 1 + 0.1*math.Log(1/r.scale)
	}
	return r
}

// angle returns the cos and sin (times mscale) of pair p of a token whose
// positions are at(k) (k = 0 for the normal and NeoX modes, the section kind
// in the others); ff is the pair's frequency factor.
func (r ropeRef) angle(p int, at func(k int) float64, ff float64) (c, s float64) {
	e, k := p, 0
	if r.mode == graph.RoPEMulti || r.mode == graph.RoPEVision {
		sector := p % (r.sections[0] + r.sections[1] + r.sections[2] + r.sections[3])
		start := 0
		for k < 3 && sector >= start+r.sections[k] {
			start += r.sections[k]
			k++
		}
		if r.mode == graph.RoPEVision { // each section's frequencies start over
			e = sector - start
		}
	}
	extrap := at(k) * math.Pow(r.base, -2*float64(e)/float64(r.nDims)) / ff
	theta := r.scale * extrap
	if r.ext != 0 {
		y := (float64(p) - r.low) / math.Max(0.001, r.high-r.low)
		mix := (1 - math.Min(1, math.Max(0, y))) * r.ext
		theta = theta*(1-mix) + extrap*mix
	}
	return math.Cos(theta) * r.mscale, math.Sin(theta) * r.mscale
}

func init() {
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 2)
		if err != nil {
			return err
		}
		a, pos := s[0], s[1]
		var ff *view
		if n.Src(2) != nil {
			f, err := src(2)
			if err != nil {
				return err
			}
			ff = &f
		}
		r := ropeRefOf(n)
		ne := dst.l.Ne
		rot := graph.RoPEPairs(r.mode, r.nDims)
		for i3 := range ne[3] {
			for i2 := range ne[2] {
				at := func(k int) float64 { return pos.get([4]int64{i2 + int64(k)*ne[2], 0, 0, 0}) }
				for p := range int(ne[0] / 2) {
					// The pair's two elements: (2p, 2p+1) in normal mode
					// and past the rotated pairs (copied), else p and p +
					// the rotated half (NeoX, multi) or n_dims (vision).
					j0, j1 := int64(2*p), int64(2*p+1)
					if p < rot && r.mode != graph.RoPENormal {
						j0, j1 = int64(p), int64(p+rot)
					}
					c, sn := 1.0, 0.0
					if p < rot {
						f := 1.0
						if ff != nil {
							f = ff.get([4]int64{int64(p), 0, 0, 0})
						}
						c, sn = r.angle(p, at, f)
					}
					for i1 := range ne[1] {
						i0, i1v := [4]int64{j0, i1, i2, i3}, [4]int64{j1, i1, i2, i3}
						x0, x1 := a.get(i0), a.get(i1v)
						if p >= rot {
							dst.set(i0, x0)
							dst.set(i1v, x1)
							continue
						}
						dst.set(i0, x0*c-x1*sn)
						dst.set(i1v, x0*sn+x1*c)
					}
				}
			}
		}
		return nil
	}, graph.OpRope)
}
