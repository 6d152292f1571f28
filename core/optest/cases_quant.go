package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/tensor"
)

// cases_quant.go holds the cases of the quantized types (Wave 2 · 4/7):
// MUL_MAT with quantized src0 on every path, GET_ROWS of quantized rows,
// and CPY between f32 and the quantized types, named as test-backend-ops
// names them.

// quantTypes are the quantized formats with device kernels, cpyQuantTargets
// those CPY quantizes f32 into (the seed's), and gemm90Types those gemm90
// multiplies.
var quantTypes, cpyQuantTargets, gemm90Types = ops.QuantTypes(), ops.QuantizeTargets(), ops.Gemm90Types()

// quantCpyNMSE is test-backend-ops' bound for a CPY into a quantized type:
// about one quantized value off by one step among all of them (device and
// reference quantizers may round a value on the boundary differently). The
// reference quantizes iq4_nl with the seed's one-pass CPY quantizer, so
// iq4_nl is held to q4_0's bound (test-backend-ops compares it with ggml's
// CPU quantizer and allows 0.005).
func quantCpyNMSE(t tensor.Type, ne [4]int64) float64 {
	step := 1.0 / 8
	switch t {
	case tensor.Q5_0, tensor.Q5_1:
		step /= 2
	case tensor.Q8_0:
		step /= 16
	}
	return step * step / (0.25 * float64(ne[0]*ne[1]*ne[2]*ne[3]))
}

// quantCpyCase is test_cpy into a quantized type, with its bound.
func quantCpyCase(ts, td tensor.Type, ne [4]int64, perm [4]int) Case {
	c := cpyCase(ts, td, ne, perm, noPerm)
	if td.IsQuantized() && ts != td {
		c.MaxNMSE = quantCpyNMSE(td, ne)
	}
	return c
}

// mulMatIDCase is test_mul_mat_id: nMats expert matrices [k, m] of ta,
// each of n tokens using nUsed distinct experts chosen at random; src1 has
// one row per token (bcast) or one per expert used.
func mulMatIDCase(ta, tb tensor.Type, nMats, nUsed int64, bcast bool, m, n, k int64) Case {
	nb := nUsed
	if bcast {
		nb = 1
	}
	return Case{Name: name("MUL_MAT_ID", "type_a", ta, "type_b", tb, "n_mats", nMats, "n_used", nUsed, "b", bcast,
		"m", m, "n", n, "k", k, "o", 1), Op: graph.OpMulMatID, MaxNMSE: nmseMulMat,
		FLOPs: float64(2 * m * k * nUsed * n),
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			as := input(ctx, r, ta, [4]int64{k, m, nMats, 1})
			ids := make([]int32, 0, nUsed*n)
			for range n {
				perm := r.Perm(int(nMats))
				for _, e := range perm[:nUsed] {
					ids = append(ids, int32(e))
				}
			}
			b := input(ctx, r, tb, [4]int64{k, nb, n, 1})
			return as.MulMatID(b, ctx.FromInts(ids, nUsed, n))
		}}
}

func init() { register(quantTests, quantPerfs) }

// quantTests are the correctness cases of the quantized types.
func quantTests() []Case {
	var out []Case
	id := [4]int{0, 1, 2, 3}
	for _, t := range quantTypes {
		for n := int64(1); n <= 9; n++ { // mmvq up to 8 columns, then dequantize + BLAS
			out = append(out, mulMatCase(t, tensor.F32, 16, n, 256, [2]int64{1, 1}, [2]int64{1, 1}, id))
		}
		out = append(out,
			mulMatCase(t, tensor.F32, 16, 1, 256, [2]int64{2, 3}, [2]int64{1, 2}, id),
			mulMatCase(t, tensor.F32, 16, 16, 256, [2]int64{2, 3}, [2]int64{1, 2}, id),
			mulMatCase(t, tensor.F32, 16, 4, 512, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 2, 1, 3}),
			// Rows of 6144 values are 16-byte aligned in every format, which
			// mmvq8 needs (k = 256 rows of q2_K, q3_K, q6_K, iq4_xs, mxfp4
			// are not: those take mmvq): two chunks of mmvq8's staging, the
			// second partial, and 18 rows, the last block of rows partial.
			mulMatCase(t, tensor.F32, 18, 1, 6144, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 18, 3, 6144, [2]int64{2, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 18, 8, 6144, [2]int64{1, 1}, [2]int64{1, 1}, id),
			// One row of 256 values (8 columns: one output's NMSE is its
			// relative error, large when the dot product cancels): a row
			// whose bytes end inside mmvq8's last 16-byte load.
			mulMatCase(t, tensor.F32, 1, 8, 256, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatIDCase(t, tensor.F32, 4, 2, false, 18, 1, 6144),
			mulMatIDCase(t, tensor.F32, 4, 2, false, 18, 16, 6144), // 8 pairs an expert: grouped by expert
			// Rows of 9 blocks: not 16-byte aligned but in the formats whose
			// blocks are multiples of 16 bytes, so they take mmvq.
			mulMatCase(t, tensor.F32, 16, 2, 9*t.BlockSize(), [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatIDCase(t, tensor.F32, 4, 2, false, 16, 1, 9*t.BlockSize()),
			getrowsCase(t, 256, 5, 4, 1, 1, false),
			getrowsCase(t, 256, 5, 4, 2, 3, true),
			quantCpyCase(t, tensor.F32, [4]int64{256, 4, 4, 4}, noPerm),
			quantCpyCase(t, tensor.F16, [4]int64{256, 2, 3, 4}, noPerm))
	}
	// mmvq8w (one column of q4_0, q8_0, q4_K, q5_K, q6_K): more rows than a
	// grid of one block a multiprocessor has warps on the H200 (132·16,
	// 132·8 for q8_0 and q6_K), so warps take several rows (on the host
	// device, with a block a CPU, any m past 32 does); 2 chunks of 32 groups
	// of 256 values, the second partial; 4 or 5 chunks a row, more than a
	// warp's 2 slots. q6_K's rows must be multiples of 16 bytes (k a
	// multiple of 2048). Small m·k: the host computes these in Go, under
	// -race in CI.
	for _, t := range []tensor.Type{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K} {
		k0, k1, k2 := int64(512), int64(9216), int64(25600)
		if t == tensor.Q6_K {
			k0, k1, k2 = 2048, 10240, 34816
		}
		out = append(out, mulMatCase(t, tensor.F32, 2200, 1, k0, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 40, 1, k1, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 24, 1, k2, [2]int64{1, 1}, [2]int64{1, 1}, id))
	}
	// mmvq8w_id (MUL_MAT_ID pair by pair with mmvq8w's kernel: few pairs an
	// expert, a format with mmvq8w): rows of 8 groups of 256 values, 4 a
	// unit, the last unit partial (100 rows); 9 groups, 3 rows a unit (27
	// lanes), src1 broadcast over the slots; 36 or 40 groups, one row a
	// unit in 2 chunks (q6_K's rows must be multiples of 16 bytes: k a
	// multiple of 2048 for it, else mmvq_id).
	for _, t := range []tensor.Type{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K} {
		long := int64(9216)
		if t == tensor.Q6_K {
			long = 10240
		}
		out = append(out, mulMatIDCase(t, tensor.F32, 16, 4, false, 100, 2, 2048),
			mulMatIDCase(t, tensor.F32, 16, 4, true, 33, 1, 2304),
			mulMatIDCase(t, tensor.F32, 8, 2, false, 40, 1, long))
	}
	// mmvq8wt (2..8 columns of q4_0, q8_0, q4_K; core/ops' mmvq8wtTiles
	// picks 2 tiles of 16 rows a warp where they fit, else 1): more sets of
	// 2 tiles than a grid of one block a multiprocessor has blocks on the
	// H200 (132: 4224 rows), the last set partial, 5 groups of 256 values a
	// row (3 of the 8 warps without work); a k that only 1 tile a warp fits
	// (q4_0 and q4_K 16384, q8_0 12288: 48 or 64 groups, 6 or 8 a warp,
	// more than its ring slots); a broadcast batch with 13 groups a row (the
	// warps take 1 or 2); k 19456, past what either fits (mmvq8t); rows
	// of 256 values (above: 7 of the 8 warps without work). Small m·k·n:
	// CI's host cell runs these under -race.
	for _, t := range []tensor.Type{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K} {
		oneTile := int64(16384)
		if t == tensor.Q8_0 {
			oneTile = 12288
		}
		out = append(out, mulMatCase(t, tensor.F32, 4400, 3, 1280, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 40, 8, oneTile, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 33, 2, 3328, [2]int64{2, 1}, [2]int64{1, 2}, id),
			mulMatCase(t, tensor.F32, 24, 4, 19456, [2]int64{1, 1}, [2]int64{1, 1}, id))
	}
	// gemm90 (gemm90Types by more than 8 columns, k a multiple of 256; on a
	// GPU only where its 128x128 tiles fill one wave): 32 x 4 tiles, the
	// last of each partial, 3 groups of 256 values a row (the group buffers'
	// ring wraps; the one GPU case); on the host device also two
	// tiles of rows and of columns, the second of each partial, 2 groups of
	// 256 values a row, and one tile of rows and 9 columns, 3 groups (the
	// group buffers' ring wraps).
	for _, t := range gemm90Types {
		out = append(out, mulMatCase(t, tensor.F32, 4000, 500, 768, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 200, 130, 512, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 128, 9, 768, [2]int64{1, 1}, [2]int64{1, 1}, id))
	}
	for _, t := range append([]tensor.Type{tensor.F32, tensor.F16, tensor.BF16}, quantTypes...) {
		out = append(out, mulMatIDCase(t, tensor.F32, 4, 2, false, 16, 4, 256))
	}
	for _, t := range []tensor.Type{tensor.F16, tensor.Q4_0, tensor.Q4_K, tensor.MXFP4} {
		for _, n := range []int64{1, 32} {
			out = append(out, mulMatIDCase(t, tensor.F32, 4, 2, false, 16, n, 256),
				mulMatIDCase(t, tensor.F32, 8, 3, true, 24, n, 512))
		}
	}
	for _, t := range cpyQuantTargets {
		out = append(out,
			quantCpyCase(tensor.F32, t, [4]int64{256, 4, 4, 4}, noPerm),
			quantCpyCase(tensor.F32, t, [4]int64{256, 2, 3, 4}, [4]int{0, 2, 1, 3}),
			quantCpyCase(tensor.F16, t, [4]int64{256, 2, 3, 4}, noPerm))
	}
	return out
}

// quantPerfs are the speed cases of issue 4/7 (a 14336-wide FFN down
// projection) and the quantizing and dequantizing copies.
func quantPerfs() []Case {
	var out []Case
	id := [4]int{0, 1, 2, 3}
	for _, t := range []tensor.Type{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_XS} {
		ns := []int64{1, 8, 512}
		if t == tensor.Q4_0 || t == tensor.Q4_K {
			ns = []int64{1, 2, 4, 8, 512} // where mmvq8 hands over to mmvq8t
		}
		for _, n := range ns {
			out = append(out, mulMatCase(t, tensor.F32, 4096, n, 14336, [2]int64{1, 1}, [2]int64{1, 1}, id))
		}
	}
	// The other gemm90 formats at n=512 (test-backend-ops times every type
	// there).
	for _, t := range []tensor.Type{tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL} {
		out = append(out, mulMatCase(t, tensor.F32, 4096, 512, 14336, [2]int64{1, 1}, [2]int64{1, 1}, id))
	}
	// One column of a 4096-wide input (an 8B llama's attention and gate/up
	// projections): 16 groups of 256 values a row, which mmvq8w takes 2
	// rows to a warp unit.
	for _, t := range []tensor.Type{tensor.Q4_0, tensor.Q4_K} {
		out = append(out, mulMatCase(t, tensor.F32, 4096, 1, 4096, [2]int64{1, 1}, [2]int64{1, 1}, id),
			mulMatCase(t, tensor.F32, 14336, 1, 4096, [2]int64{1, 1}, [2]int64{1, 1}, id))
	}
	out = append(out,
		mulMatIDCase(tensor.Q4_0, tensor.F32, 128, 8, false, 768, 1, 2048),
		mulMatIDCase(tensor.Q4_K, tensor.F32, 128, 8, false, 768, 1, 2048),
		mulMatIDCase(tensor.Q4_0, tensor.F32, 128, 8, false, 768, 512, 2048),
		quantCpyCase(tensor.F32, tensor.Q4_0, [4]int64{8192, 512, 2, 1}, noPerm),
		quantCpyCase(tensor.Q4_0, tensor.F32, [4]int64{8192, 512, 2, 1}, noPerm),
		getrowsCase(tensor.Q4_0, 4096, 32000, 512, 1, 1, false))
	return out
}

// addIDCase is test-backend-ops' test_add_id: a [n_embd, n_experts_used,
// n_token], b [n_embd, n_mats] and ids choosing, per token, n_experts_used
// distinct rows of b.
func addIDCase(nEmbd, nMats, nUsed, nTokens int64) Case {
	return Case{Name: name("ADD_ID", "type_a", tensor.F32, "type_b", tensor.F32, "n_embd", nEmbd, "n_experts", nMats,
		"n_experts_used", nUsed, "n_token", nTokens), Op: graph.OpAddID, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := input(ctx, r, tensor.F32, [4]int64{nEmbd, nUsed, nTokens, 1})
			b := input(ctx, r, tensor.F32, [4]int64{nEmbd, nMats, 1, 1})
			ids := make([]int32, 0, nUsed*nTokens)
			for range nTokens {
				for _, e := range r.Perm(int(nMats))[:nUsed] {
					ids = append(ids, int32(e))
				}
			}
			return a.AddID(b, ctx.FromInts(ids, nUsed, nTokens))
		}}
}

func init() {
	register(func() []Case {
		return []Case{addIDCase(16, 4, 2, 3), addIDCase(129, 8, 3, 5), addIDCase(2880, 32, 4, 1)}
	}, func() []Case { return []Case{addIDCase(2880, 128, 4, 512)} })
}
