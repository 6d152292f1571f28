package ref

import (
	"math"

	"github.com/ternion/ternion/core/graph"
)

// fattn.go is FLASH_ATTN_EXT's reference: each query row's softmax over all
// kv positions (and the head's sink) in float64, then the weighted sum of V
// rows, written to ggml's permuted output [hsv, n_head, n_q, ne3].

func init() { register(fattnEval, graph.OpFlashAttnExt) }

func fattnEval(n *graph.Tensor, dst view, src func(int) (view, error)) error {
	s, err := srcViews(src, 3)
	if err != nil {
		return err
	}
	q, k, v := s[0], s[1], s[2]
	var mask, sinks *view
	if n.Src(3) != nil {
		m, err := src(3)
		if err != nil {
			return err
		}
		mask = &m
	}
	if n.Src(4) != nil {
		x, err := src(4)
		if err != nil {
			return err
		}
		sinks = &x
	}
	scale, maxBias, softcap := float64(n.ParamF32(0)), float64(n.ParamF32(1)), float64(n.ParamF32(2))
	qn, kn := q.l.Ne, k.l.Ne
	nHead := qn[2]
	log2 := int64(1) << int64(math.Floor(math.Log2(float64(nHead))))
	slope := func(h int64) float64 {
		if maxBias <= 0 {
			return 1
		}
		if h < log2 {
			return math.Pow(2, -maxBias/float64(log2)*float64(h+1))
		}
		return math.Pow(2, -maxBias/2/float64(log2)*float64(2*(h-log2)+1))
	}
	hsk, hsv, nkv := kn[0], v.l.Ne[0], kn[1]
	logits := make([]float64, nkv)
	out := make([]float64, hsv)
	for i3 := range qn[3] {
		for h := range nHead {
			kh, k3 := h/(nHead/kn[2]), i3/(qn[3]/kn[3])
			for i1 := range qn[1] {
				m := math.Inf(-1)
				for j := range nkv {
					var dot float64
					for d := range hsk {
						dot += q.get([4]int64{d, i1, h, i3}) * k.get([4]int64{d, j, kh, k3})
					}
					x := dot * scale
					if softcap != 0 {
						x = softcap * math.Tanh(x/softcap)
					}
					if mask != nil {
						mn := mask.l.Ne
						x += slope(h) * mask.get([4]int64{j, i1, h % mn[2], i3 % mn[3]})
					}
					logits[j] = x
					m = max(m, x)
				}
				sink := math.Inf(-1)
				if sinks != nil {
					sink = sinks.get([4]int64{h, 0, 0, 0})
					m = max(m, sink)
				}
				clear(out)
				var sum float64
				if !math.IsInf(m, -1) {
					for j := range nkv {
						p := math.Exp(logits[j] - m)
						sum += p
						for d := range hsv {
							out[d] += p * v.get([4]int64{d, j, kh, k3})
						}
					}
					sum += math.Exp(sink - m)
				}
				for d := range hsv {
					x := 0.0
					if sum != 0 {
						x = out[d] / sum
					}
					dst.set([4]int64{d, h, i1, i3}, x)
				}
			}
		}
	}
	return nil
}
