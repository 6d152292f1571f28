package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/vendorapi"
)

// addid.go plans ADD_ID (kernels/addid.cu).

func init() { register(graph.OpAddID, impl{supports: supportsAddID, run: runAddID}) }

func supportsAddID(n *graph.Tensor, _ vendorapi.Props) string {
	if !fits32(n.Layout()) {
		return "more than 2^31 elements"
	}
	return "" // the constructor checked types and shapes
}

// runAddID launches add_id_f32, one thread an element; a row index out of
// range sets the device error word (FlagAddIDRow).
func runAddID(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1), n.Src(2))
	if err != nil {
		return err
	}
	dst := ds[0]
	count := n.Layout().Elements()
	if count == 0 {
		return nil
	}
	grid, block := flatGeometry(count)
	args := d.Args().Tensor(dst).Tensor(ds[1]).Tensor(ds[2]).Tensor(ds[3]).FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).
		I64(count).Ptr(errorFlag(d))
	return launch(d, "add_id_f32", grid, block, 0, args)
}
