package ops

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// getrows.go plans GET_ROWS (kernels/getrows.cu).

func init() { register(graph.OpGetRows, impl{supports: getrowsSupports, run: getrowsRun}) }

// getrowsType is the getrows_{t} kernel name of a source type.
func getrowsType(t tensor.Type) (string, bool) {
	if t == tensor.I32 {
		return "i32", true
	}
	return floatType(t)
}

func getrowsSupports(n *graph.Tensor, _ vendorapi.Props) string {
	src := n.Src(0).Type()
	if src.IsQuantized() {
		if r := quantDecodable(src); r != "" {
			return "GET_ROWS: " + r
		}
		if n.Nb()[0] != 4 {
			return "GET_ROWS of quantized rows into a dst whose rows are not packed"
		}
		if r := quantRows(n.Src(0)); r != "" {
			return "GET_ROWS of " + r
		}
	} else if _, ok := getrowsType(src); !ok {
		return fmt.Sprintf("GET_ROWS of %s rows: only f32, f16, bf16, i32 and quantized rows", src)
	}
	if !fits32(n.Layout()) || !fits32(n.Src(1).Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

// getrowsRun launches getrows4_b32 for packed, 16-byte aligned 4-byte rows
// a multiple of 4 long, else getrows_{t}.
func getrowsRun(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	dst, src0, src1 := ds[0], ds[1], ds[2]
	if n.Src(0).Type().IsQuantized() {
		return getrowsQuant(d, n, dst, src0, src1)
	}
	nrows := n.Layout().Rows()
	t, _ := getrowsType(n.Src(0).Type())
	vec := (t == "f32" || t == "i32") && dst.Ne[0]%4 == 0 && dst.Nb[0] == 4 && src0.Nb[0] == 4 &&
		aligned(dst, 16) && aligned(src0, 16)
	name, width := "getrows_"+t, int64(1)
	if vec {
		name, width = "getrows4_b32", 4
	}
	grid, block := rowsGeometry(dst.Ne[0], nrows, width, d.Props().WarpSize)
	args := d.Args().Tensor(dst).Tensor(src0).Tensor(src1).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(nrows)
	return launch(d, name, grid, block, 0, args)
}
