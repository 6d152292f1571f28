package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// ropeCase is test-backend-ops' test_rope (forward): a of type t and shape
// ne (v = 1: a view with the strides of a tensor [2,4,3,1] times larger; v
// = 2: the second half along dim 0 of a tensor twice as wide, a view at an
// offset), positions uniform in [0, nCtx), frequency factors in [0.9, 1.1]
// when ff, freq_base 10000, n_ctx_orig 0, beta_fast = beta_slow = 1; the
// multi mode gets sections n_dims/3 ×3, vision n_dims/4 ×2 with n_dims/2
// rotated dimensions, as test_rope builds them.
func ropeCase(t tensor.Type, ne [4]int64, nDims int, mode graph.RoPEMode, nCtx int, fs, ef, af float32, ff bool, v int,
	inplace bool) Case {
	return ropeYarnCase(t, ne, nDims, mode, nCtx, fs, ef, af, ff, v, inplace, 0, 1, 1)
}

// ropeYarnCase is ropeCase with YaRN's n_ctx_orig, beta_fast and beta_slow
// (test_rope has none: named with them appended when nCtxOrig > 0).
func ropeYarnCase(t tensor.Type, ne [4]int64, nDims int, mode graph.RoPEMode, nCtx int, fs, ef, af float32, ff bool,
	v int, inplace bool, nCtxOrig int, betaFast, betaSlow float32) Case {
	kv := []any{"type", t, "ne_a", ne, "n_dims", nDims, "mode", int(mode), "n_ctx", nCtx, "fs", fs, "ef", ef, "af", af,
		"ff", ff, "v", v, "inplace", inplace}
	if nCtxOrig > 0 {
		kv = append(kv, "n_ctx_orig", nCtxOrig, "beta_fast", betaFast, "beta_slow", betaSlow)
	}
	return Case{Name: name("ROPE", kv...), Op: graph.OpRope, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			// In place, the output is the input leaf's memory (placed between
			// sentinels by the harness, which writes the leaf's values there).
			in := func(ne [4]int64) *graph.Tensor { return input(ctx, r, t, ne) }
			var a *graph.Tensor
			switch v {
			case 1:
				big := in([4]int64{ne[0] * 2, ne[1] * 4, ne[2] * 3, ne[3]})
				nb := big.Nb()
				a = big.View(0, ne[:], nb[1:])
			case 2:
				big := in([4]int64{ne[0] * 2, ne[1], ne[2], ne[3]})
				nb := big.Nb()
				a = big.View(ne[0]*nb[0], ne[:], nb[1:])
			default:
				a = in(ne)
			}
			npos := graph.RoPEPositions(mode, ne[2])
			p := make([]int32, npos)
			for i := range p {
				p[i] = int32(r.IntN(nCtx))
			}
			pos := ctx.FromInts(p, npos)
			var freq *graph.Tensor
			if ff {
				freq = inputRange(ctx, r, tensor.F32, [4]int64{int64(nDims / 2), 1, 1, 1}, 0.9, 1.1)
			}
			o := func(ro *graph.RoPEOptions) {
				ro.Mode, ro.Factors, ro.OrigCtx, ro.Inplace = mode, freq, nCtxOrig, inplace
				ro.ExtFactor, ro.AttnFactor, ro.BetaFast, ro.BetaSlow = ef, af, betaFast, betaSlow
			}
			switch mode {
			case graph.RoPEVision:
				return a.RoPE(pos, nDims/2, 10000, fs, o, func(ro *graph.RoPEOptions) {
					ro.Sections = [4]int{nDims / 4, nDims / 4, 0, 0}
				})
			case graph.RoPEMulti:
				return a.RoPE(pos, nDims, 10000, fs, o, func(ro *graph.RoPEOptions) {
					ro.Sections = [4]int{nDims / 3, nDims / 3, nDims / 3, 0}
				})
			}
			return a.RoPE(pos, nDims, 10000, fs, o)
		}}
}

func init() { register(ropeTests, ropePerfs) }

// ropeTests cover every mode and type, frequency factors, YaRN, partial
// rotation, views (strided and at an offset) and in place, on small shapes
// from test-backend-ops' ROPE list.
func ropeTests() []Case {
	var out []Case
	shapes := []struct {
		ne    [4]int64
		nDims int
		mode  graph.RoPEMode
	}{
		{[4]int64{128, 4, 2, 1}, 128, graph.RoPENormal},
		{[4]int64{80, 3, 2, 1}, 20, graph.RoPENormal},
		{[4]int64{64, 1, 2, 1}, 64, graph.RoPENeoX},
		{[4]int64{80, 5, 2, 1}, 32, graph.RoPENeoX},
		{[4]int64{128, 3, 2, 1}, 128, graph.RoPEMulti},
		{[4]int64{128, 3, 2, 1}, 20, graph.RoPEMulti},
		{[4]int64{80, 4, 2, 1}, 80, graph.RoPEVision},
		{[4]int64{16, 16, 33, 1}, 16, graph.RoPENormal},
	}
	for _, t := range []tensor.Type{tensor.F32, tensor.F16} {
		for _, s := range shapes {
			for _, ff := range []bool{false, true} {
				for _, v := range []int{0, 1} {
					out = append(out, ropeCase(t, s.ne, s.nDims, s.mode, 512, 1, 0, 1, ff, v, false),
						ropeCase(t, s.ne, s.nDims, s.mode, 512, 1.4245, 0.7465, 1.4245, ff, v, false))
				}
			}
			out = append(out, ropeCase(t, s.ne, s.nDims, s.mode, 512, 1.4245, 0, 1, false, 2, false))
		}
		for _, m := range []graph.RoPEMode{graph.RoPENormal, graph.RoPENeoX, graph.RoPEMulti, graph.RoPEVision} {
			for _, ff := range []bool{false, true} {
				out = append(out,
					ropeCase(t, [4]int64{128, 6, 2, 1}, 128, m, 512, 1.4245, 0.7465, 1.4245, ff, 0, true),
					ropeCase(t, [4]int64{128, 6, 2, 1}, 128, m, 512, 1.4245, 0.7465, 1.4245, ff, 1, true),
					ropeCase(t, [4]int64{128, 6, 2, 3}, 128, m, 512, 1.4245, 0.7465, 1.4245, ff, 1, true))
			}
			// A YaRN ramp between pairs (n_ctx_orig > 0), long positions.
			out = append(out, ropeYarnCase(t, [4]int64{128, 4, 3, 1}, 128, m, 4096, 0.25, 1, 1, false, 0, false, 4096, 32, 1))
		}
	}
	return out
}

// ropePerfs are the ROPE goals and test-backend-ops' ROPE perf
// cases (forward; the imrope ones need a mode the seed does not have).
func ropePerfs() []Case {
	var out []Case
	for _, t := range []tensor.Type{tensor.F32, tensor.F16} {
		for _, ff := range []bool{false, true} {
			for _, v := range []int{0, 1} {
				out = append(out,
					ropeCase(t, [4]int64{128, 32, 512, 1}, 128, graph.RoPENormal, 512, 1, 0, 1, ff, v, false),
					ropeCase(t, [4]int64{128, 64, 512, 1}, 128, graph.RoPENormal, 512, 1, 0, 1, ff, v, false),
					ropeCase(t, [4]int64{80, 32, 512, 1}, 20, graph.RoPENeoX, 512, 1, 0, 1, ff, v, false),
					ropeCase(t, [4]int64{64, 8, 512, 1}, 64, graph.RoPENeoX, 512, 1, 0, 1, ff, v, false),
					ropeCase(t, [4]int64{128, 12, 512, 1}, 128, graph.RoPEMulti, 512, 1, 0, 1, ff, v, false),
					ropeCase(t, [4]int64{80, 16, 2, 1}, 80, graph.RoPEVision, 512, 1, 0, 1, ff, v, false))
			}
		}
	}
	return out
}
