package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/half"
)

// tqPlace says where value e of a block lives: for tq1_0 the byte and the
// trit (0 = most significant of the byte's base-3 number), for tq2_0 the
// byte and the 2-bit field. Written from the block layout, independently
// of tq.go's loops.
func tqPlace(id, e int) (byteAt, pos int) {
	if id == 34 {
		switch {
		case e < 160: // 32 bytes of 5 trits, stride 32
			return e % 32, e / 32
		case e < 240: // 16 bytes of 5 trits, stride 16
			return 32 + (e-160)%16, (e - 160) / 16
		default: // 4 bytes of 4 trits, stride 4
			return 48 + (e-240)%4, (e - 240) / 4
		}
	}
	return e/128*32 + e%32, e % 128 / 32
}

// tqDigits returns the 5 base-3 digits, most significant first, that a
// tq1_0 byte b stands for: b encodes v = floor(b * 243 / 256).
func tqDigits(b byte) [5]int {
	v := int(b) * 243 / 256
	var d [5]int
	for n := 4; n >= 0; n-- {
		d[n] = v % 3
		v /= 3
	}
	return d
}

// tqByte is the byte ggml stores for the base-3 number v: the smallest b
// with floor(b * 243 / 256) = v.
func tqByte(v int) byte {
	b := 0
	for b*243 < v*256 {
		b++
	}
	return byte(b)
}

// tqExpect decodes a block the slow way: value e = (code - 1) * d.
func tqExpect(id int, blk []byte) []float32 {
	dAt := 52
	if id == 35 {
		dAt = 64
	}
	d := half.F16ToF32(binary.LittleEndian.Uint16(blk[dAt:]))
	out := make([]float32, 256)
	for e := range out {
		at, pos := tqPlace(id, e)
		var code int
		if id == 34 {
			code = tqDigits(blk[at])[pos]
		} else {
			code = int(blk[at]>>(2*pos)) & 3
		}
		out[e] = float32(code-1) * d
	}
	return out
}

// tqEncode packs trits t (-1, 0, +1) and d the slow way.
func tqEncode(id int, t []int, d float32) []byte {
	f, _ := Lookup(id)
	blk := make([]byte, f.BlockBytes)
	if id == 35 {
		for e, x := range t {
			at, pos := tqPlace(id, e)
			blk[at] |= byte(x+1) << (2 * pos)
		}
		binary.LittleEndian.PutUint16(blk[64:], half.F16FromF32(d))
		return blk
	}
	digits := make([][5]int, 52)
	for e, x := range t {
		at, pos := tqPlace(id, e)
		digits[at][pos] = x + 1 // the 4-trit bytes keep a zero fifth digit
	}
	for at, ds := range digits {
		v := 0
		for _, x := range ds {
			v = 3*v + x
		}
		blk[at] = tqByte(v)
	}
	binary.LittleEndian.PutUint16(blk[52:], half.F16FromF32(d))
	return blk
}

// TestTQLiteral: constant blocks, bytes worked out by hand. 1..1 in five
// trits is 242 (byte ceil(242*256/243) = 255), 0..0 is 121 (128); the
// 4-trit bytes hold 240 (253) and 120 (127).
func TestTQLiteral(t *testing.T) {
	tests := []struct {
		name string
		id   int
		x    float32
		qs   []byte // the packed trits
		d    uint16
	}{
		{"tq1_0 all -1", 34, -1, append(bytes.Repeat([]byte{0}, 48), 0, 0, 0, 0), 0x3c00},
		{"tq1_0 all 0", 34, 0, append(bytes.Repeat([]byte{128}, 48), 127, 127, 127, 127), 0},
		{"tq1_0 all +1", 34, 1, append(bytes.Repeat([]byte{255}, 48), 253, 253, 253, 253), 0x3c00},
		{"tq1_0 all -3.5", 34, -3.5, bytes.Repeat([]byte{0}, 52), 0x4300},
		{"tq2_0 all -1", 35, -1, bytes.Repeat([]byte{0x00}, 64), 0x3c00},
		{"tq2_0 all 0", 35, 0, bytes.Repeat([]byte{0x55}, 64), 0},
		{"tq2_0 all +1", 35, 1, bytes.Repeat([]byte{0xaa}, 64), 0x3c00},
		{"tq2_0 all 0.25", 35, 0.25, bytes.Repeat([]byte{0xaa}, 64), 0x3400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := Lookup(tt.id)
			src := make([]float32, 256)
			for i := range src {
				src[i] = tt.x
			}
			blk := make([]byte, f.BlockBytes)
			require.NoError(t, f.Quantize(blk, src))
			want := binary.LittleEndian.AppendUint16(append([]byte(nil), tt.qs...), tt.d)
			assert.Equal(t, want, blk)

			got := make([]float32, 256)
			require.NoError(t, f.Dequantize(got, blk))
			assert.Equal(t, src, got)
		})
	}
}

// TestTQDequantizeRandom decodes random blocks (finite d) and compares with
// the slow decoder, bit for bit. Every byte value is decoded: tq1_0 bytes
// no encoder writes and tq2_0's unused code 3 (2d) included.
func TestTQDequantizeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, id := range []int{34, 35} {
		f, _ := Lookup(id)
		t.Run(f.Name, func(t *testing.T) {
			for range 200 {
				blk := make([]byte, f.BlockBytes)
				for i := range blk {
					blk[i] = byte(r.Uint32())
				}
				d := half.F16FromF32(float32(r.NormFloat64()))
				binary.LittleEndian.PutUint16(blk[f.BlockBytes-2:], d)
				got := make([]float32, 256)
				require.NoError(t, f.Dequantize(got, blk))
				require.Equal(t, bitsOf(tqExpect(id, blk)), bitsOf(got), "block %x", blk)
			}
		})
	}
}

// TestTQRoundTrip: ternary rows t * d with d an fp16 value survive
// Quantize and Dequantize exactly, and the bytes are the slow encoder's.
func TestTQRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ds := []float32{1, 0.5, 3.140625, 65504, 0x1p-24, 0x1p-14, 1234, 0.0010004044}
	for range 20 {
		ds = append(ds, half.F16ToF32(uint16(1+r.IntN(0x7bff))))
	}
	for _, id := range []int{34, 35} {
		f, _ := Lookup(id)
		t.Run(f.Name, func(t *testing.T) {
			for _, d := range ds {
				require.Equal(t, d, half.F16ToF32(half.F16FromF32(d)), "test d %g is not an fp16", d)
				trits := make([]int, 256)
				src := make([]float32, 256)
				for i := range trits {
					trits[i] = r.IntN(3) - 1
				}
				trits[r.IntN(256)] = 2*r.IntN(2) - 1 // amax = d
				for i, x := range trits {
					src[i] = float32(x) * d
				}
				blk := make([]byte, f.BlockBytes)
				require.NoError(t, f.Quantize(blk, src))
				require.Equal(t, tqEncode(id, trits, d), blk, "d = %g", d)
				got := make([]float32, 256)
				require.NoError(t, f.Dequantize(got, blk))
				require.Equal(t, bitsOf(src), bitsOf(got), "d = %g", d)
			}
		})
	}
}

// TestTQRounding: value x of a block whose absolute maximum is m becomes
// round(x/m) * fp16(m), halves rounded away from zero (lroundf).
func TestTQRounding(t *testing.T) {
	tests := []struct {
		name       string
		max, x     float32
		wantMax, w float32 // the decoded max and x
	}{
		{"half up", 2, 1, 2, 2},
		{"half down", 2, -1, 2, -2},
		{"just under half", 2, 0.98, 2, 0},
		{"just over half", 2, 1.02, 2, 2},
		{"negative under half", 2, -0.98, 2, 0},
		{"negative max", -4, 3, 4, 4},
		{"max not an fp16", 1.0003, -1.0003, 1, -1},
		{"tiny", 0x1p-30, 0x1p-31, 0, 0}, // d rounds to fp16 zero
	}
	for _, id := range []int{34, 35} {
		f, _ := Lookup(id)
		for _, tt := range tests {
			t.Run(f.Name+"/"+tt.name, func(t *testing.T) {
				src := make([]float32, 256)
				src[0], src[200] = tt.max, tt.x
				blk := make([]byte, f.BlockBytes)
				require.NoError(t, f.Quantize(blk, src))
				got := make([]float32, 256)
				require.NoError(t, f.Dequantize(got, blk))
				assert.Equal(t, tt.wantMax, float32(math.Abs(float64(got[0]))))
				assert.Equal(t, tt.w, got[200])
				for i, v := range got {
					if i != 0 && i != 200 {
						require.Zero(t, v, "value %d", i)
					}
				}
			})
		}
	}
}

// TestTQQuantizeGeneral quantizes arbitrary rows: every value becomes -d,
// 0 or +d (d the fp16 of the row's absolute maximum), by its ratio to the
// maximum (values within 1e-4 of a half are not checked).
func TestTQQuantizeGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, id := range []int{34, 35} {
		f, _ := Lookup(id)
		t.Run(f.Name, func(t *testing.T) {
			for range 50 {
				scale := float32(math.Ldexp(1, r.IntN(30)-15))
				src := make([]float32, 256)
				var m float32
				for i := range src {
					src[i] = float32(r.NormFloat64()) * scale
					m = max(m, float32(math.Abs(float64(src[i]))))
				}
				blk := make([]byte, f.BlockBytes)
				require.NoError(t, f.Quantize(blk, src))
				got := make([]float32, 256)
				require.NoError(t, f.Dequantize(got, blk))
				d := half.F16ToF32(half.F16FromF32(m))
				for i, x := range src {
					ratio := math.Abs(float64(x / m))
					switch {
					case ratio < 0.4999:
						require.Zero(t, got[i], "value %d = %g of max %g", i, x, m)
					case ratio > 0.5001:
						require.Equal(t, float32(math.Copysign(float64(d), float64(x))), got[i], "value %d = %g of max %g", i, x, m)
					}
				}
			}
		})
	}
}

// TestTQSpecialInputs pins ggml's behaviour on NaN: its MAX(a, b) is
// a > b ? a : b, so a NaN makes the running maximum restart at the next
// value, and lroundf(NaN) + 1 stores a zero trit. Here 5 (before the NaN)
// is out of range for d = 1 and lands on code 6 & 3 = 2 in tq2_0.
func TestTQSpecialInputs(t *testing.T) {
	src := make([]float32, 256)
	src[0], src[1], src[2] = 5, float32(math.NaN()), 1
	f, _ := Lookup(35)
	blk := make([]byte, f.BlockBytes)
	require.NoError(t, f.Quantize(blk, src))
	assert.Equal(t, uint16(0x3c00), binary.LittleEndian.Uint16(blk[64:]), "d")
	got := make([]float32, 256)
	require.NoError(t, f.Dequantize(got, blk))
	assert.Equal(t, []float32{1, 0, 1, 0}, got[:4])

	// Nothing panics on NaN, Inf or values beyond int64 after scaling.
	for _, id := range []int{34, 35} {
		f, _ := Lookup(id)
		for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, 0x1p-149} {
			src := make([]float32, 256)
			src[3], src[7] = x, -x
			src[9] = 1
			blk := make([]byte, f.BlockBytes)
			assert.NotPanics(t, func() {
				require.NoError(t, f.Quantize(blk, src))
				require.NoError(t, f.Dequantize(make([]float32, 256), blk))
			}, "%s with %g", f.Name, x)
		}
	}
}
