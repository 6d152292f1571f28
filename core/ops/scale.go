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
			if count%4 == 0 && ds[0].Data%16 == 0 && ds[1].Data%16 == 0 {
				n4 := count / 4
				grid, block := flatGeometry((n4 + 3) / 4) // four float4 per thread and step
				a := d.Args().Ptr(ds[0].Data).Ptr(ds[1].Data).F32(n.ParamF32(0)).F32(n.ParamF32(1)).I64(n4)
				return launch(d, "scale4_f32", grid, block, 0, a)
			}
			grid, block := tinyFlatGeometry(count, d.Props().WarpSize)
			a := d.Args().Ptr(ds[0].Data).Ptr(ds[1].Data).F32(n.ParamF32(0)).F32(n.ParamF32(1)).I64(count)
			return launch(d, "scale_f32", grid, block, 0, a)
		},
	})
}
