package conformance

import (
	"math"
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
	c := kernelCases["scale_f32"]
	x, a, b := float32(1+1.0/(1<<23)), float32(1-1.0/(1<<23)), float32(-1)
	sc := []vendorapi.Arg{vendorapi.F32Arg(a), vendorapi.F32Arg(b)}
	want := c.want([][]float32{{x}}, sc, 0)
	// x*a = 1 - 2^-46 rounds to 1 in float32: unfused gives 0, fused -2^-46.
	assert.Contains(t, want, math.Float32bits(0))
	assert.Contains(t, want, math.Float32bits(float32(-1.0/(1<<46))))
}

func TestHostBytes(t *testing.T) {
	assert.Nil(t, hostBytes(vendorapi.HostBuffer{}))
	sub := subBuffer(vendorapi.HostBuffer{Ptr: 0x1000, Size: 100}, 10, 20)
	assert.Equal(t, vendorapi.HostBuffer{Ptr: 0x100a, Size: 20}, sub)
}
