package ops

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/pool"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// mmv.go plans MUL_MAT for f32, f16 and bf16 weights (kernels/mmv.cu and the
// vendor BLAS): the vector kernel for one src1 column, else a gemm.

func init() {
	register(graph.OpMulMat, impl{supports: supportsMulMat, runEarly: runMulMat})
}

func supportsMulMat(n *graph.Tensor, p vendorapi.Props) string {
	a, b := n.Src(0), n.Src(1)
	if a.Type().IsQuantized() {
		if r := quantDecodable(a.Type()); r != "" {
			return r
		}
		if b.Type() != tensor.F32 {
			return fmt.Sprintf("src1 %s with quantized src0 %s (src1 must be f32)", b.Type(), a.Type())
		}
		if r := quantRows(a); r != "" {
			return "src0: " + r
		}
	} else {
		if _, ok := floatType(a.Type()); !ok {
			return fmt.Sprintf("src0 of type %s", a.Type())
		}
		if b.Type() != tensor.F32 && b.Type() != a.Type() {
			return fmt.Sprintf("src1 %s with src0 %s (src1 must be f32 or src0's type)", b.Type(), a.Type())
		}
	}
	if a.Nb()[0] != a.Type().BlockBytes() {
		return "src0's rows must be packed"
	}
	an, bn := a.Ne(), b.Ne()
	if an[0] > math.MaxInt32 || an[1] > math.MaxInt32 || bn[1] > math.MaxInt32 || bn[2]*bn[3] > math.MaxInt32 {
		return "a dimension exceeds 2^31"
	}
	path, why := ChooseMulMat(mulMatShape(n, p))
	if path == 0 {
		return why
	}
	if path == PathMMVQ {
		if r := mmvqRows(a); r != "" {
			return "src0: " + r
		}
	}
	return ""
}

// mulMatShape gathers what ChooseMulMat needs of node n on a device of
// props p (switches from the process environment): the device decides
// whether mmvq8 runs on the tensor cores (useMMVQ8T). With no mmq kernels
// yet, the seed's per-cc choice between mmq and BLAS does not arise.
func mulMatShape(n *graph.Tensor, p vendorapi.Props) MulMatShape {
	return MulMatShape{A: n.Src(0).Type(), B: n.Src(1).Type(), Columns: n.Src(1).Ne()[1],
		ForceBLAS: switches.On(nil, switches.ForceBLAS), ForceMMQ: switches.On(nil, switches.ForceMMQ),
		VectorSrc1: n.Src(1).Type() == tensor.F32 && n.Src(1).Ne()[2] <= 65535 && n.Src(1).Ne()[3] <= 65535,
		VecRows:    vecRows16(n.Src(0)) && vecRows16(n.Src(1)),
		MMVQ8:      mmvq8Rows(n.Src(0)),
		MMVQ8T:     useMMVQ8T(n.Src(0).Type(), p, n.Src(1).Ne()[1]),
		MMVQ8W:     useMMVQ8W(n.Src(0).Type(), n.Src(0).Ne()[0], p, n.Src(1).Ne()[1]),
		MMVQ8WF:    useMMVQ8WF(n.Src(1).Nb()[0], rowsStartAligned(n.Src(1), 16)),
		MMVQ8WT:    useMMVQ8WT(n.Src(0).Type(), n.Src(0).Ne()[0], n.Src(0).Nb()[1], p, n.Src(1).Ne()[1]),
		MMVT:       useMMVT(n.Src(0).Type(), p, n.Src(1).Ne()[1]),
		MMVT2:      useMMVT2(),
		Gemm90:     useGemm90(n, p)}
}

// vecRows16 reports whether x's rows are packed and start 16-byte aligned
// (buffers are: views at their offsets and strides), and are a multiple of
// 16 bytes long.
func vecRows16(x *graph.Tensor) bool {
	return x.Nb()[0] == x.Type().BlockBytes() && x.Type().RowSize(x.Ne()[0])%16 == 0 && rowsStartAligned(x, 16)
}

// MulMatPathOf returns the path MUL_MAT node n takes on a device with props
// p, and why (for `ternion ops perf -v`).
func MulMatPathOf(n *graph.Tensor, p vendorapi.Props) (MulMatPath, string) {
	return ChooseMulMat(mulMatShape(n, p))
}

// runMulMat launches the path ChooseMulMat picks; early, when not nil,
// reports whether an input may be read before the kernel waits for the
// kernels before it (readEarly; asked only by a kernel that can: mmvt's,
// of src0).
func runMulMat(d Device, n *graph.Tensor, early func(t *graph.Tensor) bool) error {
	ds, err := descs(n, n.Src(0), n.Src(1))
	if err != nil {
		return err
	}
	dst, a, b := ds[0], ds[1], ds[2]
	at, bt := n.Src(0).Type(), n.Src(1).Type()
	path, why := ChooseMulMat(mulMatShape(n, d.Props()))
	weightsEarly := func() bool { return early != nil && early(n.Src(0)) }
	switch path {
	case PathMMV:
		if b.Nb[0] == 4 {
			return runMMV(d, at, dst, a, b, weightsEarly)
		}
		return runGemm(d, at, bt, dst, a, b)
	case PathMMVQ:
		return runMMVQ(d, at, dst, a, b, weightsEarly)
	case PathDequantBLAS:
		return runDequantGemm(d, at, bt, dst, a, b)
	case PathGemm90:
		return runGemm90(d, at, dst, a, b)
	case PathBLAS:
		return runGemm(d, at, bt, dst, a, b)
	}
	return fmt.Errorf("%w: %s", ErrNotSupported, why)
}

// runMMV launches mmv_{t} (or mmvv_{t} when rows allow 16-byte loads,
// reading src0 before its wait where early says so and earlyProducts is
// on): one block per dst element (per kernels.MMVVRows rows for mmvv),
// threads striding over k; for 2..8 columns mmvt_{t} or mmvt2_{t} (reading
// src0 before their wait where early says so) or mmvn_{t}.
func runMMV(d Device, at tensor.Type, dst, a, b vendorapi.TensorDesc, early func() bool) error {
	t, _ := floatType(at)
	k := a.Ne[0]
	vec := mmvVec(at, a, b)
	if b.Ne[1] > 1 {
		if !vec {
			return fmt.Errorf("%w: MUL_MAT of %d columns by the vector kernel needs 16-byte aligned rows", ErrNotSupported, b.Ne[1])
		}
		if useMMVT(at, d.Props(), b.Ne[1]) {
			e := boolI32(early != nil && early())
			if useMMVT2() {
				return runColumns(d, "mmvt2_"+t, 2*mmvtRows, 256, dst, a, b, e)
			}
			return runColumns(d, "mmvt_"+t, mmvtRows, 256, dst, a, b, e)
		}
		return runColumns(d, "mmvn_"+t, mmvvRows(t), 128, dst, a, b)
	}
	name := "mmv_" + t
	steps := k
	if vec {
		name, steps = "mmvv_"+t, k/(16/at.BlockBytes())
	}
	// One block per row, at most 128 threads: on the H200 a row of 14336
	// f16 ran at 31.9 µs with 256 threads a block and 34.7 µs with 32 lanes
	// per row (4 rows a block, 8 loads in flight per lane); 128 threads
	// halve the waves of 256 (bench/README.md).
	warp := int64(d.Props().WarpSize)
	threads := warp
	for threads < steps && threads < 128 {
		threads *= 2
	}
	rows := int64(1)
	if vec {
		rows = mmvvRows(t)
	}
	grid := vendorapi.Dim3{X: uint32((a.Ne[1] + rows - 1) / rows), Y: uint32(b.Ne[2]), Z: uint32(b.Ne[3])}
	args := d.Args().Tensor(dst).Tensor(a).Tensor(b).FastDiv(fd(b.Ne[2] / a.Ne[2])).FastDiv(fd(b.Ne[3] / a.Ne[3]))
	if vec {
		args.I32(boolI32(earlyProducts() && early != nil && early()))
	}
	return launch(d, name, grid, vendorapi.Dim3{X: uint32(threads)}, 0, args)
}

// mmvVec reports whether the vector kernel takes src0 a (of type at) and
// src1 b with 16-byte loads (mmvv, mmvn): rows 16-byte aligned and a
// multiple of 16 bytes long.
func mmvVec(at tensor.Type, a, b vendorapi.TensorDesc) bool {
	k := a.Ne[0]
	return k%(16/at.BlockBytes()) == 0 && k%4 == 0 && aligned(a, 16) && aligned(b, 16)
}

// runColumns launches kernel (mmvn_{t}, mmvt_{t} or mmvt2_{t}) for 2..8
// columns (rows checked 16-byte aligned): rows rows a block of threads
// threads, the arguments up to ncols followed by extra (mmvt's early).
func runColumns(d Device, kernel string, rows int64, threads uint32, dst, a, b vendorapi.TensorDesc, extra ...int32) error {
	grid := vendorapi.Dim3{X: uint32((a.Ne[1] + rows - 1) / rows), Y: uint32(b.Ne[2]), Z: uint32(b.Ne[3])}
	args := d.Args().Tensor(dst).Tensor(a).Tensor(b).FastDiv(fd(b.Ne[2] / a.Ne[2])).FastDiv(fd(b.Ne[3] / a.Ne[3])).
		I32(int32(b.Ne[1]))
	for _, v := range extra {
		args.I32(v)
	}
	return launch(d, kernel, grid, vendorapi.Dim3{X: threads}, 0, args)
}

// mmvtRows is the rows one block of mmvt_{t} multiplies: the catalog's
// kernels.MMVTRows (mmv.cu's MMVT_ROWS, the mma's M; a test keeps the two
// equal).
const mmvtRows = 16

// useMMVT reports whether MUL_MAT of f16 or bf16 src0 (type t) by cols f32
// columns takes mmvt_{t}, the vector kernel on the tensor cores, on a
// device of props p: 2 to 8 columns and mma.sync code compiled for the
// device (NVIDIA, arch 8.0 and later; cc 0 is the host device, which runs
// every kernel), unless TERNION_NO_MMVT. One column stays on mmvv (the
// mma would waste 7 of its 8 columns: 35.1 against 29.4 µs for f16
// m=4096 k=14336 on the H200, bench/experiments/mmvt.cu); from 2 columns
// mmvt is the faster (33.2 µs against mmvn's 38.7 at 2, 32.5 against
// BLAS's 44.1 at 8). It runs as mmvt2_{t}, two row tiles a block, unless
// TERNION_NO_MMVT2 (H100, m=4096 k=14336: 42.8 against 44.5 µs at 8
// columns, 42.5 against 44.0 at 2; bench/README.md, session 22).
func useMMVT(t tensor.Type, p vendorapi.Props, cols int64) bool {
	return (t == tensor.F16 || t == tensor.BF16) && cols >= 2 && cols <= MMVQMaxColumns && !switches.On(nil, switches.NoMMVT) &&
		(p.CC == 0 || arch.AmpereMMAAvailable(p.CC, p.CompiledArchs))
}

// useMMVT2 reports whether the tensor-core vector kernel runs as mmvt2_{t},
// two row tiles a block (not under TERNION_NO_MMVT2).
func useMMVT2() bool { return !switches.On(nil, switches.NoMMVT2) }

// mmvvRows is the rows one block of mmvv_{t} multiplies: the catalog's
// kernels.MMVVRows (core does not import kernels; a test keeps the two
// equal).
func mmvvRows(t string) int64 {
	if t == "f32" {
		return 2
	}
	return 4
}

// blasType is the vendor type of a float tensor type.
func blasType(t tensor.Type) vendorapi.DataType {
	switch t {
	case tensor.F16:
		return vendorapi.F16
	case tensor.BF16:
		return vendorapi.BF16
	}
	return vendorapi.F32
}

// gemmType is the type the gemm multiplies in, the seed's choice: bf16 with
// f32 accumulation for bf16 weights where the hardware has bf16 matrix
// units, f16 with f32 accumulation for f16 weights where fp16 is fast, f32
// otherwise. (The seed accumulates f16 in f16 and converts an f16 result;
// ternion accumulates in f32 and writes dst directly: as fast on tensor
// cores, more accurate, one pass less.)
func gemmType(at tensor.Type, p vendorapi.Props) tensor.Type {
	host := p.CC == 0
	switch {
	case at == tensor.BF16 && (host || arch.BF16MMAHardware(p.CC)):
		return tensor.BF16
	case at == tensor.F16 && (host || arch.FastFP16Hardware(p.CC)):
		return tensor.F16
	}
	return tensor.F32
}

// contiguousTemp allocates a contiguous tensor of type t and shape ne from
// d's pool and returns its descriptor; free it after queueing its last use.
func contiguousTemp(d Device, t tensor.Type, ne [4]int64) (vendorapi.TensorDesc, pool.Buffer, error) {
	nb := tensor.RowMajorStrides(t, ne)
	buf, err := d.Pool().Alloc(uint64(nb[3] * ne[3]))
	if err != nil {
		return vendorapi.TensorDesc{}, pool.Buffer{}, err
	}
	return vendorapi.TensorDesc{Data: buf.Ptr, Ne: ne, Nb: nb}, buf, nil
}

// operand returns t as the gemm needs it: of type want with packed rows, the
// tensor itself when it already is, else a converted contiguous copy (free
// the returned buffer after the gemm is queued).
func operand(d Device, t vendorapi.TensorDesc, have, want tensor.Type) (vendorapi.TensorDesc, pool.Buffer, error) {
	if have == want && t.Nb[0] == want.BlockBytes() {
		return t, pool.Buffer{}, nil
	}
	tmp, buf, err := contiguousTemp(d, want, t.Ne)
	if err != nil {
		return vendorapi.TensorDesc{}, pool.Buffer{}, err
	}
	if err := copyTensor(d, tmp, want, t, have); err != nil {
		_ = buf.Free()
		return vendorapi.TensorDesc{}, pool.Buffer{}, err
	}
	return tmp, buf, nil
}

// gemmOf is the gemm dst = aᵀ·b of one matrix pair in type gt (a and b
// with packed rows of gt, dst f32), accumulated in f32, beta 0.
func gemmOf(gt tensor.Type, dst, a, b vendorapi.TensorDesc) vendorapi.Gemm {
	es := gt.BlockBytes()
	return vendorapi.Gemm{TransA: true, M: int(a.Ne[1]), N: int(b.Ne[1]), K: int(a.Ne[0]), Alpha: 1,
		A: a.Data, AType: blasType(gt), LDA: int(a.Nb[1] / es),
		B: b.Data, BType: blasType(gt), LDB: int(b.Nb[1] / es),
		C: dst.Data, CType: vendorapi.F32, LDC: int(dst.Nb[1] / 4), Compute: vendorapi.Compute32F}
}

// flatStride returns the element stride between consecutive matrices of t
// over dims 2 and 3 taken as one batch dimension, if one exists.
func flatStride(t vendorapi.TensorDesc, es int64) (int64, bool) {
	if t.Ne[3] > 1 && t.Ne[2] > 1 && t.Nb[3] != t.Nb[2]*t.Ne[2] {
		return 0, false
	}
	s := t.Nb[2]
	if t.Ne[2] == 1 {
		s = t.Nb[3]
	}
	if s%es != 0 {
		return 0, false
	}
	return s / es, true
}

// runGemm computes dst = src0ᵀ·src1 per matrix with the vendor BLAS (column
// major: C[m×n] = Aᵀ[m×k]·B[k×n] with A = src0 [k×m], B = src1 [k×n]):
// one gemm, a strided batch when src0 is not broadcast and the batches have
// one stride, else a batch of pointer arrays built by batched_ptrs.
func runGemm(d Device, at, bt tensor.Type, dst, a, b vendorapi.TensorDesc) error {
	gt := gemmType(at, d.Props())
	a, abuf, err := operand(d, a, at, gt)
	if err != nil {
		return err
	}
	defer abuf.Free()
	b, bbuf, err := operand(d, b, bt, gt)
	if err != nil {
		return err
	}
	defer bbuf.Free()
	h, err := d.BLAS()
	if err != nil {
		return err
	}
	es := gt.BlockBytes()
	g := gemmOf(gt, dst, a, b)
	if g.N == 1 {
		g.LDB = max(g.LDB, g.K)
	}
	drv := d.Driver()
	batch := b.Ne[2] * b.Ne[3]
	if batch == 1 {
		return drv.Gemm(h, g)
	}
	sa, oka := flatStride(a, es)
	sb, okb := flatStride(b, es)
	sc, okc := flatStride(dst, 4)
	if a.Ne[2] == b.Ne[2] && a.Ne[3] == b.Ne[3] && oka && okb && okc {
		g.StrideA, g.StrideB, g.StrideC, g.BatchCount = sa, sb, sc, int(batch)
		return drv.GemmStridedBatched(h, g)
	}
	ptrs, err := d.Pool().Alloc(uint64(3 * 8 * batch))
	if err != nil {
		return err
	}
	defer ptrs.Free()
	grid, block := flatGeometry(batch)
	args := d.Args().Ptr(ptrs.Ptr).I64(int64(a.Data)).I64(int64(b.Data)).I64(int64(dst.Data)).I64(b.Ne[2]).I64(b.Ne[3]).
		I64(a.Nb[2]).I64(a.Nb[3]).I64(b.Nb[2]).I64(b.Nb[3]).I64(dst.Nb[2]).I64(dst.Nb[3]).
		I64(b.Ne[2] / a.Ne[2]).I64(b.Ne[3] / a.Ne[3])
	if err := launch(d, "batched_ptrs", grid, block, 0, args); err != nil {
		return err
	}
	g.A, g.B, g.C = ptrs.Ptr, ptrs.Ptr.Add(uint64(8*batch)), ptrs.Ptr.Add(uint64(16*batch))
	g.BatchCount = int(batch)
	return drv.GemmBatched(h, g)
}
