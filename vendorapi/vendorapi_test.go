package vendorapi

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"unsafe"

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
		ok   bool
	}{
		{"negative m", func(g *Gemm) { g.M = -1 }, false},
		{"negative k", func(g *Gemm) { g.K = -1 }, false},
		{"lda too small", func(g *Gemm) { g.LDA = 3 }, false},
		{"lda too small transposed", func(g *Gemm) { g.TransA = true }, false},
		{"lda fits transposed", func(g *Gemm) { g.TransA, g.LDA = true, 5 }, true},
		{"ldb too small transposed", func(g *Gemm) { g.TransB = true; g.LDB = 2 }, false},
		{"ldc too small", func(g *Gemm) { g.LDC = 2 }, false},
		{"mixed input types", func(g *Gemm) { g.BType = BF16 }, false},
		{"unknown type", func(g *Gemm) { g.CType = 0 }, false},
		{"unknown compute", func(g *Gemm) { g.Compute = 0 }, false},
		{"compute16f with f32 output", func(g *Gemm) { g.Compute = Compute16F }, false},
		{"f32 inputs need f32 output", func(g *Gemm) { g.AType, g.BType, g.CType = F32, F32, F16 }, false},
		{"negative batch", func(g *Gemm) { g.BatchCount = -2 }, false},
		// The limits of the BLAS libraries (32-bit ints), the same for every vendor.
		{"m at the limit", func(g *Gemm) { g.M, g.LDA, g.LDC = MaxGemmDim, MaxGemmDim, MaxGemmDim }, true},
		{"m over the limit", func(g *Gemm) { g.M, g.LDC = MaxGemmDim+1, MaxGemmDim+1 }, false},
		{"n over the limit", func(g *Gemm) { g.N = MaxGemmDim + 1 }, false},
		{"k over the limit", func(g *Gemm) { g.K, g.LDB = MaxGemmDim+1, MaxGemmDim+1 }, false},
		{"lda over the limit", func(g *Gemm) { g.LDA = MaxGemmDim + 1 }, false},
		{"ldb over the limit", func(g *Gemm) { g.LDB = MaxGemmDim + 1 }, false},
		{"ldc over the limit", func(g *Gemm) { g.LDC = MaxGemmDim + 1 }, false},
		{"batch at the limit", func(g *Gemm) { g.BatchCount = MaxGemmDim }, true},
		{"batch over the limit", func(g *Gemm) { g.BatchCount = MaxGemmDim + 1 }, false},
		{"batch 1<<40", func(g *Gemm) { g.BatchCount = 1 << 40 }, false},
		{"strides", func(g *Gemm) { g.BatchCount, g.StrideA, g.StrideB, g.StrideC = 8, 20, 15, 12 }, true},
		{"overlapping strides", func(g *Gemm) { g.BatchCount, g.StrideA = 8, 1 }, true},
		{"negative stride", func(g *Gemm) { g.BatchCount, g.StrideA = 2, -20 }, false},
		{"negative stride of one batch (unused)", func(g *Gemm) { g.BatchCount, g.StrideC = 1, -20 }, true},
		{"stride wraps 64 bits", func(g *Gemm) { g.BatchCount, g.StrideB = 5, 1<<62 }, false},
		{"stride past int64", func(g *Gemm) { g.BatchCount, g.StrideB = 3, 1<<61 }, false},
		{"largest stride", func(g *Gemm) { g.BatchCount, g.StrideC = 2, (math.MaxInt64-12*4)/4 }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := good
			c.edit(&g)
			if c.ok {
				assert.NoError(t, g.Validate())
				return
			}
			assert.ErrorIs(t, g.Validate(), ErrInvalidValue)
		})
	}
}

func TestGemmExtents(t *testing.T) {
	g := Gemm{M: 13, N: 7, K: 33, AType: F16, BType: F16, CType: F32, LDA: 16, LDB: 35, LDC: 14, Compute: Compute32F}
	for _, c := range []struct {
		name    string
		edit    func(g *Gemm)
		batch   int
		a, b, c uint64
	}{
		{"one matrix each", func(*Gemm) {}, 1, (16*32 + 13) * 2, (35*6 + 33) * 2, (14*6 + 13) * 4},
		{"op(A) = A^T: A is 33x13", func(g *Gemm) { g.TransA, g.LDA = true, 40 }, 1, (40*12 + 33) * 2, (35*6 + 33) * 2, (14*6 + 13) * 4},
		{"strides over 3 batches", func(g *Gemm) { g.StrideA, g.StrideB, g.StrideC = 600, 0, 200 }, 3,
			(600*2 + 16*32 + 13) * 2, (35*6 + 33) * 2, (200*2 + 14*6 + 13) * 4},
		{"batch 1 ignores the stride", func(g *Gemm) { g.StrideC = 1 << 40 }, 1, (16*32 + 13) * 2, (35*6 + 33) * 2, (14*6 + 13) * 4},
		{"empty C", func(g *Gemm) { g.M = 0 }, 3, 0, (35*6 + 33) * 2, 0},
		{"k = 0: A and B empty", func(g *Gemm) { g.K = 0 }, 1, 0, 0, (14*6 + 13) * 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := g
			c.edit(&g)
			g.BatchCount = c.batch
			require.NoError(t, g.Validate())
			a, b, cc := g.Extents(c.batch)
			assert.Equal(t, [3]uint64{c.a, c.b, c.c}, [3]uint64{a, b, cc})
		})
	}
	// Extents that cannot be computed saturate (Validate refuses them).
	big := Gemm{M: 4, N: 4, K: 4, AType: F32, BType: F32, CType: F32, LDA: 4, LDB: 4, LDC: 4, Compute: Compute32F}
	big.StrideA = 1 << 62
	a, _, _ := big.Extents(5)
	assert.Equal(t, uint64(math.MaxUint64), a, "stride 2^62 x 4 batches x 4 bytes wraps")
	big.StrideA = -16
	a, _, _ = big.Extents(2)
	assert.Equal(t, uint64(math.MaxUint64), a, "negative stride")
	a, _, _ = big.Extents(1)
	assert.Equal(t, uint64(16*4), a, "one batch: the stride is unused")
	assert.Equal(t, uint64(math.MaxUint64), extent(3, 1<<31-1, 1<<31-1, 1<<40, 1<<31-1, 4))
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

func TestHostBufferBytesAndSlice(t *testing.T) {
	assert.Nil(t, HostBuffer{}.Bytes())
	assert.Nil(t, HostBuffer{Ptr: 0x1000}.Bytes())
	sub := HostBuffer{Ptr: 0x1000, Size: 100}.Slice(10, 20)
	assert.Equal(t, HostBuffer{Ptr: 0x100a, Size: 20}, sub)
	mem := make([]byte, 8)
	b := HostBuffer{Ptr: uintptr(unsafe.Pointer(&mem[0])), Size: 8}.Slice(2, 4)
	b.Bytes()[0] = 7
	assert.Equal(t, byte(7), mem[2])
	assert.Len(t, b.Bytes(), 4)
}
