package quant

import (
	"encoding/binary"
	"math"
)

// The legacy formats: blocks of 32 values with one fp16 scale (and for the
// _1 types an fp16 offset). Nibble j of a 4-bit block holds value j in its
// low half and value j+16 in its high half; the 5-bit types keep the fifth
// bit of value j in bit j of a little-endian uint32 qh.

const legacyBlock = 32

// init registers the legacy formats under their ggml type ids.
func init() {
	register(Format{ID: 2, Name: "q4_0", BlockElems: 32, BlockBytes: 18, dequant: dequantQ4_0, quant: quantQ4_0})
	register(Format{ID: 3, Name: "q4_1", BlockElems: 32, BlockBytes: 20, dequant: dequantQ4_1, quant: quantQ4_1})
	register(Format{ID: 6, Name: "q5_0", BlockElems: 32, BlockBytes: 22, dequant: dequantQ5_0, quant: quantQ5_0})
	register(Format{ID: 7, Name: "q5_1", BlockElems: 32, BlockBytes: 24, dequant: dequantQ5_1, quant: quantQ5_1})
	register(Format{ID: 8, Name: "q8_0", BlockElems: 32, BlockBytes: 34, dequant: dequantQ8_0, quant: quantQ8_0})
	register(Format{ID: 9, Name: "q8_1", BlockElems: 32, BlockBytes: 36, dequant: dequantQ8_1, quant: quantQ8_1})
}

// minMax returns the smallest and largest value of x, starting from ±FLT_MAX
// as quantize_row_q4_1_ref does.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// inverse is ggml's `d ? 1.0f/d : 0.0f`.
func inverse(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// quantQ4_0 is quantize_row_q4_0_ref. q4_0 is {f16 d; u8 qs[16]} with
// value = (q - 8)·d; d = max/-8 maps the value of largest magnitude to q = 0.
func quantQ4_0(blk []byte, x []float32) {
	max, _ := signedPeak(x[:legacyBlock])
	d := max / -8
	id := inverse(d)
	putHalf(blk[0:], d)
	for j := range 16 {
		q0 := min(15, int(int8(float32(x[j]*id)+8.5)))
		q1 := min(15, int(int8(float32(x[16+j]*id)+8.5)))
		blk[2+j] = uint8(q0) | uint8(q1)<<4
	}
}

// dequantQ4_0 is dequantize_row_q4_0 for one block.
func dequantQ4_0(dst []float32, blk []byte) {
	d := halfAt(blk[0:])
	for j := range 16 {
		dst[j] = float32(int(blk[2+j]&0x0f)-8) * d
		dst[16+j] = float32(int(blk[2+j]>>4)-8) * d
	}
}

// quantQ4_1 is quantize_row_q4_1_ref. q4_1 is {f16 d, m; u8 qs[16]} with
// value = q·d + m; m is the block minimum, d spans it to the maximum.
func quantQ4_1(blk []byte, x []float32) {
	lo, hi := minMax(x[:legacyBlock])
	d := (hi - lo) / 15
	id := inverse(d)
	putHalf(blk[0:], d)
	putHalf(blk[2:], lo)
	for j := range 16 {
		q0 := min(15, int(int8(float32((x[j]-lo)*id)+0.5)))
		q1 := min(15, int(int8(float32((x[16+j]-lo)*id)+0.5)))
		blk[4+j] = uint8(q0) | uint8(q1)<<4
	}
}

// dequantQ4_1 is dequantize_row_q4_1 for one block.
func dequantQ4_1(dst []float32, blk []byte) {
	d, m := halfAt(blk[0:]), halfAt(blk[2:])
	for j := range 16 {
		dst[j] = float32(float32(blk[4+j]&0x0f)*d) + m
		dst[16+j] = float32(float32(blk[4+j]>>4)*d) + m
	}
}

// quantQ5_0 is quantize_row_q5_0_ref. q5_0 is {f16 d; u32 qh; u8 qs[16]}
// with value = (q - 16)·d and d = max/-16.
func quantQ5_0(blk []byte, x []float32) {
	max, _ := signedPeak(x[:legacyBlock])
	d := max / -16
	id := inverse(d)
	putHalf(blk[0:], d)
	var qh uint32
	for j := range 16 {
		q0 := uint8(min(31, int(int8(float32(x[j]*id)+16.5))))
		q1 := uint8(min(31, int(int8(float32(x[16+j]*id)+16.5))))
		blk[6+j] = q0&0x0f | (q1&0x0f)<<4
		qh |= uint32(q0>>4&1)<<j | uint32(q1>>4&1)<<(j+16)
	}
	binary.LittleEndian.PutUint32(blk[2:], qh)
}

// dequantQ5_0 is dequantize_row_q5_0 for one block.
func dequantQ5_0(dst []float32, blk []byte) {
	d := halfAt(blk[0:])
	qh := binary.LittleEndian.Uint32(blk[2:])
	for j := range 16 {
		q0 := int(blk[6+j]&0x0f) | int(qh>>j&1)<<4
		q1 := int(blk[6+j]>>4) | int(qh>>(j+16)&1)<<4
		dst[j] = float32(q0-16) * d
		dst[16+j] = float32(q1-16) * d
	}
}

// quantQ5_1 is quantize_row_q5_1_ref. q5_1 is {f16 d, m; u32 qh; u8 qs[16]}
// with value = q·d + m.
func quantQ5_1(blk []byte, x []float32) {
	lo, hi := minMax(x[:legacyBlock])
	d := (hi - lo) / 31
	id := inverse(d)
	putHalf(blk[0:], d)
	putHalf(blk[2:], lo)
	var qh uint32
	for j := range 16 {
		q0 := uint8(float32((x[j]-lo)*id) + 0.5)
		q1 := uint8(float32((x[16+j]-lo)*id) + 0.5)
		blk[8+j] = q0&0x0f | (q1&0x0f)<<4
		qh |= uint32(q0>>4&1)<<j | uint32(q1>>4&1)<<(j+16)
	}
	binary.LittleEndian.PutUint32(blk[4:], qh)
}

// dequantQ5_1 is dequantize_row_q5_1 for one block.
func dequantQ5_1(dst []float32, blk []byte) {
	d, m := halfAt(blk[0:]), halfAt(blk[2:])
	qh := binary.LittleEndian.Uint32(blk[4:])
	for j := range 16 {
		q0 := blk[8+j]&0x0f | uint8(qh>>j&1)<<4
		q1 := blk[8+j]>>4 | uint8(qh>>(j+16)&1)<<4
		dst[j] = float32(float32(q0)*d) + m
		dst[16+j] = float32(float32(q1)*d) + m
	}
}

// q8Scale is the shared front of q8_0 and q8_1: d = amax/127 and the
// block's values rounded half away from zero (roundf) at 1/d into qs.
func q8Scale(qs []byte, x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := absf32(v); a > amax {
			amax = a
		}
	}
	d := amax / 127
	id := inverse(d)
	for j, v := range x {
		qs[j] = byte(int8(math.Round(float64(v * id))))
	}
	return d
}

// quantQ8_0 is quantize_row_q8_0_ref. q8_0 is {f16 d; i8 qs[32]} with
// value = q·d.
func quantQ8_0(blk []byte, x []float32) {
	putHalf(blk[0:], q8Scale(blk[2:2+legacyBlock], x[:legacyBlock]))
}

// dequantQ8_0 is dequantize_row_q8_0 for one block.
func dequantQ8_0(dst []float32, blk []byte) {
	d := halfAt(blk[0:])
	for j := range legacyBlock {
		dst[j] = float32(int8(blk[2+j])) * d
	}
}

// quantQ8_1 is quantize_row_q8_1_ref. q8_1 is {f16 d; f16 s; i8 qs[32]}
// with value = q·d and s = d·Σq (the activations' side of the q4_1/q5_1
// dot products).
func quantQ8_1(blk []byte, x []float32) {
	qs := blk[4 : 4+legacyBlock]
	d := q8Scale(qs, x[:legacyBlock])
	sum := 0
	for _, q := range qs {
		sum += int(int8(q))
	}
	putHalf(blk[0:], d)
	putHalf(blk[2:], float32(sum)*d)
}

// dequantQ8_1 decodes one q8_1 block as q8_0 does (s is not needed).
func dequantQ8_1(dst []float32, blk []byte) {
	d := halfAt(blk[0:])
	for j := range legacyBlock {
		dst[j] = float32(int8(blk[4+j])) * d
	}
}
