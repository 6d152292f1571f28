package ops

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// shape.go plans REPEAT, CONCAT, PAD, UPSCALE, ARANGE and TIMESTEP_EMBEDDING
// (kernels/shape.cu).

func init() {
	register(graph.OpRepeat, impl{supports: shapeSupportsCopy, run: shapeRunRepeat})
	register(graph.OpConcat, impl{supports: shapeSupportsCopy, run: shapeRunConcat})
	register(graph.OpPad, impl{supports: shapeSupportsPad, run: shapeRunPad})
	register(graph.OpUpscale, impl{supports: shapeSupportsUpscale, run: shapeRunUpscale})
	register(graph.OpArange, impl{supports: shapeSupportsArange, run: shapeRunArange})
	register(graph.OpTimestepEmbedding, impl{supports: shapeSupportsTsembd, run: shapeRunTsembd})
}

// shapeUnitNames name the copy kernels' units by element size.
var shapeUnitNames = map[int64]string{2: "b16", 4: "b32"}

// shapeCopyType reports whether t is one of the element types the copying kernels move: every plain
// type of 2 or 4 bytes that ggml's ops produce. (ggml-cuda's REPEAT and
// CONCAT refuse I32; these kernels copy its bits like any other.)
func shapeCopyType(t tensor.Type) bool {
	return t == tensor.F32 || t == tensor.F16 || t == tensor.BF16 || t == tensor.I32 || t == tensor.I16
}

// shapeFits reports why the node's tensors are too large for the kernels'
// 32-bit indices ("" when they fit).
func shapeFits(n *graph.Tensor) string {
	for i := range graph.MaxSrc {
		if s := n.Src(i); s != nil && !fits32(s.Layout()) {
			return "a source has 2^31 elements or more"
		}
	}
	if !fits32(n.Layout()) {
		return "the result has 2^31 elements or more"
	}
	return ""
}

func shapeSupportsCopy(n *graph.Tensor, _ vendorapi.Props) string {
	for i := range graph.MaxSrc {
		if s := n.Src(i); s != nil && !shapeCopyType(s.Type()) {
			return fmt.Sprintf("src%d must be f32, f16, bf16, i32 or i16, not %s", i, s.Type())
		}
	}
	if n.Type() != n.Src(0).Type() {
		return "the result's type differs from src0's"
	}
	return shapeFits(n)
}

func shapeSupportsPad(n *graph.Tensor, p vendorapi.Props) string {
	if n.ParamI32(8) != 0 {
		return "circular padding is not implemented"
	}
	return shapeSupportsCopy(n, p)
}

func shapeSupportsUpscale(n *graph.Tensor, _ vendorapi.Props) string {
	mode := graph.ScaleMode(n.ParamI32(0))
	switch {
	case n.Type() != tensor.F32 || n.Src(0).Type() != tensor.F32:
		return "UPSCALE runs on f32"
	case mode&0xff != graph.ScaleNearest && mode&0xff != graph.ScaleBilinear:
		return "only the nearest and bilinear modes are implemented"
	case mode&^(0xff|graph.ScaleAlignCorners) != 0:
		return "only the align-corners flag is implemented"
	}
	return shapeFits(n)
}

func shapeSupportsArange(n *graph.Tensor, _ vendorapi.Props) string {
	if n.Type() != tensor.F32 {
		return "ARANGE makes f32"
	}
	return shapeFits(n)
}

func shapeSupportsTsembd(n *graph.Tensor, _ vendorapi.Props) string {
	if n.Type() != tensor.F32 || n.Src(0).Type() != tensor.F32 {
		return "TIMESTEP_EMBEDDING runs on f32"
	}
	if n.ParamI32(0) < 1 || int64(n.ParamI32(0)) > n.Dim(0) {
		return "dim is not in 1..ne0 of the result"
	}
	return shapeFits(n)
}

// shapeVec describes d's packed rows of esize-byte elements as rows of
// 16-byte units (ne[0] in units, nb[0] = 16); ok is false unless the rows
// are packed, 16-byte aligned and a multiple of 16 bytes long. Dimensions of
// one element get stride 0 (never stepped).
func shapeVec(d vendorapi.TensorDesc, esize int64) (vendorapi.TensorDesc, bool) {
	if d.Nb[0] != esize || d.Ne[0]*esize%16 != 0 || !aligned(d, 16) {
		return d, false
	}
	d.Ne[0], d.Nb[0] = d.Ne[0]*esize/16, 16
	for i := 1; i < 4; i++ {
		if d.Ne[i] == 1 {
			d.Nb[i] = 0
		}
	}
	return d, true
}

// shapeVecAll turns every one of ds into 16-byte units, or none of them.
func shapeVecAll(ds []vendorapi.TensorDesc, esize int64) bool {
	vs := make([]vendorapi.TensorDesc, len(ds))
	for i, d := range ds {
		v, ok := shapeVec(d, esize)
		if !ok {
			return false
		}
		vs[i] = v
	}
	copy(ds, vs)
	return true
}

// shapeRows is the geometry of the row kernels of shape.cu over dst's nrows
// rows of dst.Ne[0] units, four units in flight per thread, spread over the
// multiprocessors when the rows are few (spreadRows).
func shapeRows(d Device, dst vendorapi.TensorDesc, nrows int64) (grid, block vendorapi.Dim3) {
	grid, block = rowsGeometry(dst.Ne[0], nrows, 4, d.Props().WarpSize)
	return spreadRows(grid, block, nrows, d.Props().SMs)
}

// shapeFlatMax is the most units of a packed dst that REPEAT and CONCAT
// copy one a thread (repeatf_{T}, concatf_{T}) rather than row by row: the
// tiny ops of ggml's sense (64 K elements; an H100: REPEAT f32 [10,5,4,1]
// nr [2,2,2,2] 1.50-1.53 -> 1.14-1.16 µs).
const shapeFlatMax = 1 << 16

// shapeFlat returns the units of node n's dst (described in its storage
// units by dst) and whether they run one a thread: n is contiguous and has
// at most shapeFlatMax of them.
func shapeFlat(n *graph.Tensor, dst vendorapi.TensorDesc) (int64, bool) {
	units := dst.Ne[0] * dst.Ne[1] * dst.Ne[2] * dst.Ne[3]
	return units, units <= shapeFlatMax && n.Layout().IsContiguous()
}

// shapeRunRepeat launches repeat_b128 when src's and dst's rows are packed,
// 16-byte aligned and a multiple of 16 bytes long, else repeat_{b16,b32};
// repeatf_{T} (the same units) when dst has at most shapeFlatMax.
func shapeRunRepeat(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	esize := n.Type().BlockBytes()
	unit := shapeUnitNames[esize]
	if shapeVecAll(ds, esize) {
		unit = "b128"
	}
	dst, src := ds[0], ds[1]
	if units, ok := shapeFlat(n, dst); ok {
		grid, block := spreadOne(units, d.Props().SMs, d.Props().WarpSize)
		a := d.Args().Tensor(dst).Tensor(src).FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).
			FastDiv(fd(src.Ne[0])).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).FastDiv(fd(src.Ne[3])).I64(units)
		return launch(d, "repeatf_"+unit, grid, block, 0, a)
	}
	nrows := n.Layout().Rows()
	grid, block := shapeRows(d, dst, nrows)
	a := d.Args().Tensor(dst).Tensor(src).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).
		FastDiv(fd(src.Ne[0])).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).FastDiv(fd(src.Ne[3])).I64(nrows)
	return launch(d, "repeat_"+unit, grid, block, 0, a)
}

// shapeRunConcat launches concat_b128 when all three tensors' rows are
// packed, 16-byte aligned and a multiple of 16 bytes long, else
// concat_{b16,b32}; concatf_{T} (the same units) when dst has at most
// shapeFlatMax.
func shapeRunConcat(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	esize := n.Type().BlockBytes()
	unit := shapeUnitNames[esize]
	if shapeVecAll(ds, esize) {
		unit = "b128"
	}
	dst := ds[0]
	if units, ok := shapeFlat(n, dst); ok {
		grid, block := spreadOne(units, d.Props().SMs, d.Props().WarpSize)
		a := d.Args().Tensor(dst).Tensor(ds[1]).Tensor(ds[2]).I32(n.ParamI32(0)).
			FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(units)
		return launch(d, "concatf_"+unit, grid, block, 0, a)
	}
	nrows := n.Layout().Rows()
	grid, block := shapeRows(d, ds[0], nrows)
	a := d.Args().Tensor(ds[0]).Tensor(ds[1]).Tensor(ds[2]).I32(n.ParamI32(0)).
		FastDiv(fd(ds[0].Ne[1])).FastDiv(fd(ds[0].Ne[2])).I64(nrows)
	return launch(d, "concat_"+unit, grid, block, 0, a)
}

// shapeRunPad launches pad_b128 when both tensors' rows are packed, 16-byte
// aligned and a multiple of 16 bytes long and the left padding of dim 0 is
// too, else pad_{b16,b32}.
func shapeRunPad(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	esize := n.Type().BlockBytes()
	unit := shapeUnitNames[esize]
	lp0 := int64(n.ParamI32(0))
	if lp0*esize%16 == 0 && shapeVecAll(ds, esize) {
		unit, lp0 = "b128", lp0*esize/16
	}
	nrows := n.Layout().Rows()
	grid, block := shapeRows(d, ds[0], nrows)
	a := d.Args().Tensor(ds[0]).Tensor(ds[1]).I32(int32(lp0)).I32(n.ParamI32(2)).I32(n.ParamI32(4)).I32(n.ParamI32(6)).
		FastDiv(fd(ds[0].Ne[1])).FastDiv(fd(ds[0].Ne[2])).I64(nrows)
	return launch(d, "pad_"+unit, grid, block, 0, a)
}

// shapeScales are UPSCALE's scale factors as ggml computes them: dst/src
// size per dim in float32, and for dims 0 and 1 with align corners (where
// both sizes exceed 1) (dst-1)/(src-1); and the pixel offset of bilinear
// sampling (0.5, or 0 with align corners).
func shapeScales(dst, src [4]int64, mode graph.ScaleMode) (sf [4]float32, off float32) {
	for i := range sf {
		sf[i] = float32(dst[i]) / float32(src[i])
	}
	off = 0.5
	if mode&graph.ScaleAlignCorners != 0 {
		off = 0
		for i := range 2 {
			if dst[i] > 1 && src[i] > 1 {
				sf[i] = float32(dst[i]-1) / float32(src[i]-1)
			}
		}
	}
	return sf, off
}

// shapeRunUpscale launches upscale_nearest_f32 or upscale_bilinear_f32 over
// dst's rows.
func shapeRunUpscale(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	mode := graph.ScaleMode(n.ParamI32(0))
	sf, off := shapeScales(dst.Ne, src.Ne, mode)
	nrows := n.Layout().Rows()
	grid, block := shapeRows(d, dst, nrows)
	a := d.Args().Tensor(dst).Tensor(src).F32(sf[0]).F32(sf[1]).F32(sf[2]).F32(sf[3])
	name := "upscale_nearest_f32"
	if mode&0xff == graph.ScaleBilinear {
		a.F32(off)
		name = "upscale_bilinear_f32"
	}
	a.FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(nrows)
	return launch(d, name, grid, block, 0, a)
}

// shapeRunArange launches arange_f32 over dst's elements (grid-stride).
func shapeRunArange(d Device, n *graph.Tensor) error {
	dst, err := desc(n)
	if err != nil {
		return err
	}
	count := n.Layout().Elements()
	grid, block := flatGeometry(count)
	a := d.Args().Ptr(dst.Data).F32(n.ParamF32(0)).F32(n.ParamF32(2)).I64(count)
	return launch(d, "arange_f32", grid, block, 0, a)
}

// shapeRunTsembd launches tsembd_f32: a row of dst per timestep, the
// threads of a row over its dim/2 frequencies.
func shapeRunTsembd(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dim := n.ParamI32(0)
	nrows := n.Src(0).Dim(0)
	grid, block := rowsGeometry(int64(dim/2), nrows, 1, d.Props().WarpSize)
	a := d.Args().Tensor(ds[0]).Tensor(ds[1]).I32(dim).I32(n.ParamI32(1)).I64(nrows)
	return launch(d, "tsembd_f32", grid, block, 0, a)
}
