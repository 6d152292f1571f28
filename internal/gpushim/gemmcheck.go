package gpushim

import (
	"math/bits"

	"github.com/ternion/ternion/vendorapi"
)

// mulAdd returns a*b + c, and false when it overflows 64 bits.
func mulAdd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	sum, carry := bits.Add64(lo, c, 0)
	return sum, hi == 0 && carry == 0
}

// matrixBytes is how many bytes a column-major rows×cols matrix with leading
// dimension ld of elemSize-byte elements spans, batch times at stride
// elements apart; 0 when it is empty. ok is false when the extent does not
// fit in 64 bits or a negative stride would put later matrices below the
// first (the extent could not be checked).
func matrixBytes(rows, cols, ld int, stride int64, batch, elemSize int) (n uint64, ok bool) {
	if rows <= 0 || cols <= 0 || batch <= 0 {
		return 0, true
	}
	if stride < 0 && batch > 1 {
		return 0, false
	}
	one, ok1 := mulAdd(uint64(ld), uint64(cols-1), uint64(rows))
	all, ok2 := mulAdd(uint64(stride), uint64(batch-1), one) // 0 * stride when batch is 1
	n, ok3 := mulAdd(all, uint64(elemSize), 0)
	return n, ok1 && ok2 && ok3
}

// gemmBytes is the extent of A, B and C of g run batch times at its strides
// (a single gemm: batch 1); ok is false when one cannot be computed (see
// matrixBytes).
func gemmBytes(g vendorapi.Gemm, batch int) (a, b, c uint64, ok bool) {
	rowsA, colsA, rowsB, colsB := g.StoredShapes()
	a, okA := matrixBytes(rowsA, colsA, g.LDA, g.StrideA, batch, g.AType.Size())
	b, okB := matrixBytes(rowsB, colsB, g.LDB, g.StrideB, batch, g.BType.Size())
	c, okC := matrixBytes(g.M, g.N, g.LDC, g.StrideC, batch, g.CType.Size())
	return a, b, c, okA && okB && okC
}

// extent2D is how many bytes height rows of width bytes, pitch bytes apart,
// span (height and width positive); false when that overflows 64 bits.
func extent2D(pitch, width, height uint64) (uint64, bool) {
	return mulAdd(pitch, height-1, width)
}
