package vendorapi

import (
	"fmt"
	"math"
	"math/bits"
)

// DataType is a BLAS element type.
type DataType int

// BLAS element types.
const (
	F32  DataType = iota + 1 // float32
	F16                      // IEEE half
	BF16                     // bfloat16
)

// Size returns the element size in bytes.
func (t DataType) Size() int {
	switch t {
	case F32:
		return 4
	case F16, BF16:
		return 2
	}
	return 0
}

// String names the type.
func (t DataType) String() string {
	switch t {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("DataType(%d)", int(t))
}

// ComputeType is the accumulation precision of a gemm.
type ComputeType int

// Gemm compute types.
const (
	Compute32F ComputeType = iota + 1 // accumulate in float32
	Compute16F                        // accumulate in half where the vendor does (alpha, beta and C rounded to half; host accumulates in f32)
)

// String names the compute type.
func (c ComputeType) String() string {
	switch c {
	case Compute32F:
		return "compute_32f"
	case Compute16F:
		return "compute_16f"
	}
	return fmt.Sprintf("ComputeType(%d)", int(c))
}

// MaxGemmDim is the largest size (M, N, K), leading dimension and batch count
// a Gemm may have: the BLAS libraries take them as 32-bit ints.
const MaxGemmDim = math.MaxInt32

// Gemm describes C = alpha*op(A)*op(B) + beta*C in column-major order, as
// cuBLAS's GemmEx: op(A) is M×K, op(B) is K×N, C is M×N. Leading dimensions
// and strides count elements. In GemmBatched, A, B and C point to device arrays
// of BatchCount device pointers. Validate states the limits every vendor
// enforces.
type Gemm struct {
	TransA, TransB bool
	M, N, K        int
	Alpha, Beta    float32
	A              DevicePtr
	AType          DataType
	LDA            int
	StrideA        int64
	B              DevicePtr
	BType          DataType
	LDB            int
	StrideB        int64
	C              DevicePtr
	CType          DataType
	LDC            int
	StrideC        int64
	Compute        ComputeType
	BatchCount     int
}

// StoredShapes returns the rows and columns of A and B as stored in memory
// (column-major): op(A) is M×K, so A is stored K×M when TransA, and likewise B.
func (g Gemm) StoredShapes() (rowsA, colsA, rowsB, colsB int) {
	rowsA, colsA = g.M, g.K
	if g.TransA {
		rowsA, colsA = g.K, g.M
	}
	rowsB, colsB = g.K, g.N
	if g.TransB {
		rowsB, colsB = g.N, g.K
	}
	return rowsA, colsA, rowsB, colsB
}

// Validate checks g before any launch, with the limits every vendor applies
// (a vendor calls it first, so all refuse the same input):
//   - M, N, K and BatchCount are in [0, MaxGemmDim];
//   - leading dimensions are at least the stored rows (and 1) and at most
//     MaxGemmDim;
//   - the types are known, A and B have one type, compute_16f has f16 A, B
//     and C, and f32 inputs have an f32 C;
//   - when BatchCount > 1 the strides are not negative and each matrix's
//     extent over the batch (Extents) fits in an int64. Only
//     GemmStridedBatched uses the strides, but they are checked whenever
//     BatchCount > 1, so that one Gemm is accepted or refused alike by the
//     three calls; leave them 0 when they are not used.
func (g Gemm) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("gemm: "+format+": %w", append(a, ErrInvalidValue)...)
	}
	if g.M < 0 || g.N < 0 || g.K < 0 {
		return bad("negative size m=%d n=%d k=%d", g.M, g.N, g.K)
	}
	if g.M > MaxGemmDim || g.N > MaxGemmDim || g.K > MaxGemmDim {
		return bad("size m=%d n=%d k=%d exceeds %d", g.M, g.N, g.K, MaxGemmDim)
	}
	rowsA, _, rowsB, _ := g.StoredShapes()
	if g.LDA < max(1, rowsA) || g.LDB < max(1, rowsB) || g.LDC < max(1, g.M) {
		return bad("leading dimension too small: lda=%d (need %d) ldb=%d (need %d) ldc=%d (need %d)",
			g.LDA, max(1, rowsA), g.LDB, max(1, rowsB), g.LDC, max(1, g.M))
	}
	if g.LDA > MaxGemmDim || g.LDB > MaxGemmDim || g.LDC > MaxGemmDim {
		return bad("leading dimension lda=%d ldb=%d ldc=%d exceeds %d", g.LDA, g.LDB, g.LDC, MaxGemmDim)
	}
	for _, t := range []DataType{g.AType, g.BType, g.CType} {
		if t.Size() == 0 {
			return bad("unknown data type %v", t)
		}
	}
	if g.AType != g.BType {
		return bad("A is %v but B is %v", g.AType, g.BType)
	}
	if g.Compute != Compute32F && g.Compute != Compute16F {
		return bad("unknown compute type %v", g.Compute)
	}
	if g.Compute == Compute16F && (g.AType != F16 || g.CType != F16) {
		return bad("compute_16f needs f16 A, B and C, got %v and %v", g.AType, g.CType)
	}
	if g.AType == F32 && g.CType != F32 {
		return bad("f32 inputs need an f32 C, got %v", g.CType)
	}
	if g.BatchCount < 0 || g.BatchCount > MaxGemmDim {
		return bad("batch count %d is outside [0, %d]", g.BatchCount, MaxGemmDim)
	}
	if g.BatchCount > 1 {
		if g.StrideA < 0 || g.StrideB < 0 || g.StrideC < 0 {
			return bad("negative stride %d, %d, %d", g.StrideA, g.StrideB, g.StrideC)
		}
		a, b, c := g.Extents(g.BatchCount)
		for i, e := range [3]uint64{a, b, c} {
			if e > math.MaxInt64 {
				return bad("%c spans more than 2^63 bytes over %d batches at stride %d",
					"ABC"[i], g.BatchCount, []int64{g.StrideA, g.StrideB, g.StrideC}[i])
			}
		}
	}
	return nil
}

// Extents returns how many bytes A, B and C span from their first element:
// one matrix for batch 1 (the strides unused), batch matrices stride
// elements apart otherwise; 0 for an empty matrix. When g passed Validate
// and batch is in [1, g.BatchCount] (or 1) the extents fit in an int64;
// for any other g an extent that does not fit in 64 bits is math.MaxUint64
// (Validate refuses such a g that way).
func (g Gemm) Extents(batch int) (a, b, c uint64) {
	rowsA, colsA, rowsB, colsB := g.StoredShapes()
	return extent(rowsA, colsA, g.LDA, g.StrideA, batch, g.AType.Size()),
		extent(rowsB, colsB, g.LDB, g.StrideB, batch, g.BType.Size()),
		extent(g.M, g.N, g.LDC, g.StrideC, batch, g.CType.Size())
}

// extent is the bytes a column-major rows×cols matrix with leading dimension
// ld spans, batch times at stride elements apart, of elemSize-byte elements:
// ((batch-1)*stride + (cols-1)*ld + rows) * elemSize, math.MaxUint64 when
// that does not fit in 64 bits (or a stride is negative), 0 when the matrix
// is empty.
func extent(rows, cols, ld int, stride int64, batch, elemSize int) uint64 {
	if rows <= 0 || cols <= 0 || batch <= 0 {
		return 0
	}
	if batch == 1 {
		stride = 0
	}
	if stride < 0 || ld < 0 {
		return math.MaxUint64
	}
	n, ok1 := mulAdd(uint64(ld), uint64(cols-1), uint64(rows))
	n, ok2 := mulAdd(uint64(stride), uint64(batch-1), n)
	n, ok3 := mulAdd(n, uint64(elemSize), 0)
	if !ok1 || !ok2 || !ok3 {
		return math.MaxUint64
	}
	return n
}

// Extent2D is how many bytes height rows of width bytes, pitch bytes apart,
// span (height and width positive); false when that overflows 64 bits.
func Extent2D(pitch, width, height uint64) (uint64, bool) { return mulAdd(pitch, height-1, width) }

// mulAdd returns a*b + c, and false when it overflows 64 bits.
func mulAdd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	sum, carry := bits.Add64(lo, c, 0)
	return sum, hi == 0 && carry == 0
}
