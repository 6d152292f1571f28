package graph

import (
	"github.com/ternion/ternion/core/tensor"
)

// Prec is ggml's ggml_prec: the precision an op may compute in.
type Prec int32

// The precisions (ggml's values).
const (
	PrecDefault Prec = 0  // the op's fastest adequate precision
	PrecF32     Prec = 10 // at least f32 accumulation
)

// FlashAttnExt returns ggml_flash_attn_ext(q, k, v, mask, scale, maxBias,
// logitSoftcap): per query row, softmax(scale·q·kᵀ (softcapped: s =
// logitSoftcap·tanh(s/logitSoftcap) when logitSoftcap ≠ 0) + slope·mask)·v,
// with q [hsk, n_q, n_head, ne3], k [hsk, n_kv, n_head_kv, ne3k], v [hsv,
// n_kv, n_head_kv, ne3k] (q head h reads kv head h/(n_head/n_head_kv), batch
// i3 reads i3/(ne3/ne3k)), an optional contiguous f16 mask [≥n_kv, ≥n_q, m2,
// m3] (row = query, dims 2 and 3 taken modulo m2, m3) and ALiBi slopes from
// maxBias (which needs the mask). The result is f32 in ggml's permuted
// layout [hsv, n_head, n_q, ne3]. op_params: scale, maxBias, logitSoftcap,
// precision (FlashAttnExtSetPrec).
func (q *Tensor) FlashAttnExt(k, v, mask *Tensor, scale, maxBias, logitSoftcap float32) *Tensor {
	c, bad := operands(OpFlashAttnExt, q, k, v)
	if bad != nil {
		return bad
	}
	srcs := []*Tensor{q, k, v}
	if mask != nil {
		if mask.failed {
			return mask.ctx.failed(OpFlashAttnExt)
		}
		srcs = append(srcs, mask)
	}
	if why := fattnCheck(q, k, v, mask, maxBias); why != "" {
		return c.fail(OpFlashAttnExt, srcs, "%s", why)
	}
	qn := q.layout.Ne
	l, err := tensor.Contiguous(tensor.F32, v.layout.Ne[0], qn[2], qn[1], qn[3])
	if err != nil {
		return c.fail(OpFlashAttnExt, srcs, "%v", err)
	}
	t := c.node(OpFlashAttnExt, l, q, k, v, mask)
	t.setF32(0, scale)
	t.setF32(1, maxBias)
	t.setF32(2, logitSoftcap)
	t.setI32(3, int32(PrecDefault))
	return t
}

// fattnCheck returns why q, k, v and mask do not make a FLASH_ATTN_EXT, or "".
func fattnCheck(q, k, v, mask *Tensor, maxBias float32) string {
	qn, kn, vn := q.layout.Ne, k.layout.Ne, v.layout.Ne
	switch {
	case kn[0] != qn[0]:
		return "q " + q.describe() + " and k " + k.describe() + " differ in head size (ne[0])"
	case vn[1] != kn[1]:
		return "k " + k.describe() + " and v " + v.describe() + " differ in the number of kv positions (ne[1])"
	case vn[2] != kn[2] || vn[3] != kn[3]:
		return "k " + k.describe() + " and v " + v.describe() + " differ in kv heads or batches (ne[2], ne[3])"
	case kn[2] == 0 || kn[3] == 0 || qn[2]%kn[2] != 0 || qn[3]%kn[3] != 0:
		return "k " + k.describe() + " does not broadcast over q " + q.describe() + " in dimensions 2 and 3 (GQA: n_head must be a multiple of n_head_kv)"
	case maxBias > 0 && mask == nil:
		return "ALiBi (max_bias > 0) needs a mask"
	}
	if mask == nil {
		return ""
	}
	mn := mask.layout.Ne
	switch {
	case mask.layout.Type != tensor.F16:
		return "mask " + mask.describe() + " must be f16"
	case !mask.layout.IsContiguous():
		return "mask " + mask.describe() + " must be contiguous"
	case mn[0] < kn[1] || mn[1] < qn[1]:
		return "mask " + mask.describe() + " must cover n_kv columns and n_q rows of q " + q.describe() + " and k " + k.describe()
	case mn[2] == 0 || mn[3] == 0 || qn[2]%mn[2] != 0 || qn[3]%mn[3] != 0:
		return "mask " + mask.describe() + " does not broadcast over the heads and batches of q " + q.describe()
	}
	return ""
}

// FlashAttnExtAddSinks gives the FLASH_ATTN_EXT node t a sink logit per q
// head: sinks is f32 [n_head] (ggml_flash_attn_ext_add_sinks; nil removes
// them). It returns t, or a failed tensor.
func (t *Tensor) FlashAttnExtAddSinks(sinks *Tensor) *Tensor {
	if t.failed {
		return t
	}
	c := t.ctx
	switch {
	case t.op != OpFlashAttnExt:
		return c.fail(OpFlashAttnExt, []*Tensor{t}, "sinks added to a %s node", t.op)
	case sinks == nil:
		t.src[4] = nil
		return t
	case sinks.failed:
		return sinks.ctx.failed(OpFlashAttnExt)
	case sinks.layout.Type != tensor.F32 || sinks.layout.Ne[0] != t.src[0].layout.Ne[2] || sinks.layout.Rows() != 1:
		return c.fail(OpFlashAttnExt, []*Tensor{t.src[0], sinks}, "sinks %s must be f32 [n_head = %d]", sinks.describe(),
			t.src[0].layout.Ne[2])
	}
	t.src[4] = sinks
	return t
}

// FlashAttnExtSetPrec sets the precision of the FLASH_ATTN_EXT node t
// (ggml_flash_attn_ext_set_prec) and returns t, or a failed tensor.
func (t *Tensor) FlashAttnExtSetPrec(p Prec) *Tensor {
	if t.failed {
		return t
	}
	if t.op != OpFlashAttnExt {
		return t.ctx.fail(OpFlashAttnExt, []*Tensor{t}, "precision set on a %s node", t.op)
	}
	if p != PrecDefault && p != PrecF32 {
		return t.ctx.fail(OpFlashAttnExt, []*Tensor{t}, "unknown precision %d", p)
	}
	t.setI32(3, int32(p))
	return t
}
