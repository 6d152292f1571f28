package gpushim

import "github.com/ternion/ternion/vendorapi"

// matrixBytes is how many bytes a column-major rows×cols matrix with leading
// dimension ld of elemSize-byte elements spans, batch times at stride
// elements apart; 0 when it is empty.
func matrixBytes(rows, cols, ld int, stride int64, batch, elemSize int) uint64 {
	if rows <= 0 || cols <= 0 || batch <= 0 {
		return 0
	}
	one := uint64(ld)*uint64(cols-1) + uint64(rows)
	if stride < 0 {
		return 0
	}
	return (uint64(stride)*uint64(batch-1) + one) * uint64(elemSize)
}

// gemmBytes is the extent of A, B and C of g run batch times at its strides
// (a single gemm: batch 1).
func gemmBytes(g vendorapi.Gemm, batch int) (a, b, c uint64) {
	rowsA, colsA, rowsB, colsB := g.StoredShapes()
	a = matrixBytes(rowsA, colsA, g.LDA, g.StrideA, batch, g.AType.Size())
	b = matrixBytes(rowsB, colsB, g.LDB, g.StrideB, batch, g.BType.Size())
	c = matrixBytes(g.M, g.N, g.LDC, g.StrideC, batch, g.CType.Size())
	return a, b, c
}
