package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// scale.go plans SCALE (kernels/scale.cu).

func init() {
	register(graph.OpScale, impl{
		supports: func(n *graph.Tensor, _ vendorapi.Props) string {
			if n.Type() != tensor.F32 || n.Src(0).Type() != tensor.F32 {
				return "SCALE runs on f32"
			}
			if !n.Src(0).Layout().IsContiguous() {
				return "src0 must be contiguous (make it so with Cont)"
			}
			return ""
		},
		run: func(d Device, n *graph.Tensor) error {
			ds, err := descs(n, n.Src(0))
			if err != nil {
				return err
			}
			count := n.Layout().Elements()
			if count == 0 {
				return nil
			}
			grid, block := flatGeometry(count)
			a := d.Args().Ptr(ds[0].Data).Ptr(ds[1].Data).F32(n.ParamF32(0)).F32(n.ParamF32(1)).I64(count)
			return launch(d, "scale_f32", grid, block, 0, a)
		},
	})
}
