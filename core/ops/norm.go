package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// norm.go plans NORM, RMS_NORM, L2_NORM and GROUP_NORM (kernels/norm.cu),
// and the fused ADD → norm → MUL → ADD chains (norm_fusion.go finds them).

// normKernels names the row ops of norm.cu's {op} axis.
var normKernels = map[graph.Op]string{graph.OpNorm: "norm", graph.OpRMSNorm: "rms", graph.OpL2Norm: "l2"}

// normCache is norm.cu's NORM_CACHE(v): units of v floats of a row each
// thread keeps in registers.
func normCache(v int64) int64 {
	if v == 4 {
		return 4
	}
	return 8
}

// normThreads is the most threads of a row kernel's block (its launch
// bounds in the catalog).
const normThreads = 512

func init() {
	for op := range normKernels {
		register(op, impl{supports: normSupports, run: func(d Device, n *graph.Tensor) error {
			return normLaunch(d, normChain{norm: n, x: n.Src(0), dst: n})
		}})
	}
	register(graph.OpGroupNorm, impl{supports: normGroupSupports, run: normGroupRun})
}

// normSupports is the row norms' supports: f32 (as the seed's kernels), any
// strides, counts that fit the kernels' 32-bit indices.
func normSupports(n *graph.Tensor, _ vendorapi.Props) string {
	if n.Src(0).Type() != tensor.F32 || n.Type() != tensor.F32 {
		return n.Op().String() + " runs on f32 only"
	}
	if !fits32(n.Src(0).Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

// normChain is what one launch of norm_rows computes: the norm node, its
// input x (or an ADD's src0, with add its src1, fused in front; sum is that
// ADD node when its result must be written), a MUL by mul and an ADD of post
// fused behind (nil: none), and dst, the node whose memory takes the result.
type normChain struct {
	norm, x, add, sum, mul, post, dst *graph.Tensor
}

// normVec reports whether t can be read in float4 units: packed f32 rows a
// multiple of 4 long, 16-byte aligned.
func normVec(t vendorapi.TensorDesc) bool {
	return t.Nb[0] == 4 && t.Ne[0]%4 == 0 && aligned(t, 16)
}

// normLaunch launches norm_rows for chain c: norm4_{op}_f32 when every
// tensor it touches has packed, aligned rows a multiple of 4 long, else
// norm_{op}_f32 (norm4_fused_{op}_f32, norm_fused_{op}_f32 for a chain
// with operands fused in). A block's threads (x) share a row, as many as
// give each thread at most normCache units (a warp at least, normThreads at
// most: longer rows read the rest again), and take about 256 threads per
// block with more rows (y).
func normLaunch(d Device, c normChain) error {
	ts := []*graph.Tensor{c.dst, c.x, c.add, c.mul, c.post, c.sum}
	ds := make([]vendorapi.TensorDesc, len(ts))
	vec := true
	for i, t := range ts {
		if t == nil {
			continue
		}
		var err error
		if ds[i], err = desc(t); err != nil {
			return err
		}
		vec = vec && normVec(ds[i])
	}
	v, prefix := int64(1), "norm_"
	if vec {
		v, prefix = 4, "norm4_"
	}
	if c.add != nil || c.mul != nil || c.post != nil {
		prefix += "fused_"
	}
	name := prefix + normKernels[c.norm.Op()] + "_f32"
	ne, nrows := c.dst.Ne(), c.dst.Layout().Rows()
	units := ne[0] / v
	bx := int64(d.Props().WarpSize)
	for bx < normThreads && bx*normCache(v) < units {
		bx *= 2
	}
	by := max(256/bx, 1)
	grid := vendorapi.Dim3{X: uint32(max(min((nrows+by-1)/by, maxBlocks), 1))}
	block := vendorapi.Dim3{X: uint32(bx), Y: uint32(by)}
	a := d.Args()
	for _, t := range ds {
		a.Tensor(t)
	}
	a.FastDiv(fd(ne[1])).FastDiv(fd(ne[2]))
	for _, t := range ds[2:5] { // add, mul, post: columns in units, then rows by modulo
		a.FastDiv(fd(t.Ne[0] / v)).FastDiv(fd(t.Ne[1])).FastDiv(fd(t.Ne[2])).FastDiv(fd(t.Ne[3]))
	}
	a.F32(c.norm.ParamF32(0)).I64(nrows)
	return launch(d, name, grid, block, 0, a)
}

// normGroupSupports is GROUP_NORM's supports: f32, a contiguous src0 (the
// seed's condition), samples that fit a grid's y dimension.
func normGroupSupports(n *graph.Tensor, _ vendorapi.Props) string {
	src := n.Src(0)
	switch {
	case src.Type() != tensor.F32 || n.Type() != tensor.F32:
		return "GROUP_NORM runs on f32 only"
	case !src.Layout().IsContiguous():
		return "src0 must be contiguous (make it so with Cont)"
	case !fits32(src.Layout()):
		return "more than 2^31 elements"
	case src.Dim(3) > 65535:
		return "more than 65535 samples (ne3)"
	}
	return ""
}

// normGroupRun launches group_norm4_f32 (ne0*ne1 a multiple of 4, aligned)
// or group_norm_f32: one block per group and sample, up to 1024 threads.
func normGroupRun(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	ne := n.Ne()
	groups := int64(n.ParamI32(0))
	cpg := (ne[2] + groups - 1) / groups
	plane := ne[0] * ne[1]
	v, name := int64(1), "group_norm_f32"
	if plane%4 == 0 && aligned(ds[0], 16) && aligned(ds[1], 16) {
		v, name = 4, "group_norm4_f32"
	}
	bx := int64(d.Props().WarpSize)
	for bx < 1024 && bx*4 < cpg*plane/v {
		bx *= 2
	}
	grid := vendorapi.Dim3{X: uint32((ne[2] + cpg - 1) / cpg), Y: uint32(ne[3])}
	a := d.Args().Tensor(ds[0]).Tensor(ds[1]).I64(cpg).F32(n.ParamF32(1))
	return launch(d, name, grid, vendorapi.Dim3{X: uint32(bx)}, 0, a)
}
