package ops

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// gemm90Groups are the bytes of a 256-value group of each format with
// gemm90 kernels (kernels.Gemm90Groups, which core may not import; a test
// keeps the two equal).
var gemm90Groups = map[tensor.Type]int64{tensor.Q4_0: 144, tensor.Q4_1: 160, tensor.Q5_0: 176, tensor.Q5_1: 192,
	tensor.Q8_0: 272, tensor.IQ4_NL: 144, tensor.Q4_K: 144, tensor.Q5_K: 176, tensor.Q6_K: 210}

// gemm90Checked are the formats whose gemm90 kernels have run on a GPU,
// matched the host device and beat dequantize + BLAS (bench/README.md); the
// other, q6_K, runs on a GPU only with TERNION_GEMM90_MORE: with its row
// slots padded it still took 196 µs against dequantize + BLAS's 185 on an
// H100 (m=4096 k=14336 n=512, 2026-12-07), where the padding brought q4_1
// and q5_1 in (138 / 164 µs against 168 / 180).
var gemm90Checked = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.IQ4_NL,
	tensor.Q4_K, tensor.Q5_K}

// Gemm90Types returns the src0 formats gemm90 multiplies (kernels/gemm90.cu),
// in the order of their type ids.
func Gemm90Types() []tensor.Type { return slices.Sorted(maps.Keys(gemm90Groups)) }

// sm90a is the arch-specific target of the gemm90 and fattn90 kernels
// (their families' kernels.Family.ArchSpecific): a device runs them when its
// Props.ArchSpecific lists it.
const sm90a = "sm_90a"

// gemm90Tile, gemm90Threads: kernels.Gemm90Tile and Gemm90Threads.
const (
	gemm90Tile    = 128
	gemm90Threads = 384
)

// gemm90Slot is the shared-memory pitch of a row's group of t
// (kernels.Gemm90Slot): the bytes copied (the group where groups are a
// multiple of 16 bytes, else the 16-byte chunks around one that starts
// 2-byte aligned), 16 more where those are a multiple of 32.
func gemm90Slot(t tensor.Type) int64 {
	c := gemm90Groups[t]
	if c%16 != 0 {
		c = (c + 14 + 15) / 16 * 16
	}
	if c%32 == 0 {
		c += 16
	}
	return c
}

// gemm90RowAlign is the alignment gemm90 needs of t's rows
// (kernels.Gemm90RowAlign): 16 where groups are a multiple of 16 bytes, else 2.
func gemm90RowAlign(t tensor.Type) int64 {
	if gemm90Groups[t]%16 != 0 {
		return 2
	}
	return 16
}

// gemm90Shared is the dynamic shared memory of gemm90_{t}
// (kernels.Gemm90Shared).
func gemm90Shared(t tensor.Type) int64 {
	return 4*gemm90Tile*64*2 + 2*128*gemm90Slot(t) + 1024
}

// gemm90Tiles is the tiles of gemm90Tile a dimension of n splits into.
func gemm90Tiles(n int64) int64 { return (n + gemm90Tile - 1) / gemm90Tile }

// gemm90Waves reports whether gemm90's tiles (mt·nt blocks of one a
// multiprocessor) fill one wave of a device of sms multiprocessors by more
// than three quarters: where it beat dequantize + BLAS when measured (H100,
// bench/README.md sessions 27 and 28; the register-fragment kernel with
// src1's conversion against the tree, standalone: m=4096 n=512, 128 tiles,
// -20 / -14 / -10 % for q4_0 / q8_0 / q4_K; with fewer tiles most
// multiprocessors idle — n=100, 32 tiles: +1 / +3 / +19 % — and with more
// the tiles take two waves or more at a pace cuBLAS beats — n=1000, 256
// tiles: +2 / +22 / +24 %; m=14336 k=4096 n=512, 448 tiles: -9 / +1 / +7 %).
// sms 0 (the host device) takes every tile count.
func gemm90Waves(tiles, sms int64) bool { return sms == 0 || (4*tiles > 3*sms && tiles <= sms) }

// useGemm90 reports whether MUL_MAT node n runs gemm90 on a device of props
// p: src0 of a format in gemm90Groups, one matrix, k a multiple of 256, rows packed and
// starting 16-byte aligned (the kernel copies them 16 bytes at a time; q6_K
// 2-byte aligned, copied in the 16-byte chunks around its groups);
// src1 one f32 matrix of more than MMVQMaxColumns columns, packed along k,
// columns starting 16-byte aligned (float4 loads); the grid and the shared
// memory within the device's limits; a device that builds sm_90a code
// (Props.ArchSpecific: compute capability 9.0 and NVRTC 12 or later; cc 0
// is the host device, which runs every kernel); its tiles filling one wave
// (gemm90Waves); on a GPU a format in gemm90Checked, or any with
// TERNION_GEMM90_MORE; unless TERNION_NO_GEMM90.
func useGemm90(n *graph.Tensor, p vendorapi.Props) bool {
	a, b := n.Src(0), n.Src(1)
	_, ok := gemm90Groups[a.Type()]
	an, bn := a.Ne(), b.Ne()
	tiles := gemm90Tiles(an[1]) * gemm90Tiles(bn[1])
	return ok && b.Type() == tensor.F32 && bn[1] > MMVQMaxColumns && an[0]%256 == 0 &&
		an[2]*an[3] == 1 && bn[2]*bn[3] == 1 && a.Nb()[0] == a.Type().BlockBytes() && rowsStartAligned(a, gemm90RowAlign(a.Type())) &&
		b.Nb()[0] == 4 && rowsStartAligned(b, 16) && n.Nb()[0] == 4 && n.Nb()[1]%4 == 0 &&
		an[0] <= math.MaxInt32 && an[1] <= math.MaxInt32 && bn[1] <= math.MaxInt32 &&
		tiles <= math.MaxInt32 && gemm90Tiles(bn[1])*gemm90Tile*an[0]/8/256 < math.MaxInt32 &&
		gemm90Shared(a.Type()) <= int64(p.SharedMemPerBlockOptin) && !switches.On(nil, switches.NoGemm90) &&
		(p.CC == 0 || slices.Contains(p.ArchSpecific, sm90a) && gemm90Waves(tiles, int64(p.SMs)) &&
			(slices.Contains(gemm90Checked, a.Type()) || switches.On(nil, switches.Gemm90More)))
}

// runGemm90 multiplies quantized src0 a (of type at, in gemm90Groups) by f32 src1 b into
// dst as useGemm90 allows: gemm90_b_f32 converts b to f16 in the gemm's
// tile order into a pool buffer, then gemm90_{at} computes one 128x128 tile
// of dst a block, expanding a's blocks to f16 in registers (wgmma's A fragments).
func runGemm90(d Device, at tensor.Type, dst, a, b vendorapi.TensorDesc) error {
	m, k, n := a.Ne[1], a.Ne[0], b.Ne[1]
	nt := gemm90Tiles(n)
	buf, err := d.Pool().Alloc(uint64(nt * gemm90Tile * k * 2))
	if err != nil {
		return err
	}
	defer buf.Free()
	chunks := nt * gemm90Tile * k / 8
	grid := vendorapi.Dim3{X: uint32((chunks + 255) / 256)}
	if err := launch(d, "gemm90_b_f32", grid, vendorapi.Dim3{X: 256}, 0, d.Args().Ptr(buf.Ptr).Tensor(b).I64(chunks)); err != nil {
		return err
	}
	grid = vendorapi.Dim3{X: uint32(gemm90Tiles(m) * nt)}
	name := fmt.Sprintf("gemm90_%s", at)
	return launchShared(d, name, grid, vendorapi.Dim3{X: gemm90Threads}, uint32(gemm90Shared(at)), d.Args().Tensor(dst).Tensor(a).Ptr(buf.Ptr))
}
