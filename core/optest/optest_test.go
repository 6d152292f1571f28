package optest

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	_ "github.com/ternion/ternion/host"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
)

// TestHostAgainstReference runs every case on the host device against
// core/ref's float64 evaluation.
func TestHostAgainstReference(t *testing.T) {
	be, err := backend.Open("host", 0, backend.Options{})
	require.NoError(t, err)
	defer be.Close()
	cases := Tests()
	require.NotEmpty(t, cases)
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := Check(c, be, nil, uint64(1000+i))
			assert.Equal(t, Passed, r.Outcome(), "%s: %s (NMSE %g, seed %d)", c.Name, r.Reason, r.NMSE, r.Seed)
		})
	}
	loaded := map[string]bool{}
	for _, k := range be.LoadedKernels() {
		loaded[k] = true
	}
	// The cases the tensor-core vector and decode kernels and mmvq8w take,
	// again with TERNION_NO_MMVQ8T, TERNION_NO_MMVQ8W, TERNION_NO_MMVT and
	// TERNION_NO_FATTN_TC: the products of several columns on mmvq8
	// (mmvq8_idg), mmvn or BLAS, those of one column on mmvq8, the one-query
	// attention on fattn_dec or fattn_vec, the paths of devices without
	// tensor cores or cp.async (the host device takes mmvq8t, mmvq8w, mmvt
	// and fattn_dect, as the H200 does); and with TERNION_DEQUANT_SLICE at
	// 4 KiB, the quantized products of more than 8 columns in slices of k.
	rerun(t, cases, loaded, "no-tensor-cores", 5000, tensorCoreCase, map[string]string{switches.DequantSlice.Name: "4KiB",
		switches.NoMMVQ8T.Name: "1", switches.NoMMVQ8W.Name: "1", switches.NoMMVT.Name: "1", switches.NoFattnTC.Name: "1"})
	// The one-column products of the whole-word kernels again with
	// TERNION_MMVQ8WF (and only it): src1 quantized inside mmvq8wf's and
	// mmvq8wf_id's blocks instead of by q8y.
	rerun(t, cases, loaded, "mmvq8wf", 9000, wholeWordColumnCase, map[string]string{switches.MMVQ8WF.Name: "1"})
	// The head-256 prefill cases again with TERNION_NO_FATTN90 and
	// TERNION_FATTN_MMA8: 128 queries a block on fattn_mma_w8 instead of
	// fattn90 (or fattn_mma_d256, where fattn90 does not take the case).
	rerun(t, cases, loaded, "fattn-mma8", 11000, fattnPrefill256Case, map[string]string{switches.NoFattn90.Name: "1",
		switches.FattnMMA8.Name: "1"})
	// The SOFT_MAX cases again with TERNION_NO_SOFTMAX_CLUSTER: the long
	// rows softmax_cl takes on the split.
	rerun(t, cases, loaded, "no-softmax-cluster", 17000, isSoftmaxCase, map[string]string{switches.NoSoftmaxCluster.Name: "1"})
	// The f16/bf16 products of 2..8 columns again with TERNION_NO_MMVT2:
	// one row tile a block on mmvt.
	rerun(t, cases, loaded, "no-mmvt2", 15000, mmvtCase, map[string]string{switches.NoMMVT2.Name: "1"})
	// The one-query attention cases again with TERNION_NO_FATTN_FOLD: the
	// KV chunks merged by fattn_dec_combine instead of by each tile's last
	// block.
	rerun(t, cases, loaded, "no-fattn-fold", 13000, fattnDecodeCase, map[string]string{switches.NoFattnFold.Name: "1"})
	// The gemm90 formats' products of more than 8 columns again with
	// TERNION_NO_GEMM90: dequantize + BLAS.
	rerun(t, cases, loaded, "no-gemm90", 19000, gemm90Case, map[string]string{switches.NoGemm90.Name: "1"})
	// The ARGMAX cases again with TERNION_NO_ARGMAX_PIPELINE: long rows on
	// argmaxb_f32.
	rerun(t, cases, loaded, "no-argmax-pipeline", 21000, isArgmaxCase, map[string]string{switches.NoArgmaxPipeline.Name: "1"})
	// The whole-layer cases again with TERNION_EARLY_PRODUCTS: their
	// one-column products after other kernels read their weights early
	// (mmvv) or after q8ye (mmvq8w).
	rerun(t, cases, loaded, "early-products", 23000, isLayerCase, map[string]string{switches.EarlyProducts.Name: "1"})
	// Every op kernel (the catalog's non-fixture families) ran in some case:
	// the cases reach every path of the op planners.
	for _, k := range kernels.Catalog {
		if !k.Fixture {
			assert.True(t, loaded[k.Name], "no op case launches kernel %s (family %s)", k.Name, k.Family)
		}
	}
}

// rerun checks the cases which returns true for on a host backend opened
// with env set (and only it: the switches of earlier reruns are cleared),
// as subtests named after the case and suffix (seeds from seed), and marks
// the kernels they load in loaded.
func rerun(t *testing.T, cases []Case, loaded map[string]bool, suffix string, seed uint64, which func(Case) bool, env map[string]string) {
	for _, name := range []string{switches.DequantSlice.Name, switches.NoMMVQ8T.Name, switches.NoMMVQ8W.Name, switches.NoMMVT.Name,
		switches.NoFattnTC.Name, switches.MMVQ8WF.Name, switches.NoFattn90.Name, switches.FattnMMA8.Name, switches.NoMMVT2.Name, switches.NoSoftmaxCluster.Name, switches.NoFattnFold.Name, switches.NoGemm90.Name,
		switches.NoArgmaxPipeline.Name, switches.EarlyProducts.Name} {
		t.Setenv(name, env[name])
	}
	be, err := backend.Open("host", 0, backend.Options{})
	require.NoError(t, err)
	defer be.Close()
	for i, c := range cases {
		if !which(c) || gpuSizedCase(c) {
			continue
		}
		t.Run(c.Name+"/"+suffix, func(t *testing.T) {
			r := Check(c, be, nil, seed+uint64(i))
			assert.Equal(t, Passed, r.Outcome(), "%s: %s (NMSE %g, seed %d)", c.Name, r.Reason, r.NMSE, r.Seed)
		})
	}
	for _, k := range be.LoadedKernels() {
		loaded[k] = true
	}
}

// gpuSizedCase reports whether c is one of the cases sized for a GPU's
// tiles rather than for a path (gemm90's one-wave MUL_MATs, 4000×500×768:
// 3 GFLOP each, nine of them most of the MUL_MAT cases' work on the host):
// the first run checks them on every device; the reruns under switches and
// the split test leave them out, the smaller cases of the same formats
// covering those paths.
func gpuSizedCase(c Case) bool { return c.FLOPs > 1e9 }

// tensorCoreCase reports whether c is a MUL_MAT of quantized src0 and 4 to
// 8 columns (1 to 8 of q4_0, q8_0 and q4_K; one of q5_K or q6_K) or more
// than 8, of f16 or bf16 src0 and 2 to 8 columns, a MUL_MAT_ID of
// quantized src0, or a FLASH_ATTN_EXT of one query: the cases whose
// kernels TERNION_NO_MMVQ8T, TERNION_NO_MMVQ8W, TERNION_NO_MMVT,
// TERNION_NO_FATTN_TC and TERNION_DEQUANT_SLICE change (the other cases of
// these ops run alike, so the rerun skips them).
func tensorCoreCase(c Case) bool {
	out := builtOp(c, graph.OpMulMat, graph.OpMulMatID, graph.OpFlashAttnExt)
	if out == nil {
		return false
	}
	if c.Op == graph.OpFlashAttnExt {
		return out.Src(0).Ne()[1] == 1
	}
	a, cols := out.Src(0).Type(), out.Src(1).Ne()[1]
	switch {
	case a.IsQuantized():
		wholeWords := a == tensor.Q4_0 || a == tensor.Q8_0 || a == tensor.Q4_K // mmvq8w and mmvq8wt
		return c.Op == graph.OpMulMatID || cols >= 4 || wholeWords && cols >= 1 && cols <= 8 ||
			cols == 1 && (a == tensor.Q5_K || a == tensor.Q6_K)
	case a == tensor.F16 || a == tensor.BF16:
		return c.Op == graph.OpMulMat && cols >= 2 && cols <= 8
	}
	return false
}

// builtOp builds case c and returns its output node when c is one of ops
// and the node is of c's op, else nil (a case that fails to build).
func builtOp(c Case, ops ...graph.Op) *graph.Tensor {
	if !slices.Contains(ops, c.Op) {
		return nil
	}
	out := c.Build(graph.NewContext(), rand.New(rand.NewPCG(1, 2)))
	if out == nil || out.Op() != c.Op {
		return nil
	}
	return out
}

// mmvtCase reports whether c is a MUL_MAT of f16 or bf16 src0 and 2 to 8
// columns (the cases TERNION_NO_MMVT2 changes).
func mmvtCase(c Case) bool {
	out := builtOp(c, graph.OpMulMat)
	if out == nil {
		return false
	}
	a, cols := out.Src(0).Type(), out.Src(1).Ne()[1]
	return (a == tensor.F16 || a == tensor.BF16) && cols >= 2 && cols <= 8
}

// gemm90Case reports whether c is a MUL_MAT of src0 in a gemm90 format and
// more than 8 columns (the cases TERNION_NO_GEMM90 may change).
func gemm90Case(c Case) bool {
	out := builtOp(c, graph.OpMulMat)
	if out == nil {
		return false
	}
	a := out.Src(0).Type()
	return slices.Contains(gemm90Types, a) && out.Src(1).Ne()[1] > 8
}

// isSoftmaxCase reports whether c is a SOFT_MAX (the cases
// TERNION_NO_SOFTMAX_CLUSTER may change).
func isSoftmaxCase(c Case) bool { return c.Op == graph.OpSoftMax }

// isArgmaxCase reports whether c is an ARGMAX case (those
// TERNION_NO_ARGMAX_PIPELINE changes where rows are long).
func isArgmaxCase(c Case) bool { return c.Op == graph.OpArgmax }

// fattnDecodeCase reports whether c is a FLASH_ATTN_EXT of one query (the
// cases TERNION_NO_FATTN_FOLD changes).
func fattnDecodeCase(c Case) bool {
	out := builtOp(c, graph.OpFlashAttnExt)
	return out != nil && out.Src(0).Ne()[1] == 1
}

// fattnPrefill256Case reports whether c is a FLASH_ATTN_EXT of head size
// 256 and more than 8 queries (the mma kernels' cases): the ones
// TERNION_FATTN_MMA8 changes.
func fattnPrefill256Case(c Case) bool {
	if c.Op != graph.OpFlashAttnExt || !strings.HasPrefix(c.Name, "FLASH_ATTN_EXT(hsk=256,hsv=256,") {
		return false
	}
	_, rest, _ := strings.Cut(c.Name, ",nb=")
	nb, _, _ := strings.Cut(rest, ",")
	n, err := strconv.Atoi(nb)
	return err == nil && n > 8
}

// wholeWordColumnCase reports whether c is a MUL_MAT of one column or a
// MUL_MAT_ID of one token of a format with mmvq8w kernels (q4_0, q8_0,
// q4_K, q5_K, q6_K): the cases TERNION_MMVQ8WF changes.
func wholeWordColumnCase(c Case) bool {
	out := builtOp(c, graph.OpMulMat, graph.OpMulMatID)
	if out == nil {
		return false
	}
	switch out.Src(0).Type() {
	case tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K:
		return c.Op == graph.OpMulMatID || out.Src(1).Ne()[1] == 1
	}
	return false
}

// isLayerCase reports whether c is a whole decoder layer (LAYER).
func isLayerCase(c Case) bool { return strings.HasPrefix(c.Name, "LAYER(") }

func TestNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range append(Tests(), Perfs()...) {
		if c.Name == "" || seen[c.Name] && !isPerfDup(c) {
			t.Errorf("case name %q is empty or repeated", c.Name)
		}
		seen[c.Name] = true
	}
	assert.Equal(t, "ADD(type=f32,ne=[16,10,10,10],nr=[2,1,1,1])",
		binCase(graph.OpAdd, 0, [4]int64{16, 10, 10, 10}, [4]int64{2, 1, 1, 1}, false).Name)
}

// isPerfDup reports whether c is a perf case (perf and test sets may share a name).
func isPerfDup(c Case) bool {
	for _, p := range Perfs() {
		if p.Name == c.Name {
			return true
		}
	}
	return false
}

func TestCompare(t *testing.T) {
	nmse, why := compare([]float64{1, 2, 3}, []float64{1, 2, 3})
	assert.Zero(t, nmse)
	assert.Empty(t, why)
	nmse, _ = compare([]float64{1, 2}, []float64{1, 3})
	assert.InDelta(t, 1.0/5, nmse, 1e-12)
	_, why = compare([]float64{1, nan()}, []float64{1, 1})
	assert.Contains(t, why, "NaN")
	_, why = compare([]float64{inf(1)}, []float64{inf(-1)})
	assert.Contains(t, why, "element 0")
	_, why = compare([]float64{inf(1)}, []float64{inf(1)})
	assert.Empty(t, why)
	_, why = compare([]float64{1}, []float64{1, 2})
	assert.Contains(t, why, "values")
}

func nan() float64 { var z float64; return z / z }

func inf(sign int) float64 {
	var z float64
	return float64(sign) / z
}

func TestMatchByOpAndDesc(t *testing.T) {
	cases := []Case{
		{Name: "SILU(type=f32,ne_a=[128,2,2,2],v=0)", Op: graph.OpUnary},
		{Name: "GELU(type=f32,ne_a=[128,2,2,2],v=0)", Op: graph.OpUnary},
		{Name: "ADD(type=f32,ne=[16,10,10,10],nr=[2,1,1,1])", Op: graph.OpAdd},
	}
	names := func(cs []Case) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name[:strings.Index(c.Name, "(")])
		}
		return out
	}
	for _, tc := range []struct {
		op   string
		want []string
	}{
		{"", []string{"SILU", "GELU", "ADD"}},
		{"UNARY", []string{"SILU", "GELU"}},
		{"SILU", []string{"SILU"}},
		{"ADD", []string{"ADD"}},
		{"MUL", nil},
	} {
		assert.Equal(t, tc.want, names(Match(cases, tc.op, nil)), "op %q", tc.op)
	}
	assert.Equal(t, []string{"GELU"}, names(Match(cases, "", func(n string) bool { return strings.HasPrefix(n, "G") })))
}

// TestCapturedRunsAgainstReference computes every 7th case three times on
// the host device, whose Compute captures the second run into a graph and
// replays it in the third: each run's output must pass, in-place cases
// included.
func TestCapturedRunsAgainstReference(t *testing.T) {
	be, err := backend.Open("host", 0, backend.Options{})
	require.NoError(t, err)
	defer be.Close()
	for i, c := range Tests() {
		if i%7 != 0 {
			continue
		}
		r := CheckRuns(c, be, nil, uint64(2000+i), 3)
		assert.Equal(t, Passed, r.Outcome(), "%s: %s (NMSE %g, seed %d)", c.Name, r.Reason, r.NMSE, r.Seed)
	}
	st := be.GraphStats()
	assert.Positive(t, st.Capture, "%v", st)
	assert.Positive(t, st.Replay, "%v", st)
	assert.Zero(t, st.CaptureFailures, "%v", st)
}
