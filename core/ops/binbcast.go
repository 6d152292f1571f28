package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// binbcast.go plans ADD, SUB, MUL and DIV (kernels/binbcast.cu).

var binOpNames = map[graph.Op]string{graph.OpAdd: "add", graph.OpSub: "sub", graph.OpMul: "mul", graph.OpDiv: "div"}

func init() {
	for op := range binOpNames {
		register(op, impl{supports: supportsBinary, run: runBinary})
	}
}

func supportsBinary(n *graph.Tensor, _ vendorapi.Props) string {
	a, b := n.Src(0), n.Src(1)
	if _, ok := floatType(a.Type()); !ok {
		return "src0 must be f32, f16 or bf16"
	}
	if _, ok := floatType(b.Type()); !ok {
		return "src1 must be f32, f16 or bf16"
	}
	if !fits32(n.Layout()) || !fits32(b.Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

// runBinary launches bin4_{op}_f32 when every row is packed f32, 16-byte
// aligned, a multiple of 4 long and src1's rows are as long as dst's; else
// {op}_f32 (a flat loop, no index arithmetic: one warp for a tiny op) when
// dst, src0 and src1 are contiguous f32 of one shape and op is ADD, SUB or
// MUL (the binary family's kernels: results exact, so a conformance fixture
// of every vendor); else bin_{op}_{t0}_{t1}.
func runBinary(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	dst, a, b := ds[0], ds[1], ds[2]
	nrows := n.Layout().Rows()
	op := binOpNames[n.Op()]
	args := d.Args()
	vec := n.Type() == tensor.F32 && n.Src(1).Type() == tensor.F32 && dst.Ne[0]%4 == 0 && b.Ne[0] == dst.Ne[0] &&
		dst.Nb[0] == 4 && a.Nb[0] == 4 && b.Nb[0] == 4 && aligned(dst, 16) && aligned(a, 16) && aligned(b, 16)
	if vec {
		grid, block := rowsGeometry(dst.Ne[0], nrows, 4, d.Props().WarpSize)
		args.Tensor(dst).Tensor(a).Tensor(b).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).
			FastDiv(fd(b.Ne[1])).FastDiv(fd(b.Ne[2])).FastDiv(fd(b.Ne[3])).I64(nrows)
		return launch(d, "bin4_"+op+"_f32", grid, block, 0, args)
	}
	if flatBinary(n) {
		count := n.Layout().Elements()
		grid, block := tinyFlatGeometry(count, d.Props().WarpSize)
		return launch(d, op+"_f32", grid, block, 0, args.Ptr(dst.Data).Ptr(a.Data).Ptr(b.Data).I64(count))
	}
	t0, _ := floatType(n.Type())
	t1, _ := floatType(n.Src(1).Type())
	grid, block := rowsGeometry(dst.Ne[0], nrows, 1, d.Props().WarpSize)
	args.Tensor(dst).Tensor(a).Tensor(b).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).FastDiv(fd(b.Ne[0])).
		FastDiv(fd(b.Ne[1])).FastDiv(fd(b.Ne[2])).FastDiv(fd(b.Ne[3])).I64(nrows)
	return launch(d, "bin_"+op+"_"+t0+"_"+t1, grid, block, 0, args)
}

// flatBinary reports whether binary node n adds, subtracts or multiplies
// contiguous f32 tensors of one shape (dst, src0 and src1), which {op}_f32
// takes as flat arrays.
func flatBinary(n *graph.Tensor) bool {
	a, b := n.Src(0), n.Src(1)
	return n.Op() != graph.OpDiv && n.Type() == tensor.F32 && a.Type() == tensor.F32 && b.Type() == tensor.F32 &&
		a.Ne() == n.Ne() && b.Ne() == n.Ne() && n.Layout().IsContiguous() && a.Layout().IsContiguous() && b.Layout().IsContiguous()
}
