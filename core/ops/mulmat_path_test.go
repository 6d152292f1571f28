package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ternion/ternion/core/tensor"
)

// TestChooseMulMat is the dispatch table: each row a shape, the path and
// the reason's key words.
func TestChooseMulMat(t *testing.T) {
	for _, c := range []struct {
		name string
		s    MulMatShape
		want MulMatPath
		why  string
	}{
		{"f16 one column", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 1, VectorSrc1: true}, PathMMV, "vector kernel"},
		{"f16 two columns, rows not 16-byte aligned", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 2, VectorSrc1: true}, PathBLAS, "BLAS"},
		{"f16 two columns", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true}, PathMMV, "vector kernel"},
		{"bf16 two columns", MulMatShape{A: tensor.BF16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true}, PathMMV, "2 f32 columns"},
		{"f32 three columns", MulMatShape{A: tensor.F32, B: tensor.F32, Columns: 3, VectorSrc1: true, VecRows: true}, PathBLAS, "BLAS"},
		{"f16 two columns, BLAS forced", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true, ForceBLAS: true}, PathBLAS, "FORCE_BLAS"},
		{"f16 src1 f16", MulMatShape{A: tensor.F16, B: tensor.F16, Columns: 1}, PathBLAS, "BLAS"},
		{"f32 forced BLAS", MulMatShape{A: tensor.F32, B: tensor.F32, Columns: 1, VectorSrc1: true, ForceBLAS: true}, PathBLAS, "FORCE_BLAS"},
		{"q4_0 one column", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true}, PathMMVQ, "float dot products"},
		{"q4_0 one column, aligned rows", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8: true}, PathMMVQ, "mmvq8: "},
		{"q4_0 eight columns, aligned rows, tensor cores", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVQ8: true, MMVQ8T: true}, PathMMVQ, "mmvq8t"},
		{"q4_0 one column, rows not aligned, tensor cores", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8T: true}, PathMMVQ, "float dot products"},
		{"q4_K eight columns", MulMatShape{A: tensor.Q4_K, B: tensor.F32, Columns: 8, VectorSrc1: true}, PathMMVQ, "mmvq"},
		{"q4_K eight columns, BLAS forced", MulMatShape{A: tensor.Q4_K, B: tensor.F32, Columns: 8, VectorSrc1: true, ForceBLAS: true}, PathMMVQ, "mmvq"},
		{"q8_0 nine columns", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 9, VectorSrc1: true}, PathDequantBLAS, "no mmq"},
		{"q8_0 512 columns, BLAS forced", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 512, VectorSrc1: true, ForceBLAS: true}, PathDequantBLAS, "FORCE_BLAS"},
		{"q8_0 512 columns, MMQ forced", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 512, VectorSrc1: true, ForceMMQ: true}, 0, "no mmq kernels"},
		{"q4_0 one column, too many batches", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1}, PathDequantBLAS, "dequantize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := ChooseMulMat(c.s)
			assert.Equal(t, c.want, got)
			assert.Contains(t, why, c.why)
		})
	}
	assert.Equal(t, "dequant+blas", PathDequantBLAS.String())
}
