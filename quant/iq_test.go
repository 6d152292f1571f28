package quant

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/half"
)

// The i-quants have no ggml golden data here, so these tests build blocks
// field by field from the block definitions (ggml-common.h) and compute
// every decoded value a second time, element by element, from the grid
// file, the sign rule and the type's formula. The formulas are exact: an
// fp16 d (11 significant bits) times a small odd or half-integer scale (at
// most 6 bits) times a grid byte (at most 6 bits) fits float32's 24 bits,
// so ggml's float32 evaluation order cannot round, and the float64 product
// below, converted to float32, must equal the decoder's bit for bit.

// iqFields are the fields of one i-quant super-block of 256 values.
type iqFields struct {
	d     float32 // the block scale, an fp16 value
	scale []int   // one per scale group
	grid  []int   // one grid index per grid point (8 values, 4 for iq3)
	// signs holds the 8 sign bits of each 8 values (bit j set: value j is
	// negative). The types that store a 7-bit ksigns index keep bits 0..6;
	// their bit 7 is implied: the parity of bits 0..6.
	signs  []uint8
	parity bool   // signs are 7-bit ksigns indices
	neg    []bool // iq1: the shift is -1/8 instead of +1/8, per shift group
}

// iqSpec describes one i-quant for the tests: field counts and widths,
// how to pack the fields into a block, and the value formula.
type iqSpec struct {
	name       string
	id         int
	bytes      int
	scaleEvery int // values per scale
	scaleBits  int
	pointSize  int // values per grid point
	gridBits   int // index bits
	gridFile   string
	signBits   int // 7 (ksigns index), 8 (explicit) or 0 (iq1: no signs)
	negEvery   int // iq1: values per shift sign
	pack       func(f iqFields) []byte
	// value is element i's value before the float32 conversion, from g,
	// the grid byte of element i.
	value func(f iqFields, i int, g byte) float64
}

func putF16(b []byte, d float32) { binary.LittleEndian.PutUint16(b, half.F16FromF32(d)) }

// sign is -1 where element i's sign bit is set: bit i%8 of the sign byte
// of its 8 values. With 7 stored bits, the eighth is their parity, so that
// every 8 values have an even number of minus signs.
func sign(f iqFields, i int) float64 {
	s := f.signs[i/8]
	if f.parity {
		s = s&0x7f | uint8(bits.OnesCount8(s&0x7f)&1)<<7
	}
	if s>>(i%8)&1 != 0 {
		return -1
	}
	return 1
}

func delta(neg bool) float64 {
	if neg {
		return -0.125
	}
	return 0.125
}

var iqSpecs = []iqSpec{
	{
		name: "iq2_xxs", id: 16, bytes: 66, scaleEvery: 32, scaleBits: 4, pointSize: 8, gridBits: 8, gridFile: "iq2xxs_grid", signBits: 7,
		pack: func(f iqFields) []byte {
			b := make([]byte, 66)
			putF16(b, f.d)
			for ib := range 8 {
				aux := uint32(f.scale[ib]) << 28
				for l := range 4 {
					b[2+8*ib+l] = byte(f.grid[4*ib+l])
					aux |= uint32(f.signs[4*ib+l]&0x7f) << (7 * l)
				}
				binary.LittleEndian.PutUint32(b[2+8*ib+4:], aux)
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * (0.5 + float64(f.scale[i/32])) / 4 * float64(g) * sign(f, i)
		},
	},
	{
		name: "iq2_xs", id: 17, bytes: 74, scaleEvery: 16, scaleBits: 4, pointSize: 8, gridBits: 9, gridFile: "iq2xs_grid", signBits: 7,
		pack: func(f iqFields) []byte {
			b := make([]byte, 74)
			putF16(b, f.d)
			for k := range 32 {
				binary.LittleEndian.PutUint16(b[2+2*k:], uint16(f.grid[k])|uint16(f.signs[k]&0x7f)<<9)
			}
			for ib := range 8 {
				b[66+ib] = byte(f.scale[2*ib] | f.scale[2*ib+1]<<4)
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * (0.5 + float64(f.scale[i/16])) / 4 * float64(g) * sign(f, i)
		},
	},
	{
		name: "iq2_s", id: 22, bytes: 82, scaleEvery: 16, scaleBits: 4, pointSize: 8, gridBits: 10, gridFile: "iq2s_grid", signBits: 8,
		pack: func(f iqFields) []byte {
			b := make([]byte, 82)
			putF16(b, f.d)
			for k := range 32 {
				b[2+k] = byte(f.grid[k])
				b[34+k] = f.signs[k]
				b[66+k/4] |= byte(f.grid[k]>>8) << (2 * (k % 4))
			}
			for ib := range 8 {
				b[74+ib] = byte(f.scale[2*ib] | f.scale[2*ib+1]<<4)
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * (0.5 + float64(f.scale[i/16])) / 4 * float64(g) * sign(f, i)
		},
	},
	{
		name: "iq3_xxs", id: 18, bytes: 98, scaleEvery: 32, scaleBits: 4, pointSize: 4, gridBits: 8, gridFile: "iq3xxs_grid", signBits: 7,
		pack: func(f iqFields) []byte {
			b := make([]byte, 98)
			putF16(b, f.d)
			for p := range 64 {
				b[2+p] = byte(f.grid[p])
			}
			for ib := range 8 {
				aux := uint32(f.scale[ib]) << 28
				for l := range 4 {
					aux |= uint32(f.signs[4*ib+l]&0x7f) << (7 * l)
				}
				binary.LittleEndian.PutUint32(b[66+4*ib:], aux)
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * (0.5 + float64(f.scale[i/32])) / 2 * float64(g) * sign(f, i)
		},
	},
	{
		name: "iq3_s", id: 21, bytes: 110, scaleEvery: 32, scaleBits: 4, pointSize: 4, gridBits: 9, gridFile: "iq3s_grid", signBits: 8,
		pack: func(f iqFields) []byte {
			b := make([]byte, 110)
			putF16(b, f.d)
			for p := range 64 {
				b[2+p] = byte(f.grid[p])
				b[66+p/8] |= byte(f.grid[p]>>8) << (p % 8)
			}
			for k := range 32 {
				b[74+k] = f.signs[k]
			}
			for ib := range 8 {
				b[106+ib/2] |= byte(f.scale[ib] << (4 * (ib % 2)))
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * float64(1+2*f.scale[i/32]) * float64(g) * sign(f, i)
		},
	},
	{
		name: "iq1_s", id: 19, bytes: 50, scaleEvery: 32, scaleBits: 3, pointSize: 8, gridBits: 11, gridFile: "iq1s_grid", negEvery: 32,
		pack: func(f iqFields) []byte {
			b := make([]byte, 50)
			putF16(b, f.d)
			for ib := range 8 {
				qh := uint16(f.scale[ib]) << 12
				if f.neg[ib] {
					qh |= 1 << 15
				}
				for l := range 4 {
					k := 4*ib + l
					b[2+k] = byte(f.grid[k])
					qh |= uint16(f.grid[k]>>8) << (3 * l)
				}
				binary.LittleEndian.PutUint16(b[34+2*ib:], qh)
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * float64(2*f.scale[i/32]+1) * (float64(int8(g)) + delta(f.neg[i/32]))
		},
	},
	{
		name: "iq1_m", id: 29, bytes: 56, scaleEvery: 16, scaleBits: 3, pointSize: 8, gridBits: 11, gridFile: "iq1s_grid", negEvery: 8,
		pack: func(f iqFields) []byte {
			b := make([]byte, 56)
			for k := range 32 {
				b[k] = byte(f.grid[k])
				nib := byte(f.grid[k] >> 8)
				if f.neg[k] {
					nib |= 8
				}
				b[32+k/2] |= nib << (4 * (k % 2))
			}
			dbits := half.F16FromF32(f.d)
			for w := range 4 {
				word := (dbits >> (4 * w) & 0xf) << 12
				for h := 4 * w; h < 4*w+4; h++ {
					word |= uint16(f.scale[h]) << (3 * (h % 4))
				}
				binary.LittleEndian.PutUint16(b[48+2*w:], word)
			}
			return b
		},
		value: func(f iqFields, i int, g byte) float64 {
			return float64(f.d) * float64(2*f.scale[i/16]+1) * (float64(int8(g)) + delta(f.neg[i/8]))
		},
	},
}

// expect computes the 256 values of f under spec s, element by element.
func (s iqSpec) expect(t *testing.T, f iqFields) []float32 {
	grid := readGridFile(t, s.gridFile)
	out := make([]float32, 256)
	for i := range out {
		g := byte(grid[f.grid[i/s.pointSize]] >> (8 * (i % s.pointSize)))
		out[i] = float32(s.value(f, i, g))
	}
	return out
}

// fieldGen makes the fields of one test block for spec s.
type fieldGen struct {
	name string
	d    float32
	// v returns field values: kind is "scale", "grid", "sign" or "neg",
	// k the field's position, max its largest value.
	v func(kind string, k, max int) int
}

func (g fieldGen) fields(s iqSpec) iqFields {
	f := iqFields{d: g.d, parity: s.signBits == 7}
	for k := range 256 / s.scaleEvery {
		f.scale = append(f.scale, g.v("scale", k, 1<<s.scaleBits-1))
	}
	for k := range 256 / s.pointSize {
		f.grid = append(f.grid, g.v("grid", k, 1<<s.gridBits-1))
	}
	if s.signBits > 0 {
		for k := range 32 {
			f.signs = append(f.signs, uint8(g.v("sign", k, 1<<s.signBits-1)))
		}
	}
	if s.negEvery > 0 {
		for k := range 256 / s.negEvery {
			f.neg = append(f.neg, g.v("neg", k, 1) == 1)
		}
	}
	return f
}

func fieldGens() []fieldGen {
	randomGen := func(seed uint64, d float32) fieldGen {
		r := rand.New(rand.NewPCG(seed, 7))
		return fieldGen{name: "random", d: d, v: func(_ string, _, max int) int { return r.IntN(max + 1) }}
	}
	gens := []fieldGen{
		{"zero fields", 1, func(string, int, int) int { return 0 }},
		{"max fields", -2.5, func(_ string, _, max int) int { return max }},
		{"counting", 0.375, func(_ string, k, max int) int { return (3*k + 1) % (max + 1) }},
		{"one sign each", 1.5, func(kind string, k, max int) int {
			if kind == "sign" {
				return 1 << (k % 7)
			}
			return max - k%(max+1)
		}},
		{"d zero", 0, func(_ string, k, max int) int { return k % (max + 1) }},
		{"d smallest subnormal", 0x1p-24, func(_ string, k, max int) int { return (5 * k) % (max + 1) }},
		{"d largest", 65504, func(_ string, k, max int) int { return (7 * k) % (max + 1) }},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for seed := range uint64(12) {
		// A random finite fp16 d.
		d := half.F16ToF32(uint16(r.IntN(0x7c00)) | uint16(r.IntN(2))<<15)
		gens = append(gens, randomGen(seed, d))
	}
	return gens
}

func bitsOf(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

func TestIQDequantizeFields(t *testing.T) {
	for _, s := range iqSpecs {
		for _, g := range fieldGens() {
			t.Run(s.name+"/"+g.name, func(t *testing.T) {
				f := g.fields(s)
				want := s.expect(t, f)
				format, ok := Lookup(s.id)
				require.True(t, ok)
				got := make([]float32, 256)
				require.NoError(t, format.Dequantize(got, s.pack(f)))
				wb, gb := bitsOf(want), bitsOf(got)
				for i := range wb {
					if wb[i] != gb[i] {
						t.Fatalf("value %d: got %g (%#08x), want %g (%#08x)", i, got[i], gb[i], want[i], wb[i])
					}
				}
			})
		}
	}
}

// repeat returns the values v, each n times, in order: repeat(3, 1.0, 2, 5.0)
// is 1, 1, 1, 5, 5.
func repeat(nv ...float64) []float32 {
	var out []float32
	for i := 0; i < len(nv); i += 2 {
		for range int(nv[i]) {
			out = append(out, float32(nv[i+1]))
		}
	}
	return out
}

// TestIQDequantizeLiteral checks a few blocks written byte by byte against
// values worked out by hand from the grids' first entries (iq2xxs_grid[0]
// is eight 8s, iq3s_grid[0] four 1s, iq1s_grid[0] eight -1s and
// iq1s_grid[1] a +1 then seven -1s) and ksigns_iq2xs[1] = 0x81.
func TestIQDequantizeLiteral(t *testing.T) {
	tests := []struct {
		name  string
		id    int
		bytes int
		set   map[int]byte // block bytes that are not zero
		want  []float32
	}{
		{
			// d = 1; the first 32 values: scale 1 (db = 1.5/4), sign
			// index 1 for the first 8 (values 0 and 7 negative); the rest
			// scale 0 (db = 0.5/4); all grid index 0 (magnitude 8).
			name: "iq2_xxs", id: 16, bytes: 66,
			set:  map[int]byte{1: 0x3c, 2 + 4: 0x01, 2 + 7: 0x10},
			want: append(repeat(1, -3, 6, 3, 1, -3, 24, 3), repeat(224, 1)...),
		},
		{
			// d = 1; scales 0x21: values 0..31 times 3, 32..63 times 5, the
			// rest times 1; sign byte 0x0f on values 0..3; grid 0 (ones).
			name: "iq3_s", id: 21, bytes: 110,
			set:  map[int]byte{1: 0x3c, 74: 0x0f, 106: 0x21},
			want: repeat(4, -3, 28, 3, 32, 5, 192, 1),
		},
		{
			// d = 1; the first 32 values: scale 1 (dl = 3), shift -1/8,
			// value 0 from iq1s_grid[1] (+1); the rest dl = 1, shift +1/8.
			name: "iq1_s", id: 19, bytes: 50,
			set:  map[int]byte{1: 0x3c, 2: 0x01, 35: 0x90},
			want: repeat(1, 3*(1-0.125), 31, 3*(-1-0.125), 224, -1+0.125),
		},
		{
			// d = 1 = fp16 0x3c00 spread over the top nibbles of the scale
			// words (0xc in word 2, 0x3 in word 3); values 16..31 scale 2
			// (dl = 5); values 8..15 shift -1/8.
			name: "iq1_m", id: 29, bytes: 56,
			set:  map[int]byte{32: 0x80, 48: 2 << 3, 53: 0xc0, 55: 0x30},
			want: repeat(8, -1+0.125, 8, -1-0.125, 16, 5*(-1+0.125), 224, -1+0.125),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blk := make([]byte, tt.bytes)
			for off, b := range tt.set {
				blk[off] = b
			}
			f, ok := Lookup(tt.id)
			require.True(t, ok)
			got := make([]float32, 256)
			require.NoError(t, f.Dequantize(got, blk))
			assert.Equal(t, tt.want, got)
		})
	}
}

// iqTQIDs are the formats of iq.go and tq.go, with where each keeps the
// exponent's top bit of its fp16 d (byte, bit).
var iqTQIDs = []struct {
	id, dByte, dBit int
}{
	{16, 1, 6}, {17, 1, 6}, {18, 1, 6}, {19, 1, 6}, {21, 1, 6}, {22, 1, 6},
	{29, 55, 6}, // iq1_m: d's bits 12..15 are the top nibble of the last scale word
	{34, 53, 6}, {35, 65, 6},
}

// TestIQRandomBlocks decodes random blocks: every byte random but for a
// d that is kept finite. Nothing may panic and every value must be finite.
func TestIQRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range iqTQIDs {
		f, ok := Lookup(tt.id)
		require.True(t, ok, "type %d", tt.id)
		t.Run(f.Name, func(t *testing.T) {
			const nb = 300
			src := make([]byte, nb*f.BlockBytes)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			for b := range nb {
				blk := src[b*f.BlockBytes:]
				dst := make([]float32, 256)
				require.NoError(t, f.Dequantize(dst, blk[:f.BlockBytes]))
				if !finite(dst) { // d was Inf or NaN: clear its exponent's top bit
					blk[tt.dByte] &^= 1 << tt.dBit
				}
			}
			dst := make([]float32, nb*256)
			require.NotPanics(t, func() { require.NoError(t, f.Dequantize(dst, src)) })
			for i, v := range dst {
				if !assert.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0), "value %d of block %d: %g", i%256, i/256, v) {
					break
				}
			}
		})
	}
}

func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

func TestIQFormats(t *testing.T) {
	tests := []struct {
		id         int
		name       string
		elems      int
		bytes      int
		canQuant   bool
		bitsPerVal float64
	}{
		{16, "iq2_xxs", 256, 66, false, 2.0625},
		{17, "iq2_xs", 256, 74, false, 2.3125},
		{18, "iq3_xxs", 256, 98, false, 3.0625},
		{19, "iq1_s", 256, 50, false, 1.5625},
		{21, "iq3_s", 256, 110, false, 3.4375},
		{22, "iq2_s", 256, 82, false, 2.5625},
		{29, "iq1_m", 256, 56, false, 1.75},
		{34, "tq1_0", 256, 54, true, 1.6875},
		{35, "tq2_0", 256, 66, true, 2.0625},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := Lookup(tt.id)
			require.True(t, ok)
			assert.Equal(t, tt.id, f.ID)
			assert.Equal(t, tt.name, f.Name)
			assert.Equal(t, tt.name, f.String())
			assert.Equal(t, tt.elems, f.BlockElems)
			assert.Equal(t, tt.bytes, f.BlockBytes)
			assert.Equal(t, tt.canQuant, f.CanQuantize())
			assert.Equal(t, tt.bitsPerVal, float64(8*f.BlockBytes)/float64(f.BlockElems))
			assert.Equal(t, 3*tt.bytes, f.RowBytes(3*256))
		})
	}
}

// TestIQWrongLengths: values that do not fill whole blocks, too few bytes,
// and quantizing a format ggml only quantizes with an importance matrix.
func TestIQWrongLengths(t *testing.T) {
	for _, tt := range iqTQIDs {
		f, _ := Lookup(tt.id)
		t.Run(f.Name, func(t *testing.T) {
			blocks := make([]byte, 2*f.BlockBytes)
			assert.Error(t, f.Dequantize(make([]float32, 255), blocks), "255 values")
			assert.Error(t, f.Dequantize(make([]float32, 257), blocks), "257 values")
			assert.Error(t, f.Dequantize(make([]float32, 256), blocks[:f.BlockBytes-1]), "a byte short")
			assert.Error(t, f.Dequantize(make([]float32, 768), blocks), "3 blocks from 2")
			assert.NoError(t, f.Dequantize(make([]float32, 512), blocks))
			assert.NoError(t, f.Dequantize(nil, nil), "no values")

			src := make([]float32, 256)
			if !f.CanQuantize() {
				assert.ErrorIs(t, f.Quantize(blocks, src), ErrNoQuantizer)
				return
			}
			assert.Error(t, f.Quantize(blocks, make([]float32, 255)), "255 values")
			assert.Error(t, f.Quantize(blocks[:f.BlockBytes-1], src), "a byte short")
			assert.NoError(t, f.Quantize(blocks[:f.BlockBytes], src))
		})
	}
}
