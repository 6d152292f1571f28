package half

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHalfRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		f    float32
		f16  uint16
		bf16 uint16
	}{
		{"one", 1, 0x3c00, 0x3f80},
		{"minus two", -2, 0xc000, 0xc000},
		{"zero", 0, 0, 0},
		{"half max", 65504, 0x7bff, 0x4780 /* rounds up to 65536 */},
		{"third", 1.0 / 3, 0x3555, 0x3eab},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.f16, F16FromF32(c.f))
			assert.Equal(t, c.bf16, BF16FromF32(c.f))
			assert.InDelta(t, c.f, F16ToF32(c.f16), math.Abs(float64(c.f))*1e-3)
			assert.InDelta(t, c.f, BF16ToF32(c.bf16), math.Abs(float64(c.f))*1e-2)
		})
	}
	assert.True(t, math.IsNaN(float64(BF16ToF32(BF16FromF32(float32(math.NaN()))))))
	// ties to even: 1 + 2^-8 lies halfway between two bf16 values and rounds down to 1.
	assert.Equal(t, uint16(0x3f80), BF16FromF32(1+1.0/256))
	assert.Equal(t, uint16(0x3f82), BF16FromF32(1+3.0/256))
}
