package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// reduce.go plans SUM_ROWS, MEAN, ARGMAX, SUM and COUNT_EQUAL
// (kernels/reduce.cu).

func init() {
	register(graph.OpSumRows, impl{supports: reduceSupportsF32, run: reduceRunRows})
	register(graph.OpMean, impl{supports: reduceSupportsF32, run: reduceRunRows})
	register(graph.OpSum, impl{supports: reduceSupportsF32, run: reduceRunSum})
	register(graph.OpArgmax, impl{supports: reduceSupportsF32, runEarly: reduceRunArgmax})
	register(graph.OpCountEqual, impl{supports: reduceSupportsCountEqual, run: reduceRunCountEqual})
}

// reduceThreads is the block size of the whole-tensor reductions, and
// reduceMaxParts bounds their partial results (their first launch's grid).
const (
	reduceThreads  = 256
	reduceMaxParts = 1024
)

func reduceSupportsF32(n *graph.Tensor, _ vendorapi.Props) string {
	if n.Src(0).Type() != tensor.F32 {
		return n.Op().String() + " runs on f32 sources (as ggml-cuda's)"
	}
	if !fits32(n.Src(0).Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

func reduceSupportsCountEqual(n *graph.Tensor, _ vendorapi.Props) string {
	if n.Src(0).Type() != tensor.I32 {
		return "COUNT_EQUAL runs on i32 sources (as ggml-cuda's)"
	}
	if !fits32(n.Src(0).Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

// reduceGeometry is the block and grid of a row reduction over rows of ne0
// elements read vec at a time: a row's threads (x, a power of two from the
// warp size up to 512) take about four reads each or more, rows fill
// blocks of about 256 threads (y). Blocks of at most 512 threads let two or
// more share a multiprocessor, one loading while another reduces (ARGMAX
// [32000, 512] has as many blocks as rows).
func reduceGeometry(ne0, nrows, vec int64, warp int) (grid, block vendorapi.Dim3) {
	per := (ne0 + vec - 1) / vec
	bx := int64(warp)
	for bx*4 < per && bx < 512 {
		bx *= 2
	}
	by := max(256/bx, 1)
	blocks := min((nrows+by-1)/by, maxBlocks)
	return vendorapi.Dim3{X: uint32(max(blocks, 1))}, vendorapi.Dim3{X: uint32(bx), Y: uint32(by)}
}

// reduceBlockThreads and reduceArgmaxThreads are the block sizes of
// sumrowsb_f32 and argmaxb_f32 / argmaxbp_f32 (one row a block;
// REDUCE_SUMROWS_NT and REDUCE_ARGMAX_NT in reduce.cu); reduceBlockMin4 is
// the shortest row, in 16-byte vectors, they take (two vectors a thread of
// 512 or more): shorter rows share blocks in sumrows4_f32 and argmax4_f32.
const (
	reduceBlockThreads  = 512
	reduceArgmaxThreads = 256
	reduceBlockMin4     = 1024
)

// reduceBlockARow reports whether t's rows are read by a one-row-a-block
// kernel (sumrowsb_f32, argmaxb_f32): 16-byte vectors, reduceBlockMin4 of
// them or more a row.
func reduceBlockARow(t vendorapi.TensorDesc) bool {
	return reduceVec4(t) && t.Ne[0]/4 >= reduceBlockMin4
}

// reduceRowBlocks is the grid of a one-row-a-block kernel over nrows rows.
func reduceRowBlocks(nrows int64) vendorapi.Dim3 {
	return vendorapi.Dim3{X: uint32(max(min(nrows, maxBlocks), 1))}
}

// reduceVec4 reports whether t's f32 rows can be read as 16-byte vectors.
func reduceVec4(t vendorapi.TensorDesc) bool {
	return t.Nb[0] == 4 && t.Ne[0]%4 == 0 && aligned(t, 16)
}

// reduceRows queues dst[0, i1, i2, i3] = scale * Σ src[:, i1, i2, i3].
func reduceRows(d Device, dst, src vendorapi.TensorDesc, scale float32) error {
	nrows := src.Ne[1] * src.Ne[2] * src.Ne[3]
	args := d.Args().Tensor(dst).Tensor(src).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).I64(nrows).F32(scale)
	if reduceBlockARow(src) {
		return launch(d, "sumrowsb_f32", reduceRowBlocks(nrows), vendorapi.Dim3{X: reduceBlockThreads, Y: 1}, 0, args)
	}
	name, vec := "sumrows_f32", int64(1)
	if reduceVec4(src) {
		name, vec = "sumrows4_f32", 4
	}
	grid, block := reduceGeometry(src.Ne[0], nrows, vec, d.Props().WarpSize)
	return launch(d, name, grid, block, 0, args)
}

// reduceRunRows runs SUM_ROWS and MEAN.
func reduceRunRows(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	scale := float32(1)
	if n.Op() == graph.OpMean {
		scale = 1 / float32(ds[1].Ne[0])
	}
	return reduceRows(d, ds[0], ds[1], scale)
}

// reduceRunArgmax runs ARGMAX (long rows on argmaxbp_f32, or argmaxb_f32
// with TERNION_NO_ARGMAX_PIPELINE); early, when not nil, says whether
// the kernel may request its first loads of src before it waits for the
// kernels before it (readEarly).
func reduceRunArgmax(d Device, n *graph.Tensor, early func(t *graph.Tensor) bool) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	args := d.Args().Tensor(dst).Tensor(src).I64(src.Ne[1])
	if reduceBlockARow(src) {
		e := boolI32(early != nil && early(n.Src(0)))
		kernel := "argmaxbp_f32"
		if switches.On(nil, switches.NoArgmaxPipeline) {
			kernel = "argmaxb_f32"
		}
		return launch(d, kernel, reduceRowBlocks(src.Ne[1]), vendorapi.Dim3{X: reduceArgmaxThreads, Y: 1}, 0, args.I32(e))
	}
	name, vec := "argmax_f32", int64(1)
	if reduceVec4(src) {
		name, vec = "argmax4_f32", 4
	}
	grid, block := reduceGeometry(src.Ne[0], src.Ne[1], vec, d.Props().WarpSize)
	return launch(d, name, grid, block, 0, args)
}

// reduceParts is the grid of a whole-tensor reduction over n elements on a
// device of sms multiprocessors: at least sixteen elements a thread, at
// most four blocks a multiprocessor (all resident at once, each looping
// with four 16-byte loads in flight a thread), at most reduceMaxParts.
func reduceParts(n int64, sms int) int64 {
	most := min(4*int64(max(sms, 1)), reduceMaxParts)
	return max(1, min((n+16*reduceThreads-1)/(16*reduceThreads), most))
}

// reduceOneBlockMax is the most elements a whole-tensor reduction sums in
// one block (one launch, its partial the result): sixteen a thread (four
// 16-byte loads, one round trip) in a block of up to 1024 threads. Larger
// sums take reduceParts blocks and a second launch that adds their partials.
const reduceOneBlockMax = 16 * 1024

// reduceOneBlockThreads is the block of a one-block reduction of n ≤
// reduceOneBlockMax elements: sixteen elements a thread, whole warps, at
// least reduceThreads.
func reduceOneBlockThreads(n int64, warp int) int64 {
	w := int64(max(warp, 1))
	return min((max((n+15)/16, reduceThreads)+w-1)/w*w, 1024)
}

// reduceRunSum runs SUM: a packed source is summed flat; another is first
// summed by rows into a temporary, whose elements are then summed.
func reduceRunSum(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	data, count := src.Data, n.Src(0).Layout().Elements()
	if !n.Src(0).Layout().IsContiguous() {
		nrows := src.Ne[1] * src.Ne[2] * src.Ne[3]
		rows, err := d.Pool().Alloc(uint64(4 * nrows))
		if err != nil {
			return err
		}
		defer rows.Free()
		ne := [4]int64{1, src.Ne[1], src.Ne[2], src.Ne[3]}
		tmp := vendorapi.TensorDesc{Data: rows.Ptr, Ne: ne, Nb: tensor.RowMajorStrides(tensor.F32, ne)}
		if err := reduceRows(d, tmp, src, 1); err != nil {
			return err
		}
		data, count = rows.Ptr, nrows
	}
	name := "sumflat_f32"
	if data%16 == 0 {
		name = "sumflat4_f32"
	}
	if count <= reduceOneBlockMax { // one block: its partial sum is the result (one launch for small tensors)
		block := vendorapi.Dim3{X: uint32(reduceOneBlockThreads(count, d.Props().WarpSize))}
		return launch(d, name, vendorapi.Dim3{X: 1}, block, 0, d.Args().Ptr(dst.Data).I64(1).Ptr(data).I64(count))
	}
	block := vendorapi.Dim3{X: reduceThreads}
	parts := reduceParts(count, d.Props().SMs)
	partial, err := d.Pool().Alloc(uint64(4 * parts))
	if err != nil {
		return err
	}
	defer partial.Free()
	args := d.Args().Ptr(partial.Ptr).I64(parts).Ptr(data).I64(count)
	if err := launch(d, name, vendorapi.Dim3{X: uint32(parts)}, block, 0, args); err != nil {
		return err
	}
	args = d.Args().Ptr(dst.Data).Ptr(partial.Ptr).I64(parts).F32(1)
	return launch(d, "reduce_final_f32", vendorapi.Dim3{X: 1}, block, 0, args)
}

// reduceRunCountEqual runs COUNT_EQUAL: per-block counts, then their sum.
func reduceRunCountEqual(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	dst, a, b := ds[0], ds[1], ds[2]
	count := n.Src(0).Layout().Elements()
	parts := reduceParts(count, d.Props().SMs)
	block := vendorapi.Dim3{X: reduceThreads}
	counts := func(partial vendorapi.DevicePtr) error {
		args := d.Args().Ptr(partial).I64(parts).Tensor(a).Tensor(b).FastDiv(fd(a.Ne[0])).FastDiv(fd(a.Ne[1])).
			FastDiv(fd(a.Ne[2])).I64(count)
		return launch(d, "count_equal_i32", vendorapi.Dim3{X: uint32(parts)}, block, 0, args)
	}
	if parts == 1 { // one block: its count is the result
		return counts(dst.Data)
	}
	partial, err := d.Pool().Alloc(uint64(8 * parts))
	if err != nil {
		return err
	}
	defer partial.Free()
	if err := counts(partial.Ptr); err != nil {
		return err
	}
	return launch(d, "reduce_final_i64", vendorapi.Dim3{X: 1}, block, 0, d.Args().Ptr(dst.Data).Ptr(partial.Ptr).I64(parts))
}
