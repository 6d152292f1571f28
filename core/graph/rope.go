package graph

import "github.com/ternion/ternion/core/tensor"

// RoPEMode is ROPE's mode (ggml's GGML_ROPE_TYPE_*): which elements of a
// head form the rotated pairs and where each pair's position comes from.
type RoPEMode int32

// The modes the seed knows.
const (
	// RoPENormal rotates pairs (2i, 2i+1) (GGML_ROPE_TYPE_NORMAL, llama).
	RoPENormal RoPEMode = 0
	// RoPENeoX rotates pairs (i, i + n_dims/2) (GGML_ROPE_TYPE_NEOX).
	RoPENeoX RoPEMode = 2
	// RoPEMulti is multi-section RoPE (GGML_ROPE_TYPE_MROPE, Qwen2-VL):
	// NeoX pairs whose positions come from one of four position rows, by
	// section.
	RoPEMulti RoPEMode = 8
	// RoPEVision is vision RoPE (GGML_ROPE_TYPE_VISION, Qwen2-VL ViT): pairs
	// (i, i + n_dims) with n_dims = ne0/2, frequencies restarting in each
	// section.
	RoPEVision RoPEMode = 24
)

// String names the mode as ggml's enum does.
func (m RoPEMode) String() string {
	switch m {
	case RoPENormal:
		return "normal"
	case RoPENeoX:
		return "neox"
	case RoPEMulti:
		return "mrope"
	case RoPEVision:
		return "vision"
	}
	return "unknown"
}

// RoPEOptions are ROPE's parameters beyond the positions, rotated
// dimensions, base and scale (ggml_rope_multi's arguments; Ollama's
// rope.Options).
type RoPEOptions struct {
	Mode RoPEMode
	// Factors is an optional F32 vector of per-pair frequency divisors
	// (src2; nil for none), one per rotated pair.
	Factors *Tensor
	// Sections are the multi-section and vision section sizes, in pairs.
	Sections [4]int
	// OrigCtx is YaRN's original context length (n_ctx_orig).
	OrigCtx int
	// ExtFactor, AttnFactor, BetaFast and BetaSlow are YaRN's parameters.
	ExtFactor, AttnFactor, BetaFast, BetaSlow float32
	// Inplace makes the result a view of a, written over it.
	Inplace bool
}

// RoPE rotates a ([head_dim, n_head, n_tokens, ne3], F32 or F16) by the
// positions pos (I32, one per token; four per token in the multi and vision
// modes), rotating nDims dimensions of each head with frequency base and
// scale (Ollama's ml.Tensor.RoPE). opts change the defaults: normal mode,
// no frequency factors, no YaRN (ext_factor 0, attn_factor 1, beta_fast 32,
// beta_slow 1), not in place.
func (a *Tensor) RoPE(pos *Tensor, nDims int, base, scale float32, opts ...func(*RoPEOptions)) *Tensor {
	o := RoPEOptions{AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	for _, f := range opts {
		f(&o)
	}
	return a.rope(pos, nDims, base, scale, o)
}

// RoPEExt is ggml_rope_ext: ROPE of a by positions pos (one per token) with
// optional frequency factors and YaRN parameters.
func (a *Tensor) RoPEExt(pos, factors *Tensor, nDims int, mode RoPEMode, nCtxOrig int, freqBase, freqScale, extFactor,
	attnFactor, betaFast, betaSlow float32) *Tensor {
	return a.rope(pos, nDims, freqBase, freqScale, RoPEOptions{Mode: mode, Factors: factors, OrigCtx: nCtxOrig,
		ExtFactor: extFactor, AttnFactor: attnFactor, BetaFast: betaFast, BetaSlow: betaSlow})
}

// RoPEExtInplace is ggml_rope_ext_inplace: RoPEExt written over a.
func (a *Tensor) RoPEExtInplace(pos, factors *Tensor, nDims int, mode RoPEMode, nCtxOrig int, freqBase, freqScale,
	extFactor, attnFactor, betaFast, betaSlow float32) *Tensor {
	return a.rope(pos, nDims, freqBase, freqScale, RoPEOptions{Mode: mode, Factors: factors, OrigCtx: nCtxOrig,
		ExtFactor: extFactor, AttnFactor: attnFactor, BetaFast: betaFast, BetaSlow: betaSlow, Inplace: true})
}

// RoPEMulti is ggml_rope_multi: multi-section or vision ROPE of a by
// positions pos (four per token: ne2 positions for each section kind).
func (a *Tensor) RoPEMulti(pos, factors *Tensor, nDims int, sections [4]int, mode RoPEMode, nCtxOrig int, freqBase,
	freqScale, extFactor, attnFactor, betaFast, betaSlow float32) *Tensor {
	return a.rope(pos, nDims, freqBase, freqScale, RoPEOptions{Mode: mode, Factors: factors, Sections: sections,
		OrigCtx: nCtxOrig, ExtFactor: extFactor, AttnFactor: attnFactor, BetaFast: betaFast, BetaSlow: betaSlow})
}

// RoPEMultiInplace is ggml_rope_multi_inplace: RoPEMulti written over a.
func (a *Tensor) RoPEMultiInplace(pos, factors *Tensor, nDims int, sections [4]int, mode RoPEMode, nCtxOrig int,
	freqBase, freqScale, extFactor, attnFactor, betaFast, betaSlow float32) *Tensor {
	return a.rope(pos, nDims, freqBase, freqScale, RoPEOptions{Mode: mode, Factors: factors, Sections: sections,
		OrigCtx: nCtxOrig, ExtFactor: extFactor, AttnFactor: attnFactor, BetaFast: betaFast, BetaSlow: betaSlow,
		Inplace: true})
}

// RoPEPairs is the number of rotated pairs of a ROPE of nDims dimensions
// in mode m (vision rotates nDims pairs, the others nDims/2).
func RoPEPairs(m RoPEMode, nDims int) int {
	if m == RoPEVision {
		return nDims
	}
	return nDims / 2
}

// RoPEPositions is the number of positions a ROPE in mode m takes for
// nTokens tokens (four per token in the multi and vision modes).
func RoPEPositions(m RoPEMode, nTokens int64) int64 {
	if m == RoPEMulti || m == RoPEVision {
		return 4 * nTokens
	}
	return nTokens
}

// rope makes the ROPE node (ggml_rope_impl, ggml_rope_multi): op_params
// n_past 0, n_dims, mode, n_ctx 0, n_ctx_orig, then freq_base, freq_scale,
// ext_factor, attn_factor, beta_fast, beta_slow, then the four sections.
func (a *Tensor) rope(pos *Tensor, nDims int, base, scale float32, o RoPEOptions) *Tensor {
	srcs := []*Tensor{a, pos}
	if o.Factors != nil {
		srcs = append(srcs, o.Factors)
	}
	c, bad := operands(OpRope, srcs...)
	if bad != nil {
		return bad
	}
	fail := func(format string, args ...any) *Tensor { return c.fail(OpRope, srcs, format, args...) }
	ne := a.layout.Ne
	switch {
	case o.Mode != RoPENormal && o.Mode != RoPENeoX && o.Mode != RoPEMulti && o.Mode != RoPEVision:
		return fail("mode %d is not a ROPE mode the seed knows (0 normal, 2 NeoX, 8 multi-section, 24 vision)", o.Mode)
	case ne[0]%2 != 0:
		return fail("src0 %s has an odd ne[0] (heads are rotated in pairs)", a.describe())
	case nDims <= 0 || nDims%2 != 0 || int64(nDims) > ne[0]:
		return fail("n_dims %d must be even, positive and at most src0 ne[0] %d", nDims, ne[0])
	case o.Mode == RoPEVision && int64(nDims) != ne[0]/2:
		return fail("vision mode needs n_dims = ne[0]/2 = %d, got %d", ne[0]/2, nDims)
	case pos.layout.Type != tensor.I32:
		return fail("positions (src1) %s must be i32", pos.describe())
	case pos.layout.Ne[1] != 1 || pos.layout.Ne[2] != 1 || pos.layout.Ne[3] != 1:
		return fail("positions (src1) %s must be a vector", pos.describe())
	case pos.layout.Ne[0] != RoPEPositions(o.Mode, ne[2]):
		return fail("positions (src1) %s: mode %s takes %d positions for src0 %s", pos.describe(), o.Mode,
			RoPEPositions(o.Mode, ne[2]), a.describe())
	}
	if f := o.Factors; f != nil {
		switch {
		case f.layout.Type != tensor.F32:
			return fail("frequency factors (src2) %s must be f32", f.describe())
		case f.layout.Ne[1] != 1 || f.layout.Ne[2] != 1 || f.layout.Ne[3] != 1:
			return fail("frequency factors (src2) %s must be a vector", f.describe())
		case f.layout.Ne[0] < int64(RoPEPairs(o.Mode, nDims)):
			return fail("frequency factors (src2) %s: %d rotated pairs need as many factors", f.describe(),
				RoPEPairs(o.Mode, nDims))
		}
	}
	if o.Mode == RoPEMulti || o.Mode == RoPEVision {
		sum := 0
		for i, s := range o.Sections {
			if s < 0 {
				return fail("section %d is negative (%d)", i, s)
			}
			sum += s
		}
		if sum == 0 || int64(sum) > ne[0] {
			return fail("sections %v must sum to between 1 and src0 ne[0] %d", o.Sections, ne[0])
		}
	} else if o.Sections != [4]int{} {
		return fail("sections %v are for the multi-section and vision modes, not %s", o.Sections, o.Mode)
	}
	var t *Tensor
	if o.Inplace {
		t = c.view(OpRope, a, a.layout, 0).withSrc(srcs...)
	} else {
		t = c.node(OpRope, dup(a), srcs...)
	}
	t.setI32(1, int32(nDims))
	t.setI32(2, int32(o.Mode))
	t.setI32(4, int32(o.OrigCtx))
	for i, v := range []float32{base, scale, o.ExtFactor, o.AttnFactor, o.BetaFast, o.BetaSlow} {
		t.setF32(5+i, v)
	}
	for i, s := range o.Sections {
		t.setI32(11+i, int32(s))
	}
	return t
}
