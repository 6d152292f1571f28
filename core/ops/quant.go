package ops

import (
	"fmt"
	"github.com/ternion/ternion/arch"
	"slices"
	"strings"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/pool"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// quant.go plans the quantized types' kernels (kernels/quant.cu):
// dequantizing and quantizing copies, GET_ROWS of quantized rows, and the
// quantized MUL_MAT paths (mulmat_path.go chooses among them).

// deviceQuantTypes are the formats kernels/quant.cu decodes (its axis q).
var deviceQuantTypes = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.Q8_1,
	tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.Q8_K, tensor.IQ4_NL, tensor.IQ4_XS,
	tensor.MXFP4, tensor.IQ2_XXS, tensor.IQ2_XS, tensor.IQ2_S, tensor.IQ3_XXS, tensor.IQ3_S, tensor.IQ1_S, tensor.IQ1_M,
	tensor.TQ1_0, tensor.TQ2_0}

// QuantTypes returns the quantized formats the device kernels decode.
func QuantTypes() []tensor.Type { return slices.Clone(deviceQuantTypes) }

// QuantizeTargets returns the formats a CPY quantizes f32 into on the
// device (the seed's CPY targets).
func QuantizeTargets() []tensor.Type { return slices.Clone(deviceQuantizers) }

// deviceQuantizers are the formats kernels/quant.cu quantizes f32 into:
// the seed's CPY targets.
var deviceQuantizers = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.IQ4_NL}

// quantAlign is the alignment quant.h's loads of format t need of a row
// start: gcd(block bytes, 4) (its QUANT_ALIGN).
func quantAlign(t tensor.Type) int64 {
	switch b := t.BlockBytes(); {
	case b%4 == 0:
		return 4
	case b%2 == 0:
		return 2
	}
	return 1
}

// quantRows returns "" when tensor x's rows (of a quantized type) start
// aligned as quant.h's loads need (ggml's tensors always do), else why not.
func quantRows(x *graph.Tensor) string {
	a := quantAlign(x.Type())
	if !rowsStartAligned(x, a) {
		return fmt.Sprintf("%s rows that do not start %d-byte aligned (a view at an odd offset)", x.Type(), a)
	}
	return ""
}

// quantDecodable returns "" when the device kernels decode t, else why not.
func quantDecodable(t tensor.Type) string {
	if slices.Contains(deviceQuantTypes, t) {
		return ""
	}
	return fmt.Sprintf("no device kernels decode %s yet (kernels/quant.h has %s)", t, quantNames(deviceQuantTypes))
}

// quantNames lists the types' names, comma-separated.
func quantNames(ts []tensor.Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// quantCopySupports answers supportsCopy for a copy with a quantized side
// (handled false when neither side is quantized).
func quantCopySupports(n *graph.Tensor) (reason string, handled bool) {
	st, dt := n.Src(0).Type(), n.Type()
	switch {
	case !st.IsQuantized() && !dt.IsQuantized():
		return "", false
	case st == dt:
		if n.Src(0).Layout().IsContiguous() && n.Layout().IsContiguous() {
			return "", true
		}
		return fmt.Sprintf("a non-contiguous copy of %s", st), true
	case st.IsQuantized() && dt.IsQuantized():
		return fmt.Sprintf("no conversion from %s to %s", st, dt), true
	case st.IsQuantized():
		if _, ok := floatType(dt); !ok {
			return fmt.Sprintf("no conversion from %s to %s", st, dt), true
		}
		if r := quantDecodable(st); r != "" {
			return r, true
		}
		if r := quantRows(n.Src(0)); r != "" {
			return r, true
		}
	default:
		if _, ok := floatType(st); !ok {
			return fmt.Sprintf("no conversion from %s to %s", st, dt), true
		}
		if !slices.Contains(deviceQuantizers, dt) {
			return fmt.Sprintf("no quantizer into %s on the device (the seed's CPY quantizes into %s)", dt,
				quantNames(deviceQuantizers)), true
		}
		if r := quantRows(n); r != "" {
			return r, true
		}
	}
	if !fits32(n.Layout()) || !fits32(n.Src(0).Layout()) {
		return "more than 2^31 elements", true
	}
	return "", true
}

// quantCopy queues dst = src converted between a quantized type and a float
// type: dq_{q}_{f32|f16} or qz_{q} directly when the shapes match and the
// float side's rows are packed, else through a contiguous f32 temporary.
// dst's address is read from the device word at dslot when it is not 0
// (CopySlots); no choice here depends on dst's address.
func quantCopy(d Device, dst vendorapi.TensorDesc, dt tensor.Type, s vendorapi.TensorDesc, st tensor.Type, dslot vendorapi.DevicePtr) error {
	if st.IsQuantized() {
		td, _ := floatType(dt)
		if s.Ne == dst.Ne && dst.Nb[0] == dt.BlockBytes() && (td == "f32" || td == "f16") {
			return dequantize(d, dst, td, s, st, dslot)
		}
		tmp, buf, err := contiguousTemp(d, tensor.F32, s.Ne)
		if err != nil {
			return err
		}
		defer buf.Free()
		if err := dequantize(d, tmp, "f32", s, st, 0); err != nil {
			return err
		}
		return copyVia(d, dst, dt, tmp, tensor.F32, dslot)
	}
	if st == tensor.F32 && s.Ne == dst.Ne && s.Nb[0] == 4 {
		return quantize(d, dst, dt, s, dslot)
	}
	tmp, buf, err := contiguousTemp(d, tensor.F32, dst.Ne)
	if err != nil {
		return err
	}
	defer buf.Free()
	if err := copyTensor(d, tmp, tensor.F32, s, st); err != nil {
		return err
	}
	return quantize(d, dst, dt, tmp, dslot)
}

// dequantize launches dq_{q}_{td}: dst (td, packed rows) = src (of q), one
// shape; dst through the word at dslot when it is not 0.
func dequantize(d Device, dst vendorapi.TensorDesc, td string, s vendorapi.TensorDesc, q tensor.Type, dslot vendorapi.DevicePtr) error {
	return launchPerRow(d, "dq_"+q.String()+"_"+td, dst, s, 8, dslot)
}

// quantize launches qz_{q}: dst (of q) = src (f32, packed rows), one shape;
// dst through the word at dslot when it is not 0.
func quantize(d Device, dst vendorapi.TensorDesc, q tensor.Type, s vendorapi.TensorDesc, dslot vendorapi.DevicePtr) error {
	return launchPerRow(d, "qz_"+q.String(), dst, s, q.BlockSize(), dslot)
}

// launchPerRow launches dq_* or qz_*, whose threads take pieces of per
// values of s's rows: (dst, src, pieces a row, ne1, ne2, n pieces, dslot).
func launchPerRow(d Device, name string, dst, s vendorapi.TensorDesc, per int64, dslot vendorapi.DevicePtr) error {
	pieces := s.Ne[0] / per
	n := pieces * s.Ne[1] * s.Ne[2] * s.Ne[3]
	if n == 0 {
		return nil
	}
	grid, block := flatGeometry(n)
	args := d.Args().Tensor(dst).Tensor(s).FastDiv(fd(pieces)).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).I64(n).Ptr(dslot)
	return launch(d, name, grid, block, 0, args)
}

// getrowsQuant launches getrows_{q}: dst rows (f32) = src0 rows (of q)
// picked by src1.
func getrowsQuant(d Device, n *graph.Tensor, dst, src0, src1 vendorapi.TensorDesc) error {
	groups := dst.Ne[0] / 8
	count := groups * n.Layout().Rows()
	if count == 0 {
		return nil
	}
	grid, block := flatGeometry(count)
	args := d.Args().Tensor(dst).Tensor(src0).Tensor(src1).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).
		FastDiv(fd(groups)).I64(count)
	return launch(d, "getrows_"+n.Src(0).Type().String(), grid, block, 0, args)
}

// mmvqWarps is how many warps an mmvq or mmvq_id block has (quant.cu's
// MMVQ_WARPS; one row each for mmvq_id, splitting k for mmvq);
// mmvqRowsPerBlock is quant.cu's MMVQ_ROWS, the rows one mmvq block
// computes.
const (
	mmvqWarps        = 4
	mmvqRowsPerBlock = 4
)

// mmvq8Types are the formats with mmvq8 kernels (quant.h's q32: integer
// dot products against src1 quantized to 8 bits, as the seed's mmvq
// computes); the other formats use mmvq's float dot products.
var mmvq8Types = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.Q2_K, tensor.Q3_K,
	tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4}

// mmvq8Only are the formats whose matrix-vector kernels are mmvq8's only
// (kernels/quant_family.go's mmvqTypes leaves them out): their blocks are
// multiples of 16 bytes, so their rows are 16-byte aligned unless a view
// starts them elsewhere.
var mmvq8Only = []tensor.Type{tensor.Q4_K, tensor.Q5_K}

// mmvqRows returns "" when the matrix-vector kernels take src0 x's rows,
// else why not: the mmvq8-only formats need rows that start 16-byte
// aligned.
func mmvqRows(x *graph.Tensor) string {
	if !slices.Contains(mmvq8Only, x.Type()) {
		return ""
	}
	if !rowsStartAligned(x, 16) {
		return fmt.Sprintf("%s rows that do not start 16-byte aligned (mmvq8, its only matrix-vector kernel, loads them 16 bytes at a time)", x.Type())
	}
	return ""
}

// mmvq8RowsPerBlock is quant.cu's MMVQ8_ROWS, mmvq8Threads its
// MMVQ8_THREADS: the rows and threads of one mmvq8 or mmvq8_idg block.
const (
	mmvq8RowsPerBlock = 4
	mmvq8Threads      = 128
)

// mmvq8tTypes are the mmvq8 formats with mmvq8t kernels (mmvq8 on the
// tensor cores: one scale a 32-value item, chunks of at most 16 items).
var mmvq8tTypes = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.Q4_K, tensor.Q5_K,
	tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4}

// mmvq8tThreads, mmvq8tRowsPerBlock and mmvq8tWarps are quant.cu's
// MMVQ8T_WARPS·32, MMVQ8T_ROWS and MMVQ8T_WARPS.
const (
	mmvq8tWarps        = 8
	mmvq8tThreads      = 32 * mmvq8tWarps
	mmvq8tRowsPerBlock = 16
)

// mmvq8tMinColumns is the fewest src1 columns mmvq8t takes, measured on the
// H200 (m=4096 k=14336, one run, bench/README.md): mmvq8's dot products
// cost about 3 µs more a column (q4_0 15.2, 21.1, 25.3, 33.6 µs for 1, 2,
// 4, 8 columns), the tensor cores' are flat (18.4, 24.5, 24.1, 25.6); from
// 4 columns on they are as fast or faster (q4_K 25.9 against 26.3 at 4,
// 26.4 against 36.3 at 8).
const mmvq8tMinColumns = 4

// useMMVQ8T reports whether mmvq8 of src0 type t for cols src1 columns
// runs on the tensor cores (mmvq8t) on a device of props p: a format
// mmvq8t takes, at least mmvq8tMinColumns columns, and mma.sync code
// compiled for the device (NVIDIA, arch 8.0 and later; cc 0 is the host
// device, which runs every kernel), unless TERNION_NO_MMVQ8T.
func useMMVQ8T(t tensor.Type, p vendorapi.Props, cols int64) bool {
	return slices.Contains(mmvq8tTypes, t) && cols >= mmvq8tMinColumns && !switches.On(nil, switches.NoMMVQ8T) &&
		(p.CC == 0 || arch.AmpereMMAAvailable(p.CC, p.CompiledArchs))
}

// mmvq8tShared is the dynamic shared memory of an mmvq8t_{t} block
// (quant.cu's mmvq8t_chunk<Q, 8> SHARED, computed the same way): per warp
// and stage (2), a chunk of the block's 16 rows (the fewest blocks whose
// bytes are a multiple of 16, at least 8 items of 32 values) with 8
// columns' bytes (32 an item, 16 bytes of padding a column) and float4s
// (16 bytes an item).
func mmvq8tShared(t tensor.Type) uint32 {
	bytes, ipb := t.BlockBytes(), t.BlockSize()/32
	blocks := int64(1)
	for (blocks*bytes)%16 != 0 {
		blocks *= 2
	}
	if blocks*ipb < 8 {
		blocks = 8 / ipb
	}
	items := blocks * ipb
	const nc, stages = 8, 2
	slot := mmvq8tRowsPerBlock*blocks*bytes + nc*(items*32+16) + nc*items*16
	return uint32(mmvq8tWarps * stages * slot)
}

// mmvq8wFormat is what core needs of quant.cu's mmvq8w_fmt<Q>: the warps
// of a block and the bytes of a 256-value group.
type mmvq8wFormat struct{ warps, group int64 }

// mmvq8wFormats are the formats with mmvq8w kernels (one src1 column, a
// warp a row: quant.cu's mmvq8w_fmt, whose warps were measured on the
// H200 at m=4096 k=14336, bench/README.md).
var mmvq8wFormats = map[tensor.Type]mmvq8wFormat{tensor.Q4_0: {16, 144}, tensor.Q8_0: {8, 272}, tensor.Q4_K: {16, 144},
	tensor.Q5_K: {16, 176}, tensor.Q6_K: {8, 210}}

// mmvq8wStages is quant.cu's MMVQ8W_STAGES: the chunk slots of a warp.
const mmvq8wStages = 2

// mmvq8wShared is the dynamic shared memory of an mmvq8w_{t} block for k
// values a row: src1's bytes and float4s (3·k/2 bytes) and each warp's
// slots of 32 groups.
func mmvq8wShared(t tensor.Type, k int64) int64 {
	f := mmvq8wFormats[t]
	return 3*k/2 + f.warps*mmvq8wStages*32*f.group
}

// useMMVQ8W reports whether the one-column product of src0 type t with k
// values a row runs as mmvq8w on a device of props p: one column, a format
// it has, k a multiple of 256 (whole groups) whose row is a multiple of 16
// bytes (q6_K's 210-byte groups: k a multiple of 2048; the kernel copies
// rows 16 bytes at a time), its shared memory within the device's opt-in
// limit, and cp.async code compiled for the device (NVIDIA, arch 8.0 and
// later; cc 0 is the host device), unless TERNION_NO_MMVQ8W. Its rows must
// also start 16-byte aligned (mmvq8Rows, as for mmvq8).
func useMMVQ8W(t tensor.Type, k int64, p vendorapi.Props, cols int64) bool {
	f, ok := mmvq8wFormats[t]
	return ok && cols == 1 && k%256 == 0 && (k/256*f.group)%16 == 0 && mmvq8wShared(t, k) <= int64(p.SharedMemPerBlockOptin) &&
		!switches.On(nil, switches.NoMMVQ8W) && (p.CC == 0 || arch.AmpereMMAAvailable(p.CC, p.CompiledArchs))
}

// useMMVQ8WF reports whether a product that runs mmvq8w (or mmvq8w_id)
// quantizes its f32 src1 inside the product's blocks (mmvq8wf, no q8y
// launch): TERNION_MMVQ8WF is on, src1 is packed along k (nb0, bytes) and
// its columns start 16-byte aligned (the kernel's float4 loads).
func useMMVQ8WF(nb0 int64, columnsAligned bool) bool {
	return switches.On(nil, switches.MMVQ8WF) && nb0 == 4 && columnsAligned
}

// launchMMVQ8W launches kernel prefix+{at} of the whole-word family
// (mmvq8w, mmvq8wf and their _id forms) on grid with args: blocks of the
// format's warps, mmvq8wShared bytes of dynamic shared memory for k values
// a row.
func launchMMVQ8W(d Device, prefix string, at tensor.Type, k int64, grid vendorapi.Dim3, args *vendorapi.Args) error {
	return launchShared(d, prefix+at.String(), grid, vendorapi.Dim3{X: uint32(32 * mmvq8wFormats[at].warps)},
		uint32(mmvq8wShared(at, k)), args)
}

// mmvq8wUnitRows is the rows of one unit of an mmvq8w warp (quant.cu's
// mmvq8w_rows) for src0 of type t, k values a row, rows rowBytes apart: a
// row has fewer than 32 groups of 256 values and the rows are packed →
// 32 / groups rows (one contiguous copy, every lane a group), else 1.
func mmvq8wUnitRows(t tensor.Type, k, rowBytes int64) int64 {
	groups := k / 256
	if groups > 0 && groups < 32 && rowBytes == groups*mmvq8wFormats[t].group {
		return 32 / groups
	}
	return 1
}

// mmvq8wGrid is the grid of mmvq8w for m rows of k values rowBytes apart
// on a device of sms multiprocessors: at most one block a multiprocessor
// (its warps loop over the units of rows), so the launch may start early
// while q8y ends, and at most a block a unit: units fewer than the
// multiprocessors' warps spread over as many blocks as there are units
// (the kernel deals units to warps block by block), so that every
// multiprocessor streams a share of the rows.
func mmvq8wGrid(t tensor.Type, m, k, rowBytes, sms, ne12, ne13 int64) vendorapi.Dim3 {
	ru := mmvq8wUnitRows(t, k, rowBytes)
	units := (m + ru - 1) / ru
	return vendorapi.Dim3{X: uint32(max(1, min(units, sms))), Y: uint32(ne12), Z: uint32(ne13)}
}

// mmvq8wIDGrid is the grid of mmvq8w_id for nUsed × nTokens pairs of m
// rows of k values rowBytes apart on a device of sms multiprocessors: the
// pair's units of rows spread over at most sms / pairs blocks (at least 1),
// so that a few pairs fill the device once.
func mmvq8wIDGrid(t tensor.Type, m, k, rowBytes, sms, nUsed, nTokens int64) vendorapi.Dim3 {
	return mmvq8wGrid(t, m, k, rowBytes, sms/(nUsed*nTokens), nUsed, nTokens)
}

// mmvq8wtFmt is what core needs of quant.cu's mmvq8wt_fmt<Q>: the bytes
// of a 256-value group and the ring slots of a warp taking 1 or 2 tiles of
// 16 rows at a time (stages[r-1]).
type mmvq8wtFmt struct {
	group  int64
	stages [2]int64
}

// mmvq8wtFormats are the formats with mmvq8wt kernels (2..8 columns on the
// tensor cores, decoded from whole words), as quant.cu's mmvq8wt_fmt and
// kernels.MMVQ8WTFormats (a test keeps the three equal; measured on the
// H200 at m=4096 k=14336 n=8, bench/README.md).
var mmvq8wtFormats = map[tensor.Type]mmvq8wtFmt{tensor.Q4_0: {144, [2]int64{2, 2}}, tensor.Q8_0: {272, [2]int64{2, 2}},
	tensor.Q4_K: {144, [2]int64{3, 2}}}

// mmvq8wtWarps is quant.cu's MMVQ8WT_WARPS (kernels.MMVQ8WTWarps): the
// warps of an mmvq8wt block.
const mmvq8wtWarps = 8

// mmvq8wtYGroup is quant.cu's MMVQ8WT_YGROUP: the shared memory of one
// 256-value group of 8 src1 columns (bytes, then 8 (d, d·Σq) pairs of 8
// bytes a column).
const mmvq8wtYGroup = 8*256 + 8*8*8

// mmvq8wtShared is the dynamic shared memory of an mmvq8wt_{t}_r{r} block
// for k values a row: src1's groups, each warp's ring slots of its r tiles'
// groups (16 rows a tile), and the warps' partial sums (16×8 floats a tile).
func mmvq8wtShared(t tensor.Type, k, r int64) int64 {
	f := mmvq8wtFormats[t]
	return k/256*mmvq8wtYGroup + mmvq8wtWarps*r*(f.stages[r-1]*16*f.group+16*8*4)
}

// mmvq8wtTiles is the tiles of 16 rows a warp of mmvq8wt takes at a time
// for src0 of type t (k values a row, rows rowBytes apart) on a device of
// props p: 2 (src1's loads serve both: faster) where the block's shared
// memory fits the device's opt-in limit and the warp's rows stay within
// 2^31 bytes (the kernel's 32-bit offsets), else 1 where that fits (src1 is
// held whole, 8 column slots whatever the columns: on the H200 k ≤ 14848
// with 2 tiles for q4_0 and q4_K, 8448 for q8_0; with 1, 18944 for q4_0,
// 17152 for q4_K, 15872 for q8_0), else 0: no mmvq8wt.
func mmvq8wtTiles(t tensor.Type, k, rowBytes int64, p vendorapi.Props) int64 {
	if _, ok := mmvq8wtFormats[t]; !ok {
		return 0
	}
	for r := int64(2); r >= 1; r-- {
		if mmvq8wtShared(t, k, r) <= int64(p.SharedMemPerBlockOptin) && 16*r*rowBytes < 1<<31 {
			return r
		}
	}
	return 0
}

// useMMVQ8WT reports whether the product of src0 type t (k values a row,
// rows rowBytes apart) with cols src1 columns runs as mmvq8wt on a device
// of props p: 2..8 columns, a format it has, k a multiple of 256 whose row
// is a multiple of 16 bytes, a tile count that fits (mmvq8wtTiles), and
// cp.async and mma.sync code compiled for the device (NVIDIA, arch 8.0 and
// later; cc 0 is the host device), unless TERNION_NO_MMVQ8W. Its rows must
// also start 16-byte aligned (mmvq8Rows, as for mmvq8).
func useMMVQ8WT(t tensor.Type, k, rowBytes int64, p vendorapi.Props, cols int64) bool {
	f, ok := mmvq8wtFormats[t]
	return ok && cols >= 2 && cols <= MMVQMaxColumns && k%256 == 0 && (k/256*f.group)%16 == 0 &&
		mmvq8wtTiles(t, k, rowBytes, p) > 0 && !switches.On(nil, switches.NoMMVQ8W) &&
		(p.CC == 0 || arch.AmpereMMAAvailable(p.CC, p.CompiledArchs))
}

// mmvq8wtGrid is the grid of mmvq8wt for m rows, r tiles of 16 rows a
// warp, on a device of sms multiprocessors: at most one block a
// multiprocessor (each takes every grid-th set of r tiles), so the launch
// may start early while q8y ends.
func mmvq8wtGrid(m, r, sms, ne12, ne13 int64) vendorapi.Dim3 {
	rows := 16 * r
	return vendorapi.Dim3{X: uint32(max(1, min((m+rows-1)/rows, sms))), Y: uint32(ne12), Z: uint32(ne13)}
}

// useMMVQ8 reports whether mmvq8 multiplies src0 a of type t: a format it
// has, with rows 16-byte aligned (it stages them with 16-byte loads; ggml's
// rows of 256-value blocks always are, a row of 32-value blocks when its
// block count is a multiple of 8). Other rows take mmvq.
func useMMVQ8(t tensor.Type, a vendorapi.TensorDesc) bool {
	return slices.Contains(mmvq8Types, t) && aligned(a, 16)
}

// mmvq8Rows reports whether src0 x takes mmvq8 as planned: a format it
// has, rows starting 16-byte aligned (useMMVQ8's rule on the tensor's
// view, buffers being aligned).
func mmvq8Rows(x *graph.Tensor) bool {
	return slices.Contains(mmvq8Types, x.Type()) && rowsStartAligned(x, 16)
}

// rowsStartAligned reports whether every row of x starts n-byte aligned in
// an aligned buffer: its view offset and the strides of dims 1..3 with more
// than one element are multiples of n (aligned's rule, on the graph tensor).
func rowsStartAligned(x *graph.Tensor, n int64) bool {
	ok := x.ViewOffset()%n == 0
	for i := 1; i < 4; i++ {
		ok = ok && (x.Ne()[i] <= 1 || x.Nb()[i]%n == 0)
	}
	return ok
}

// q8BlockSums is the bytes of q8y's float4 a 32-value block (scale and
// sums).
const q8BlockSums = 16

// q8Columns queues q8y, which quantizes src1 b (f32, any strides, ne[0] a
// multiple of 32) to 8 bits a value into a pool buffer: the bytes at yq,
// the per-32 (scale, sum) pairs at yd, one column per row of b (free the
// buffer after the kernels reading it are queued). With trigger, q8ye
// instead, which lets the next kernel launch before it waits for the
// kernels before it: only for a product that may read its weights early
// (readEarly) and does so before it waits for q8ye (mmvq8w, mmvq8wt).
func q8Columns(d Device, b vendorapi.TensorDesc, trigger bool) (yq, yd vendorapi.DevicePtr, buf pool.Buffer, err error) {
	k, cols := b.Ne[0], b.Ne[1]*b.Ne[2]*b.Ne[3]
	buf, err = d.Pool().Alloc(uint64(cols*k + cols*(k/32)*q8BlockSums))
	if err != nil {
		return 0, 0, pool.Buffer{}, err
	}
	yq, yd = buf.Ptr, buf.Ptr+vendorapi.DevicePtr(cols*k)
	blocks := cols * k / 32
	grid, block := flatGeometry(blocks * 32)
	args := d.Args().Tensor(b).Ptr(yq).Ptr(yd).FastDiv(fd(k / 32)).FastDiv(fd(b.Ne[1])).FastDiv(fd(b.Ne[2])).I64(blocks)
	kernel := "q8y"
	if trigger {
		kernel = "q8ye"
	}
	if err := launch(d, kernel, grid, block, 0, args); err != nil {
		_ = buf.Free()
		return 0, 0, pool.Buffer{}, err
	}
	return yq, yd, buf, nil
}

// runMMVQ launches the quantized matrix-vector product for src1's ne11 ≤ 8
// f32 columns: q8y then mmvq8_{q}_{1|8} where useMMVQ8 allows, else mmvq_{q}
// (src1 with packed, 16-byte aligned rows: otherwise copied into a
// contiguous temporary first). early, when not nil, reports whether src0
// may be read before the product waits for the kernels before it
// (readEarly).
func runMMVQ(d Device, at tensor.Type, dst, a, b vendorapi.TensorDesc, early func() bool) error {
	if useMMVQ8(at, a) {
		return runMMVQ8(d, at, dst, a, b, early != nil && early())
	}
	b, buf, err := mmvqSrc1(d, b)
	if err != nil {
		return err
	}
	defer buf.Free()
	perBlock := int64(mmvqRowsPerBlock)
	grid := vendorapi.Dim3{X: uint32((a.Ne[1] + perBlock - 1) / perBlock), Y: uint32(b.Ne[2]), Z: uint32(b.Ne[3])}
	block := vendorapi.Dim3{X: uint32(d.Props().WarpSize), Y: mmvqWarps}
	args := d.Args().Tensor(dst).Tensor(a).Tensor(b).FastDiv(fd(b.Ne[2] / a.Ne[2])).FastDiv(fd(b.Ne[3] / a.Ne[3])).
		I32(int32(b.Ne[1]))
	return launch(d, "mmvq_"+at.String(), grid, block, 0, args)
}

// runMMVQ8 launches mmvq8wf_{q} (src1 quantized in its blocks) where
// useMMVQ8W and useMMVQ8WF allow; otherwise it quantizes src1 (q8Columns)
// and launches mmvq8w_{q} where useMMVQ8W allows, mmvq8wt_{q} where
// useMMVQ8WT allows, mmvq8t_{q} where useMMVQ8T allows, else
// mmvq8_{q}_{nc}: nc 1 for one column, 8 for 2..8. early: src0 may be
// read before the product waits for the kernels before it (readEarly), so
// under earlyProducts, before mmvq8w and mmvq8wt, which queue their first
// weights before they wait for the quantization, q8ye lets them launch
// while the kernel before it ends (q8yEarlyCandidate's products,
// core/ops/early.go).
func runMMVQ8(d Device, at tensor.Type, dst, a, b vendorapi.TensorDesc, early bool) error {
	wholeWord := useMMVQ8W(at, a.Ne[0], d.Props(), b.Ne[1])
	if wholeWord && useMMVQ8WF(b.Nb[0], aligned(b, 16)) {
		grid := mmvq8wGrid(at, a.Ne[1], a.Ne[0], a.Nb[1], int64(d.Props().SMs), b.Ne[2], b.Ne[3])
		args := d.Args().Tensor(dst).Tensor(a).Tensor(b).FastDiv(fd(b.Ne[2] / a.Ne[2])).FastDiv(fd(b.Ne[3] / a.Ne[3]))
		return launchMMVQ8W(d, "mmvq8wf_", at, a.Ne[0], grid, args)
	}
	wt := !wholeWord && useMMVQ8WT(at, a.Ne[0], a.Nb[1], d.Props(), b.Ne[1])
	yq, yd, buf, err := q8Columns(d, b, earlyProducts() && early && (wholeWord || wt))
	if err != nil {
		return err
	}
	defer buf.Free()
	args := d.Args().Tensor(dst).Tensor(a).Ptr(yq).Ptr(yd).FastDiv(fd(b.Ne[2] / a.Ne[2])).FastDiv(fd(b.Ne[3] / a.Ne[3]))
	if wholeWord {
		grid := mmvq8wGrid(at, a.Ne[1], a.Ne[0], a.Nb[1], int64(d.Props().SMs), b.Ne[2], b.Ne[3])
		return launchMMVQ8W(d, "mmvq8w_", at, a.Ne[0], grid, args)
	}
	args = args.I32(int32(b.Ne[1])) // mmvq8wt's, mmvq8t's and mmvq8's ncols
	if wt {
		r := mmvq8wtTiles(at, a.Ne[0], a.Nb[1], d.Props())
		grid := mmvq8wtGrid(a.Ne[1], r, int64(d.Props().SMs), b.Ne[2], b.Ne[3])
		block := vendorapi.Dim3{X: 32 * mmvq8wtWarps}
		name := fmt.Sprintf("mmvq8wt_%s_r%d", at, r)
		return launchShared(d, name, grid, block, uint32(mmvq8wtShared(at, a.Ne[0], r)), args)
	}
	if useMMVQ8T(at, d.Props(), b.Ne[1]) {
		grid := vendorapi.Dim3{X: uint32((a.Ne[1] + mmvq8tRowsPerBlock - 1) / mmvq8tRowsPerBlock), Y: uint32(b.Ne[2]),
			Z: uint32(b.Ne[3])}
		return launchShared(d, "mmvq8t_"+at.String(), grid, vendorapi.Dim3{X: mmvq8tThreads}, mmvq8tShared(at), args)
	}
	nc := 1
	if b.Ne[1] > 1 {
		nc = 8
	}
	grid := vendorapi.Dim3{X: uint32((a.Ne[1] + mmvq8RowsPerBlock - 1) / mmvq8RowsPerBlock), Y: uint32(b.Ne[2]),
		Z: uint32(b.Ne[3])}
	return launch(d, fmt.Sprintf("mmvq8_%s_%d", at, nc), grid, vendorapi.Dim3{X: mmvq8Threads}, 0, args)
}

// mmvqSrc1 returns src1 as mmvq and mmvq_id read it: b itself when its f32
// rows are packed and 16-byte aligned, else a contiguous copy (free the
// returned buffer after the kernel is queued; a zero Buffer's Free is a
// no-op).
func mmvqSrc1(d Device, b vendorapi.TensorDesc) (vendorapi.TensorDesc, pool.Buffer, error) {
	if mmvqSrc1OK(b) {
		return b, pool.Buffer{}, nil
	}
	tmp, buf, err := contiguousTemp(d, tensor.F32, b.Ne)
	if err != nil {
		return vendorapi.TensorDesc{}, pool.Buffer{}, err
	}
	if err := copyTensor(d, tmp, tensor.F32, b, tensor.F32); err != nil {
		_ = buf.Free()
		return vendorapi.TensorDesc{}, pool.Buffer{}, err
	}
	return tmp, buf, nil
}

// mmvqSrc1OK reports whether mmvq can read src1 as it is: packed f32 rows,
// 16-byte aligned.
func mmvqSrc1OK(b vendorapi.TensorDesc) bool {
	return b.Nb[0] == 4 && aligned(b, 16)
}

// runDequantGemm dequantizes src0 to f16 into a temporary and multiplies
// with the vendor BLAS (the seed's dequantize → cuBLAS path). One matrix
// larger than TERNION_DEQUANT_SLICE (when set) as f16 goes in slices of k
// (dequantSlice): each slice dequantized into one small temporary, which
// the next gemm reads back while it is still in the L2 cache, and the
// slices' products summed into dst (beta 1 from the second on); batches
// dequantize whole.
func runDequantGemm(d Device, at, bt tensor.Type, dst, a, b vendorapi.TensorDesc) error {
	limit, _, err := switches.Get(nil, switches.DequantSlice)
	if err != nil {
		return err
	}
	k, kc := a.Ne[0], a.Ne[0]
	if a.Ne[2]*a.Ne[3] == 1 && b.Ne[2]*b.Ne[3] == 1 {
		kc = dequantSlice(at, a.Ne[1], k, limit)
	}
	if kc == k {
		tmp, buf, err := contiguousTemp(d, tensor.F16, a.Ne)
		if err != nil {
			return err
		}
		defer buf.Free()
		if err := dequantize(d, tmp, "f16", a, at, 0); err != nil {
			return err
		}
		return runGemm(d, tensor.F16, bt, dst, tmp, b)
	}
	gt := gemmType(tensor.F16, d.Props()) // f16, or f32 where f16 is slow
	b, bbuf, err := operand(d, b, bt, gt)
	if err != nil {
		return err
	}
	defer bbuf.Free()
	tmp, buf, err := contiguousTemp(d, gt, [4]int64{kc, a.Ne[1], 1, 1})
	if err != nil {
		return err
	}
	defer buf.Free()
	h, err := d.BLAS()
	if err != nil {
		return err
	}
	es := gt.BlockBytes()
	for k0 := int64(0); k0 < k; k0 += kc {
		n := min(kc, k-k0)
		slice := a
		slice.Data, slice.Ne[0] = a.Data.Add(uint64(k0/at.BlockSize()*at.BlockBytes())), n
		part := tmp
		part.Ne[0], part.Nb = n, tensor.RowMajorStrides(gt, [4]int64{n, a.Ne[1], 1, 1})
		if err := dequantize(d, part, gt.String(), slice, at, 0); err != nil {
			return err
		}
		bs := b
		bs.Data, bs.Ne[0] = b.Data.Add(uint64(k0*es)), n
		g := gemmOf(gt, dst, part, bs)
		if k0 > 0 {
			g.Beta = 1
		}
		if err := d.Driver().Gemm(h, g); err != nil {
			return err
		}
	}
	return nil
}

// dequantSlice is the values of a row (k of type t, m rows) that each
// slice of runDequantGemm dequantizes and multiplies at a time: k (one
// slice) when limit is 0 or the whole matrix as f16 fits it, else the
// fewest slices whose f16 bytes fit it, rounded up to whole blocks (the
// last slice may be shorter).
func dequantSlice(t tensor.Type, m, k int64, limit uint64) int64 {
	whole := uint64(2 * m * k)
	if limit == 0 || whole <= limit {
		return k
	}
	slices := int64((whole + limit - 1) / limit)
	bs := t.BlockSize()
	return min(k, ((k+slices-1)/slices+bs-1)/bs*bs)
}

func init() { register(graph.OpMulMatID, impl{supports: supportsMulMatID, run: runMulMatID}) }

// mmvqIDType is the mmvq_id_{q} name of a src0 type, if it has one.
func mmvqIDType(t tensor.Type) (string, bool) {
	if t.IsQuantized() {
		return t.String(), quantDecodable(t) == ""
	}
	return floatType(t)
}

func supportsMulMatID(n *graph.Tensor, _ vendorapi.Props) string {
	as, b := n.Src(0), n.Src(1)
	if _, ok := mmvqIDType(as.Type()); !ok {
		if as.Type().IsQuantized() {
			return quantDecodable(as.Type())
		}
		return fmt.Sprintf("src0 of type %s", as.Type())
	}
	if b.Type() != tensor.F32 {
		return fmt.Sprintf("src1 %s (must be f32)", b.Type())
	}
	if as.Nb()[0] != as.Type().BlockBytes() {
		return "src0's rows must be packed"
	}
	if as.Type().IsQuantized() {
		if r := quantRows(as); r != "" {
			return "src0: " + r
		}
	}
	if !as.Type().IsQuantized() && (as.Ne()[0]%8 != 0 || as.Nb()[1]%16 != 0 || as.Nb()[2]%16 != 0) {
		return "float src0 rows must be a multiple of 8 values and 16-byte aligned"
	}
	if b.Ne()[0]%8 != 0 {
		return "ne[0] must be a multiple of 8"
	}
	if n.Ne()[1] > 65535 || n.Ne()[2] > 65535 {
		return "more than 65535 experts used or tokens"
	}
	return ""
}

// MulMatIDPath is the way MUL_MAT_ID multiplies its (slot, token) pairs.
type MulMatIDPath int

const (
	// PathIDGrouped groups the pairs by expert (mmid_group) and multiplies
	// each expert's rows once for up to 8 of its pairs (mmvq8t_idg or
	// mmvq8_idg), src1 quantized by q8y.
	PathIDGrouped MulMatIDPath = iota
	// PathIDWholeWord multiplies pair by pair with mmvq8w's kernel
	// (mmvq8w_id), src1 quantized by q8y.
	PathIDWholeWord
	// PathIDFloat multiplies pair by pair with float dot products on f32
	// src1 (mmvq_id).
	PathIDFloat
)

// String names the path as `ternion ops perf -v` prints it.
func (p MulMatIDPath) String() string {
	switch p {
	case PathIDGrouped:
		return "grouped"
	case PathIDWholeWord:
		return "mmvq8w_id"
	case PathIDFloat:
		return "mmvq_id"
	}
	return fmt.Sprintf("MulMatIDPath(%d)", int(p))
}

// MulMatIDShape is what chooseMulMatID decides on.
type MulMatIDShape struct {
	Experts, Used, Tokens int64 // src0's experts, experts used per token, tokens
	MMVQ8                 bool  // src0's format has mmvq8 kernels and its rows start 16-byte aligned (useMMVQ8)
	MMVQ8W                bool  // one column of src0's type and k runs as mmvq8w on the device (useMMVQ8W)
	MMVQ8WF               bool  // src1 may be quantized inside mmvq8w_id's blocks (useMMVQ8WF)
}

// chooseMulMatID picks MUL_MAT_ID's path and says why: pairs grouped by
// expert where mmvq8 applies and groupMulMatID allows (≥ 4 pairs an expert
// on average), else mmvq8w_id where mmvq8w runs (src1 quantized once, the
// expert's rows decoded from whole words; goal case q4_0 128 experts, 8
// used, m=768 k=2048, one token), else mmvq_id.
func chooseMulMatID(s MulMatIDShape) (MulMatIDPath, string) {
	switch {
	case s.MMVQ8 && groupMulMatID(s.Experts, s.Used, s.Tokens):
		return PathIDGrouped, fmt.Sprintf("%d pairs over %d experts (≥ 4 an expert): grouped by expert, each expert's rows read once for up to %d pairs",
			s.Used*s.Tokens, s.Experts, mmidTile)
	case s.MMVQ8 && s.MMVQ8W && s.MMVQ8WF:
		return PathIDWholeWord, "few pairs an expert: pair by pair, src1 to 8 bits inside the product's blocks, rows decoded from whole words (mmvq8w_id's kernel as mmvq8wf_id)"
	case s.MMVQ8 && s.MMVQ8W:
		return PathIDWholeWord, "few pairs an expert: pair by pair, src1 to 8 bits, rows decoded from whole words (mmvq8w_id)"
	}
	return PathIDFloat, "pair by pair, float dot products on f32 src1 (mmvq_id)"
}

// mulMatIDShape gathers what chooseMulMatID needs of node n with src0 a as
// planned or launched on a device of props p.
func mulMatIDShape(n *graph.Tensor, mmvq8 bool, p vendorapi.Props) MulMatIDShape {
	a := n.Src(0)
	return MulMatIDShape{Experts: a.Ne()[2], Used: n.Ne()[1], Tokens: n.Ne()[2], MMVQ8: mmvq8,
		MMVQ8W: useMMVQ8W(a.Type(), a.Ne()[0], p, 1), MMVQ8WF: useMMVQ8WF(n.Src(1).Nb()[0], rowsStartAligned(n.Src(1), 16))}
}

// MulMatIDPathOf returns the path MUL_MAT_ID node n takes on a device with
// props p, and why (for `ternion ops perf -v`).
func MulMatIDPathOf(n *graph.Tensor, p vendorapi.Props) (MulMatIDPath, string) {
	return chooseMulMatID(mulMatIDShape(n, mmvq8Rows(n.Src(0)), p))
}

// runMulMatID launches the path chooseMulMatID picks; an expert index out
// of range gives NaN rows and sets FlagMulMatIDExpert in d's device error
// word when it has one (ErrorFlags). Pair by pair, every token reads its
// experts' rows anew: the fastest order for a few tokens (an mmvq8 kernel
// per pair measured 14.5 µs for q4_0 128 experts, 8 used, m=768 k=2048,
// one token, against mmvq_id's 8.7–9.6 µs; mmvq8w_id 8.60 against mmvq_id's
// 10.15 in one run, bench/README.md). mmvq8w_id must follow q8y directly:
// it reads ids and src0 before it waits for the kernel before it;
// mmvq8wf_id (TERNION_MMVQ8WF: src1 quantized in its blocks, no q8y) waits
// first, then reads them.
func runMulMatID(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0), n.Src(1), n.Src(2))
	if err != nil {
		return err
	}
	dst, a, b, ids := ds[0], ds[1], ds[2], ds[3]
	at := n.Src(0).Type()
	shape := mulMatIDShape(n, useMMVQ8(at, a), d.Props())
	shape.MMVQ8WF = useMMVQ8WF(b.Nb[0], aligned(b, 16))
	path, _ := chooseMulMatID(shape)
	if path == PathIDWholeWord && shape.MMVQ8WF {
		grid := mmvq8wIDGrid(at, a.Ne[1], a.Ne[0], a.Nb[1], int64(d.Props().SMs), dst.Ne[1], dst.Ne[2])
		args := d.Args().Tensor(dst).Tensor(a).Tensor(b).Tensor(ids).Ptr(errorFlag(d))
		return launchMMVQ8W(d, "mmvq8wf_id_", at, a.Ne[0], grid, args)
	}
	if path == PathIDFloat {
		b, buf, err := mmvqSrc1(d, b)
		if err != nil {
			return err
		}
		defer buf.Free()
		q, _ := mmvqIDType(at)
		grid := vendorapi.Dim3{X: uint32((a.Ne[1] + mmvqWarps - 1) / mmvqWarps), Y: uint32(dst.Ne[1]), Z: uint32(dst.Ne[2])}
		block := vendorapi.Dim3{X: uint32(d.Props().WarpSize), Y: mmvqWarps}
		return launch(d, "mmvq_id_"+q, grid, block, 0, d.Args().Tensor(dst).Tensor(a).Tensor(b).Tensor(ids).Ptr(errorFlag(d)))
	}
	yq, yd, buf, err := q8Columns(d, b, false)
	if err != nil {
		return err
	}
	defer buf.Free()
	if path == PathIDGrouped {
		return runGroupedMulMatID(d, at, dst, a, b, ids, yq, yd)
	}
	grid := mmvq8wIDGrid(at, a.Ne[1], a.Ne[0], a.Nb[1], int64(d.Props().SMs), dst.Ne[1], dst.Ne[2])
	args := d.Args().Tensor(dst).Tensor(a).Ptr(yq).Ptr(yd).I32(int32(b.Ne[1])).Tensor(ids).Ptr(errorFlag(d))
	return launchMMVQ8W(d, "mmvq8w_id_", at, a.Ne[0], grid, args)
}

// groupMulMatID reports whether MUL_MAT_ID with nExperts experts, nUsed of
// them per token and nTokens tokens groups its (slot, token) pairs by
// expert (mmid_group, then mmvq8_idg reading each expert's rows once for
// up to 8 of its pairs) rather than multiplying pair by pair (mmvq8_id):
// when the pairs are at least 4 per expert on average, so that tiles are
// mostly full, and the tiles fit a grid's y dimension and the grouping
// block's shared memory.
func groupMulMatID(nExperts, nUsed, nTokens int64) bool {
	pairs := nUsed * nTokens
	return pairs >= 4*nExperts && mmidMaxTiles(nExperts, pairs) <= 65535 && nExperts <= mmidMaxExperts
}

// mmidMaxExperts bounds the experts of a grouped MUL_MAT_ID: mmid_group
// keeps 2 ints per expert in shared memory (48 KiB at most).
const mmidMaxExperts = 6144

// mmidTile is quant.cu's MMID_TILE, the most pairs of a tile.
const mmidTile = 8

// mmidMaxTiles bounds the tiles of pairs grouped by expert: each expert's
// last tile may be partial.
func mmidMaxTiles(nExperts, pairs int64) int64 { return nExperts + (pairs+mmidTile-1)/mmidTile }

// runGroupedMulMatID launches mmid_group and mmvq8t_idg_{q} (tiles of up
// to 8 pairs as the tensor cores' 8 columns, where useMMVQ8T allows) or
// mmvq8_idg_{q} on src1
// already quantized (yq, yd).
func runGroupedMulMatID(d Device, at tensor.Type, dst, a, b, ids vendorapi.TensorDesc, yq, yd vendorapi.DevicePtr) error {
	nExperts, pairs := a.Ne[2], dst.Ne[1]*dst.Ne[2]
	maxTiles := mmidMaxTiles(nExperts, pairs)
	buf, err := d.Pool().Alloc(uint64(4*pairs + 8*maxTiles))
	if err != nil {
		return err
	}
	defer buf.Free()
	list, tiles := buf.Ptr, buf.Ptr+vendorapi.DevicePtr(4*pairs)
	args := d.Args().Tensor(ids).Tensor(dst).I32(int32(nExperts)).Ptr(list).Ptr(tiles).I32(int32(maxTiles)).Ptr(errorFlag(d))
	if err := launch(d, "mmid_group", vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1024}, uint32(8*nExperts), args); err != nil {
		return err
	}
	args = d.Args().Tensor(dst).Tensor(a).Ptr(yq).Ptr(yd).I32(int32(b.Ne[1])).I32(int32(dst.Ne[1])).Ptr(list).Ptr(tiles).
		I32(int32(maxTiles))
	if useMMVQ8T(at, d.Props(), mmidTile) {
		grid := vendorapi.Dim3{X: uint32((a.Ne[1] + mmvq8tRowsPerBlock - 1) / mmvq8tRowsPerBlock), Y: uint32(maxTiles)}
		return launchShared(d, "mmvq8t_idg_"+at.String(), grid, vendorapi.Dim3{X: mmvq8tThreads}, mmvq8tShared(at), args)
	}
	grid := vendorapi.Dim3{X: uint32((a.Ne[1] + mmvq8RowsPerBlock - 1) / mmvq8RowsPerBlock), Y: uint32(maxTiles)}
	return launch(d, "mmvq8_idg_"+at.String(), grid, vendorapi.Dim3{X: mmvq8Threads}, 0, args)
}

// The row step of the row-split MUL_MAT for the quantized types: mmvq for
// up to 8 columns, else dequantize + BLAS (the choice ChooseMulMat makes,
// FORCE_MMQ aside, which Supports refuses before a split runs).
func init() {
	for _, t := range deviceQuantTypes {
		RegisterRows(t, func(d Device, at tensor.Type, dst, a, b vendorapi.TensorDesc) error {
			if b.Ne[1] <= MMVQMaxColumns {
				return runMMVQ(d, at, dst, a, b, nil)
			}
			return runDequantGemm(d, at, tensor.F32, dst, a, b)
		})
	}
}
