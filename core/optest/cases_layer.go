package optest

import (
	"math"
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// layer.go holds a whole decoder layer as one case: the ops of Wave 2 ·
// 3/7 as model code chains them (no such case in test-backend-ops; its name
// says so), so a device is checked on views, permutes, fusion and the
// attention path together, not only op by op.

func init() { register(layerTests, nil) }

// layerShape is a llama-style layer: embd = heads·headDim, GQA with kvHeads,
// ffn the feed-forward width, n tokens attending causally to each other.
type layerShape struct {
	embd, heads, kvHeads, headDim, ffn, n int64
	wtype                                 tensor.Type
	mode                                  graph.RoPEMode
}

func layerTests() []Case {
	var out []Case
	for _, s := range []layerShape{
		{embd: 256, heads: 4, kvHeads: 2, headDim: 64, ffn: 512, n: 7, wtype: tensor.F16, mode: graph.RoPENeoX},
		{embd: 256, heads: 2, kvHeads: 2, headDim: 128, ffn: 384, n: 1, wtype: tensor.F32, mode: graph.RoPENormal},
		{embd: 512, heads: 8, kvHeads: 2, headDim: 64, ffn: 1024, n: 16, wtype: tensor.BF16, mode: graph.RoPENeoX},
		// One token of q4_0 weights: with TERNION_EARLY_PRODUCTS each
		// projection after another kernel lets its product launch before
		// the quantization of its column waits (q8ye), and reads its
		// weights early.
		{embd: 256, heads: 2, kvHeads: 1, headDim: 128, ffn: 512, n: 1, wtype: tensor.Q4_0, mode: graph.RoPENeoX},
	} {
		out = append(out, layerCase(s))
	}
	return out
}

// layerCase builds x → RMS_NORM·w → Q, K, V → ROPE → FLASH_ATTN_EXT (causal
// mask, K/V cast to f16) → output projection + x → RMS_NORM·w → SWIGLU
// feed-forward + residual.
func layerCase(s layerShape) Case {
	return Case{Name: name("LAYER", "type_w", s.wtype, "embd", s.embd, "heads", s.heads, "kv_heads", s.kvHeads,
		"head_dim", s.headDim, "ffn", s.ffn, "n", s.n, "rope", s.mode), Op: graph.OpAdd, MaxNMSE: nmseMulMat,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			const eps = 1e-6
			// Weights scaled by 1/sqrt(fan-in) keep activations near unit size.
			weight := func(in, out int64) *graph.Tensor {
				a := 1 / float32(math.Sqrt(float64(in)))
				return inputRange(ctx, r, s.wtype, [4]int64{in, out, 1, 1}, -a, a)
			}
			norm := func() *graph.Tensor { return inputRange(ctx, r, tensor.F32, [4]int64{s.embd, 1, 1, 1}, 0.5, 1.5) }
			x := input(ctx, r, tensor.F32, [4]int64{s.embd, s.n, 1, 1})
			pos := make([]int32, s.n)
			for i := range pos {
				pos[i] = int32(3 + i)
			}
			positions := ctx.FromInts(pos, s.n)
			mask := make([]float32, s.n*s.n) // [kv, q]: query i sees keys 0..i
			for q := range s.n {
				for k := q + 1; k < s.n; k++ {
					mask[q*s.n+k] = float32(math.Inf(-1))
				}
			}
			causal := ctx.FromFloatsAs(tensor.F16, mask, s.n, s.n)
			rope := func(t *graph.Tensor) *graph.Tensor {
				return t.RoPE(positions, int(s.headDim), 10000, 1, func(o *graph.RoPEOptions) { o.Mode = s.mode })
			}

			h := x.RMSNorm(eps).Mul(norm())
			q := rope(weight(s.embd, s.heads*s.headDim).MulMat(h).Reshape(s.headDim, s.heads, s.n))
			k := rope(weight(s.embd, s.kvHeads*s.headDim).MulMat(h).Reshape(s.headDim, s.kvHeads, s.n))
			v := weight(s.embd, s.kvHeads*s.headDim).MulMat(h).Reshape(s.headDim, s.kvHeads, s.n)
			// FLASH_ATTN_EXT takes [head_dim, tokens, heads]; K and V in f16.
			kq := q.Permute(0, 2, 1, 3)
			kk := k.Permute(0, 2, 1, 3).Cast(tensor.F16)
			kv := v.Permute(0, 2, 1, 3).Cast(tensor.F16)
			attn := kq.FlashAttnExt(kk, kv, causal, 1/float32(math.Sqrt(float64(s.headDim))), 0, 0)
			x2 := weight(s.heads*s.headDim, s.embd).MulMat(attn.Reshape(s.heads*s.headDim, s.n)).Add(x)

			h2 := x2.RMSNorm(eps).Mul(norm())
			ff := weight(s.embd, s.ffn).MulMat(h2).SwiGLU(weight(s.embd, s.ffn).MulMat(h2))
			return weight(s.ffn, s.embd).MulMat(ff).Add(x2)
		}}
}
