package ops

import (
	"fmt"

	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
)

// MulMatPath is the kernel path a MUL_MAT takes.
type MulMatPath int

const (
	// PathMMV is the vector kernel for float src0 and one f32 column, or
	// up to 8 with 16-byte aligned rows (kernels/mmv.cu: mmvn, or mmvt on
	// the tensor cores).
	PathMMV MulMatPath = iota + 1
	// PathMMVQ is the quantized matrix-vector kernel for up to 8 f32
	// columns (kernels/quant.cu's mmvq).
	PathMMVQ
	// PathBLAS is the vendor gemm on float operands (batched when src1 has
	// several matrices).
	PathBLAS
	// PathDequantBLAS dequantizes a quantized src0 to f16, then runs the
	// vendor gemm.
	PathDequantBLAS
	// PathGemm90 is ternion's own gemm on the warpgroup tensor cores of
	// compute capability 9.0 (kernels/gemm90.cu): quantized src0 of a
	// format in gemm90Groups expanded to f16 inside the gemm, src1
	// converted to f16 in its tile order.
	PathGemm90
)

var pathNames = map[MulMatPath]string{PathMMV: "mmv", PathMMVQ: "mmvq", PathBLAS: "blas", PathDequantBLAS: "dequant+blas",
	PathGemm90: "gemm90"}

// String is the path's short name (as `ternion ops perf -v` prints it).
func (p MulMatPath) String() string {
	if s, ok := pathNames[p]; ok {
		return s
	}
	return fmt.Sprintf("MulMatPath(%d)", int(p))
}

// MMVQMaxColumns is the most src1 columns the mmvq kernels take (the
// seed's MMVQ_MAX_BATCH_SIZE).
const MMVQMaxColumns = 8

// MMVMaxColumns is the most src1 columns the float vector kernel takes
// (mmvn_{t} for 2 and more, with 16-byte aligned rows). Measured on the
// H200 (f16, m=4096 k=14336, same run): 2 columns 38.7 µs against BLAS's
// 44.5, 4 columns 45.5 against 41.3, 8 columns 68.2 against 44.1.
const MMVMaxColumns = 2

// MulMatShape is what the path choice depends on.
type MulMatShape struct {
	A, B       tensor.Type // src0 and src1 types
	Columns    int64       // src1's ne[1]
	ForceBLAS  bool        // switches.ForceBLAS
	ForceMMQ   bool        // switches.ForceMMQ
	VectorSrc1 bool        // src1 is f32 (the vector kernels' operand)
	VecRows    bool        // src0's and src1's rows are packed and 16-byte aligned (the float vector kernel's 16-byte loads)
	MMVQ8      bool        // src0 is of a format with mmvq8 kernels and its rows start 16-byte aligned
	MMVQ8T     bool        // src0's format has mmvq8t kernels and the device runs them (useMMVQ8T)
	MMVQ8W     bool        // one column, src0's format has mmvq8w kernels, k fits them and the device runs them (useMMVQ8W)
	MMVQ8WF    bool        // src1 may be quantized inside mmvq8w's blocks (useMMVQ8WF)
	MMVQ8WT    bool        // 2..8 columns, src0's format has mmvq8wt kernels, k fits them and the device runs them (useMMVQ8WT)
	MMVT       bool        // src0 is f16 or bf16 and the device runs the tensor-core vector kernel (useMMVT)
	MMVT2      bool        // the tensor-core vector kernel takes two row tiles a block (mmvt2; not under TERNION_NO_MMVT2)
	Gemm90     bool        // src0's format, the shapes and the device take gemm90 (useGemm90)
}

// ChooseMulMat returns the path of a MUL_MAT and the reason for it, or an
// empty path and the reason none fits. It follows the seed's order (the
// vector kernel for one float column, mmvq for ≤ 8 columns of quantized
// src0, then mmq or BLAS). ternion has no mmq tile kernels yet, so larger
// quantized products dequantize to f16 and use BLAS — the seed's path when
// mmq is not chosen — and TERNION_FORCE_MMQ is refused rather than ignored.
func ChooseMulMat(s MulMatShape) (MulMatPath, string) {
	if s.A.IsQuantized() {
		switch {
		case s.VectorSrc1 && s.Columns == 1 && s.MMVQ8 && s.MMVQ8W && s.MMVQ8WF:
			return PathMMVQ, "quantized src0, one f32 column: mmvq (mmvq8wf: src1 to 8 bits inside the product's blocks, a warp a row, integer dot products)"
		case s.VectorSrc1 && s.Columns == 1 && s.MMVQ8 && s.MMVQ8W:
			return PathMMVQ, "quantized src0, one f32 column: mmvq (mmvq8w: src1 to 8 bits, a warp a row, integer dot products)"
		case s.VectorSrc1 && s.Columns <= MMVQMaxColumns && s.MMVQ8 && s.MMVQ8WT:
			return PathMMVQ, fmt.Sprintf("quantized src0, %d f32 columns ≤ %d: mmvq (mmvq8wt: src1 to 8 bits, integer products on the tensor cores, src0 decoded from whole words)",
				s.Columns, MMVQMaxColumns)
		case s.VectorSrc1 && s.Columns <= MMVQMaxColumns && s.MMVQ8 && s.MMVQ8T:
			return PathMMVQ, fmt.Sprintf("quantized src0, %d f32 column(s) ≤ %d: mmvq (mmvq8t: src1 to 8 bits, integer products on the tensor cores)",
				s.Columns, MMVQMaxColumns)
		case s.VectorSrc1 && s.Columns <= MMVQMaxColumns && s.MMVQ8:
			return PathMMVQ, fmt.Sprintf("quantized src0, %d f32 column(s) ≤ %d: mmvq (mmvq8: src1 to 8 bits, integer dot products)",
				s.Columns, MMVQMaxColumns)
		case s.VectorSrc1 && s.Columns <= MMVQMaxColumns:
			return PathMMVQ, fmt.Sprintf("quantized src0, %d f32 column(s) ≤ %d: mmvq (float dot products: no mmvq8 for %s or rows not 16-byte aligned)",
				s.Columns, MMVQMaxColumns, s.A)
		case s.ForceMMQ:
			return 0, switches.ForceMMQ.Name + " is set, and ternion has no mmq kernels yet"
		case s.ForceBLAS:
			return PathDequantBLAS, switches.ForceBLAS.Name + ": dequantize src0 to f16, then BLAS"
		case s.Gemm90:
			return PathGemm90, fmt.Sprintf("%s src0, %d f32 columns > %d, k a multiple of 256, compute capability 9.0, one wave of 128x128 tiles: gemm90 (wgmma, src0 expanded to f16 inside the gemm)",
				s.A, s.Columns, MMVQMaxColumns)
		}
		return PathDequantBLAS, fmt.Sprintf("%d columns > %d and no mmq kernels yet: dequantize src0 to f16, then BLAS",
			s.Columns, MMVQMaxColumns)
	}
	switch {
	case s.ForceBLAS:
		return PathBLAS, switches.ForceBLAS.Name
	case s.VectorSrc1 && s.Columns == 1:
		return PathMMV, "float src0, one f32 column: the vector kernel"
	case s.VectorSrc1 && s.VecRows && s.MMVT && s.Columns <= MMVQMaxColumns:
		kernel := "mmvt2"
		if !s.MMVT2 {
			kernel = "mmvt, " + switches.NoMMVT2.Name
		}
		return PathMMV, fmt.Sprintf("%s src0, %d f32 columns ≤ %d, 16-byte aligned rows: the vector kernel on the tensor cores (%s)",
			s.A, s.Columns, MMVQMaxColumns, kernel)
	case s.VectorSrc1 && s.VecRows && s.Columns <= MMVMaxColumns:
		return PathMMV, fmt.Sprintf("float src0, %d f32 columns ≤ %d, 16-byte aligned rows: the vector kernel", s.Columns, MMVMaxColumns)
	}
	return PathBLAS, fmt.Sprintf("float src0, %d columns: BLAS", s.Columns)
}
