package graph

import "fmt"

// Op is what a graph node computes, with ggml's op names so that a graph,
// its errors and `ternion ops` cases read like ggml's.
type Op uint16

// The ops, in ggml's order (enum ggml_op). Those without constructors yet are
// named so that names and numbers stay stable as they arrive.
const (
	OpNone Op = iota
	OpDup
	OpAdd
	OpAddID
	OpAdd1
	OpAcc
	OpSub
	OpMul
	OpDiv
	OpSqr
	OpSqrt
	OpLog
	OpSin
	OpCos
	OpSum
	OpSumRows
	OpMean
	OpArgmax
	OpCountEqual
	OpRepeat
	OpRepeatBack
	OpConcat
	OpSiluBack
	OpNorm
	OpRMSNorm
	OpRMSNormBack
	OpGroupNorm
	OpL2Norm
	OpMulMat
	OpMulMatID
	OpOutProd
	OpScale
	OpSet
	OpCpy
	OpCont
	OpReshape
	OpView
	OpPermute
	OpTranspose
	OpGetRows
	OpGetRowsBack
	OpSetRows
	OpDiag
	OpDiagMaskInf
	OpDiagMaskZero
	OpSoftMax
	OpSoftMaxBack
	OpRope
	OpRopeBack
	OpClamp
	OpUpscale
	OpPad
	OpArange
	OpTimestepEmbedding
	OpArgsort
	OpLeakyRelu
	OpFlashAttnExt
	OpUnary
	OpGLU
	opCount
)

var opNames = [opCount]string{
	OpNone: "NONE", OpDup: "DUP", OpAdd: "ADD", OpAddID: "ADD_ID", OpAdd1: "ADD1", OpAcc: "ACC", OpSub: "SUB",
	OpMul: "MUL", OpDiv: "DIV", OpSqr: "SQR", OpSqrt: "SQRT", OpLog: "LOG", OpSin: "SIN", OpCos: "COS",
	OpSum: "SUM", OpSumRows: "SUM_ROWS", OpMean: "MEAN", OpArgmax: "ARGMAX", OpCountEqual: "COUNT_EQUAL",
	OpRepeat: "REPEAT", OpRepeatBack: "REPEAT_BACK", OpConcat: "CONCAT", OpSiluBack: "SILU_BACK", OpNorm: "NORM",
	OpRMSNorm: "RMS_NORM", OpRMSNormBack: "RMS_NORM_BACK", OpGroupNorm: "GROUP_NORM", OpL2Norm: "L2_NORM",
	OpMulMat: "MUL_MAT", OpMulMatID: "MUL_MAT_ID", OpOutProd: "OUT_PROD", OpScale: "SCALE", OpSet: "SET",
	OpCpy: "CPY", OpCont: "CONT", OpReshape: "RESHAPE", OpView: "VIEW", OpPermute: "PERMUTE",
	OpTranspose: "TRANSPOSE", OpGetRows: "GET_ROWS", OpGetRowsBack: "GET_ROWS_BACK", OpSetRows: "SET_ROWS",
	OpDiag: "DIAG", OpDiagMaskInf: "DIAG_MASK_INF", OpDiagMaskZero: "DIAG_MASK_ZERO", OpSoftMax: "SOFT_MAX",
	OpSoftMaxBack: "SOFT_MAX_BACK", OpRope: "ROPE", OpRopeBack: "ROPE_BACK", OpClamp: "CLAMP",
	OpUpscale: "UPSCALE", OpPad: "PAD", OpArange: "ARANGE", OpTimestepEmbedding: "TIMESTEP_EMBEDDING",
	OpArgsort: "ARGSORT", OpLeakyRelu: "LEAKY_RELU", OpFlashAttnExt: "FLASH_ATTN_EXT", OpUnary: "UNARY",
	OpGLU: "GLU",
}

// String is ggml's name of the op: "ADD", "MUL_MAT".
func (o Op) String() string {
	if o < opCount && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint16(o))
}

// IsView reports whether the op only reinterprets its source's memory
// (RESHAPE, VIEW, PERMUTE, TRANSPOSE): it launches nothing.
func (o Op) IsView() bool { return o == OpReshape || o == OpView || o == OpPermute || o == OpTranspose }

// canInplace reports whether a node of op may write its result over its
// first source's memory when nothing else reads that source afterwards
// (ggml-alloc's ggml_op_can_inplace).
func (o Op) canInplace() bool {
	switch o {
	case OpScale, OpDiagMaskZero, OpDiagMaskInf, OpAdd, OpAddID, OpAdd1, OpSub, OpMul, OpDiv, OpSqr, OpSqrt,
		OpLog, OpUnary, OpRope, OpRMSNorm, OpSoftMax:
		return true
	}
	return false
}

// Ops lists every op, in ggml's order.
func Ops() []Op {
	out := make([]Op, opCount)
	for i := range out {
		out[i] = Op(i)
	}
	return out
}

// ParseOp returns the op named name (ggml's name, e.g. "MUL_MAT").
func ParseOp(name string) (Op, error) {
	for i, n := range opNames {
		if n == name {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("graph: unknown op %q", name)
}
