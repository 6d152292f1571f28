package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gaussianRow is n standard normal values from a fixed seed.
func gaussianRow(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func lookup(t *testing.T, id int) *Format {
	t.Helper()
	f, ok := Lookup(id)
	require.True(t, ok, "type %d not registered", id)
	return f
}

// TestRoundTripNMSE quantizes 64 super-blocks of N(0, 1) values and bounds
// the normalized error of the round trip (about twice what the formats
// give, so a broken search or a misplaced bit fails).
func TestRoundTripNMSE(t *testing.T) {
	cases := []struct {
		name  string
		id    int
		bound float64
	}{
		{"q4_0", 2, 1.5e-2},
		{"q4_1", 3, 1.2e-2},
		{"q5_0", 6, 3.6e-3},
		{"q5_1", 7, 2.9e-3},
		{"q8_0", 8, 6e-5},
		{"q8_1", 9, 6e-5},
		{"q2_K", 10, 0.17},
		{"q3_K", 11, 4.6e-2},
		{"q4_K", 12, 1e-2},
		{"q5_K", 13, 2.6e-3},
		{"q6_K", 14, 6e-4},
		{"q8_K", 15, 1e-4},
		{"iq4_nl", 20, 1.2e-2},
		{"iq4_xs", 23, 1.2e-2},
		{"mxfp4", 39, 2.7e-2},
	}
	x := gaussianRow(64 * superBlock)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := lookup(t, c.id)
			require.Equal(t, c.name, f.Name)
			q := make([]byte, f.RowBytes(len(x)))
			require.NoError(t, f.Quantize(q, x))
			y := make([]float32, len(x))
			require.NoError(t, f.Dequantize(y, q))
			e := nmse(x, y)
			t.Logf("nmse %.3g", e)
			assert.Less(t, e, c.bound)
			assert.Greater(t, e, 0.0)
		})
	}
}

// halfBits is the IEEE half encoding of a float exactly representable in one.
func halfBits(t *testing.T, f float32) []byte {
	t.Helper()
	b := make([]byte, 2)
	putHalf(b, f)
	require.Equal(t, f, halfAt(b), "%g is not a half", f)
	return b
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestBlockDefinitions decodes hand-built blocks and checks the values
// against the format definitions worked out by hand, and encodes
// hand-picked inputs to hand-computed blocks.
func TestBlockDefinitions(t *testing.T) {
	// q8_1: d = 0.5, s ignored by the decoder, qs[j] = j - 16.
	q8_1Block := concat(halfBits(t, 0.5), halfBits(t, 99), func() []byte {
		qs := make([]byte, 32)
		for j := range qs {
			qs[j] = byte(int8(j - 16))
		}
		return qs
	}())
	q8_1Values := make([]float32, 32)
	for j := range q8_1Values {
		q8_1Values[j] = float32(j-16) * 0.5
	}

	// q8_K: d = 0.25 (f32), qs[j] = (j%7) - 3, bsums unused by the decoder.
	q8KBlock := make([]byte, 292)
	binary.LittleEndian.PutUint32(q8KBlock, math.Float32bits(0.25))
	q8KValues := make([]float32, 256)
	for j := range q8KValues {
		q8KBlock[4+j] = byte(int8(j%7 - 3))
		q8KValues[j] = float32(j%7-3) * 0.25
	}

	// mxfp4: e = 127 (scale 1), codes 0..15 in values 0..15 (low nibbles)
	// and 15..0 in values 16..31; E2M1 code c is ±{0, .5, 1, 1.5, 2, 3, 4, 6}.
	e2m1 := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6}
	mxBlock := make([]byte, 17)
	mxBlock[0] = 127
	mxValues := make([]float32, 32)
	for j := range 16 {
		mxBlock[1+j] = byte(j) | byte(15-j)<<4
		mxValues[j], mxValues[16+j] = e2m1[j], e2m1[15-j]
	}
	// e = 130 scales by 8; e = 0 and 1 are the denormal scales 2^-127, 2^-126.
	mxScaled := func(e byte) []byte { b := make([]byte, 17); b[0] = e; b[1] = 0x07; return b }

	decode := []struct {
		name  string
		id    int
		block []byte
		want  []float32 // leading values; the rest must be zero
	}{
		{"q8_1 ramp", 9, q8_1Block, q8_1Values},
		{"q8_K ramp", 15, q8KBlock, q8KValues},
		{"mxfp4 every code", 39, mxBlock, mxValues},
		{"mxfp4 e=130", 39, mxScaled(130), []float32{48}},
		{"mxfp4 e=1 denormal", 39, mxScaled(1), []float32{6 * 0x1p-126}},
		{"mxfp4 e=0 denormal", 39, mxScaled(0), []float32{6 * 0x1p-127}},
	}
	for _, c := range decode {
		t.Run("decode "+c.name, func(t *testing.T) {
			f := lookup(t, c.id)
			got := make([]float32, f.BlockElems)
			require.NoError(t, f.Dequantize(got, c.block))
			want := make([]float32, f.BlockElems)
			copy(want, c.want)
			assert.Equal(t, want, got)
		})
	}

	// q8_1 input: amax 127 so d = 1 and qs = roundf(x) (half away from
	// zero); s = 127 - 3 + 3 - 3 = 124.
	q8_1In := make([]float32, 32)
	copy(q8_1In, []float32{127, -3, 2.5, -2.5})
	q8_1Out := concat(halfBits(t, 1), halfBits(t, 124), []byte{127, 0xfd, 3, 0xfd}, make([]byte, 28))

	// q8_K input: peak -127 so iscale = 1 and d = 1; quants round half to
	// even (nearest_int); bsums[0] = -127 + 2 + 4 = -121.
	q8KIn := make([]float32, 256)
	copy(q8KIn, []float32{-127, 2.5, 3.5})
	q8KIn[16] = 10
	q8KOut := make([]byte, 292)
	binary.LittleEndian.PutUint32(q8KOut, math.Float32bits(1))
	q8KOut[4], q8KOut[5], q8KOut[6], q8KOut[4+16] = 0x81, 2, 4, 10
	binary.LittleEndian.PutUint16(q8KOut[260:], uint16(0xffff-121+1))
	binary.LittleEndian.PutUint16(q8KOut[262:], 10)

	// mxfp4 input: amax 6 gives e = floor(log2 6) - 2 + 127 = 127 (scale
	// 1); 1.25 ties between 1 and 1.5 and takes the first code (2); 0 takes
	// code 0, not the negative zero 8.
	mxIn := make([]float32, 32)
	copy(mxIn, []float32{6, -6, 1.25, 0.5})
	mxIn[16] = -0.75 // ties between -0.5 (9) and -1 (10): first is 9
	mxOut := make([]byte, 17)
	mxOut[0] = 127
	mxOut[1], mxOut[2], mxOut[3], mxOut[4] = 0x07|0x09<<4, 0x0f, 0x02, 0x01

	encode := []struct {
		name string
		id   int
		in   []float32
		want []byte
	}{
		{"q8_1 scale one", 9, q8_1In, q8_1Out},
		{"q8_1 all zero", 9, make([]float32, 32), make([]byte, 36)},
		{"q8_K scale one", 15, q8KIn, q8KOut},
		{"q8_K all zero", 15, make([]float32, 256), make([]byte, 292)},
		{"mxfp4 scale one", 39, mxIn, mxOut},
		{"mxfp4 all zero", 39, make([]float32, 32), make([]byte, 17)},
	}
	for _, c := range encode {
		t.Run("encode "+c.name, func(t *testing.T) {
			f := lookup(t, c.id)
			got := make([]byte, f.BlockBytes)
			require.NoError(t, f.Quantize(got, c.in))
			assert.Equal(t, c.want, got)
		})
	}
}

// TestPartialBlocks checks that lengths that are not whole blocks, and
// buffers too small for the blocks, are errors rather than panics.
func TestPartialBlocks(t *testing.T) {
	for _, id := range []int{9, 15, 39} {
		f := lookup(t, id)
		n := f.BlockElems
		cases := []struct {
			name   string
			values int
			bytes  int
		}{
			{"one value short", n - 1, f.BlockBytes},
			{"one value over", n + 1, 2 * f.BlockBytes},
			{"half a block", n / 2, f.BlockBytes},
			{"buffer a byte short", 2 * n, 2*f.BlockBytes - 1},
		}
		for _, c := range cases {
			t.Run(f.Name+" "+c.name, func(t *testing.T) {
				assert.Error(t, f.Quantize(make([]byte, c.bytes), make([]float32, c.values)))
				assert.Error(t, f.Dequantize(make([]float32, c.values), make([]byte, c.bytes)))
			})
		}
		t.Run(f.Name+" whole blocks", func(t *testing.T) {
			assert.NoError(t, f.Quantize(make([]byte, 2*f.BlockBytes), make([]float32, 2*n)))
			assert.NoError(t, f.Dequantize(make([]float32, 2*n), make([]byte, 2*f.BlockBytes)))
		})
	}
}
