package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_softmax.go holds the cases of SOFT_MAX and DIAG_MASK_INF
// (test-backend-ops' test_soft_max and test_diag_mask_inf).

func init() { register(softmaxTests, softmaxPerfs) }

// softmaxNMSE is test_soft_max's max_nmse_err.
const softmaxNMSE = 1e-6

// softmaxCase is test_soft_max: a f32 [ne0, ne1, ne2*nr23[0], ne3*nr23[1]],
// the mask (when mask) of type mPrec and shape ne, the sinks (when sinks)
// one f32 per head, all uniform in [-1, 1].
func softmaxCase(ne [4]int64, mask, sinks bool, mPrec tensor.Type, nr23 [2]int64, scale, maxBias float32, inplace bool) Case {
	return Case{Name: name("SOFT_MAX", "type", tensor.F32, "ne", ne, "mask", mask, "sinks", sinks, "m_prec", mPrec,
		"nr23", nr23, "scale", scale, "max_bias", maxBias, "inplace", inplace),
		Op: graph.OpSoftMax, MaxNMSE: softmaxNMSE,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := input(ctx, r, tensor.F32, [4]int64{ne[0], ne[1], ne[2] * nr23[0], ne[3] * nr23[1]})
			var m, s *graph.Tensor
			if mask {
				m = input(ctx, r, mPrec, ne)
			}
			if sinks {
				s = input(ctx, r, tensor.F32, [4]int64{ne[2] * nr23[0], 1, 1, 1})
			}
			if inplace {
				return a.SoftmaxExtInplace(m, s, scale, maxBias)
			}
			return a.SoftmaxExt(m, s, scale, maxBias)
		}}
}

// softmaxDiagCase is test_diag_mask_inf.
func softmaxDiagCase(ne [4]int64, nPast int) Case {
	return Case{Name: name("DIAG_MASK_INF", "type", tensor.F32, "ne", ne, "n_past", nPast),
		Op: graph.OpDiagMaskInf, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, tensor.F32, ne).DiagMaskInf(nPast)
		}}
}

// softmaxTests are test-backend-ops' SOFT_MAX and DIAG_MASK_INF cases, with
// ne1 kept to 16 and without its 2M-element ones, and rows of every length
// class the planner tells apart (every mask type, vector width and
// registers a thread; split rows, vectorised and not).
func softmaxTests() []Case {
	out := []Case{
		softmaxDiagCase([4]int64{10, 10, 1, 1}, 5),
		softmaxDiagCase([4]int64{10, 10, 3, 1}, 5),
		softmaxDiagCase([4]int64{10, 10, 3, 2}, 5),
		softmaxDiagCase([4]int64{33, 7, 2, 1}, 0),
	}
	f32, f16 := tensor.F32, tensor.F16
	for _, mask := range []bool{false, true} {
		for _, sinks := range []bool{false, true} {
			for _, maxBias := range []float32{0, 8} {
				if !mask && maxBias > 0 {
					continue
				}
				for _, scale := range []float32{1, 0.1} {
					for _, ne0 := range []int64{16, 1024} {
						const ne1 = 16
						if !mask {
							out = append(out, softmaxCase([4]int64{ne0, ne1, 1, 1}, false, sinks, f32, [2]int64{1, 1}, scale, maxBias, false),
								softmaxCase([4]int64{ne0 - 1, ne1 - 1, 1, 1}, false, sinks, f32, [2]int64{1, 1}, scale, maxBias, false))
							continue
						}
						for _, mp := range []tensor.Type{f32, f16} {
							out = append(out, softmaxCase([4]int64{ne0, ne1, 1, 1}, true, sinks, mp, [2]int64{1, 1}, scale, maxBias, false),
								softmaxCase([4]int64{ne0 - 1, ne1 - 1, 1, 1}, true, sinks, mp, [2]int64{1, 1}, scale, maxBias, false))
							if ne0 <= 32 {
								out = append(out, softmaxCase([4]int64{ne0, ne1, 1, 3}, true, sinks, mp, [2]int64{3, 1}, scale, maxBias, false),
									softmaxCase([4]int64{ne0 - 1, ne1 - 1, 1, 1}, true, sinks, mp, [2]int64{2, 3}, scale, maxBias, false))
							}
						}
					}
				}
			}
			out = append(out, softmaxCase([4]int64{16, 2, 32, 1}, mask, sinks, f32, [2]int64{1, 1}, 0.1, 0, true),
				softmaxCase([4]int64{16, 2, 32, 1}, mask, sinks, f16, [2]int64{1, 1}, 0.1, 0, true))
		}
	}
	out = append(out,
		softmaxCase([4]int64{16, 2, 32, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 0, false),
		softmaxCase([4]int64{16, 2, 32, 1}, true, false, f16, [2]int64{1, 1}, 0.1, 0, false),
		softmaxCase([4]int64{16, 2, 32, 1}, false, true, f32, [2]int64{1, 1}, 0.1, 0, false),
		softmaxCase([4]int64{32, 2, 32, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 0, false),
		softmaxCase([4]int64{32, 2, 32, 1}, true, false, f16, [2]int64{1, 1}, 0.1, 0, false),
		softmaxCase([4]int64{32, 2, 32, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 8, false),
		softmaxCase([4]int64{32, 2, 32, 1}, true, true, f16, [2]int64{1, 1}, 0.1, 8, false),
		softmaxCase([4]int64{200001, 2, 3, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 8, false),
		softmaxCase([4]int64{200001, 2, 3, 1}, true, true, f16, [2]int64{1, 1}, 0.1, 8, false),
	)
	// Row lengths for 1, 2, 4 and 8 registers a thread (vectors of 1 and 4),
	// for wide streamed rows of 1 and 2 (2048, 4096), for long rows too few to split (4099, 5000: under 32 Ki
	// elements in all) and for split rows (over 4096 elements, a few rows, over 32 Ki elements; with
	// the cluster kernel's 2, 4 and 8 vectors a thread; 131072 split either way), each with every mask type; a
	// long split row in place.
	for _, ne0 := range []int64{63, 127, 200, 201, 400, 401, 2048, 4096, 4099, 5000, 12289, 16384, 32768, 65536, 131072} {
		out = append(out, softmaxCase([4]int64{ne0, 3, 1, 1}, false, false, f32, [2]int64{1, 1}, 1, 0, false),
			softmaxCase([4]int64{ne0, 3, 2, 1}, true, true, f32, [2]int64{1, 1}, 0.1, 8, false),
			softmaxCase([4]int64{ne0, 3, 1, 1}, true, false, f16, [2]int64{2, 1}, 1, 0, false))
	}
	out = append(out, softmaxCase([4]int64{9000, 2, 1, 1}, false, true, f32, [2]int64{1, 1}, 1, 0, true),
		// 4 rows of 65536 without a mask: the cluster kernel's 8 vectors a thread.
		softmaxCase([4]int64{65536, 4, 1, 1}, false, false, f32, [2]int64{1, 1}, 1, 0, false),
		// Wide rows (softmax_wide), 600 of them, with a mask broadcast
		// over heads, ALiBi and sinks.
		softmaxCase([4]int64{2048, 100, 3, 1}, true, true, f32, [2]int64{2, 1}, 0.1, 8, false))
	return out
}

// softmaxPerfs are test-backend-ops' SOFT_MAX perf cases, which hold the
// issue's goals ([4096,4096,5,1] and [131072,16,1,1]).
func softmaxPerfs() []Case {
	one := [2]int64{1, 1}
	var out []Case
	for _, ne := range [][4]int64{{4096, 4096, 5, 1}, {12888, 256, 5, 1}, {77, 4096, 5, 1}, {1024, 1024, 10, 1},
		{77, 1024, 10, 1}, {256, 256, 20, 1}, {64, 64, 20, 1}, {77, 64, 20, 1}} {
		out = append(out, softmaxCase(ne, false, false, tensor.F32, one, 1, 0, false))
	}
	for _, col := range []int64{8192, 16384, 32768, 65536, 131072, 262144, 524288} {
		for _, rows := range []int64{1, 4, 16} {
			out = append(out, softmaxCase([4]int64{col, rows, 1, 1}, false, false, tensor.F32, one, 1, 0, false))
		}
	}
	return out
}
