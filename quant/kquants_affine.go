package quant

// q4_K and q5_K: eight groups of 32 values, each with a 6-bit scale and a
// 6-bit minimum under the fp16 super-block d and dmin; value =
// d·scale·q - dmin·min.

// scaleMinAt is ggml's get_scale_min_k4: group j's 6-bit scale and minimum
// from the 12 packed bytes (j < 4: bytes j and j+4; otherwise the nibbles of
// byte j+4 with the top bits in bits 6-7 of bytes j-4 and j).
func scaleMinAt(sc []byte, j int) (scale, min uint8) {
	if j < 4 {
		return sc[j] & 63, sc[j+4] & 63
	}
	return sc[j+4]&0xf | (sc[j-4]>>6)<<4, sc[j+4]>>4 | (sc[j]>>6)<<4
}

// putScaleMins packs the groups' 6-bit scales and minimums as scaleMinAt
// reads them.
func putScaleMins(sc []byte, scales, mins *[8]uint8) {
	for j := range 8 {
		ls, lm := scales[j], mins[j]
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
			continue
		}
		sc[j+4] = ls&0xf | (lm&0xf)<<4
		sc[j-4] |= (ls >> 4) << 6
		sc[j] |= (lm >> 4) << 6
	}
}

// quantAffineK is the shared body of quantize_row_q4_K_ref and
// quantize_row_q5_K_ref: per group of 32 a make_qkx2_quants search with
// weights rms(x) + |x|, the scales and minimums quantized to 6 bits against
// the largest of each, then the quants redone against the stored scales. It
// writes d, dmin and the scales into blk[0:16] and returns the quants in
// [0, s.nmax].
func quantAffineK(blk []byte, x []float32, s affineSearch) [superBlock]uint8 {
	var (
		L                [superBlock]uint8
		laux             [32]uint8
		weights          [32]float32
		scales, mins     [8]float32
		maxScale, maxMin float32
	)
	for j := range 8 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrtf32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + absf32(v)
		}
		scales[j], mins[j] = makeAffineQuants(s, xs, weights[:], L[32*j:32*j+32], laux[:])
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := range 8 {
		ls[j] = min(63, uint8(ggmlNearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(ggmlNearestInt(invMin*mins[j])))
	}
	sc := blk[4:16]
	clear(sc)
	putScaleMins(sc, &ls, &lm)
	putHalf(blk[0:], maxScale/63)
	putHalf(blk[2:], maxMin/63)
	d, dmin := halfAt(blk[0:]), halfAt(blk[2:])
	for j := range 8 {
		scale, m := scaleMinAt(sc, j)
		dl := d * float32(scale)
		if dl == 0 {
			continue
		}
		ml := dmin * float32(m)
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(max(0, min(s.nmax, ggmlNearestInt((x[i]+ml)/dl))))
		}
	}
	return L
}

// quantQ4K is quantize_row_q4_K_ref. q4_K is {f16 d; f16 dmin;
// u8 scales[12]; u8 qs[128]}; each 32 bytes of qs hold two groups, the
// first in the low nibbles.
func quantQ4K(blk []byte, x []float32) {
	L := quantAffineK(blk, x, affineSearch{nmax: 15, rmin: -1, rdelta: 0.1, nstep: 20})
	for j := 0; j < superBlock; j += 64 {
		q := blk[16+j/2:]
		for l := range 32 {
			q[l] = L[j+l] | L[j+l+32]<<4
		}
	}
}

// dequantQ4K is dequantize_row_q4_K for one super-block.
func dequantQ4K(dst []float32, blk []byte) {
	d, dmin := halfAt(blk[0:]), halfAt(blk[2:])
	sc := blk[4:16]
	for j := range 8 {
		s, m := scaleMinAt(sc, j)
		dl, ml := d*float32(s), dmin*float32(m)
		q, shift := blk[16+32*(j/2):], 4*uint(j%2)
		for l := range 32 {
			dst[32*j+l] = float32(dl*float32(q[l]>>shift&0xf)) - ml
		}
	}
}

// quantQ5K is quantize_row_q5_K_ref. q5_K is {f16 d; f16 dmin;
// u8 scales[12]; u8 qh[32]; u8 qs[128]}: q4_K's nibbles plus a fifth bit,
// bit j of qh[l] for value 32·j + l.
func quantQ5K(blk []byte, x []float32) {
	L := quantAffineK(blk, x, affineSearch{nmax: 31, rmin: -0.5, rdelta: 0.1, nstep: 15})
	qh := blk[16:48]
	clear(qh)
	for j := range 8 {
		q, shift := blk[48+32*(j/2):], 4*uint(j%2)
		if j%2 == 0 {
			clear(q[:32])
		}
		for l := range 32 {
			v := L[32*j+l]
			if v > 15 {
				v -= 16
				qh[l] |= 1 << j
			}
			q[l] |= v << shift
		}
	}
}

// dequantQ5K is dequantize_row_q5_K for one super-block.
func dequantQ5K(dst []float32, blk []byte) {
	d, dmin := halfAt(blk[0:]), halfAt(blk[2:])
	sc, qh := blk[4:16], blk[16:48]
	for j := range 8 {
		s, m := scaleMinAt(sc, j)
		dl, ml := d*float32(s), dmin*float32(m)
		q, shift := blk[48+32*(j/2):], 4*uint(j%2)
		for l := range 32 {
			v := q[l] >> shift & 0xf
			if qh[l]&(1<<j) != 0 {
				v += 16
			}
			dst[32*j+l] = float32(dl*float32(v)) - ml
		}
	}
}
