package quant

import (
	"encoding/binary"
	"math"

	"github.com/ternion/ternion/internal/half"
)

// The scalar helpers below reproduce the float32 primitives ggml's reference
// quantizers are built from (src/ggml-quants.c, src/ggml-impl.h), so that the
// Go code rounds exactly where the C code does.
//
// Products that C adds to something are written float32(a*b) + c: the
// explicit conversion forbids the Go compiler from fusing them into an FMA
// (it does on arm64, and on amd64 with GOAMD64=v3), which ggml's x86-64
// build does not do either.

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is treated as all zero.
const groupMaxEps = 1e-15

// ggmlNearestInt is ggml's nearest_int: round to nearest, ties to even, by
// adding 1.5·2^23 so that the integer lands in the low mantissa bits. It is
// exact for |f| <= 4194303; beyond that it returns the same garbage as C.
func ggmlNearestInt(f float32) int {
	v := f + 12582912
	return int(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// absf32 is fabsf: f with its sign bit cleared.
func absf32(f float32) float32 {
	return math.Float32frombits(math.Float32bits(f) &^ (1 << 31))
}

// sqrtf32 is sqrtf, correctly rounded (a float64 square root rounded to
// float32 is the correctly rounded float32 square root).
func sqrtf32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// halfAt reads the little-endian IEEE half at b[0:2] as ggml's
// GGML_FP16_TO_FP32 does (exactly).
func halfAt(b []byte) float32 { return half.F16ToF32(binary.LittleEndian.Uint16(b)) }

// putHalf stores f at b[0:2] as the nearest IEEE half, ties to even, as
// ggml's GGML_FP32_TO_FP16 does for every non-NaN value.
func putHalf(b []byte, f float32) { binary.LittleEndian.PutUint16(b, half.F16FromF32(f)) }
