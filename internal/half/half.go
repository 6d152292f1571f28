// Package half converts between float32 and the 16-bit float formats ternion
// stores: IEEE binary16 (through github.com/x448/float16) and bfloat16.
package half

import (
	"math"

	"github.com/x448/float16"
)

// F16FromF32 returns the IEEE half nearest to f (ties to even).
func F16FromF32(f float32) uint16 { return uint16(float16.Fromfloat32(f)) }

// F16ToF32 widens an IEEE half exactly.
func F16ToF32(h uint16) float32 { return float16.Frombits(h).Float32() }

// BF16FromF32 returns the bfloat16 nearest to f (ties to even); NaN stays NaN.
func BF16FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and non-zero
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BF16ToF32 widens a bfloat16 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
