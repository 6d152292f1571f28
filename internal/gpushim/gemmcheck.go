package gpushim

import "math/bits"

// extent2D is how many bytes height rows of width bytes, pitch bytes apart,
// span (height and width positive); false when that overflows 64 bits.
func extent2D(pitch, width, height uint64) (uint64, bool) {
	hi, lo := bits.Mul64(pitch, height-1)
	sum, carry := bits.Add64(lo, width, 0)
	return sum, hi == 0 && carry == 0
}
