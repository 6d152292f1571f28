package quant

import "math"

// mxfp4 (OCP microscaling FP4): {u8 e; u8 qs[16]}, 32 values sharing the
// power-of-two scale 2^(e-127) (an E8M0 byte), each an E2M1 float stored as
// a 4-bit code in q4_0's nibble order. ggml keeps the E2M1 values doubled
// (fp4Levels) and the scale halved, which is the same product.

// fp4Levels is ggml's kvalues_mxfp4: twice the E2M1 value of each code
// (codes 8-15 are the negatives of 0-7).
var fp4Levels = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// init registers mxfp4 under its ggml type id.
func init() {
	register(Format{ID: 39, Name: "mxfp4", BlockElems: 32, BlockBytes: 17, dequant: dequantMXFP4, quant: quantMXFP4})
}

// e8m0Half is ggml's GGML_E8M0_TO_FP32_HALF: 2^(e-128), denormal for e < 2.
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// nearestFP4 is ggml's best_index_mxfp4: the first code whose doubled value
// times d is nearest x.
func nearestFP4(x, d float32) uint8 {
	best, bestErr := uint8(0), absf32(float32(float32(fp4Levels[0])*d)-x)
	for i := 1; i < 16; i++ {
		if e := absf32(float32(float32(fp4Levels[i])*d) - x); e < bestErr {
			best, bestErr = uint8(i), e
		}
	}
	return best
}

// quantMXFP4 is quantize_row_mxfp4_ref: e = floor(log2 amax) - 2 + 127, so
// the largest magnitude lands in E2M1's top binade [4, 8), then each value
// takes its nearest code.
func quantMXFP4(blk []byte, x []float32) {
	var amax float32
	for _, v := range x[:32] {
		if a := absf32(v); amax < a {
			amax = a
		}
	}
	var e uint8
	if amax > 0 {
		log2 := float32(math.Log2(float64(amax))) // log2f: float64 log2 rounded to float32
		e = uint8(int32(float32(math.Floor(float64(log2))) - 2 + 127))
	}
	blk[0] = e
	d := e8m0Half(e)
	for j := range 16 {
		blk[1+j] = nearestFP4(x[j], d) | nearestFP4(x[16+j], d)<<4
	}
}

// dequantMXFP4 is dequantize_row_mxfp4 for one block.
func dequantMXFP4(dst []float32, blk []byte) {
	d := e8m0Half(blk[0])
	for j := range 16 {
		dst[j] = float32(fp4Levels[blk[1+j]&0xf]) * d
		dst[16+j] = float32(fp4Levels[blk[1+j]>>4]) * d
	}
}
