package ops

import (
	"math"
	"slices"
	"strings"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// unary.go plans UNARY, SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and GLU
// (kernels/unary.cu), ADD1 (binbcast.cu's add) and ACC (unary.cu's acc_f32,
// or binbcast.cu's add after a copy).

// unaryElementOps are the one-operand element-wise ops besides UNARY; each
// runs unary.cu's functor named like the op in lower case.
var unaryElementOps = []graph.Op{graph.OpSqr, graph.OpSqrt, graph.OpSin, graph.OpCos, graph.OpLog, graph.OpClamp,
	graph.OpLeakyRelu}

func init() {
	register(graph.OpUnary, impl{supports: unarySupports, run: unaryRunNode})
	for _, op := range unaryElementOps {
		register(op, impl{supports: unarySupports, run: unaryRunNode})
	}
	register(graph.OpGLU, impl{supports: unarySupportsGLU, run: unaryRunGLU})
	// ADD1 adds a scalar src1 through binbcast's broadcasting add (as the
	// seed does).
	binOpNames[graph.OpAdd1] = "add"
	register(graph.OpAdd1, impl{supports: supportsBinary, run: runBinary})
	register(graph.OpAcc, impl{supports: unarySupportsAcc, run: unaryRunAcc})
}

// unaryKernelOp is the op name of node n's unary.cu functor ("silu",
// "leaky_relu"), "" for a UNARY op without one.
func unaryKernelOp(n *graph.Tensor) string {
	if n.Op() != graph.OpUnary {
		return strings.ToLower(n.Op().String())
	}
	u := n.UnaryOp()
	if u == graph.UnaryXIELU || !slices.Contains(graph.UnaryOps(), u) {
		return ""
	}
	return strings.ToLower(u.String())
}

// unaryType names the kernel storage type of t when unary.cu has kernels
// for it (f32, f16).
func unaryType(t tensor.Type) (string, bool) {
	if t == tensor.F32 || t == tensor.F16 {
		return t.String(), true
	}
	return "", false
}

func unarySupports(n *graph.Tensor, _ vendorapi.Props) string {
	src := n.Src(0)
	switch {
	case unaryKernelOp(n) == "":
		return "unary op " + n.UnaryOp().String() + " has no kernel"
	case src.Type() != n.Type():
		return "src0 and dst differ in type"
	}
	if _, ok := unaryType(n.Type()); !ok {
		return "runs on f32 and f16"
	}
	if !fits32(n.Layout()) && !(src.Layout().IsContiguous() && n.Layout().IsContiguous()) {
		return "more than 2^31 elements, not contiguous"
	}
	return ""
}

// unaryParams are the float parameters (p0, p1) of n's functor.
func unaryParams(n *graph.Tensor) (float32, float32) {
	switch n.Op() {
	case graph.OpClamp:
		return n.ParamF32(0), n.ParamF32(1)
	case graph.OpLeakyRelu:
		return n.ParamF32(0), 0
	}
	return 0, 0
}

// unaryRunNode launches unary_{op}_{t} (16-byte vectors) when src and dst
// are contiguous and 16-byte aligned, else unarys_{op}_{t} (any strides).
func unaryRunNode(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	op, t := unaryKernelOp(n), n.Type().String()
	p0, p1 := unaryParams(n)
	count := n.Layout().Elements()
	if n.Layout().IsContiguous() && n.Src(0).Layout().IsContiguous() && dst.Data%16 == 0 && src.Data%16 == 0 {
		// The kernel takes fewer than 2^31 vectors: larger tensors run in
		// chunks of 2^30 vectors, the tail in the last.
		es := n.Type().BlockBytes()
		vec := 16 / es
		chunk := int64(1<<30) * vec
		for off := int64(0); off < count; off += chunk {
			m := min(chunk, count-off)
			grid, block := unaryGeometry(d.Props().SMs, d.Props().WarpSize, m/vec, unaryInFlight)
			a := d.Args().Ptr(dst.Data.Add(uint64(off * es))).Ptr(src.Data.Add(uint64(off * es))).F32(p0).F32(p1).I64(m)
			if err := launch(d, "unary_"+op+"_"+t, grid, block, 0, a); err != nil {
				return err
			}
		}
		return nil
	}
	grid, block := flatGeometry(count)
	a := d.Args().Tensor(dst).Tensor(src).FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).
		F32(p0).F32(p1).I64(count)
	return launch(d, "unarys_"+op+"_"+t, grid, block, 0, a)
}

// unaryInFlight and unaryGLUInFlight are the 16-byte vectors of each
// operand a thread of unary_{op}_{t} and gluv_{op}_{t} loads before it
// stores (unary.cu's unary_vec U and UG).
const (
	unaryInFlight    = 4
	unaryGLUInFlight = 2
)

// unaryGeometry is the grid of a vector kernel over nv vectors, u a thread
// and step, on a device of sms multiprocessors and warps of warp threads:
// one step of the grid when that gives every multiprocessor at least 8
// blocks of 256 threads, else more blocks (fewer vectors a thread), up to
// one vector a thread; fewer threads than would fill a block on every
// multiprocessor run in smaller blocks on more of them (spreadFlat).
func unaryGeometry(sms, warp int, nv, u int64) (grid, block vendorapi.Dim3) {
	threads := (nv + u - 1) / u
	if least := int64(8*256) * int64(max(sms, 1)); threads < least {
		threads = min(nv, least)
	}
	return spreadFlat(threads, sms, warp)
}

// unaryFoldRows returns t with dims 1..3 folded into dim 1 when its rows
// are evenly spaced (row r at r·nb[1]), and whether they are.
func unaryFoldRows(t vendorapi.TensorDesc) (vendorapi.TensorDesc, bool) {
	f := t
	f.Ne = [4]int64{t.Ne[0], t.Ne[1] * t.Ne[2] * t.Ne[3], 1, 1}
	set, next := false, int64(0)
	for i := 1; i < 4; i++ {
		if t.Ne[i] == 1 {
			continue
		}
		if set && t.Nb[i] != next {
			return t, false
		}
		if !set {
			set, f.Nb[1] = true, t.Nb[i]
		}
		next = t.Nb[i] * t.Ne[i]
	}
	f.Nb[2], f.Nb[3] = f.Nb[1]*f.Ne[1], f.Nb[1]*f.Ne[1]
	return f, true
}

// unaryGLUKernels are the GLU ops unary.cu has kernels for.
var unaryGLUKernels = map[graph.GLUOp]string{graph.GLUReGLU: "reglu", graph.GLUGeGLU: "geglu",
	graph.GLUSwiGLU: "swiglu", graph.GLUGeGLUErf: "geglu_erf", graph.GLUGeGLUQuick: "geglu_quick"}

func unarySupportsGLU(n *graph.Tensor, _ vendorapi.Props) string {
	if unaryGLUKernels[n.GLUOp()] == "" {
		return "GLU op " + n.GLUOp().String() + " has no kernel"
	}
	if _, ok := unaryType(n.Type()); !ok {
		return "runs on f32 and f16"
	}
	for i := range 2 {
		s := n.Src(i)
		if s == nil {
			continue
		}
		if s.Type() != n.Type() {
			return "sources and dst differ in type"
		}
		if !s.Layout().IsContiguousN(1) {
			return "sources must have packed rows with dims 2, 3 laid out over rows"
		}
	}
	if !fits32(n.Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

// unaryRunGLU launches gluv_{op}_{t} when the rows of dst, x and g are
// evenly spaced, 16-byte aligned and a whole number of 16-byte vectors,
// else glu_{op}_{t}.
// x and g are descriptors in dst's shape: the two halves of src0's rows
// (swapped: x is the second half), or src0 and src1.
func unaryRunGLU(d Device, n *graph.Tensor) error {
	srcs := []*graph.Tensor{n, n.Src(0)}
	if n.Src(1) != nil {
		srcs = append(srcs, n.Src(1))
	}
	ds, err := descs(srcs...)
	if err != nil {
		return err
	}
	dst, x := ds[0], ds[1]
	es := n.Type().BlockBytes()
	nc := dst.Ne[0]
	x.Ne = dst.Ne
	g := x
	switch {
	case len(ds) == 3:
		g = ds[2]
		g.Ne = dst.Ne
	case n.GLUSwapped():
		x.Data = x.Data.Add(uint64(nc * es))
	default:
		g.Data = g.Data.Add(uint64(nc * es))
	}
	name := unaryGLUKernels[n.GLUOp()] + "_" + n.Type().String()
	count := n.Layout().Elements()
	vec := 16 / es
	fdst, okd := unaryFoldRows(dst)
	fx, okx := unaryFoldRows(x)
	fg, okg := unaryFoldRows(g)
	if okd && okx && okg && nc%vec == 0 && aligned(fdst, 16) && aligned(fx, 16) && aligned(fg, 16) {
		nv := count / vec
		grid, block := unaryGeometry(d.Props().SMs, d.Props().WarpSize, nv, unaryGLUInFlight)
		a := d.Args().Tensor(fdst).Tensor(fx).Tensor(fg).FastDiv(fd(nc / vec)).I64(nv)
		return launch(d, "gluv_"+name, grid, block, 0, a)
	}
	grid, block := flatGeometry(count)
	a := d.Args().Tensor(dst).Tensor(x).Tensor(g).FastDiv(fd(nc)).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(count)
	return launch(d, "glu_"+name, grid, block, 0, a)
}

// unaryAccView is the descriptor of the view of ACC node n's memory that
// src1 is added into.
func unaryAccView(n *graph.Tensor, data vendorapi.DevicePtr) vendorapi.TensorDesc {
	return vendorapi.TensorDesc{Data: data.Add(uint64(n.ParamI32(3))), Ne: n.Src(1).Ne(),
		Nb: [4]int64{4, int64(n.ParamI32(0)), int64(n.ParamI32(1)), int64(n.ParamI32(2))}}
}

// unaryOverlaps reports whether two elements of a view of shape ne and
// strides nb share an address.
func unaryOverlaps(ne, nb [4]int64) bool {
	dims := []int{}
	for i := range 4 {
		if ne[i] > 1 {
			dims = append(dims, i)
		}
	}
	slices.SortFunc(dims, func(a, b int) int { return int(nb[a] - nb[b]) })
	span := int64(4) // bytes the dims so far cover: the next stride must reach it
	for _, i := range dims {
		if nb[i] < span {
			return true
		}
		span = nb[i] * ne[i]
	}
	return false
}

func unarySupportsAcc(n *graph.Tensor, _ vendorapi.Props) string {
	a, b := n.Src(0), n.Src(1)
	switch {
	case n.Type() != tensor.F32 || a.Type() != tensor.F32 || b.Type() != tensor.F32:
		return "runs on f32"
	case !a.Layout().IsContiguous() || !n.Layout().IsContiguous():
		return "src0 and dst must be contiguous"
	case !fits32(n.Layout()):
		return "more than 2^31 elements"
	}
	if v := unaryAccView(n, 0); unaryOverlaps(v.Ne, v.Nb) {
		return "elements of the accumulated view overlap (strides nb1..nb3 too small for src1's shape)"
	}
	return ""
}

// unaryAccStrides returns the strides in elements of ACC's view v (of
// src1's shape) that acc_f32 divides an element's offset by: nested (each at
// least the span of the dims below it), a dim of one element given that
// span; ok is false where the view's strides are not whole elements, not
// nested, or not below 2^31 elements.
func unaryAccStrides(v vendorapi.TensorDesc) (s [3]int64, ok bool) {
	span := v.Ne[0] // elements the dims so far cover
	for i := 1; i < 4; i++ {
		st := v.Nb[i] / 4
		if v.Ne[i] == 1 {
			st = span
		} else if v.Nb[i]%4 != 0 || st < span {
			return s, false
		}
		if st > math.MaxInt32 {
			return s, false
		}
		s[i-1] = st
		span = st*(v.Ne[i]-1) + span
	}
	return s, true
}

// unaryRunAcc runs ACC: acc_f32 in one pass where the view's strides nest
// (unaryAccStrides), else src0 copied into dst (unless in place) and src1
// added into the view of dst with binbcast's add.
func unaryRunAcc(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	dst, a, b := ds[0], ds[1], ds[2]
	if s, ok := unaryAccStrides(unaryAccView(n, dst.Data)); ok { // the graph keeps the offset a multiple of 4
		count := n.Layout().Elements()
		grid, block := spreadOne(count, d.Props().SMs, d.Props().WarpSize)
		args := d.Args().Ptr(dst.Data).Ptr(a.Data).Tensor(b).I64(int64(n.ParamI32(3)) / 4).FastDiv(fd(s[0])).FastDiv(fd(s[1])).
			FastDiv(fd(s[2])).I64(count)
		return launch(d, "acc_f32", grid, block, 0, args)
	}
	if dst.Data != a.Data {
		if err := copyTensor(d, dst, tensor.F32, a, tensor.F32); err != nil {
			return err
		}
	}
	v := unaryAccView(n, dst.Data)
	nrows := v.Ne[1] * v.Ne[2] * v.Ne[3]
	if nrows*v.Ne[0] == 0 {
		return nil
	}
	grid, block := rowsGeometry(v.Ne[0], nrows, 1, d.Props().WarpSize)
	args := d.Args().Tensor(v).Tensor(v).Tensor(b).FastDiv(fd(v.Ne[1])).FastDiv(fd(v.Ne[2])).FastDiv(fd(b.Ne[0])).
		FastDiv(fd(b.Ne[1])).FastDiv(fd(b.Ne[2])).FastDiv(fd(b.Ne[3])).I64(nrows)
	return launch(d, "bin_add_f32_f32", grid, block, 0, args)
}
