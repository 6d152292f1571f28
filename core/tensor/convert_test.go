package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodecs round-trips values through every plain type's encoder and
// decoder, with the rounding each type promises.
func TestCodecs(t *testing.T) {
	for _, c := range []struct {
		t       Type
		in, out float64
	}{
		{F32, 1.1, float64(float32(1.1))}, {F64, 1.1, 1.1},
		{F16, 1.0009765625, 1.0009765625}, {F16, 65504, 65504}, {F16, 1.00048828125, 1}, // tie to even
		{BF16, 1.0078125, 1.0078125}, {BF16, -2.5, -2.5},
		{I8, -3.9, -3}, {I16, 300.5, 300}, {I32, -70000.7, -70000}, {I64, 1 << 40, 1 << 40},
	} {
		enc, err := Encoder(c.t)
		require.NoError(t, err, c.t)
		dec, err := Decoder(c.t)
		require.NoError(t, err, c.t)
		b := make([]byte, c.t.BlockBytes()+1)
		b[len(b)-1] = 0xAB
		enc(b, c.in)
		assert.Equal(t, c.out, dec(b), "%s %v", c.t, c.in)
		assert.Equal(t, byte(0xAB), b[len(b)-1], "%s: the encoder wrote past its element", c.t)
	}
	for _, ty := range []Type{Q4_0, Q8_K} {
		_, err := Decoder(ty)
		assert.ErrorContains(t, err, "cannot decode")
		_, err = Encoder(ty)
		assert.ErrorContains(t, err, "cannot encode")
	}
}

// TestToFromFloat32 encodes a contiguous tensor, then decodes a permuted
// view of the same bytes in the view's row-major order.
func TestToFromFloat32(t *testing.T) {
	l := mustContiguous(t, F16, 3, 2)
	v := []float32{0, 1, 2, 3, 4, -5.5}
	b, err := FromFloat32(l, v)
	require.NoError(t, err)
	got, err := ToFloat32(l, b)
	require.NoError(t, err)
	assert.Equal(t, v, got)
	p, err := l.Permute([MaxDims]int{1, 0, 2, 3}) // the transpose: [2, 3]
	require.NoError(t, err)
	got, err = ToFloat32(p, b)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 3, 1, 4, 2, -5.5}, got)

	_, err = FromFloat32(l, v[:5])
	assert.ErrorContains(t, err, "5 values")
	_, err = FromFloat32(p, v)
	assert.ErrorContains(t, err, "non-contiguous")
	_, err = ToFloat32(l, b[:11])
	assert.ErrorContains(t, err, "11 bytes")
}
