package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTypeTable pins every type to ggml's number, name, block size and block
// bytes (ggml-common.h's static asserts and ggml.c's type_traits).
func TestTypeTable(t *testing.T) {
	for _, c := range []struct {
		t         Type
		num       uint32
		name      string
		block     int64
		bytes     int64
		quantized bool
	}{
		{F32, 0, "f32", 1, 4, false}, {F16, 1, "f16", 1, 2, false}, {BF16, 30, "bf16", 1, 2, false},
		{F64, 28, "f64", 1, 8, false}, {I8, 24, "i8", 1, 1, false}, {I16, 25, "i16", 1, 2, false},
		{I32, 26, "i32", 1, 4, false}, {I64, 27, "i64", 1, 8, false},
		{Q4_0, 2, "q4_0", 32, 18, true}, {Q4_1, 3, "q4_1", 32, 20, true}, {Q5_0, 6, "q5_0", 32, 22, true},
		{Q5_1, 7, "q5_1", 32, 24, true}, {Q8_0, 8, "q8_0", 32, 34, true}, {Q8_1, 9, "q8_1", 32, 36, true},
		{Q2_K, 10, "q2_K", 256, 84, true}, {Q3_K, 11, "q3_K", 256, 110, true}, {Q4_K, 12, "q4_K", 256, 144, true},
		{Q5_K, 13, "q5_K", 256, 176, true}, {Q6_K, 14, "q6_K", 256, 210, true}, {Q8_K, 15, "q8_K", 256, 292, true},
		{IQ2_XXS, 16, "iq2_xxs", 256, 66, true}, {IQ2_XS, 17, "iq2_xs", 256, 74, true},
		{IQ3_XXS, 18, "iq3_xxs", 256, 98, true}, {IQ1_S, 19, "iq1_s", 256, 50, true},
		{IQ4_NL, 20, "iq4_nl", 32, 18, true}, {IQ3_S, 21, "iq3_s", 256, 110, true}, {IQ2_S, 22, "iq2_s", 256, 82, true},
		{IQ4_XS, 23, "iq4_xs", 256, 136, true}, {IQ1_M, 29, "iq1_m", 256, 56, true},
		{TQ1_0, 34, "tq1_0", 256, 54, true}, {TQ2_0, 35, "tq2_0", 256, 66, true}, {MXFP4, 39, "mxfp4", 32, 17, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.num, uint32(c.t))
			assert.Equal(t, c.name, c.t.String())
			assert.Equal(t, c.block, c.t.BlockSize())
			assert.Equal(t, c.bytes, c.t.BlockBytes())
			assert.Equal(t, c.quantized, c.t.IsQuantized())
			assert.True(t, c.t.Valid())
			p, err := ParseType(c.name)
			require.NoError(t, err)
			assert.Equal(t, c.t, p)
		})
	}
	assert.Len(t, Types(), 32)
	assert.False(t, Type(4).Valid(), "ggml removed type 4")
	assert.Equal(t, "type(4)", Type(4).String())
	_, err := ParseType("q4_2")
	assert.Error(t, err)
	assert.Equal(t, int64(18*4096/32), Q4_0.RowSize(4096))
}

func mustContiguous(t *testing.T, ty Type, ne ...int64) Layout {
	t.Helper()
	l, err := Contiguous(ty, ne...)
	require.NoError(t, err)
	return l
}

func TestContiguous(t *testing.T) {
	l := mustContiguous(t, F32, 4096, 32)
	assert.Equal(t, [4]int64{4096, 32, 1, 1}, l.Ne)
	assert.Equal(t, [4]int64{4, 16384, 524288, 524288}, l.Nb)
	assert.Equal(t, int64(4096*32), l.Elements())
	assert.Equal(t, int64(32), l.Rows())
	assert.Equal(t, int64(4*4096*32), l.Bytes())
	q := mustContiguous(t, Q4_0, 4096, 3, 2)
	assert.Equal(t, [4]int64{18, 18 * 128, 18 * 128 * 3, 18 * 128 * 6}, q.Nb)
	assert.Equal(t, int64(18*128*6), q.Bytes())
	assert.True(t, q.IsContiguous())
	for _, bad := range [][]int64{{}, {1, 2, 3, 4, 5}, {-1}, {4095}} {
		_, err := Contiguous(Q4_0, bad...)
		assert.Error(t, err, "%v", bad)
	}
	_, err := Contiguous(Type(4), 8)
	assert.Error(t, err)
	_, err = Contiguous(F32, 1<<40, 1<<40)
	assert.Error(t, err, "too large")
	e := mustContiguous(t, F32, 8, 0, 3)
	assert.True(t, e.Empty())
	assert.Zero(t, e.Bytes())
}

func TestPredicates(t *testing.T) {
	base := mustContiguous(t, F32, 8, 6, 4, 2)
	perm021, err := base.Permute([4]int{0, 2, 1, 3})
	require.NoError(t, err)
	assert.Equal(t, [4]int64{8, 4, 6, 2}, perm021.Ne)
	rowGap := base
	rowGap.Ne[0] = 5 // a view of the first 5 columns: rows packed, gaps between rows
	for _, c := range []struct {
		name                                string
		l                                   Layout
		cont, cont1, cont2, rows, alloc, tr bool
	}{
		{"contiguous", base, true, true, true, true, true, false},
		{"transposed", base.Transpose(), false, false, false, false, true, true},
		{"permute 0,2,1,3", perm021, false, false, false, true, true, false}, // ggml_is_contiguous_2 is false here too
		{"column view", rowGap, false, true, true, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.cont, c.l.IsContiguous(), "contiguous")
			assert.Equal(t, c.cont1, c.l.IsContiguousN(1), "contiguous_1")
			assert.Equal(t, c.cont2, c.l.IsContiguousN(2), "contiguous_2")
			assert.Equal(t, c.rows, c.l.IsContiguousRows(), "contiguous rows")
			assert.Equal(t, c.alloc, c.l.IsContiguouslyAllocated(), "contiguously allocated")
			assert.Equal(t, c.tr, c.l.IsTransposed(), "transposed")
		})
	}
	assert.True(t, perm021.IsPermuted())
	assert.False(t, base.IsPermuted())
	// ggml_permute: source dim i goes to result dim axes[i].
	p, err := base.Permute([4]int{2, 0, 1, 3})
	require.NoError(t, err)
	assert.Equal(t, [4]int64{6, 4, 8, 2}, p.Ne)
	assert.Equal(t, [4]int64{32, 192, 4, 768}, p.Nb)
	_, err = base.Permute([4]int{0, 0, 1, 2})
	assert.Error(t, err)
}

func TestRepeatAndReshape(t *testing.T) {
	a := mustContiguous(t, F32, 8, 6, 4, 2)
	for _, c := range []struct {
		ne []int64
		ok bool
	}{{[]int64{8}, true}, {[]int64{1, 6}, true}, {[]int64{4, 3, 2, 1}, true}, {[]int64{8, 6, 4, 2}, true},
		{[]int64{3}, false}, {[]int64{8, 5}, false}, {[]int64{16}, false}} {
		b := mustContiguous(t, F32, c.ne...)
		assert.Equal(t, c.ok, b.CanRepeatInto(a), "%v into %v", c.ne, a.Ne)
	}
	r, err := a.Reshape(48, 8)
	require.NoError(t, err)
	assert.Equal(t, [4]int64{48, 8, 1, 1}, r.Ne)
	_, err = a.Reshape(47, 8)
	assert.ErrorContains(t, err, "elements")
	_, err = a.Transpose().Reshape(384)
	assert.ErrorContains(t, err, "non-contiguous")
	assert.Equal(t, "f32 [8,6,4,2] nb=[4,32,192,768]", a.String())
}
