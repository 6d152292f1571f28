package graph

import (
	"math"

	"github.com/ternion/ternion/core/tensor"
)

// shape.go holds the constructors of REPEAT, CONCAT, PAD, ARANGE,
// TIMESTEP_EMBEDDING and UPSCALE: ops that make a tensor of a new shape.

// ScaleMode is UPSCALE's op_params[0] (ggml_scale_mode): the resampling
// mode in the low byte, flags above it.
type ScaleMode int32

// The resampling modes and flags of UPSCALE (GGML_SCALE_MODE_*,
// GGML_SCALE_FLAG_*).
const (
	// ScaleNearest reads the source element at i·src/dst, truncated.
	ScaleNearest ScaleMode = 0
	// ScaleBilinear interpolates dims 0 and 1 between the four nearest
	// source elements (dims 2 and 3 nearest).
	ScaleBilinear ScaleMode = 1
	// ScaleAlignCorners maps the first and last elements of dims 0 and 1
	// onto the source's (scale (dst-1)/(src-1), no half-pixel offset).
	ScaleAlignCorners ScaleMode = 1 << 8
)

// shapeModeNames names the resampling modes (the low byte of a ScaleMode).
var shapeModeNames = map[ScaleMode]string{ScaleNearest: "nearest", ScaleBilinear: "bilinear"}

// Repeat returns a tiled into b's shape (ggml_repeat): every dimension of b
// must be a multiple of a's; the result has a's type (b gives only the shape).
func (a *Tensor) Repeat(b *Tensor) *Tensor {
	c, bad := operands(OpRepeat, a, b)
	if bad != nil {
		return bad
	}
	return a.shapeRepeatInto(c, b.layout.Ne)
}

// Repeat4D returns a tiled into shape [ne0, ne1, ne2, ne3] (ggml_repeat_4d).
func (a *Tensor) Repeat4D(ne0, ne1, ne2, ne3 int64) *Tensor {
	c, bad := operands(OpRepeat, a)
	if bad != nil {
		return bad
	}
	return a.shapeRepeatInto(c, [4]int64{ne0, ne1, ne2, ne3})
}

// shapeRepeatInto makes the REPEAT node of a tiled into shape ne.
func (a *Tensor) shapeRepeatInto(c *Context, ne [4]int64) *Tensor {
	l, err := tensor.Contiguous(a.layout.Type, ne[:]...)
	if err != nil {
		return c.fail(OpRepeat, []*Tensor{a}, "%v", err)
	}
	if !a.layout.CanRepeatInto(l) {
		return c.fail(OpRepeat, []*Tensor{a}, "src0 %s does not repeat into %s (each dimension of the target must be a multiple of src0's)",
			a.describe(), l.Shape())
	}
	return c.node(OpRepeat, l, a)
}

// Concat returns a and b joined along dimension dim (ggml_concat): they must
// have one type and equal sizes in every other dimension.
func (a *Tensor) Concat(b *Tensor, dim int) *Tensor {
	c, bad := operands(OpConcat, a, b)
	if bad != nil {
		return bad
	}
	srcs := []*Tensor{a, b}
	if dim < 0 || dim >= tensor.MaxDims {
		return c.fail(OpConcat, srcs, "dim %d is not in 0..3", dim)
	}
	if a.layout.Type != b.layout.Type {
		return c.fail(OpConcat, srcs, "src0 %s and src1 %s differ in type", a.describe(), b.describe())
	}
	ne := a.layout.Ne
	for d := range tensor.MaxDims {
		if d == dim {
			ne[d] += b.layout.Ne[d]
		} else if a.layout.Ne[d] != b.layout.Ne[d] {
			return c.fail(OpConcat, srcs, "src0 %s and src1 %s differ in dimension %d (only dim %d may differ)",
				a.describe(), b.describe(), d, dim)
		}
	}
	l, err := tensor.Contiguous(a.layout.Type, ne[:]...)
	if err != nil {
		return c.fail(OpConcat, srcs, "%v", err)
	}
	t := c.node(OpConcat, l, a, b)
	t.setI32(0, int32(dim))
	return t
}

// Pad returns a with p_i zeros appended along dimension i (ggml_pad).
func (a *Tensor) Pad(p0, p1, p2, p3 int) *Tensor { return a.PadExt(0, p0, 0, p1, 0, p2, 0, p3) }

// PadExt returns a with lp_i zeros before and rp_i zeros after its elements
// along dimension i (ggml_pad_ext); op_params are lp0, rp0, ..., lp3, rp3
// and 0 (not circular).
func (a *Tensor) PadExt(lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 int) *Tensor {
	c, bad := operands(OpPad, a)
	if bad != nil {
		return bad
	}
	pads := [8]int{lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3}
	ne := a.layout.Ne
	for i, p := range pads {
		if p < 0 || p > math.MaxInt32 {
			return c.fail(OpPad, []*Tensor{a}, "padding %d of dimension %d is negative or too large", p, i/2)
		}
		ne[i/2] += int64(p)
	}
	l, err := tensor.Contiguous(a.layout.Type, ne[:]...)
	if err != nil {
		return c.fail(OpPad, []*Tensor{a}, "%v", err)
	}
	t := c.node(OpPad, l, a)
	for i, p := range pads {
		t.setI32(i, int32(p))
	}
	return t
}

// Arange returns the F32 vector start, start+step, ... below stop, of
// ceil((stop-start)/step) elements computed in float32 (ggml_arange): a
// node with no sources.
func (c *Context) Arange(start, stop, step float32) *Tensor {
	switch {
	case !(stop > start):
		return c.fail(OpArange, nil, "stop %g is not above start %g", stop, start)
	case !(step > 0) || math.IsInf(float64(step), 0):
		return c.fail(OpArange, nil, "step %g is not a positive finite number", step)
	}
	steps := math.Ceil(float64((stop - start) / step))
	if steps > math.MaxInt32 {
		return c.fail(OpArange, nil, "%g steps from %g to %g by %g are too many", steps, start, stop, step)
	}
	l, err := tensor.Contiguous(tensor.F32, int64(steps))
	if err != nil {
		return c.fail(OpArange, nil, "%v", err)
	}
	t := c.node(OpArange, l)
	t.setF32(0, start)
	t.setF32(1, stop)
	t.setF32(2, step)
	return t
}

// TimestepEmbedding returns the sinusoidal embeddings of the F32 timesteps
// a[0..ne0) (ggml_timestep_embedding): an F32 [dim, a.ne0] tensor whose row i
// holds cos(t·f_j) at j and sin(t·f_j) at j+dim/2 for j < dim/2, with t =
// a[i] and f_j = exp(-ln(maxPeriod)·j/(dim/2)), and 0 at dim-1 when dim is
// odd. (The seed's ggml padded odd dims to dim+1 and left an element
// unwritten; ggml has since fixed it this way.)
func (a *Tensor) TimestepEmbedding(dim, maxPeriod int) *Tensor {
	c, bad := operands(OpTimestepEmbedding, a)
	if bad != nil {
		return bad
	}
	srcs := []*Tensor{a}
	switch {
	case a.layout.Type != tensor.F32:
		return c.fail(OpTimestepEmbedding, srcs, "timesteps %s are not f32", a.describe())
	case dim < 1 || dim > math.MaxInt32:
		return c.fail(OpTimestepEmbedding, srcs, "dim %d is not in 1..2^31-1", dim)
	case maxPeriod < 1 || maxPeriod > math.MaxInt32:
		return c.fail(OpTimestepEmbedding, srcs, "max_period %d is not in 1..2^31-1", maxPeriod)
	}
	l, err := tensor.Contiguous(tensor.F32, int64(dim), a.layout.Ne[0])
	if err != nil {
		return c.fail(OpTimestepEmbedding, srcs, "%v", err)
	}
	t := c.node(OpTimestepEmbedding, l, a)
	t.setI32(0, int32(dim))
	t.setI32(1, int32(maxPeriod))
	return t
}

// Upscale returns a scaled up by factor in dimensions 0 and 1 (ggml_upscale).
func (a *Tensor) Upscale(factor int, mode ScaleMode) *Tensor {
	c, bad := operands(OpUpscale, a)
	if bad != nil {
		return bad
	}
	if factor < 2 {
		return c.fail(OpUpscale, []*Tensor{a}, "scale factor %d is not above 1", factor)
	}
	f := int64(factor)
	return a.Interpolate(a.layout.Ne[0]*f, a.layout.Ne[1]*f, a.layout.Ne[2], a.layout.Ne[3], mode)
}

// Interpolate returns F32 a resampled to shape [ne0, ne1, ne2, ne3] with
// mode (ggml_interpolate): nearest, or bilinear in dims 0 and 1, optionally
// with ScaleAlignCorners.
func (a *Tensor) Interpolate(ne0, ne1, ne2, ne3 int64, mode ScaleMode) *Tensor {
	c, bad := operands(OpUpscale, a)
	if bad != nil {
		return bad
	}
	srcs := []*Tensor{a}
	if _, ok := shapeModeNames[mode&0xff]; !ok || mode&^(0xff|ScaleAlignCorners) != 0 {
		return c.fail(OpUpscale, srcs, "mode %#x is not nearest (0) or bilinear (1), with only the align-corners flag (0x100)", int32(mode))
	}
	if a.layout.Type != tensor.F32 {
		return c.fail(OpUpscale, srcs, "src0 %s is not f32", a.describe())
	}
	l, err := tensor.Contiguous(tensor.F32, ne0, ne1, ne2, ne3)
	if err != nil {
		return c.fail(OpUpscale, srcs, "%v", err)
	}
	if a.layout.Empty() && !l.Empty() {
		return c.fail(OpUpscale, srcs, "src0 %s is empty, the target %s is not", a.describe(), l.Shape())
	}
	t := c.node(OpUpscale, l, a)
	t.setI32(0, int32(mode))
	return t
}
