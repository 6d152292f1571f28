package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ternion/ternion/internal/half"
)

// QuantizeIQ4NLOnePass encodes src (whole blocks of 32) as iq4_nl the way
// ggml's GPU backends do for a CPY into iq4_nl (quantize_f32_iq4_nl_block):
// the scale from the value of largest magnitude, each value's nearest
// level, then one least-squares refit of the scale, Σw·q·x / Σw·q² with
// weights w = x². Format iq4_nl's Quantize is ggml's CPU quantizer, which
// searches scales and so often picks others.
func QuantizeIQ4NLOnePass(dst []byte, src []float32) error {
	const qk, bytes = 32, 18
	if len(src)%qk != 0 || len(dst) < len(src)/qk*bytes {
		return fmt.Errorf("quant: iq4_nl one-pass: %d values and %d bytes are not whole blocks", len(src), len(dst))
	}
	for i := 0; i < len(src)/qk; i++ {
		onePassIQ4NL(dst[i*bytes:(i+1)*bytes], src[i*qk:(i+1)*qk])
	}
	return nil
}

// onePassIQ4NL encodes one block of 32 values into b (18 bytes).
func onePassIQ4NL(b []byte, x []float32) {
	var amax, vmax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); amax < a {
			amax, vmax = a, v
		}
	}
	d := vmax / float32(iq4Levels[0])
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var sumqx, sumq2 float32
	for j := range 16 {
		i0, i1 := nearestLevel(x[j]*id), nearestLevel(x[16+j]*id)
		b[2+j] = i0 | i1<<4
		v0, v1 := float32(iq4Levels[i0]), float32(iq4Levels[i1])
		w0, w1 := x[j]*x[j], x[16+j]*x[16+j]
		sumqx += w0*v0*x[j] + w1*v1*x[16+j]
		sumq2 += w0*v0*v0 + w1*v1*v1
	}
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	binary.LittleEndian.PutUint16(b, half.F16FromF32(d))
}
