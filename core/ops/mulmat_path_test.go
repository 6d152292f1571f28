package ops

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// TestChooseMulMat is the dispatch table: each row a shape, the path and
// the reason's key words.
func TestChooseMulMat(t *testing.T) {
	for _, c := range []struct {
		name string
		s    MulMatShape
		want MulMatPath
		why  string
	}{
		{"f16 one column", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 1, VectorSrc1: true}, PathMMV, "vector kernel"},
		{"f16 two columns, rows not 16-byte aligned", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 2, VectorSrc1: true}, PathBLAS, "BLAS"},
		{"f16 two columns", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true}, PathMMV, "vector kernel"},
		{"bf16 two columns", MulMatShape{A: tensor.BF16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true}, PathMMV, "2 f32 columns"},
		{"f16 eight columns, tensor cores", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 8, VectorSrc1: true, VecRows: true, MMVT: true, MMVT2: true}, PathMMV, "mmvt2"},
		{"bf16 two columns, tensor cores", MulMatShape{A: tensor.BF16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true, MMVT: true}, PathMMV, "tensor cores"},
		{"f16 eight columns, tensor cores, one row tile", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 8, VectorSrc1: true, VecRows: true, MMVT: true}, PathMMV, "mmvt, " + switches.NoMMVT2.Name},
		{"f16 one column, tensor cores", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 1, VectorSrc1: true, VecRows: true, MMVT: true}, PathMMV, "one f32 column"},
		{"f16 eight columns, no tensor cores", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 8, VectorSrc1: true, VecRows: true}, PathBLAS, "BLAS"},
		{"f16 eight columns, tensor cores, rows not aligned", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVT: true}, PathBLAS, "BLAS"},
		{"f16 eight columns, tensor cores, BLAS forced", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 8, VectorSrc1: true, VecRows: true, MMVT: true, ForceBLAS: true}, PathBLAS, "FORCE_BLAS"},
		{"f32 three columns", MulMatShape{A: tensor.F32, B: tensor.F32, Columns: 3, VectorSrc1: true, VecRows: true}, PathBLAS, "BLAS"},
		{"f16 two columns, BLAS forced", MulMatShape{A: tensor.F16, B: tensor.F32, Columns: 2, VectorSrc1: true, VecRows: true, ForceBLAS: true}, PathBLAS, "FORCE_BLAS"},
		{"f16 src1 f16", MulMatShape{A: tensor.F16, B: tensor.F16, Columns: 1}, PathBLAS, "BLAS"},
		{"f32 forced BLAS", MulMatShape{A: tensor.F32, B: tensor.F32, Columns: 1, VectorSrc1: true, ForceBLAS: true}, PathBLAS, "FORCE_BLAS"},
		{"q4_0 one column", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true}, PathMMVQ, "float dot products"},
		{"q4_0 one column, aligned rows", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8: true}, PathMMVQ, "mmvq8: "},
		{"q4_0 eight columns, aligned rows, tensor cores", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVQ8: true, MMVQ8T: true}, PathMMVQ, "mmvq8t"},
		{"q4_0 one column, aligned rows, mmvq8w", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8: true, MMVQ8W: true}, PathMMVQ, "mmvq8w: "},
		{"q4_0 one column, aligned rows, mmvq8wf", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8: true, MMVQ8W: true, MMVQ8WF: true}, PathMMVQ, "mmvq8wf: "},
		{"q4_0 eight columns, mmvq8wf does not apply", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVQ8: true, MMVQ8T: true, MMVQ8WT: true, MMVQ8WF: true}, PathMMVQ, "mmvq8wt"},
		{"q4_0 eight columns, aligned rows, mmvq8wt", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVQ8: true, MMVQ8T: true, MMVQ8WT: true}, PathMMVQ, "mmvq8wt"},
		{"q4_0 eight columns, rows not aligned, mmvq8wt", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVQ8WT: true}, PathMMVQ, "float dot products"},
		{"q4_0 one column, rows not aligned, mmvq8w", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8W: true}, PathMMVQ, "float dot products"},
		{"q4_0 one column, rows not aligned, tensor cores", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1, VectorSrc1: true, MMVQ8T: true}, PathMMVQ, "float dot products"},
		{"q4_K eight columns", MulMatShape{A: tensor.Q4_K, B: tensor.F32, Columns: 8, VectorSrc1: true}, PathMMVQ, "mmvq"},
		{"q4_K eight columns, BLAS forced", MulMatShape{A: tensor.Q4_K, B: tensor.F32, Columns: 8, VectorSrc1: true, ForceBLAS: true}, PathMMVQ, "mmvq"},
		{"q8_0 nine columns", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 9, VectorSrc1: true}, PathDequantBLAS, "no mmq"},
		{"q8_0 512 columns, BLAS forced", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 512, VectorSrc1: true, ForceBLAS: true}, PathDequantBLAS, "FORCE_BLAS"},
		{"q8_0 512 columns, MMQ forced", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 512, VectorSrc1: true, ForceMMQ: true}, 0, "no mmq kernels"},
		{"q4_0 512 columns, gemm90", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 512, VectorSrc1: true, Gemm90: true}, PathGemm90, "gemm90 (wgmma"},
		{"q8_0 nine columns, gemm90", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 9, VectorSrc1: true, MMVQ8: true, Gemm90: true}, PathGemm90, "9 f32 columns > 8"},
		{"q8_0 eight columns, gemm90 does not apply", MulMatShape{A: tensor.Q8_0, B: tensor.F32, Columns: 8, VectorSrc1: true, MMVQ8: true, Gemm90: true}, PathMMVQ, "mmvq8"},
		{"q4_0 512 columns, gemm90, BLAS forced", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 512, VectorSrc1: true, Gemm90: true, ForceBLAS: true}, PathDequantBLAS, "FORCE_BLAS"},
		{"q4_0 512 columns, gemm90, MMQ forced", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 512, VectorSrc1: true, Gemm90: true, ForceMMQ: true}, 0, "no mmq kernels"},
		{"q4_0 one column, too many batches", MulMatShape{A: tensor.Q4_0, B: tensor.F32, Columns: 1}, PathDequantBLAS, "dequantize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := ChooseMulMat(c.s)
			assert.Equal(t, c.want, got)
			assert.Contains(t, why, c.why)
		})
	}
	assert.Equal(t, "dequant+blas", PathDequantBLAS.String())
}

// TestUseMMVT is mmvt's device and shape rule: f16/bf16, 2..8 columns,
// mma.sync compiled for the device (or the host device), not switched off.
func TestUseMMVT(t *testing.T) {
	for _, k := range []string{"mmvt_f16", "mmvt_bf16"} {
		_, err := kernels.Lookup(k)
		require.NoError(t, err, k)
	}
	for _, c := range []struct {
		name string
		t    tensor.Type
		p    vendorapi.Props
		cols int64
		off  bool // TERNION_NO_MMVT set
		want bool
	}{
		{"f16 on Hopper, 8 columns", tensor.F16, ccProps(arch.Hopper, arch.Hopper), 8, false, true},
		{"bf16 on Ampere, 2 columns", tensor.BF16, ccProps(arch.Ampere, arch.Ampere), 2, false, true},
		{"f16 on Hopper, one column stays on mmvv", tensor.F16, ccProps(arch.Hopper, arch.Hopper), 1, false, false},
		{"f16 on Hopper, 9 columns", tensor.F16, ccProps(arch.Hopper, arch.Hopper), 9, false, false},
		{"f32 has no mmvt", tensor.F32, ccProps(arch.Hopper, arch.Hopper), 8, false, false},
		{"q4_0 has no mmvt", tensor.Q4_0, ccProps(arch.Hopper, arch.Hopper), 8, false, false},
		{"f16 on Hopper, only sm_75 compiled", tensor.F16, ccProps(arch.Hopper, arch.Turing), 8, false, false},
		{"f16 on Turing", tensor.F16, ccProps(arch.Turing, arch.Turing), 8, false, false},
		{"f16 on AMD CDNA3", tensor.F16, ccProps(arch.CDNA3), 8, false, false},
		{"bf16 on the host device", tensor.BF16, vendorapi.Props{}, 5, false, true},
		{"f16 on Hopper, TERNION_NO_MMVT", tensor.F16, ccProps(arch.Hopper, arch.Hopper), 8, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.off {
				t.Setenv(switches.NoMMVT.Name, "1")
			}
			require.Equal(t, c.want, useMMVT(c.t, c.p, c.cols))
		})
	}
}

// TestUseGemm90 is gemm90's device and shape rule: src0 of a gemm90 format, one
// matrix of k a multiple of 256 with 16-byte aligned rows, more than 8 f32
// columns packed along k, on a device that builds sm_90a code (or the host
// device), not switched off.
func TestUseGemm90(t *testing.T) {
	h100 := vendorapi.Props{CC: arch.Hopper, CompiledArchs: []arch.CC{arch.Hopper}, ArchSpecific: []string{"sm_90a"},
		SharedMemPerBlockOptin: 227 << 10, SMs: 132}
	noRTC := h100
	noRTC.ArchSpecific = nil
	small := h100
	small.SharedMemPerBlockOptin = 100 << 10
	host := vendorapi.Props{SharedMemPerBlockOptin: 228 << 10}
	type build func(ctx *graph.Context) *graph.Tensor
	mm := func(t tensor.Type, m, n, k int64) build {
		return func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(t, k, m).MulMat(ctx.Empty(tensor.F32, k, n)) }
	}
	type useCase struct {
		name string
		b    build
		p    vendorapi.Props
		env  string // a switch set (TERNION_NO_GEMM90, TERNION_GEMM90_MORE), or ""
		want bool
	}
	cases := []useCase{
		{"q4_0 512 columns on an H100", mm(tensor.Q4_0, 4096, 512, 14336), h100, "", true},
		{"q8_0 4000 x 500: 128 tiles, the last of each partial", mm(tensor.Q8_0, 4000, 500, 256), h100, "", true},
		{"q4_0 n=1000: 256 tiles, two waves", mm(tensor.Q4_0, 4096, 1000, 14336), h100, "", false},
		{"q4_0 n=100: 32 tiles", mm(tensor.Q4_0, 4096, 100, 14336), h100, "", false},
		{"q4_0 m=14336 k=4096: 448 tiles", mm(tensor.Q4_0, 14336, 512, 4096), h100, "", false},
		{"q8_0 9 columns on the host device, 1 tile", mm(tensor.Q8_0, 100, 9, 256), host, "", true},
		{"q4_0 on the host device", mm(tensor.Q4_0, 16, 9, 256), host, "", true},
		{"q4_0, 8 columns: mmvq's", mm(tensor.Q4_0, 4096, 8, 14336), h100, "", false},
		{"q4_K 512 columns on an H100", mm(tensor.Q4_K, 4096, 512, 14336), h100, "", true},
		{"q6_K, k=5120: rows 8-byte aligned, TERNION_GEMM90_MORE", mm(tensor.Q6_K, 4096, 512, 5120), h100, switches.Gemm90More.Name, true},
		{"iq4_xs has no gemm90", mm(tensor.IQ4_XS, 4096, 512, 14336), h100, "", false},
		{"q4_0, k not a multiple of 256", mm(tensor.Q4_0, 4096, 512, 4096+32), h100, "", false},
		{"q4_0, no sm_90a compiler", mm(tensor.Q4_0, 4096, 512, 14336), noRTC, "", false},
		{"q4_0 on an Ada device", mm(tensor.Q4_0, 4096, 512, 14336), vendorapi.Props{CC: arch.AdaLovelace, SharedMemPerBlockOptin: 99 << 10}, "", false},
		{"q8_0, shared memory too small", mm(tensor.Q8_0, 4096, 512, 14336), small, "", false},
		{"q4_0, TERNION_NO_GEMM90", mm(tensor.Q4_0, 4096, 512, 14336), h100, switches.NoGemm90.Name, false},
		{"q4_0, src1 of two matrices", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.Q4_0, 256, 64, 2).MulMat(ctx.Empty(tensor.F32, 256, 16, 2))
		}, h100, "", false},
		{"q4_0, src1 f16", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.Q4_0, 256, 64).MulMat(ctx.Empty(tensor.F16, 256, 16))
		}, h100, "", false},
		{"q4_0, src1 transposed", func(ctx *graph.Context) *graph.Tensor {
			return ctx.Empty(tensor.Q4_0, 256, 64).MulMat(ctx.Empty(tensor.F32, 16, 256).Transpose())
		}, h100, "", false},
		{"q4_0, src1 columns 8 bytes apart from 16-byte alignment", func(ctx *graph.Context) *graph.Tensor {
			x := ctx.Empty(tensor.F32, 260, 16)
			return ctx.Empty(tensor.Q4_0, 256, 64).MulMat(x.View(8, []int64{256, 16}, []int64{260 * 4}))
		}, host, "", false},
		{"q4_0, src1 columns in a wider matrix, 16-byte aligned", func(ctx *graph.Context) *graph.Tensor {
			x := ctx.Empty(tensor.F32, 260, 16)
			return ctx.Empty(tensor.Q4_0, 256, 64).MulMat(x.View(16, []int64{256, 16}, []int64{260 * 4}))
		}, host, "", true},
	}
	// The formats not yet checked on a GPU: gemm90 there only with
	// TERNION_GEMM90_MORE, on the host device always.
	for _, q := range Gemm90Types() {
		if !slices.Contains(gemm90Checked, q) {
			cases = append(cases, useCase{q.String() + " 512 columns on an H100", mm(q, 4096, 512, 14336), h100, "", false},
				useCase{q.String() + " 512 columns on an H100, TERNION_GEMM90_MORE", mm(q, 4096, 512, 14336), h100, switches.Gemm90More.Name, true},
				useCase{q.String() + " on the host device", mm(q, 200, 130, 512), host, "", true})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, "1")
			}
			n := c.b(graph.NewContext())
			require.NoError(t, n.Context().Err())
			require.Equal(t, c.want, useGemm90(n, c.p))
			path, _ := MulMatPathOf(n, c.p)
			require.Equal(t, c.want, path == PathGemm90, "path %s", path)
		})
	}
	require.Len(t, gemm90Groups, len(kernels.Gemm90Groups))
	for q, group := range gemm90Groups {
		assert.Equal(t, int64(kernels.Gemm90Groups[q.String()]), group, "%s", q)
		assert.Equal(t, int64(kernels.Gemm90Shared(q.String())), gemm90Shared(q))
		assert.Equal(t, int64(kernels.Gemm90RowAlign(q.String())), gemm90RowAlign(q))
	}
	for _, c := range []struct {
		tiles, sms int64
		want       bool
	}{{128, 132, true}, {132, 132, true}, {100, 132, true}, {99, 132, false}, {133, 132, false}, {256, 132, false}, {1, 0, true}} {
		assert.Equal(t, c.want, gemm90Waves(c.tiles, c.sms), "%d tiles on %d SMs", c.tiles, c.sms)
	}
	assert.Equal(t, kernels.Gemm90Tile, gemm90Tile)
	assert.Equal(t, kernels.Gemm90Threads, gemm90Threads)
	assert.Equal(t, kernels.Gemm90BBytes(130, 512), gemm90Tiles(130)*gemm90Tile*512*2)
}
