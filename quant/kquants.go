package quant

import (
	"encoding/binary"
	"math"
)

// The k-quants: super-blocks of 256 values in 16 groups of 16 (q2_K, q3_K,
// q6_K) or 8 groups of 32 (q4_K, q5_K), each group with its own small
// integer scale under an fp16 super-block scale; q8_K is the float-scaled
// 8-bit form dot products quantize activations to.

const superBlock = 256 // ggml's QK_K

// init registers the k-quants under their ggml type ids.
func init() {
	register(Format{ID: 10, Name: "q2_K", BlockElems: superBlock, BlockBytes: 84, dequant: dequantQ2K, quant: quantQ2K})
	register(Format{ID: 11, Name: "q3_K", BlockElems: superBlock, BlockBytes: 110, dequant: dequantQ3K, quant: quantQ3K})
	register(Format{ID: 12, Name: "q4_K", BlockElems: superBlock, BlockBytes: 144, dequant: dequantQ4K, quant: quantQ4K})
	register(Format{ID: 13, Name: "q5_K", BlockElems: superBlock, BlockBytes: 176, dequant: dequantQ5K, quant: quantQ5K})
	register(Format{ID: 14, Name: "q6_K", BlockElems: superBlock, BlockBytes: 210, dequant: dequantQ6K, quant: quantQ6K})
	register(Format{ID: 15, Name: "q8_K", BlockElems: superBlock, BlockBytes: 292, dequant: dequantQ8K, quant: quantQ8K})
}

// pack2Bit stores 256 2-bit quants as ggml's q2_K/q3_K do: byte l of each
// 32-byte half holds values l, l+32, l+64, l+96 of its 128 values from the
// low bits up.
func pack2Bit(qs []byte, L []uint8) {
	for j := 0; j < superBlock; j += 128 {
		for l := range 32 {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// quantQ2K is quantize_row_q2_K_ref. q2_K is {u8 scales[16]; u8 qs[64]; f16
// d; f16 dmin}: group j of 16 values has scale d·(scales[j]&15) and minimum
// dmin·(scales[j]>>4); value = scale·q - minimum with q in [0, 3] packed by
// pack2Bit.
func quantQ2K(blk []byte, x []float32) {
	const q4scale = 15
	var (
		L              [superBlock]uint8
		laux           [16]uint8
		weights        [16]float32
		scales, mins   [16]float32
		maxScale, maxM float32
	)
	search := affineSearch{nmax: 3, rmin: -0.5, rdelta: 0.1, nstep: 15, absError: true}
	for j := range 16 {
		xs := x[16*j : 16*j+16]
		for l, v := range xs {
			weights[l] = absf32(v)
		}
		scales[j], mins[j] = makeAffineQuants(search, xs, weights[:], L[16*j:16*j+16], laux[:])
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxM {
			maxM = mins[j]
		}
	}
	sc := blk[0:16]
	clear(sc)
	putHalf(blk[80:], 0)
	if maxScale > 0 {
		iscale := q4scale / maxScale
		for j := range 16 {
			sc[j] = uint8(ggmlNearestInt(iscale * scales[j]))
		}
		putHalf(blk[80:], maxScale/q4scale)
	}
	putHalf(blk[82:], 0)
	if maxM > 0 {
		iscale := q4scale / maxM
		for j := range 16 {
			sc[j] |= uint8(ggmlNearestInt(iscale*mins[j]) << 4)
		}
		putHalf(blk[82:], maxM/q4scale)
	}
	d, dmin := halfAt(blk[80:]), halfAt(blk[82:])
	for j := range 16 {
		dl := d * float32(sc[j]&0xf)
		if dl == 0 {
			continue
		}
		ml := dmin * float32(sc[j]>>4)
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = uint8(max(0, min(3, ggmlNearestInt((x[i]+ml)/dl))))
		}
	}
	pack2Bit(blk[16:80], L[:])
}

// dequantQ2K is dequantize_row_q2_K for one super-block.
func dequantQ2K(dst []float32, blk []byte) {
	sc, qs := blk[0:16], blk[16:80]
	d, dmin := halfAt(blk[80:]), halfAt(blk[82:])
	y := 0
	for half := range 2 {
		q := qs[32*half:]
		for shift := 0; shift < 8; shift += 2 {
			for _, off := range [2]int{0, 16} {
				s := sc[8*half+shift+off/16]
				dl, ml := d*float32(s&0xf), dmin*float32(s>>4)
				for l := range 16 {
					dst[y] = float32(dl*float32(q[off+l]>>shift&3)) - ml
					y++
				}
			}
		}
	}
}

// q3KScale is group j's signed scale: 16 6-bit signed scales (stored +32) in
// 12 bytes; scale j's low nibble is byte j (j < 8) or the high nibble of
// byte j-8, its top two bits are bits 2·(j/4) of byte 8 + j%4.
func q3KScale(sc []byte, j int) int {
	var lo byte
	if j < 8 {
		lo = sc[j] & 0xf
	} else {
		lo = sc[j-8] >> 4
	}
	return int(lo|(sc[8+j%4]>>(2*(j/4))&3)<<4) - 32
}

// quantQ3K is quantize_row_q3_K_ref. q3_K is {u8 hmask[32]; u8 qs[64]; u8
// scales[12]; f16 d}: group j of 16 values has scale d·q3KScale(j); value =
// scale·(q - 4) with q's low two bits packed by pack2Bit and its third bit
// in hmask: bit b of hmask[m] is value 32·b + m.
func quantQ3K(blk []byte, x []float32) {
	var (
		L      [superBlock]int8
		scales [16]float32
	)
	var maxScale, amax float32
	for j := range 16 {
		scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
		if a := absf32(scales[j]); a > amax {
			amax, maxScale = a, scales[j]
		}
	}
	sc := blk[96:108]
	clear(sc)
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := range 16 {
			l := int8(ggmlNearestInt(iscale * scales[j]))
			l = int8(max(-32, min(31, int(l))) + 32)
			if j < 8 {
				sc[j] = uint8(l & 0xf)
			} else {
				sc[j-8] |= uint8(l&0xf) << 4
			}
			sc[8+j%4] |= uint8(l>>4) << (2 * (j / 4))
		}
		putHalf(blk[108:], 1/iscale)
	} else {
		putHalf(blk[108:], 0)
	}
	d := halfAt(blk[108:])
	for j := range 16 {
		dl := d * float32(q3KScale(sc, j))
		if dl == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(max(-4, min(3, ggmlNearestInt(x[i]/dl))) + 4)
		}
	}
	hmask := blk[0:32]
	clear(hmask)
	var low [superBlock]uint8
	for j, l := range L {
		if l > 3 {
			hmask[j%32] |= 1 << (j / 32)
			l -= 4
		}
		low[j] = uint8(l)
	}
	pack2Bit(blk[32:96], low[:])
}

// dequantQ3K is dequantize_row_q3_K for one super-block.
func dequantQ3K(dst []float32, blk []byte) {
	hmask, qs, sc := blk[0:32], blk[32:96], blk[96:108]
	d := halfAt(blk[108:])
	y := 0
	for half := range 2 {
		q := qs[32*half:]
		for step := range 4 {
			shift, bit := uint(2*step), byte(1)<<(4*half+step)
			for _, off := range [2]int{0, 16} {
				dl := d * float32(q3KScale(sc, 8*half+2*step+off/16))
				for l := off; l < off+16; l++ {
					v := int(q[l] >> shift & 3)
					if hmask[l]&bit == 0 {
						v -= 4
					}
					dst[y] = dl * float32(v)
					y++
				}
			}
		}
	}
}

// quantQ6K is quantize_row_q6_K_ref. q6_K is {u8 ql[128]; u8 qh[64]; i8
// scales[16]; f16 d}: group j of 16 values has scale d·scales[j]; value =
// scale·(q - 32), q's low nibble in ql and its top two bits in qh. Within
// each 128 values, value l+32k (l < 32, k < 4) has its nibble in ql[l +
// 32·(k&1)] (low half for k < 2) and its top bits at bits 2k of qh[l].
func quantQ6K(blk []byte, x []float32) {
	var (
		L      [superBlock]int8
		scales [16]float32
	)
	var maxScale, amax float32
	for j := range 16 {
		scales[j] = makeSymQuants(32, x[16*j:16*j+16], L[16*j:16*j+16])
		if a := absf32(scales[j]); a > amax {
			amax, maxScale = a, scales[j]
		}
	}
	clear(blk[:210])
	if amax < groupMaxEps {
		return
	}
	iscale := -128 / maxScale
	putHalf(blk[208:], 1/iscale)
	sc := blk[192:208]
	for j := range 16 {
		sc[j] = uint8(int8(min(127, ggmlNearestInt(iscale*scales[j]))))
	}
	d := halfAt(blk[208:])
	for j := range 16 {
		dl := d * float32(int8(sc[j]))
		if dl == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(max(-32, min(31, ggmlNearestInt(x[i]/dl))) + 32)
		}
	}
	for j := 0; j < superBlock; j += 128 {
		ql, qh := blk[j/2:], blk[128+j/4:]
		for l := range 32 {
			q := [4]uint8{uint8(L[j+l]), uint8(L[j+l+32]), uint8(L[j+l+64]), uint8(L[j+l+96])}
			ql[l] = q[0]&0xf | (q[2]&0xf)<<4
			ql[l+32] = q[1]&0xf | (q[3]&0xf)<<4
			qh[l] = q[0]>>4 | (q[1]>>4)<<2 | (q[2]>>4)<<4 | (q[3]>>4)<<6
		}
	}
}

// dequantQ6K is dequantize_row_q6_K for one super-block.
func dequantQ6K(dst []float32, blk []byte) {
	d := halfAt(blk[208:])
	for n := 0; n < superBlock; n += 128 {
		ql, qh, sc := blk[n/2:], blk[128+n/4:], blk[192+n/16:]
		for l := range 32 {
			is := l / 16
			for k := range 4 {
				q := int(ql[l+32*(k&1)]>>(4*(k>>1))&0xf|(qh[l]>>(2*k)&3)<<4) - 32
				dst[n+l+32*k] = d * float32(int8(sc[is+2*k])) * float32(q)
			}
		}
	}
}

// quantQ8K is quantize_row_q8_K_ref. q8_K is {f32 d; i8 qs[256]; i16
// bsums[16]} with value = d·q, bsums[j] = the sum of group j's 16 quants. An
// all-zero block stores d = 0, zero quants and zero sums (ggml leaves the
// sums untouched there).
func quantQ8K(blk []byte, x []float32) {
	peak, amax := signedPeak(x[:superBlock])
	clear(blk[:292])
	if amax == 0 {
		return
	}
	iscale := -127 / peak
	qs := blk[4:260]
	for j, v := range x[:superBlock] {
		qs[j] = uint8(int8(min(127, ggmlNearestInt(iscale*v))))
	}
	for j := range 16 {
		sum := 0
		for _, q := range qs[16*j : 16*j+16] {
			sum += int(int8(q))
		}
		binary.LittleEndian.PutUint16(blk[260+2*j:], uint16(int16(sum)))
	}
	binary.LittleEndian.PutUint32(blk[0:], math.Float32bits(1/iscale))
}

// dequantQ8K is dequantize_row_q8_K for one super-block.
func dequantQ8K(dst []float32, blk []byte) {
	d := math.Float32frombits(binary.LittleEndian.Uint32(blk[0:]))
	for j := range superBlock {
		dst[j] = d * float32(int8(blk[4+j]))
	}
}
