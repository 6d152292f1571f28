package ops

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// TestQuantSupports checks the quantized ops' supports answers: what runs,
// and the reason of each "no", given before anything launches.
func TestQuantSupports(t *testing.T) {
	ctx := graph.NewContext()
	x := ctx.Empty(tensor.F32, 256, 3)
	idx := ctx.Empty(tensor.I32, 4)
	q4 := ctx.Empty(tensor.Q4_0, 256, 8)
	ids := ctx.Empty(tensor.I32, 2, 3)
	q4k, q2k, x16 := ctx.Empty(tensor.Q4_K, 256, 8), ctx.Empty(tensor.Q2_K, 256, 8), ctx.Empty(tensor.F32, 256, 16)
	for _, c := range []struct {
		name string
		node *graph.Tensor
		why  string // "" when supported
	}{
		{"mul_mat q4_0", q4.MulMat(x), ""},
		{"mul_mat q6_K", ctx.Empty(tensor.Q6_K, 256, 8).MulMat(x), ""},
		{"mul_mat iq2_xxs", ctx.Empty(tensor.IQ2_XXS, 256, 8).MulMat(x), ""},
		{"mul_mat q4_0 with f16 src1", q4.MulMat(ctx.Empty(tensor.F16, 256, 3)), "src1 must be f32"},
		{"mul_mat q4_0 rows at an odd offset", q4.View(1, []int64{256, 4}, []int64{q4.Nb()[1]}).MulMat(x),
			"do not start 2-byte aligned"},
		{"mul_mat q4_K rows 4 bytes in", q4k.View(4, []int64{256, 4}, []int64{q4k.Nb()[1]}).MulMat(x),
			"q4_K rows that do not start 16-byte aligned"},
		{"mul_mat q4_K rows 4 bytes in, 16 columns (BLAS)", q4k.View(4, []int64{256, 4}, []int64{q4k.Nb()[1]}).MulMat(x16), ""},
		{"mul_mat q2_K rows 4 bytes in (mmvq)", q2k.View(4, []int64{256, 4}, []int64{q2k.Nb()[1]}).MulMat(x), ""},
		{"get_rows q4_K", ctx.Empty(tensor.Q4_K, 256, 5).GetRows(idx), ""},
		{"get_rows iq1_s", ctx.Empty(tensor.IQ1_S, 256, 5).GetRows(idx), ""},
		{"cpy f32 to q8_0", x.Cpy(ctx.Empty(tensor.Q8_0, 256, 3)), ""},
		{"cpy f16 to iq4_nl", ctx.Empty(tensor.F16, 256, 3).Cpy(ctx.Empty(tensor.IQ4_NL, 256, 3)), ""},
		{"cpy f32 to q4_K", x.Cpy(ctx.Empty(tensor.Q4_K, 256, 3)), "no quantizer into q4_K"},
		{"cpy q4_0 to q8_0", q4.Cpy(ctx.Empty(tensor.Q8_0, 256, 8)), "no conversion from q4_0 to q8_0"},
		{"cpy q5_K to bf16", ctx.Empty(tensor.Q5_K, 256, 2).Cpy(ctx.Empty(tensor.BF16, 256, 2)), ""},
		{"cpy iq3_s to f32", ctx.Empty(tensor.IQ3_S, 256, 2).Cpy(ctx.Empty(tensor.F32, 256, 2)), ""},
		{"cpy tq1_0 to f16", ctx.Empty(tensor.TQ1_0, 256, 2).Cpy(ctx.Empty(tensor.F16, 256, 2)), ""},
		{"cpy f32 to tq2_0", x.Cpy(ctx.Empty(tensor.TQ2_0, 256, 3)), "no quantizer into tq2_0"},
		{"mul_mat_id q4_0", ctx.Empty(tensor.Q4_0, 256, 16, 4).MulMatID(ctx.Empty(tensor.F32, 256, 2, 3), ids), ""},
		{"mul_mat_id iq2_s", ctx.Empty(tensor.IQ2_S, 256, 16, 4).MulMatID(ctx.Empty(tensor.F32, 256, 2, 3), ids), ""},
		{"mul_mat_id f16 src1", ctx.Empty(tensor.F16, 256, 16, 4).MulMatID(ctx.Empty(tensor.F16, 256, 2, 3), ids),
			"must be f32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, ctx.Err())
			checkSupports(t, c.node, c.why)
		})
	}
}

// TestForceMMQRefused checks that TERNION_FORCE_MMQ refuses a quantized
// MUL_MAT the mmq kernels would take, with the reason, instead of quietly
// using BLAS; mmvq's column counts are unaffected.
func TestForceMMQRefused(t *testing.T) {
	t.Setenv(switches.ForceMMQ.Name, "1")
	ctx := graph.NewContext()
	q4 := ctx.Empty(tensor.Q4_0, 256, 8)
	checkSupports(t, q4.MulMat(ctx.Empty(tensor.F32, 256, 16)), "no mmq kernels yet")
	checkSupports(t, q4.MulMat(ctx.Empty(tensor.F32, 256, 8)), "")
}

// TestUseMMVQ8 pins which src0 tensors mmvq8 takes (its formats, 16-byte
// aligned rows) and that every such format has its kernels in the catalog.
func TestUseMMVQ8(t *testing.T) {
	for _, q := range mmvq8Types {
		for _, name := range []string{"mmvq8_" + q.String() + "_1", "mmvq8_" + q.String() + "_8", "mmvq8_idg_" + q.String()} {
			_, err := kernels.Lookup(name)
			require.NoError(t, err, name)
		}
	}
	desc := func(t tensor.Type, data int64, ne [4]int64) vendorapi.TensorDesc {
		return vendorapi.TensorDesc{Data: vendorapi.DevicePtr(data), Ne: ne, Nb: tensor.RowMajorStrides(t, ne)}
	}
	cases := []struct {
		name string
		t    tensor.Type
		a    vendorapi.TensorDesc
		want bool
	}{
		{"q4_0 rows of 144 bytes", tensor.Q4_0, desc(tensor.Q4_0, 1024, [4]int64{256, 16, 1, 1}), true},
		{"q4_0 rows of 18 bytes", tensor.Q4_0, desc(tensor.Q4_0, 1024, [4]int64{32, 16, 1, 1}), false},
		{"q4_0 data off 16 bytes", tensor.Q4_0, desc(tensor.Q4_0, 1026, [4]int64{256, 16, 1, 1}), false},
		{"q2_K one row of 84 bytes", tensor.Q2_K, desc(tensor.Q2_K, 1024, [4]int64{256, 1, 1, 1}), true},
		{"q2_K rows of 84 bytes", tensor.Q2_K, desc(tensor.Q2_K, 1024, [4]int64{256, 4, 1, 1}), false},
		{"q6_K rows of 6144 values", tensor.Q6_K, desc(tensor.Q6_K, 1024, [4]int64{6144, 4, 2, 1}), true},
		{"q8_K has no mmvq8", tensor.Q8_K, desc(tensor.Q8_K, 1024, [4]int64{1024, 4, 1, 1}), false},
		{"mxfp4 rows of 6144 values", tensor.MXFP4, desc(tensor.MXFP4, 1024, [4]int64{6144, 4, 1, 1}), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, useMMVQ8(c.t, c.a)) })
	}
}

// TestUseMMVQ8T pins where mmvq8 runs on the tensor cores (its formats, on
// NVIDIA with mma.sync code compiled, and on the host device) and that its
// formats are the catalog's.
func TestUseMMVQ8T(t *testing.T) {
	for _, q := range mmvq8Types {
		_, err := kernels.Lookup("mmvq8t_" + q.String())
		require.Equal(t, slices.Contains(mmvq8tTypes, q), err == nil, q.String())
	}
	for _, c := range []struct {
		name string
		t    tensor.Type
		p    vendorapi.Props
		cols int64
		want bool
	}{
		{"q4_0 on Hopper, sm_90 compiled", tensor.Q4_0, ccProps(arch.Hopper, arch.Hopper), 8, true},
		{"q4_0 on Hopper, 4 columns", tensor.Q4_0, ccProps(arch.Hopper, arch.Hopper), 4, true},
		{"q4_0 on Hopper, 3 columns stay on mmvq8", tensor.Q4_0, ccProps(arch.Hopper, arch.Hopper), 3, false},
		{"q4_0 on Hopper, one column stays on mmvq8", tensor.Q4_0, ccProps(arch.Hopper, arch.Hopper), 1, false},
		{"q4_K on Ampere, sm_80 compiled", tensor.Q4_K, ccProps(arch.Ampere, arch.Ampere), 8, true},
		{"q4_0 on Hopper, only sm_75 compiled", tensor.Q4_0, ccProps(arch.Hopper, arch.Turing), 8, false},
		{"q4_0 on Turing", tensor.Q4_0, ccProps(arch.Turing, arch.Turing), 8, false},
		{"q4_0 on AMD CDNA3", tensor.Q4_0, ccProps(arch.CDNA3), 8, false},
		{"q6_K has no mmvq8t", tensor.Q6_K, ccProps(arch.Hopper, arch.Hopper), 8, false},
		{"q8_0 on the host device", tensor.Q8_0, vendorapi.Props{}, 5, true},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, useMMVQ8T(c.t, c.p, c.cols)) })
	}
}

// TestMMVQ8TShared pins mmvq8t's dynamic shared memory (quant.cu's
// mmvq8t_chunk<Q, 8> SHARED, worked by hand: 8 warps × 2 stages × (16 rows
// of a chunk + 8 columns of items·32 + 16 bytes + 8 columns of items·16)).
func TestMMVQ8TShared(t *testing.T) {
	for _, c := range []struct {
		t    tensor.Type
		want uint32
	}{
		{tensor.Q4_0, 8 * 2 * (16*8*18 + 8*272 + 8*128)},    // 8 blocks of 18 bytes: 88064, past the default 48 KiB
		{tensor.Q8_0, 8 * 2 * (16*8*34 + 8*272 + 8*128)},    // 8 blocks of 34 bytes
		{tensor.Q4_1, 8 * 2 * (16*8*20 + 8*272 + 8*128)},    // 4 blocks are a multiple of 16 bytes, 8 items wanted
		{tensor.Q4_K, 8 * 2 * (16*144 + 8*272 + 8*128)},     // one block of 8 items
		{tensor.IQ4_XS, 8 * 2 * (16*2*136 + 8*528 + 8*256)}, // 2 blocks of 136 bytes: 16 items
		{tensor.MXFP4, 8 * 2 * (16*16*17 + 8*528 + 8*256)},  // 16 blocks of 17 bytes
	} {
		t.Run(c.t.String(), func(t *testing.T) { require.Equal(t, c.want, mmvq8tShared(c.t)) })
	}
}

// wholeWordCase is a row of TestUseMMVQ8W's and TestUseMMVQ8WT's tables:
// src0 type t with k values a row, cols columns, a device of props p.
type wholeWordCase struct {
	name string
	t    tensor.Type
	k    int64
	p    vendorapi.Props
	cols int64
	want bool
}

// hopperOptin is an H200's props as the whole-word kernels' rules read
// them: Hopper code compiled, 232448 bytes of opt-in shared memory.
func hopperOptin() vendorapi.Props {
	p := ccProps(arch.Hopper, arch.Hopper)
	p.SharedMemPerBlockOptin = 232448
	return p
}

// TestUseMMVQ8W pins where the one-column product runs as mmvq8w (its
// formats, one column, k a multiple of 256 within the shared memory, on
// NVIDIA with cp.async code compiled and on the host device) and that its
// formats are the catalog's.
func TestUseMMVQ8W(t *testing.T) {
	for _, q := range mmvq8Types {
		_, err := kernels.Lookup("mmvq8w_" + q.String())
		_, has := mmvq8wFormats[q]
		require.Equal(t, has, err == nil, q.String())
	}
	hopper := hopperOptin()
	for _, c := range []wholeWordCase{
		{"q4_0 on Hopper, k 14336", tensor.Q4_0, 14336, hopper, 1, true},
		{"q8_0 on Hopper, k 14336", tensor.Q8_0, 14336, hopper, 1, true},
		{"q4_K on Hopper, k 4096", tensor.Q4_K, 4096, hopper, 1, true},
		{"q4_0 on Hopper, two columns stay on mmvq8", tensor.Q4_0, 14336, hopper, 2, false},
		{"q4_0 on Hopper, k not a multiple of 256", tensor.Q4_0, 2880, hopper, 1, false},
		{"q4_0 on Hopper, k 56576: the most that fits", tensor.Q4_0, 56576, hopper, 1, true},
		{"q4_0 on Hopper, k 56832: shared memory past the opt-in limit", tensor.Q4_0, 56832, hopper, 1, false},
		{"q4_1 has no mmvq8w", tensor.Q4_1, 4096, hopper, 1, false},
		{"q6_K on Hopper, k 14336: rows of 56 blocks, 11760 bytes", tensor.Q6_K, 14336, hopper, 1, true},
		{"q5_K on Hopper, k 14336", tensor.Q5_K, 14336, hopper, 1, true},
		{"q6_K on Hopper, k 11008: rows of 9030 bytes, not a multiple of 16", tensor.Q6_K, 11008, hopper, 1, false},
		{"q4_0 on Hopper, only sm_75 compiled", tensor.Q4_0, 4096, ccProps(arch.Hopper, arch.Turing), 1, false},
		{"q4_0 on AMD CDNA3", tensor.Q4_0, 4096, ccProps(arch.CDNA3), 1, false},
		{"q8_0 on the host device", tensor.Q8_0, 4096, vendorapi.Props{SharedMemPerBlockOptin: 232448}, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, useMMVQ8W(c.t, c.k, c.p, c.cols)) })
	}
	t.Setenv(switches.NoMMVQ8W.Name, "1")
	require.False(t, useMMVQ8W(tensor.Q4_0, 14336, hopper, 1), switches.NoMMVQ8W.Name)
}

// TestUseMMVQ8WF pins where src1 is quantized inside mmvq8w's blocks: only
// under TERNION_MMVQ8WF, src1 packed along k, columns 16-byte aligned; and
// that every mmvq8w format has both fused kernels.
func TestUseMMVQ8WF(t *testing.T) {
	for q := range mmvq8wFormats {
		for _, name := range []string{"mmvq8wf_", "mmvq8wf_id_"} {
			_, err := kernels.Lookup(name + q.String())
			require.NoError(t, err, name+q.String())
		}
	}
	require.False(t, useMMVQ8WF(4, true), "off by default")
	t.Setenv(switches.MMVQ8WF.Name, "1")
	for _, c := range []struct {
		name    string
		nb0     int64
		aligned bool
		want    bool
	}{
		{"packed, aligned", 4, true, true},
		{"packed, a column not 16-byte aligned", 4, false, false},
		{"strided along k", 8, true, false},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, useMMVQ8WF(c.nb0, c.aligned)) })
	}
}

// TestMMVQ8WGeometry pins mmvq8w's shared memory (src1's 3·k/2 bytes, then
// warps × 2 slots × 32 groups) and grid (at most one block a
// multiprocessor and one a unit, at least one).
func TestMMVQ8WGeometry(t *testing.T) {
	require.Equal(t, int64(3*14336/2+16*2*32*144), mmvq8wShared(tensor.Q4_0, 14336))
	require.Equal(t, int64(3*14336/2+8*2*32*272), mmvq8wShared(tensor.Q8_0, 14336))
	require.Equal(t, int64(3*4096/2+16*2*32*144), mmvq8wShared(tensor.Q4_K, 4096))
	require.Equal(t, int64(3*14336/2+8*2*32*210), mmvq8wShared(tensor.Q6_K, 14336))
	require.Equal(t, int64(3*14336/2+16*2*32*176), mmvq8wShared(tensor.Q5_K, 14336))
	require.Equal(t, vendorapi.Dim3{X: 132, Y: 1, Z: 1}, mmvq8wGrid(tensor.Q4_0, 4096, 14336, packedRow(tensor.Q4_0, 14336), 132, 1, 1))
	// 16 rows of one unit each: 16 blocks, one row a block.
	require.Equal(t, vendorapi.Dim3{X: 16, Y: 3, Z: 2}, mmvq8wGrid(tensor.Q8_0, 16, 14336, packedRow(tensor.Q8_0, 14336), 132, 3, 2))
	require.Equal(t, vendorapi.Dim3{X: 1, Y: 1, Z: 1}, mmvq8wGrid(tensor.Q4_K, 1, 4096, packedRow(tensor.Q4_K, 4096), 132, 1, 1))
	require.Equal(t, vendorapi.Dim3{X: 2, Y: 1, Z: 1}, mmvq8wGrid(tensor.Q4_K, 2200, 4096, packedRow(tensor.Q4_K, 4096), 2, 1, 1))
	// k 4096, 16 groups a row: units of 2 rows, 4096 rows → 2048 units, a
	// block a multiprocessor; a padded row stays one row a unit.
	require.Equal(t, vendorapi.Dim3{X: 132, Y: 1, Z: 1}, mmvq8wGrid(tensor.Q4_0, 4096, 4096, packedRow(tensor.Q4_0, 4096), 132, 1, 1))
	require.Equal(t, vendorapi.Dim3{X: 132, Y: 1, Z: 1}, mmvq8wGrid(tensor.Q4_0, 4096, 4096, packedRow(tensor.Q4_0, 4096)+16, 132, 1, 1))
}

// TestMMVQ8WUnitRows pins the rows of an mmvq8w unit: 32 / groups where a
// row has fewer than 32 groups of 256 values and the rows are packed, else
// one.
func TestMMVQ8WUnitRows(t *testing.T) {
	for _, c := range []struct {
		name string
		t    tensor.Type
		k    int64
		pad  int64
		want int64
	}{
		{"q4_0 k 14336: 56 groups", tensor.Q4_0, 14336, 0, 1},
		{"q4_0 k 8192: 32 groups", tensor.Q4_0, 8192, 0, 1},
		{"q4_0 k 7936: 31 groups", tensor.Q4_0, 7936, 0, 1},
		{"q4_0 k 4096: 16 groups", tensor.Q4_0, 4096, 0, 2},
		{"q4_K k 2048: 8 groups", tensor.Q4_K, 2048, 0, 4},
		{"q8_0 k 3072: 12 groups, 2 rows (24 lanes)", tensor.Q8_0, 3072, 0, 2},
		{"q4_0 k 1536: 6 groups, 5 rows (30 lanes)", tensor.Q4_0, 1536, 0, 5},
		{"q6_K k 2048: 8 groups of 210 bytes", tensor.Q6_K, 2048, 0, 4},
		{"q5_K k 256: one group", tensor.Q5_K, 256, 0, 32},
		{"q4_0 k 2048, rows padded by 16 bytes", tensor.Q4_0, 2048, 16, 1},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, mmvq8wUnitRows(c.t, c.k, packedRow(c.t, c.k)+c.pad)) })
	}
}

// TestMMVQ8WIDGrid pins mmvq8w_id's grid: a pair's units over at most sms
// / pairs blocks (at least one), pairs along y (slots) and z (tokens).
func TestMMVQ8WIDGrid(t *testing.T) {
	// The goal case: q4_0 m=768 k=2048, 8 slots, one token: 192 units of 4
	// rows over 132 / 8 = 16 blocks a pair (12 units a block: 128
	// multiprocessors busy, where 12 blocks of 16 units left 36 idle).
	require.Equal(t, vendorapi.Dim3{X: 16, Y: 8, Z: 1}, mmvq8wIDGrid(tensor.Q4_0, 768, 2048, packedRow(tensor.Q4_0, 2048), 132, 8, 1))
	require.Equal(t, vendorapi.Dim3{X: 4, Y: 8, Z: 4}, mmvq8wIDGrid(tensor.Q4_0, 768, 2048, packedRow(tensor.Q4_0, 2048), 132, 8, 4))
	require.Equal(t, vendorapi.Dim3{X: 1, Y: 8, Z: 32}, mmvq8wIDGrid(tensor.Q4_0, 768, 2048, packedRow(tensor.Q4_0, 2048), 132, 8, 32))
	require.Equal(t, vendorapi.Dim3{X: 16, Y: 8, Z: 1}, mmvq8wIDGrid(tensor.Q8_0, 2048, 7168, packedRow(tensor.Q8_0, 7168), 132, 8, 1))
	require.Equal(t, vendorapi.Dim3{X: 1, Y: 2, Z: 1}, mmvq8wIDGrid(tensor.Q4_K, 16, 256, packedRow(tensor.Q4_K, 256), 132, 2, 1))
}

// TestChooseMulMatID pins MUL_MAT_ID's path: grouped with ≥ 4 pairs an
// expert where mmvq8 applies, else mmvq8w_id where mmvq8w runs, else
// mmvq_id.
func TestChooseMulMatID(t *testing.T) {
	for _, c := range []struct {
		name string
		s    MulMatIDShape
		want MulMatIDPath
	}{
		{"128 experts, 8 used, one token, q4_0", MulMatIDShape{128, 8, 1, true, true, false}, PathIDWholeWord},
		{"the same, src1 quantized in the product", MulMatIDShape{128, 8, 1, true, true, true}, PathIDWholeWord},
		{"128 experts, 8 used, 64 tokens: 4 pairs an expert", MulMatIDShape{128, 8, 64, true, true, true}, PathIDGrouped},
		{"128 experts, 8 used, 63 tokens", MulMatIDShape{128, 8, 63, true, true, false}, PathIDWholeWord},
		{"one token, a format without mmvq8w (q4_1)", MulMatIDShape{128, 8, 1, true, false, true}, PathIDFloat},
		{"one token, rows not 16-byte aligned", MulMatIDShape{128, 8, 1, false, true, true}, PathIDFloat},
		{"many tokens, rows not 16-byte aligned", MulMatIDShape{4, 2, 64, false, true, false}, PathIDFloat},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := chooseMulMatID(c.s)
			require.Equal(t, c.want, got)
			require.Contains(t, why, map[MulMatIDPath]string{PathIDGrouped: "grouped", PathIDWholeWord: "mmvq8w_id", PathIDFloat: "mmvq_id"}[got])
			if got == PathIDWholeWord {
				require.Equal(t, c.s.MMVQ8WF, strings.Contains(why, "mmvq8wf_id"), "the reason names the fused kernel exactly when it runs: %s", why)
			}
		})
	}
	require.Equal(t, "mmvq8w_id", PathIDWholeWord.String())
	require.Equal(t, "MulMatIDPath(7)", MulMatIDPath(7).String())
}

// packedRow is the bytes of a packed row of k values of type q.
func packedRow(q tensor.Type, k int64) int64 { return k / q.BlockSize() * q.BlockBytes() }

// TestUseMMVQ8WT pins where 2..8 columns run as mmvq8wt (its formats, k a
// multiple of 256 with src1 within the shared memory, 16 rows within 2^31
// bytes, on NVIDIA with mma.sync code compiled and on the host device) and
// that its formats are the catalog's.
func TestUseMMVQ8WT(t *testing.T) {
	for _, q := range mmvq8Types {
		_, has := mmvq8wtFormats[q]
		for _, r := range []string{"r1", "r2"} {
			_, err := kernels.Lookup("mmvq8wt_" + q.String() + "_" + r)
			require.Equal(t, has, err == nil, q.String()+" "+r)
		}
	}
	hopper := hopperOptin()
	for _, c := range []wholeWordCase{
		{"q4_0 on Hopper, k 14336, 8 columns", tensor.Q4_0, 14336, hopper, 8, true},
		{"q4_0 on Hopper, 2 columns", tensor.Q4_0, 14336, hopper, 2, true},
		{"q4_0 on Hopper, one column is mmvq8w's", tensor.Q4_0, 14336, hopper, 1, false},
		{"q4_0 on Hopper, 9 columns", tensor.Q4_0, 14336, hopper, 9, false},
		{"q8_0 on Hopper, k 14336", tensor.Q8_0, 14336, hopper, 8, true},
		{"q4_K on Hopper, k 4096", tensor.Q4_K, 4096, hopper, 4, true},
		{"q4_0 on Hopper, k not a multiple of 256", tensor.Q4_0, 2880, hopper, 8, false},
		{"q4_0 on Hopper, k 18944: the most that fits", tensor.Q4_0, 18944, hopper, 8, true},
		{"q4_0 on Hopper, k 19200: shared memory past the opt-in limit", tensor.Q4_0, 19200, hopper, 8, false},
		{"q4_K on Hopper, k 17152: the most that fits (3 slots)", tensor.Q4_K, 17152, hopper, 8, true},
		{"q4_K on Hopper, k 17408", tensor.Q4_K, 17408, hopper, 8, false},
		{"q8_0 on Hopper, k 15872: the most that fits", tensor.Q8_0, 15872, hopper, 8, true},
		{"q8_0 on Hopper, k 16128", tensor.Q8_0, 16128, hopper, 8, false},
		{"q4_1 has no mmvq8wt", tensor.Q4_1, 4096, hopper, 8, false},
		{"q6_K has no mmvq8wt", tensor.Q6_K, 4096, hopper, 8, false},
		{"q4_0 on Hopper, only sm_75 compiled", tensor.Q4_0, 4096, ccProps(arch.Hopper, arch.Turing), 8, false},
		{"q4_0 on AMD CDNA3", tensor.Q4_0, 4096, ccProps(arch.CDNA3), 8, false},
		{"q8_0 on the host device", tensor.Q8_0, 4096, vendorapi.Props{SharedMemPerBlockOptin: 232448}, 3, true},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, useMMVQ8WT(c.t, c.k, packedRow(c.t, c.k), c.p, c.cols)) })
	}
	require.False(t, useMMVQ8WT(tensor.Q4_0, 4096, 1<<27, hopper, 8), "16 rows of 2^27 bytes: past the kernel's 32-bit offsets")
	require.True(t, useMMVQ8WT(tensor.Q4_0, 4096, 1<<27-16, hopper, 8), "16 rows just within 2^31 bytes")
	t.Setenv(switches.NoMMVQ8W.Name, "1")
	require.False(t, useMMVQ8WT(tensor.Q4_0, 14336, packedRow(tensor.Q4_0, 14336), hopper, 8), switches.NoMMVQ8W.Name)
}

// TestMMVQ8WTFormatsMatchKernels keeps core's mmvq8wt formats and warps
// equal to the kernels package's (which a test there ties to quant.cu).
func TestMMVQ8WTFormatsMatchKernels(t *testing.T) {
	require.Equal(t, kernels.MMVQ8WTWarps, mmvq8wtWarps)
	require.Len(t, mmvq8wtFormats, len(kernels.MMVQ8WTFormats))
	for q, f := range mmvq8wtFormats {
		k, ok := kernels.MMVQ8WTFormats[q.String()]
		require.True(t, ok, q.String())
		require.Equal(t, kernels.MMVQ8WTFormat{Group: f.group, Stages: f.stages}, k, q.String())
	}
}

// TestMMVQ8WTGeometry pins mmvq8wt's shared memory (src1's groups of 2560
// bytes; for each of 8 warps and each of its r tiles, the ring slots of 16
// rows' groups and 16×8 partial sums) and grid (at most one block a
// multiprocessor, at least one; a set of r tiles of 16 rows a block at a
// time).
func TestMMVQ8WTGeometry(t *testing.T) {
	require.Equal(t, int64(56*2560+8*(2*16*144+512)), mmvq8wtShared(tensor.Q4_0, 14336, 1))
	require.Equal(t, int64(56*2560+8*2*(2*16*144+512)), mmvq8wtShared(tensor.Q4_0, 14336, 2))
	require.Equal(t, int64(56*2560+8*(2*16*272+512)), mmvq8wtShared(tensor.Q8_0, 14336, 1))
	require.Equal(t, int64(16*2560+8*(3*16*144+512)), mmvq8wtShared(tensor.Q4_K, 4096, 1))
	require.Equal(t, int64(16*2560+8*2*(2*16*144+512)), mmvq8wtShared(tensor.Q4_K, 4096, 2))
	require.Equal(t, vendorapi.Dim3{X: 132, Y: 1, Z: 1}, mmvq8wtGrid(4096, 1, 132, 1, 1))
	require.Equal(t, vendorapi.Dim3{X: 128, Y: 1, Z: 1}, mmvq8wtGrid(4096, 2, 132, 1, 1))
	require.Equal(t, vendorapi.Dim3{X: 2, Y: 3, Z: 2}, mmvq8wtGrid(18, 1, 132, 3, 2))
	require.Equal(t, vendorapi.Dim3{X: 1, Y: 3, Z: 2}, mmvq8wtGrid(18, 2, 132, 3, 2))
	require.Equal(t, vendorapi.Dim3{X: 1, Y: 1, Z: 1}, mmvq8wtGrid(1, 2, 132, 1, 1))
	require.Equal(t, vendorapi.Dim3{X: 2, Y: 1, Z: 1}, mmvq8wtGrid(600, 1, 2, 1, 1))
}

// TestMMVQ8WTTiles pins the tiles a warp takes at a time: 2 while their
// shared memory fits the device's opt-in limit and 32 rows stay within
// 2^31 bytes, then 1 while that fits, then none.
func TestMMVQ8WTTiles(t *testing.T) {
	hopper := hopperOptin()
	for _, c := range []struct {
		name string
		t    tensor.Type
		k    int64
		want int64
	}{
		{"q4_0 k 14336", tensor.Q4_0, 14336, 2},
		{"q4_0 k 14848: the most 2 tiles fit", tensor.Q4_0, 14848, 2},
		{"q4_0 k 15104", tensor.Q4_0, 15104, 1},
		{"q4_0 k 18944: the most 1 tile fits", tensor.Q4_0, 18944, 1},
		{"q4_0 k 19200", tensor.Q4_0, 19200, 0},
		{"q4_K k 14848", tensor.Q4_K, 14848, 2},
		{"q4_K k 15104: 1 tile, 3 slots", tensor.Q4_K, 15104, 1},
		{"q4_K k 17152", tensor.Q4_K, 17152, 1},
		{"q4_K k 17408", tensor.Q4_K, 17408, 0},
		{"q8_0 k 8448: the most 2 tiles fit", tensor.Q8_0, 8448, 2},
		{"q8_0 k 14336", tensor.Q8_0, 14336, 1},
		{"q8_0 k 16128", tensor.Q8_0, 16128, 0},
		{"q6_K has none", tensor.Q6_K, 4096, 0},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, mmvq8wtTiles(c.t, c.k, packedRow(c.t, c.k), hopper)) })
	}
	require.Equal(t, int64(1), mmvq8wtTiles(tensor.Q4_0, 4096, 1<<26, hopper), "32 rows of 2^26 bytes: past 2^31")
	require.Equal(t, int64(2), mmvq8wtTiles(tensor.Q4_0, 4096, 1<<26-16, hopper))
	require.Equal(t, int64(0), mmvq8wtTiles(tensor.Q4_0, 4096, 1<<27, hopper))
}

// TestGroupMulMatID pins when MUL_MAT_ID groups its pairs by expert.
func TestGroupMulMatID(t *testing.T) {
	for _, c := range []struct {
		experts, used, tokens int64
		want                  bool
	}{
		{128, 8, 1, false},      // decode: 8 pairs, each its own expert
		{128, 8, 32, false},     // 2 pairs an expert
		{128, 8, 64, true},      // 4 pairs an expert
		{128, 8, 512, true},     // prefill
		{4, 2, 16, true},        // 8 pairs an expert
		{8192, 8, 8192, false},  // too many experts for mmid_group's shared memory
		{16, 1, 1 << 20, false}, // more tiles than a grid's y dimension
	} {
		t.Run(fmt.Sprintf("%d experts %d used %d tokens", c.experts, c.used, c.tokens), func(t *testing.T) {
			require.Equal(t, c.want, groupMulMatID(c.experts, c.used, c.tokens))
		})
	}
}

// TestMMVVRowsMatchCatalog keeps mmvvRows and mmvtRows equal to the
// catalog's.
func TestMMVVRowsMatchCatalog(t *testing.T) {
	for _, ty := range []string{"f32", "f16", "bf16"} {
		require.Equal(t, int64(kernels.MMVVRows(ty)), mmvvRows(ty), ty)
	}
	require.Equal(t, int64(kernels.MMVTRows), int64(mmvtRows))
}

// TestDequantSlice pins the slices of k the dequantize + BLAS path makes:
// the whole row when the limit is off or the matrix fits it, else the
// fewest slices whose f16 bytes fit, rounded up to whole blocks.
func TestDequantSlice(t *testing.T) {
	for _, c := range []struct {
		name  string
		t     tensor.Type
		m, k  int64
		limit uint64
		want  int64
	}{
		{"limit off", tensor.Q4_0, 4096, 14336, 0, 14336},
		{"fits", tensor.Q4_0, 64, 1024, 1 << 20, 1024},
		{"fits exactly", tensor.Q4_0, 64, 1024, 2 * 64 * 1024, 1024},
		{"m=4096 k=14336 in 16 MiB: 7 slices of 2048", tensor.Q4_0, 4096, 14336, 16 << 20, 2048},
		{"m=4096 k=14336 in 32 MiB: 4 slices of 3584", tensor.Q8_0, 4096, 14336, 32 << 20, 3584},
		{"q4_K in 16 MiB: 7 slices of 2048 (8 blocks)", tensor.Q4_K, 4096, 14336, 16 << 20, 2048},
		{"3 slices of 1024 q4_0 values: 352 (whole blocks)", tensor.Q4_0, 24, 1024, 20 << 10, 352},
		{"q4_K 3 slices of 1024: 512 (whole 256-value blocks)", tensor.Q4_K, 24, 1024, 20 << 10, 512},
		{"a limit under one block: one block", tensor.Q4_0, 24, 1024, 10, 32},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, dequantSlice(c.t, c.m, c.k, c.limit)) })
	}
}
