package ops

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// mulmat_rows.go is the per-device step of the row-split MUL_MAT (the op
// callback of the seed's ggml_cuda_op_mul_mat): core/backend hands each
// device its rows of src0, its copy of a chunk of src1's columns and where
// its rows of dst go, and the step runs the single-device mul_mat on them.

// RowsFunc computes dst = src0ᵀ·src1 for one device's row range: src0 is
// the device's rows of the weights (ne [k, rows, 1, 1], rows packed), src1
// a chunk of columns in the device's memory (ne [k, cols, 1, 1], f32,
// contiguous) and dst the device's rows of the output (ne [rows, cols, 1,
// 1], f32, Nb[1] the output's leading dimension in bytes). Every buffer is
// the device's; work is queued on d's stream. srcType is src0's type.
type RowsFunc func(d Device, srcType tensor.Type, dst, src0, src1 vendorapi.TensorDesc) error

// rowsFuncs holds the row step per src0 type: the float types here; the
// quantized mul_mat family registers its own (with src1 quantized once per
// device by the caller's hook).
var rowsFuncs = map[tensor.Type]RowsFunc{
	tensor.F32:  mulMatRowsFloat,
	tensor.F16:  mulMatRowsFloat,
	tensor.BF16: mulMatRowsFloat,
}

// RegisterRows sets the row step for src0 type t (an op file's init).
func RegisterRows(t tensor.Type, f RowsFunc) { rowsFuncs[t] = f }

// MulMatRows returns the row step of the row-split MUL_MAT for src0 of type
// src0 and src1 of type src1, or "" and the reason there is none.
func MulMatRows(src0, src1 tensor.Type) (RowsFunc, string) {
	if src1 != tensor.F32 {
		return nil, fmt.Sprintf("src1 %s with a split src0: the row-split path takes f32 src1 (the seed's)", src1)
	}
	f, ok := rowsFuncs[src0]
	if !ok {
		if src0.IsQuantized() {
			return nil, fmt.Sprintf("split src0 of type %s: the quantized row step comes with the quantized mul_mat family", src0)
		}
		return nil, fmt.Sprintf("split src0 of type %s", src0)
	}
	return f, ""
}

// mulMatRowsFloat is the row step for f32, f16 and bf16 weights: the vector
// kernel for one column, or several with 16-byte aligned rows (up to 8 on
// the tensor cores), else a gemm
// (as runMulMat chooses).
func mulMatRowsFloat(d Device, at tensor.Type, dst, a, b vendorapi.TensorDesc) error {
	vec := mmvVec(at, a, b) && (b.Ne[1] <= MMVMaxColumns || useMMVT(at, d.Props(), b.Ne[1]))
	if b.Ne[1] == 1 || vec {
		return runMMV(d, at, dst, a, b, nil)
	}
	return runGemm(d, at, tensor.F32, dst, a, b)
}

// Unsupported returns the error Supports gives for node n that cannot run
// for reason why (an UnsupportedError naming op, types and shapes); for
// callers with rules of their own, such as core/backend's for split tensors.
func Unsupported(n *graph.Tensor, why string) error {
	return &UnsupportedError{Node: describe(n), Reason: why}
}
