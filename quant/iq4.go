package quant

import "encoding/binary"

// iq4_nl and iq4_xs: 4-bit indices into ggml's non-linear table
// kvalues_iq4nl instead of evenly spaced levels. iq4_nl is q4_0's block
// ({f16 d; u8 qs[16]}, value = d·table[q]); iq4_xs is a super-block of 256
// in eight groups of 32 with 6-bit group scales: {f16 d; u16 scales_h;
// u8 scales_l[4]; u8 qs[128]}, group scale d·(s - 32) with s's low nibble in
// scales_l[j/2] (high nibble for odd j) and its top two bits at bits 2j of
// scales_h, and each group's 16 bytes of qs laid out as in iq4_nl.

// iq4Levels is ggml's kvalues_iq4nl.
var iq4Levels = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// iq4TrialSteps is the ntry ggml_quantize_chunk's quantize_iq4_nl and
// quantize_iq4_xs pass: the scale search tries the inverse scales
// (levels[0] + t)/max for t in [-7, 7].
const iq4TrialSteps = 7

// init registers iq4_nl and iq4_xs under their ggml type ids.
func init() {
	register(Format{ID: 20, Name: "iq4_nl", BlockElems: 32, BlockBytes: 18, dequant: dequantIQ4NL, quant: quantIQ4NL})
	register(Format{ID: 23, Name: "iq4_xs", BlockElems: superBlock, BlockBytes: 136, dequant: dequantIQ4XS, quant: quantIQ4XS})
}

// nearestLevel is ggml's best_index_int8 over iq4Levels: the index of the
// level nearest x, the lower one on a tie.
func nearestLevel(x float32) uint8 {
	if x <= float32(iq4Levels[0]) {
		return 0
	}
	if x >= float32(iq4Levels[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x < float32(iq4Levels[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if x-float32(iq4Levels[hi-1]) < float32(iq4Levels[hi])-x {
		return uint8(hi - 1)
	}
	return uint8(hi)
}

// iq4GroupScale is the per-32 scale search of quantize_row_iq4_nl_impl
// without an importance matrix (weights x²): start from max/-levels[0],
// fit d = Σwqx/Σwq², then keep whichever of the 2·ntry+1 trial inverse
// scales gives the larger (Σwqx)²/Σwq². It leaves the first fit's indices
// in L and returns d (0 for a group below groupMaxEps).
func iq4GroupScale(x []float32, L []uint8) float32 {
	peak, amax := signedPeak(x)
	if amax < groupMaxEps {
		return 0
	}
	fit := func(id float32, keep bool) (sumQX, sumQ2 float32) {
		for j, v := range x {
			l := nearestLevel(id * v)
			if keep {
				L[j] = l
			}
			q, w := float32(iq4Levels[l]), v*v
			sumQX += float32(float32(w*q) * v)
			sumQ2 += float32(float32(w*q) * q)
		}
		return sumQX, sumQ2
	}
	d := -peak / float32(iq4Levels[0])
	sumQX, sumQ2 := fit(1/d, true)
	d = 0
	if sumQ2 > 0 {
		d = sumQX / sumQ2
	}
	best := d * sumQX
	for t := -iq4TrialSteps; t <= iq4TrialSteps; t++ {
		sumQX, sumQ2 = fit(float32(t+int(iq4Levels[0]))/peak, false)
		if sumQ2 > 0 && sumQX*sumQX > best*sumQ2 {
			d = sumQX / sumQ2
			best = d * sumQX
		}
	}
	return d
}

// packNibbles stores 32 level indices as q4_0 does: byte j holds values j
// (low nibble) and j+16.
func packNibbles(qs []byte, L []uint8) {
	for j := range 16 {
		qs[j] = L[j] | L[16+j]<<4
	}
}

// quantIQ4NL is quantize_iq4_nl's block: the group scale search, d stored
// as fp16, and the indices redone at 1/d (d before fp16 rounding).
func quantIQ4NL(blk []byte, x []float32) {
	var L [32]uint8
	d := iq4GroupScale(x[:32], L[:])
	putHalf(blk[0:], d)
	id := inverse(d)
	for j, v := range x[:32] {
		L[j] = nearestLevel(id * v)
	}
	packNibbles(blk[2:18], L[:])
}

// dequantIQ4NL is dequantize_row_iq4_nl for one block.
func dequantIQ4NL(dst []float32, blk []byte) {
	d := halfAt(blk[0:])
	for j := range 16 {
		dst[j] = d * float32(iq4Levels[blk[2+j]&0xf])
		dst[16+j] = d * float32(iq4Levels[blk[2+j]>>4])
	}
}

// quantIQ4XS is quantize_iq4_xs's super-block: each group's scale searched
// as in iq4_nl, then quantized to 6 bits against d = -max/32 (the group
// scale of largest magnitude), and each group's indices redone at its
// stored scale d·l.
func quantIQ4XS(blk []byte, x []float32) {
	var (
		L        [superBlock]uint8
		scales   [8]float32
		maxScale float32
		amax     float32
	)
	for ib := range 8 {
		scales[ib] = iq4GroupScale(x[32*ib:32*ib+32], L[32*ib:32*ib+32])
		if a := absf32(scales[ib]); a > amax {
			amax, maxScale = a, scales[ib]
		}
	}
	d := -maxScale / 32
	putHalf(blk[0:], d)
	id := inverse(d)
	var scalesH uint16
	scalesL := blk[4:8]
	for ib := range 8 {
		l := max(-32, min(31, ggmlNearestInt(id*scales[ib])))
		idl := inverse(d * float32(l))
		for j := 32 * ib; j < 32*ib+32; j++ {
			L[j] = nearestLevel(idl * x[j])
		}
		l += 32
		if ib%2 == 0 {
			scalesL[ib/2] = uint8(l & 0xf)
		} else {
			scalesL[ib/2] |= uint8(l&0xf) << 4
		}
		scalesH |= uint16(l>>4) << (2 * ib)
		packNibbles(blk[8+16*ib:], L[32*ib:])
	}
	binary.LittleEndian.PutUint16(blk[2:], scalesH)
}

// dequantIQ4XS is dequantize_row_iq4_xs for one super-block.
func dequantIQ4XS(dst []float32, blk []byte) {
	d := halfAt(blk[0:])
	scalesH := binary.LittleEndian.Uint16(blk[2:])
	for ib := range 8 {
		ls := int(blk[4+ib/2]>>(4*(ib%2))&0xf) | int(scalesH>>(2*ib)&3)<<4
		dl := d * float32(ls-32)
		qs := blk[8+16*ib:]
		for j := range 16 {
			dst[32*ib+j] = dl * float32(iq4Levels[qs[j]&0xf])
			dst[32*ib+16+j] = dl * float32(iq4Levels[qs[j]>>4])
		}
	}
}
