package vendorapi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorFormatAndMatch(t *testing.T) {
	e := &Error{Vendor: "cuda", Call: "cudaMalloc", Code: 2, CodeName: "cudaErrorMemoryAllocation",
		Message: "out of memory", Device: 1, Kind: ErrOutOfMemory}
	assert.Equal(t, "cuda: cudaMalloc failed: cudaErrorMemoryAllocation (code 2): out of memory [device 1]", e.Error())
	wrapped := fmt.Errorf("pool grow: %w", e)
	assert.ErrorIs(t, wrapped, ErrOutOfMemory)
	assert.NotErrorIs(t, wrapped, ErrNotSupported)

	withOp := WithOp(wrapped, "MUL_MAT")
	var ve *Error
	require.ErrorAs(t, withOp, &ve)
	assert.Equal(t, "MUL_MAT", ve.Op)
	assert.Contains(t, withOp.Error(), "[op MUL_MAT]")
	assert.Empty(t, e.Op, "WithOp must not modify the original")

	plain := WithOp(errors.New("boom"), "ADD")
	assert.EqualError(t, plain, "op ADD: boom")
	assert.NoError(t, WithOp(nil, "ADD"))

	noDev := &Error{Vendor: "host", Call: "x", CodeName: "y", Device: -1}
	assert.NotContains(t, noDev.Error(), "device")
	assert.False(t, errors.Is(noDev, ErrOutOfMemory), "an unclassified error matches no sentinel")
}

func TestGemmValidate(t *testing.T) {
	good := Gemm{M: 4, N: 3, K: 5, A: 1, AType: F16, LDA: 4, B: 2, BType: F16, LDB: 5, C: 3, CType: F32, LDC: 4, Compute: Compute32F}
	require.NoError(t, good.Validate())
	cases := []struct {
		name string
		edit func(g *Gemm)
	}{
		{"negative m", func(g *Gemm) { g.M = -1 }},
		{"lda too small", func(g *Gemm) { g.LDA = 3 }},
		{"lda too small transposed", func(g *Gemm) { g.TransA = true }},
		{"ldb too small transposed", func(g *Gemm) { g.TransB = true; g.LDB = 2 }},
		{"ldc too small", func(g *Gemm) { g.LDC = 2 }},
		{"mixed input types", func(g *Gemm) { g.BType = BF16 }},
		{"unknown type", func(g *Gemm) { g.CType = 0 }},
		{"unknown compute", func(g *Gemm) { g.Compute = 0 }},
		{"compute16f with f32 output", func(g *Gemm) { g.Compute = Compute16F }},
		{"f32 inputs need f32 output", func(g *Gemm) { g.AType, g.BType, g.CType = F32, F32, F16 }},
		{"negative batch", func(g *Gemm) { g.BatchCount = -2 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := good
			c.edit(&g)
			assert.ErrorIs(t, g.Validate(), ErrInvalidValue)
		})
	}
	tr := good
	tr.TransA, tr.LDA = true, 5
	assert.NoError(t, tr.Validate())
}

func TestRegistry(t *testing.T) {
	opens := 0
	Register("zz-test", func() (Driver, error) { opens++; return nil, fmt.Errorf("libzz.so: %w", ErrNoDriver) })
	t.Cleanup(func() {
		registryMu.Lock()
		delete(registry, "zz-test")
		delete(opened, "zz-test")
		registryMu.Unlock()
	})
	assert.Contains(t, Vendors(), "zz-test")
	_, err := Open("zz-test")
	assert.ErrorIs(t, err, ErrNoDriver)
	_, err = Open("zz-test")
	assert.ErrorIs(t, err, ErrNoDriver)
	assert.Equal(t, 1, opens, "Open caches the outcome")

	_, err = Open("no-such-vendor")
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.Contains(t, err.Error(), "no-such-vendor")

	var found bool
	for _, p := range OpenAll() {
		if p.Vendor == "zz-test" {
			found = true
			assert.Nil(t, p.Driver)
			assert.ErrorIs(t, p.Err, ErrNoDriver)
		}
	}
	assert.True(t, found, "OpenAll reports failed vendors too")
}

func TestDim3(t *testing.T) {
	assert.Equal(t, uint64(1), Dim3{}.Count())
	assert.Equal(t, uint64(24), Dim3{2, 3, 4}.Count())
	assert.Equal(t, Dim3{5, 1, 1}, Dim3{X: 5}.Norm())
	assert.Equal(t, "(5,1,1)", Dim3{5, 1, 1}.String())
}

func TestCheckGeometry(t *testing.T) {
	for _, c := range []struct {
		name        string
		grid, block Dim3
		ok          bool
	}{
		{"zero components count as 1", Dim3{}, Dim3{}, true},
		{"at every limit", Dim3{X: MaxGridX, Y: MaxGridY, Z: MaxGridZ}, Dim3{X: 16, Y: 1, Z: 64}, true},
		{"1024 threads", Dim3{X: 1}, Dim3{X: 32, Y: 32}, true},
		{"1025 threads in x", Dim3{X: 1}, Dim3{X: 1025}, false},
		{"2048 threads in x and y", Dim3{X: 1}, Dim3{X: 1024, Y: 2}, false},
		{"block z of 65", Dim3{X: 1}, Dim3{Z: 65}, false},
		{"grid x of 2^31", Dim3{X: 1 << 31}, Dim3{X: 1}, false},
		{"grid y of 65536", Dim3{Y: 65536}, Dim3{X: 1}, false},
		{"grid z of 65536", Dim3{Z: 65536}, Dim3{X: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckGeometry(c.grid, c.block)
			if c.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrInvalidValue)
			}
		})
	}
}
