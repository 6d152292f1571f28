package quant

import (
	"encoding/binary"
	"math"

	"github.com/ternion/ternion/internal/half"
)

// ggml's ternary formats: 256 values per block, each -d, 0 or +d with one
// fp16 d per block, the absolute maximum of the block.

func init() {
	register(Format{ID: 34, Name: "tq1_0", BlockElems: 256, BlockBytes: 54, dequant: dequantTQ1, quant: quantTQ1})
	register(Format{ID: 35, Name: "tq2_0", BlockElems: 256, BlockBytes: 66, dequant: dequantTQ2, quant: quantTQ2})
}

// tqScale returns d, the block's absolute maximum, and its inverse id (0
// for d == 0) as quantize_row_tq*_ref compute them. ggml's MAX(a, b) is
// a > b ? a : b, so a NaN resets the running maximum to whatever follows
// it; this is copied too.
func tqScale(src []float32) (d, id float32) {
	for _, v := range src {
		a := float32(math.Abs(float64(v)))
		if !(d > a) {
			d = a
		}
	}
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// tqTrit is ggml's lroundf(x) + 1 (-1, 0, +1 become 0, 1, 2), kept to its
// low 8 bits as ggml's uint8_t arithmetic keeps it. lroundf rounds halves
// away from zero, like math.Round; for NaN and values beyond int64, where
// C leaves the result undefined, this follows x86-64 (cvttss2si gives
// math.MinInt64, so the trit is 1).
func tqTrit(x float32) uint8 {
	r := math.Round(float64(x))
	if r != r || r >= 1<<63 || r < -(1<<63) {
		return 1 // uint8(math.MinInt64 + 1)
	}
	return uint8(int64(r) + 1)
}

// packTrits5 packs trits (0..2, first trit most significant) into a byte
// b = ceil(v * 256 / 243) of their base-3 value v, so that multiplying b by
// 3^n (mod 256) brings trit n to the top: see trit.
func packTrits5(q uint8) uint8 { return uint8((uint16(q)*256 + 242) / 243) }

// trit extracts trit n (0 = most significant) of a byte packed by
// packTrits5, minus 1: -1, 0 or +1 (2 for bytes no encoder writes).
func trit(b uint8, n int) int {
	q := b * [5]uint8{1, 3, 9, 27, 81}[n]
	return int(uint16(q)*3>>8) - 1
}

// quantTQ1 encodes a tq1_0 block (1.6875 bits per value, 54 bytes):
//
//	[0:32]  5 trits per byte: values m, m+32, ..., m+128 in byte m
//	[32:48] 5 trits per byte: values 160+m, 160+m+16, ..., 160+m+64
//	[48:52] 4 trits per byte (a fifth, zero, trit last): values 240+j,
//	        244+j, 248+j, 252+j in byte 48+j
//	[52:54] fp16 d
//
// each trit t (value = (t-1) * d) stored as packTrits5 of the bytes' base-3
// number, first value most significant: quantize_row_tq1_0_ref.
func quantTQ1(blk []byte, src []float32) {
	d, id := tqScale(src)
	pack := func(base, stride, n int) uint8 {
		var q uint8
		for i := range n {
			q = q*3 + tqTrit(src[base+i*stride]*id)
		}
		return q
	}
	for m := range 32 {
		blk[m] = packTrits5(pack(m, 32, 5))
	}
	for m := range 16 {
		blk[32+m] = packTrits5(pack(160+m, 16, 5))
	}
	for j := range 4 {
		blk[48+j] = packTrits5(pack(240+j, 4, 4) * 3)
	}
	binary.LittleEndian.PutUint16(blk[52:], half.F16FromF32(d))
}

// dequantTQ1 decodes a tq1_0 block (layout at quantTQ1):
// dequantize_row_tq1_0.
func dequantTQ1(dst []float32, blk []byte) {
	d := half.F16ToF32(binary.LittleEndian.Uint16(blk[52:]))
	for n := range 5 {
		for m := range 32 {
			dst[32*n+m] = float32(trit(blk[m], n)) * d
		}
		for m := range 16 {
			dst[160+16*n+m] = float32(trit(blk[32+m], n)) * d
		}
	}
	for n := range 4 {
		for j := range 4 {
			dst[240+4*n+j] = float32(trit(blk[48+j], n)) * d
		}
	}
}

// quantTQ2 encodes a tq2_0 block (2.0625 bits per value, 66 bytes):
//
//	[0:64]  2 bits per value, t = trit + 1 (0..2): value 128h + 32l + m in
//	        bits 2l..2l+1 of byte 32h + m
//	[64:66] fp16 d
//
// quantize_row_tq2_0_ref.
func quantTQ2(blk []byte, src []float32) {
	d, id := tqScale(src)
	for h := range 2 {
		for m := range 32 {
			var q uint8
			for l := range 4 {
				q += (tqTrit(src[128*h+32*l+m]*id) & 3) << (2 * l)
			}
			blk[32*h+m] = q
		}
	}
	binary.LittleEndian.PutUint16(blk[64:], half.F16FromF32(d))
}

// dequantTQ2 decodes a tq2_0 block (layout at quantTQ2); the unused code 3
// decodes to 2d, as in ggml's dequantize_row_tq2_0.
func dequantTQ2(dst []float32, blk []byte) {
	d := half.F16ToF32(binary.LittleEndian.Uint16(blk[64:]))
	for h := range 2 {
		for l := range 4 {
			for m := range 32 {
				dst[128*h+32*l+m] = float32(int(blk[32*h+m]>>(2*l)&3)-1) * d
			}
		}
	}
}
