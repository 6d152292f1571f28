package conformance

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

func TestNMSE(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want []float64
		nmse      float64
	}{
		{"equal", []float64{1, -2, 3}, []float64{1, -2, 3}, 0},
		{"one off by one", []float64{1, 0, 2}, []float64{1, 1, 1}, 2.0 / 3},
		{"scaled by 1.1", []float64{1.1, 2.2}, []float64{1, 2}, 0.01},
		{"NaN", []float64{math.NaN()}, []float64{1}, math.Inf(1)},
		{"infinity", []float64{math.Inf(-1)}, []float64{1}, math.Inf(1)},
		{"zero reference", []float64{1}, []float64{0}, math.Inf(1)},
		{"length mismatch", []float64{1}, []float64{1, 2}, math.Inf(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.InDelta(t, c.nmse, NMSE(c.got, c.want), 1e-12)
		})
	}
}

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct {
		name         string
		got, want    []byte
		first, count int
	}{
		{"equal", []byte{1, 2, 3}, []byte{1, 2, 3}, -1, 0},
		{"middle", []byte{1, 9, 3, 9}, []byte{1, 2, 3, 4}, 1, 2},
		{"got shorter", []byte{1}, []byte{1, 2, 3}, 1, 2},
		{"got longer", []byte{1, 2}, []byte{1}, 1, 1},
		{"both empty", nil, []byte{}, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, count := firstDiff(c.got, c.want)
			assert.Equal(t, c.first, first, "first")
			assert.Equal(t, c.count, count, "count")
		})
	}
}

func TestRandomDataIsNeverZero(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, b := range randBytes(r, 10000) {
		require.NotZero(t, b)
	}
	for _, v := range randF32(r, 10000) {
		a := math.Abs(float64(v))
		require.True(t, a >= 0.0625 && a <= 1, "%v out of ±[1/16, 1]", v)
	}
}

func TestEncodeRoundsEachType(t *testing.T) {
	round := func(dt vendorapi.DataType, v []float32) []float64 { return decode(dt, encode(dt, v)) }
	v := []float32{1, -0.5, 1.0009765625, 1 + 1.0/4096, 0.1}
	assert.Equal(t, []float64{1, -0.5, 1.0009765625, 1 + 1.0/4096, float64(float32(0.1))}, round(vendorapi.F32, v))
	h := round(vendorapi.F16, v)
	assert.Equal(t, []float64{1, -0.5, 1.0009765625, 1}, h[:4], "f16 keeps 11 significant bits")
	assert.InDelta(t, 0.1, h[4], 0.1/2048)
	b := round(vendorapi.BF16, v)
	assert.Equal(t, []float64{1, -0.5, 1, 1}, b[:4], "bf16 keeps 8 significant bits")
	assert.InDelta(t, 0.1, b[4], 0.1/256)
	assert.Len(t, encode(vendorapi.F16, v), 10)
	assert.Len(t, encode(vendorapi.F32, v), 20)
}

func TestGemmLayoutFitsEveryBatch(t *testing.T) {
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		c := gemmCase{m: 13, n: 7, k: 33, transA: tr[0], transB: tr[1], batch: 3}
		l := layout(c)
		rowsA, rowsB := c.m, c.k
		if c.transA {
			rowsA = c.k
		}
		if c.transB {
			rowsB = c.n
		}
		assert.Greater(t, l.lda, rowsA, "lda has padding")
		assert.Greater(t, l.ldb, rowsB, "ldb has padding")
		assert.Greater(t, l.ldc, c.m, "ldc has padding")
		assert.Greater(t, l.strideA, l.sizeA, "batch gap in A")
		assert.Greater(t, l.strC, l.sizeC, "batch gap in C")
		last := l.pre + 2*l.strC + (c.m - 1) + (c.n-1)*l.ldc
		assert.Less(t, last, l.totalC-1, "sentinel after the last C element")
	}
}

func TestScaleReferenceAcceptsBothRoundings(t *testing.T) {
	c := elementCases["scale_f32"]
	bits := func(v ...float32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = math.Float32bits(x)
		}
		return out
	}
	x, a, b := float32(1+1.0/(1<<23)), float32(1-1.0/(1<<23)), float32(-1)
	sc := bits(a, b)
	want := c.want([][]float32{{x}}, sc, 0)
	// x*a = 1 - 2^-46 rounds to 1 in float32: unfused gives 0, fused -2^-46.
	assert.Contains(t, want, math.Float32bits(0))
	assert.Contains(t, want, math.Float32bits(float32(-1.0/(1<<46))))

	// x*y = 1 + 2^-11 + 2^-24 is halfway between two float32s; adding 2^-60
	// puts the exact sum just above it, so fmaf rounds up. Rounding to
	// float64 first lands on the halfway point and then rounds to even (down).
	x = 1 + 1.0/(1<<12)
	sc = bits(x, 0x1p-60)
	want = c.want([][]float32{{x}}, sc, 0)
	assert.Contains(t, want, math.Float32bits(1+1.0/(1<<11)+1.0/(1<<23)), "single-rounded fmaf")
	assert.Contains(t, want, math.Float32bits(1+1.0/(1<<11)), "unfused: the product rounds to even")
}

// TestFMAF checks fmaf against x*y+z computed exactly as a rational and
// rounded once, on random finite inputs and cases near halfway, zero and
// the subnormal range.
func TestFMAF(t *testing.T) {
	exact := func(x, y, z float32) float32 {
		var rx, ry, rz big.Rat
		rx.SetFloat64(float64(x))
		ry.SetFloat64(float64(y))
		rz.SetFloat64(float64(z))
		f, _ := rx.Mul(&rx, &ry).Add(&rx, &rz).Float32()
		return f
	}
	r := rand.New(rand.NewPCG(7, 8))
	cases := [][3]float32{
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-60},
		{1 + 0x1p-12, 1 + 0x1p-12, -0x1p-60},
		{1 + 0x1p-23, 1 - 0x1p-23, -1},
		{0x1p-75, 0x1p-75, 0x1p-149},
		{3, 5, -15},
	}
	finite := func() float32 {
		for {
			f := math.Float32frombits(r.Uint32())
			if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) && math.Abs(float64(f)) < 0x1p60 && math.Abs(float64(f)) > 0x1p-60 {
				return f
			}
		}
	}
	for range 20000 {
		x, y := finite(), finite()
		cases = append(cases, [3]float32{x, y, finite()}, [3]float32{x, y, -x * y * (1 + float32(r.NormFloat64())*0x1p-20)})
	}
	for _, c := range cases {
		want := exact(c[0], c[1], c[2])
		got := fmaf(c[0], c[1], c[2])
		if want == 0 && got == 0 {
			continue // big.Rat has no signed zero
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "fmaf(%g, %g, %g)", c[0], c[1], c[2])
	}
	assert.Equal(t, math.Float32bits(float32(math.Copysign(0, -1))), math.Float32bits(fmaf(float32(math.Copysign(0, -1)), 1, float32(math.Copysign(0, -1)))), "-0*1 + -0 is -0")
	assert.Equal(t, uint32(0), math.Float32bits(fmaf(3, 5, -15)), "an exact zero sum is +0")
	assert.True(t, math.IsNaN(float64(fmaf(float32(math.Inf(1)), 0, 1))))
	assert.Equal(t, float32(math.Inf(-1)), fmaf(float32(math.Inf(-1)), 2, 1))
}
