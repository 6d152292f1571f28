package vendorapi

import "fmt"

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

// Gemm describes C = alpha*op(A)*op(B) + beta*C in column-major order, as
// cuBLAS's GemmEx: op(A) is M×K, op(B) is K×N, C is M×N. Leading dimensions
// and strides count elements. In GemmBatched, A, B and C point to device arrays
// of BatchCount device pointers.
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

// Validate checks shapes, leading dimensions and types before any launch.
func (g Gemm) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("gemm: "+format+": %w", append(a, ErrInvalidValue)...)
	}
	if g.M < 0 || g.N < 0 || g.K < 0 {
		return bad("negative size m=%d n=%d k=%d", g.M, g.N, g.K)
	}
	rowsA, _, rowsB, _ := g.StoredShapes()
	if g.LDA < max(1, rowsA) || g.LDB < max(1, rowsB) || g.LDC < max(1, g.M) {
		return bad("leading dimension too small: lda=%d (need %d) ldb=%d (need %d) ldc=%d (need %d)",
			g.LDA, max(1, rowsA), g.LDB, max(1, rowsB), g.LDC, max(1, g.M))
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
	if g.BatchCount < 0 {
		return bad("negative batch count %d", g.BatchCount)
	}
	return nil
}
