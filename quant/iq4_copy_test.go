package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuantizeIQ4NLOnePass checks the GPU-style iq4_nl quantizer: a block
// whose values are d·levels round-trips exactly, random blocks land within
// iq4_nl's usual error, and lengths that are not whole blocks fail.
func TestQuantizeIQ4NLOnePass(t *testing.T) {
	f, ok := Lookup(20)
	require.True(t, ok)
	exact := make([]float32, 32)
	for j := range exact {
		exact[j] = 0.25 * float32(iq4Levels[(j*7)%16])
	}
	exact[3] = 0.25 * float32(iq4Levels[0]) // the largest magnitude sets the scale
	b := make([]byte, 18)
	require.NoError(t, QuantizeIQ4NLOnePass(b, exact))
	back := make([]float32, 32)
	require.NoError(t, f.Dequantize(back, b))
	assert.Equal(t, exact, back)

	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 32*64)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	q := make([]byte, 18*64)
	require.NoError(t, QuantizeIQ4NLOnePass(q, x))
	y := make([]float32, len(x))
	require.NoError(t, f.Dequantize(y, q))
	var num, den float64
	for i := range x {
		num += float64((x[i] - y[i]) * (x[i] - y[i]))
		den += float64(x[i] * x[i])
	}
	assert.Less(t, num/den, 0.01)

	assert.Error(t, QuantizeIQ4NLOnePass(make([]byte, 18), make([]float32, 31)))
	assert.Error(t, QuantizeIQ4NLOnePass(make([]byte, 17), make([]float32, 32)))
}
