package quant

import (
	"encoding/binary"

	"github.com/ternion/ternion/internal/half"
)

// ggml's grid-based "i-quants" of 256 values per super-block. ggml only
// quantizes them with an importance matrix and a search over the grid, so
// quant has their dequantizers alone (quant is nil). The decoders follow
// ggml's dequantize_row_iq* (src/ggml-quants.c) operation for operation in
// float32, so their results are bit-identical to ggml's for finite scales.

const iqSuperBlock = 256 // QK_K

// iqDelta is IQ1S_DELTA (and IQ1M_DELTA): the shift of iq1 grid points.
const iqDelta = 0.125

func init() {
	register(Format{ID: 16, Name: "iq2_xxs", BlockElems: iqSuperBlock, BlockBytes: 66, dequant: dequantIQ2XXS})
	register(Format{ID: 17, Name: "iq2_xs", BlockElems: iqSuperBlock, BlockBytes: 74, dequant: dequantIQ2XS})
	register(Format{ID: 18, Name: "iq3_xxs", BlockElems: iqSuperBlock, BlockBytes: 98, dequant: dequantIQ3XXS})
	register(Format{ID: 19, Name: "iq1_s", BlockElems: iqSuperBlock, BlockBytes: 50, dequant: dequantIQ1S})
	register(Format{ID: 21, Name: "iq3_s", BlockElems: iqSuperBlock, BlockBytes: 110, dequant: dequantIQ3S})
	register(Format{ID: 22, Name: "iq2_s", BlockElems: iqSuperBlock, BlockBytes: 82, dequant: dequantIQ2S})
	register(Format{ID: 29, Name: "iq1_m", BlockElems: iqSuperBlock, BlockBytes: 56, dequant: dequantIQ1M})
}

// putSignedGrid writes the 8 magnitudes of grid (byte j is element j),
// each times scale and negated where bit j of signs is set: ggml's
// y[j] = db * grid[j] * (signs & kmask_iq2xs[j] ? -1 : 1).
func putSignedGrid(dst []float32, scale float32, grid uint64, signs uint8) {
	dst = dst[:8]
	for j := range dst {
		v := scale * float32(uint8(grid>>(8*j)))
		if signs>>j&1 != 0 {
			v = -v
		}
		dst[j] = v
	}
}

// putShiftedGrid writes the 8 signed grid values of an iq1 point (byte j,
// as int8, is element j), shifted by delta and times scale:
// ggml's y[j] = dl * (grid[j] + delta).
func putShiftedGrid(dst []float32, scale, delta float32, grid uint64) {
	dst = dst[:8]
	for j := range dst {
		dst[j] = scale * (float32(int8(grid>>(8*j))) + delta)
	}
}

// blockScale reads a block's leading fp16 scale d.
func blockScale(blk []byte) float32 { return half.F16ToF32(binary.LittleEndian.Uint16(blk)) }

// dequantIQ2XXS decodes an iq2_xxs block (2.0625 bits per value, 66 bytes):
//
//	[0:2]   fp16 d
//	[2:66]  8 groups of 32 values, 8 bytes each: 4 indices into
//	        iq2xxs_grid (one per 8 values), then a little-endian uint32 of
//	        four 7-bit ksigns_iq2xs indices (bits 7l..7l+6) and a 4-bit
//	        scale s (bits 28..31)
//
// value = d * (0.5 + s) * 0.25 * grid byte * sign.
func dequantIQ2XXS(dst []float32, blk []byte) {
	d := blockScale(blk)
	for ib := range 8 {
		g := blk[2+8*ib : 2+8*ib+8]
		aux := binary.LittleEndian.Uint32(g[4:])
		db := d * (0.5 + float32(aux>>28)) * 0.25
		for l := range 4 {
			putSignedGrid(dst[32*ib+8*l:], db, iq2xxsGrid[g[l]], ksignsIQ2XS[aux>>(7*l)&127])
		}
	}
}

// dequantIQ2XS decodes an iq2_xs block (2.3125 bits per value, 74 bytes):
//
//	[2:66]   32 little-endian uint16, one per 8 values: a 9-bit index into
//	         iq2xs_grid (bits 0..8) and a 7-bit ksigns_iq2xs index (9..15)
//	[66:74]  one byte per 32 values: the 4-bit scale of its first 16 values
//	         (low nibble) and of its last 16 (high nibble)
//
// after the fp16 d at [0:2]; value = d * (0.5 + s) * 0.25 * grid byte * sign.
func dequantIQ2XS(dst []float32, blk []byte) {
	d := blockScale(blk)
	for ib := range 8 {
		sc := blk[66+ib]
		db := [2]float32{d * (0.5 + float32(sc&0xf)) * 0.25, d * (0.5 + float32(sc>>4)) * 0.25}
		for l := range 4 {
			q := binary.LittleEndian.Uint16(blk[2+2*(4*ib+l):])
			putSignedGrid(dst[32*ib+8*l:], db[l/2], iq2xsGrid[q&511], ksignsIQ2XS[q>>9])
		}
	}
}

// dequantIQ2S decodes an iq2_s block (2.5625 bits per value, 82 bytes):
//
//	[0:2]    fp16 d
//	[2:34]   low 8 bits of a 10-bit iq2s_grid index per 8 values
//	[34:66]  the 8 sign bits of each 8 values (bit j: element j negative)
//	[66:74]  one byte per 32 values: bits 2l, 2l+1 are the index's top bits
//	         for its l-th 8 values
//	[74:82]  4-bit scales as in iq2_xs
//
// value = d * (0.5 + s) * 0.25 * grid byte * sign.
func dequantIQ2S(dst []float32, blk []byte) {
	d := blockScale(blk)
	qs, signs, qh, scales := blk[2:34], blk[34:66], blk[66:74], blk[74:82]
	for ib := range 8 {
		db := [2]float32{d * (0.5 + float32(scales[ib]&0xf)) * 0.25, d * (0.5 + float32(scales[ib]>>4)) * 0.25}
		for l := range 4 {
			k := 4*ib + l
			idx := int(qs[k]) | int(qh[ib])<<(8-2*l)&0x300
			putSignedGrid(dst[8*k:], db[l/2], iq2sGrid[idx], signs[k])
		}
	}
}

// dequantIQ3XXS decodes an iq3_xxs block (3.0625 bits per value, 98 bytes):
//
//	[0:2]    fp16 d
//	[2:66]   one iq3xxs_grid index per 4 values
//	[66:98]  per 32 values a little-endian uint32: four 7-bit ksigns_iq2xs
//	         indices (one per 8 values) and a 4-bit scale s (bits 28..31)
//
// value = d * (0.5 + s) * 0.5 * grid byte * sign.
func dequantIQ3XXS(dst []float32, blk []byte) {
	d := blockScale(blk)
	qs := blk[2:66]
	for ib := range 8 {
		aux := binary.LittleEndian.Uint32(blk[66+4*ib:])
		db := d * (0.5 + float32(aux>>28)) * 0.5
		for l := range 4 {
			k := 4*ib + l
			grid := uint64(iq3xxsGrid[qs[2*k]]) | uint64(iq3xxsGrid[qs[2*k+1]])<<32
			putSignedGrid(dst[8*k:], db, grid, ksignsIQ2XS[aux>>(7*l)&127])
		}
	}
}

// dequantIQ3S decodes an iq3_s block (3.4375 bits per value, 110 bytes):
//
//	[0:2]     fp16 d
//	[2:66]    low 8 bits of a 9-bit iq3s_grid index per 4 values
//	[66:74]   one byte per 32 values: bit m is the top index bit of its
//	          m-th 4 values
//	[74:106]  the 8 sign bits of each 8 values
//	[106:110] one byte per 64 values: the 4-bit scale s of its first 32
//	          (low nibble) and of its last 32 (high nibble)
//
// value = d * (1 + 2s) * grid byte * sign.
func dequantIQ3S(dst []float32, blk []byte) {
	d := blockScale(blk)
	qs, qh, signs, scales := blk[2:66], blk[66:74], blk[74:106], blk[106:110]
	for ib := range 8 {
		db := d * float32(1+2*int(scales[ib/2]>>(4*(ib%2))&0xf))
		for l := range 4 {
			k := 4*ib + l
			i1 := int(qs[2*k]) | int(qh[ib])<<(8-2*l)&256
			i2 := int(qs[2*k+1]) | int(qh[ib])<<(7-2*l)&256
			grid := uint64(iq3sGrid[i1]) | uint64(iq3sGrid[i2])<<32
			putSignedGrid(dst[8*k:], db, grid, signs[k])
		}
	}
}

// dequantIQ1S decodes an iq1_s block (1.5625 bits per value, 50 bytes):
//
//	[0:2]   fp16 d
//	[2:34]  low 8 bits of an 11-bit iq1s_grid index per 8 values
//	[34:50] per 32 values a little-endian uint16: bits 3l..3l+2 the top
//	        index bits of its l-th 8 values, bits 12..14 a scale s, bit 15
//	        the sign of the shift delta
//
// value = d * (2s + 1) * (grid int8 + delta), delta = ±0.125.
func dequantIQ1S(dst []float32, blk []byte) {
	d := blockScale(blk)
	qs := blk[2:34]
	for ib := range 8 {
		qh := binary.LittleEndian.Uint16(blk[34+2*ib:])
		dl := d * float32(2*(qh>>12&7)+1)
		delta := float32(iqDelta)
		if qh&0x8000 != 0 {
			delta = -iqDelta
		}
		for l := range 4 {
			k := 4*ib + l
			idx := int(qs[k]) | int(qh>>(3*l)&7)<<8
			putShiftedGrid(dst[8*k:], dl, delta, iq1sGrid[idx])
		}
	}
}

// dequantIQ1M decodes an iq1_m block (1.75 bits per value, 56 bytes):
//
//	[0:32]  low 8 bits of an 11-bit iq1s_grid index per 8 values
//	[32:48] one nibble per 8 values (low nibble first): bits 0..2 the
//	        index's top bits, bit 3 the sign of the shift delta
//	[48:56] four little-endian uint16: bits 0..11 of word w hold the 3-bit
//	        scales s of values 64w..64w+63, 16 values each; bits 12..15 of
//	        word w are bits 4w..4w+3 of the block's fp16 d
//
// value = d * (2s + 1) * (grid int8 + delta), delta = ±0.125.
func dequantIQ1M(dst []float32, blk []byte) {
	var sc [4]uint16
	for w := range sc {
		sc[w] = binary.LittleEndian.Uint16(blk[48+2*w:])
	}
	d := half.F16ToF32(sc[0]>>12 | sc[1]>>8&0x00f0 | sc[2]>>4&0x0f00 | sc[3]&0xf000)
	qs, qh := blk[0:32], blk[32:48]
	for k := range 32 { // 8 values each
		h := k / 2 // 16 values per scale
		dl := d * float32(2*(sc[h/4]>>(3*(h%4))&7)+1)
		nib := qh[k/2] >> (4 * (k % 2))
		delta := float32(iqDelta)
		if nib&8 != 0 {
			delta = -iqDelta
		}
		idx := int(qs[k]) | int(nib&7)<<8
		putShiftedGrid(dst[8*k:], dl, delta, iq1sGrid[idx])
	}
}
