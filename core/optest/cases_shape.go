package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_shape.go: REPEAT, CONCAT, PAD, UPSCALE, ARANGE and TIMESTEP_EMBEDDING.

func init() { register(shapeTests, shapePerfs) }

// shapeInput makes a leaf of type t and shape ne: integers in [-1000, 1000]
// for integer types (uniform [-1, 1] would truncate to zeros), else input's.
func shapeInput(ctx *graph.Context, r *rand.Rand, t tensor.Type, ne [4]int64) *graph.Tensor {
	if t == tensor.I32 || t == tensor.I16 {
		return inputRange(ctx, r, t, ne, -1000, 1000)
	}
	return input(ctx, r, t, ne)
}

// shapeRepeatCase is ggml's test_repeat: src of shape ne tiled nr times.
// With transposed, src is a transposed view (not a test_repeat variant).
func shapeRepeatCase(t tensor.Type, ne [4]int64, nr [4]int, transposed bool) Case {
	kv := []any{"type", t, "ne", ne, "nr", nr}
	if transposed {
		kv = append(kv, "src", "transposed")
	}
	return Case{Name: name("REPEAT", kv...), Op: graph.OpRepeat, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			var src *graph.Tensor
			if transposed {
				src = shapeInput(ctx, r, t, [4]int64{ne[1], ne[0], ne[2], ne[3]}).Transpose()
			} else {
				src = shapeInput(ctx, r, t, ne)
			}
			return src.Repeat4D(ne[0]*int64(nr[0]), ne[1]*int64(nr[1]), ne[2]*int64(nr[2]), ne[3]*int64(nr[3]))
		}}
}

// shapeConcatCase is ggml's test_concat: a of shape neA and b of neA with
// ne[dim] = neB, joined along dim; v's bits make a (1, 4) or b (2, 8) a view
// of a larger tensor (non-contiguous in the first 3 or the last 2 dims).
func shapeConcatCase(t tensor.Type, neA [4]int64, neB int64, dim, v int) Case {
	return Case{Name: name("CONCAT", "type", t, "ne_a", neA, "ne_b_d", neB, "dim", dim, "v", v), Op: graph.OpConcat,
		MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			neBs := neA
			neBs[dim] = neB
			// operand makes a tensor of shape ne, a view of one grown by
			// grow when the view bit is set.
			operand := func(ne [4]int64, view bool, grow [4]int64) *graph.Tensor {
				if !view {
					return shapeInput(ctx, r, t, ne)
				}
				big := shapeInput(ctx, r, t, [4]int64{ne[0] * grow[0], ne[1] * grow[1], ne[2] * grow[2], ne[3] * grow[3]})
				nb := big.Nb()
				return big.View(0, ne[:], nb[1:])
			}
			a := operand(neA, v&1 != 0, [4]int64{2, 4, 3, 1})
			if v&1 == 0 && v&4 != 0 {
				a = operand(neA, true, [4]int64{1, 1, 2, 4})
			}
			b := operand(neBs, v&2 != 0, [4]int64{3, 2, 4, 1})
			if v&2 == 0 && v&8 != 0 {
				b = operand(neBs, true, [4]int64{1, 1, 3, 2})
			}
			return a.Concat(b, dim)
		}}
}

// shapePadCase is ggml's test_pad (of the seed's test-backend-ops): pad0
// and pad1 zeros after dims 0 and 1.
func shapePadCase(t tensor.Type, ne [4]int64, pad0, pad1 int) Case {
	kv := []any{"type", t, "ne_a", ne, "pad_0", pad0, "pad_1", pad1}
	return Case{Name: name("PAD", kv...), Op: graph.OpPad, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return shapeInput(ctx, r, t, ne).Pad(pad0, pad1, 0, 0)
		}}
}

// shapePadExtCase is ggml's test_pad_ext (not circular): lp/rp zeros before
// and after each dim of a (tfrm 1: a view of a's first halves, 2: a permuted
// 2,1,0,3).
func shapePadExtCase(t tensor.Type, ne [4]int64, p [8]int, tfrm int) Case {
	return Case{Name: name("PAD", "type", t, "ne_a", ne, "lp0", p[0], "rp0", p[1], "lp1", p[2], "rp1", p[3],
		"lp2", p[4], "rp2", p[5], "lp3", p[6], "rp3", p[7], "tfrm", tfrm, "circular", false), Op: graph.OpPad,
		MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := shapeInput(ctx, r, t, ne)
			switch tfrm {
			case 1:
				nb := a.Nb()
				a = a.View(0, []int64{(ne[0] + 1) / 2, (ne[1] + 1) / 2, (ne[2] + 1) / 2, (ne[3] + 1) / 2}, nb[1:])
			case 2:
				a = a.Permute(2, 1, 0, 3)
			}
			return a.PadExt(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
		}}
}

// shapeArangeCase is ggml's test_arange.
func shapeArangeCase(start, stop, step float32) Case {
	return Case{Name: name("ARANGE", "type", tensor.F32, "start", start, "stop", stop, "step", step),
		Op: graph.OpArange, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, _ *rand.Rand) *graph.Tensor { return ctx.Arange(start, stop, step) }}
}

// shapeTimestepCase is ggml's test_timestep_embedding.
func shapeTimestepCase(ne [4]int64, dim, maxPeriod int) Case {
	return Case{Name: name("TIMESTEP_EMBEDDING", "type", tensor.F32, "ne_a", ne, "dim", dim, "max_period", maxPeriod),
		Op: graph.OpTimestepEmbedding, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, tensor.F32, ne).TimestepEmbedding(dim, maxPeriod)
		}}
}

// shapeUpscaleCase is ggml's test_upscale: a (transposed when set) scaled up
// by factor in dims 0 and 1.
func shapeUpscaleCase(ne [4]int64, factor int, mode graph.ScaleMode, transpose bool) Case {
	return Case{Name: name("UPSCALE", "type", tensor.F32, "ne", ne, "scale_factor", factor,
		"mode", shapeModeName(mode), "transpose", transpose), Op: graph.OpUpscale, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := input(ctx, r, tensor.F32, ne)
			if transpose {
				a = a.Transpose()
			}
			return a.Upscale(factor, mode)
		}}
}

// shapeModeName is test-backend-ops' var_to_str of a ggml_scale_mode.
func shapeModeName(m graph.ScaleMode) any {
	switch m {
	case graph.ScaleNearest:
		return "nearest"
	case graph.ScaleBilinear:
		return "bilinear"
	}
	return int32(m)
}

// shapeInterpolateCase is ggml's test_interpolate: a of shape ne resampled
// to neTgt (mode printed as a number, as test_interpolate's uint32 mode is).
func shapeInterpolateCase(ne, neTgt [4]int64, mode graph.ScaleMode) Case {
	return Case{Name: name("UPSCALE", "type", tensor.F32, "ne", ne, "ne_tgt", neTgt, "mode", int32(mode)),
		Op: graph.OpUpscale, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, tensor.F32, ne).Interpolate(neTgt[0], neTgt[1], neTgt[2], neTgt[3], mode)
		}}
}

// shapeTests are the correctness cases: test-backend-ops' own (the seed's,
// and the later pad_ext and align-corners ones), and cases that reach each
// kernel variant (16-byte units, 2-byte types, views).
func shapeTests() []Case {
	var out []Case
	for _, ne3 := range []int64{1, 3} {
		ne := [4]int64{10, 5, 4, ne3}
		for _, nr := range [][4]int{{1, 1, 1, 1}, {2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}} {
			out = append(out, shapeRepeatCase(tensor.F32, ne, nr, false))
		}
		out = append(out, shapeRepeatCase(tensor.I32, ne, [4]int{2, 1, 1, 1}, false),
			shapeRepeatCase(tensor.I16, ne, [4]int{1, 1, 1, 2}, false))
	}
	out = append(out,
		shapeRepeatCase(tensor.F32, [4]int64{10, 5, 4, 1}, [4]int{2, 2, 2, 2}, false),
		shapeRepeatCase(tensor.F32, [4]int64{16, 5, 4, 1}, [4]int{3, 2, 1, 2}, false), // 16-byte units
		shapeRepeatCase(tensor.F16, [4]int64{10, 5, 4, 1}, [4]int{2, 2, 1, 1}, false),
		shapeRepeatCase(tensor.BF16, [4]int64{24, 3, 2, 1}, [4]int{2, 1, 3, 1}, false), // 16-byte units
		shapeRepeatCase(tensor.F32, [4]int64{12, 7, 3, 1}, [4]int{2, 2, 1, 2}, true),
		shapeRepeatCase(tensor.F16, [4]int64{8, 6, 2, 1}, [4]int{3, 1, 2, 1}, true),
		// More than 64 K units of dst: the row kernels (repeat_{T}), not
		// repeatf_{T}, in 4-, 2- and 16-byte units.
		shapeRepeatCase(tensor.F32, [4]int64{10, 50, 20, 1}, [4]int{3, 2, 2, 4}, false),
		shapeRepeatCase(tensor.F16, [4]int64{10, 40, 20, 1}, [4]int{3, 2, 2, 3}, false),
		shapeRepeatCase(tensor.F32, [4]int64{16, 40, 20, 1}, [4]int{2, 2, 4, 2}, false),
		shapeRepeatCase(tensor.F32, [4]int64{12, 70, 30, 1}, [4]int{2, 2, 1, 2}, true))

	for _, v := range []int{0, 1, 2, 3, 4, 8, 12} {
		for dim := range 4 {
			out = append(out, shapeConcatCase(tensor.F32, [4]int64{11, 12, 13, 14}, 7, dim, v))
			if v < 4 {
				out = append(out, shapeConcatCase(tensor.I32, [4]int64{11, 12, 13, 14}, 7, dim, v))
			}
		}
	}
	for dim := range 4 {
		out = append(out,
			shapeConcatCase(tensor.F16, [4]int64{9, 6, 5, 3}, 4, dim, 0),
			shapeConcatCase(tensor.BF16, [4]int64{9, 6, 5, 3}, 4, dim, 3),
			shapeConcatCase(tensor.F32, [4]int64{16, 6, 5, 3}, 8, dim, 0), // 16-byte units
			shapeConcatCase(tensor.F16, [4]int64{32, 6, 5, 3}, 8, dim, 4)) // 16-byte units
	}
	// More than 64 K units of dst: the row kernels (concat_{T}), not
	// concatf_{T}, in 4-, 2- and 16-byte units.
	out = append(out,
		shapeConcatCase(tensor.F32, [4]int64{11, 40, 13, 14}, 7, 1, 3),
		shapeConcatCase(tensor.F16, [4]int64{9, 60, 50, 3}, 4, 2, 0),
		shapeConcatCase(tensor.F32, [4]int64{16, 100, 60, 3}, 8, 0, 0))

	out = append(out,
		shapePadCase(tensor.F32, [4]int64{512, 512, 1, 1}, 1, 1),
		shapePadCase(tensor.F16, [4]int64{33, 17, 2, 1}, 4, 3),
		shapePadCase(tensor.F32, [4]int64{64, 8, 3, 2}, 8, 1)) // 16-byte units
	for _, c := range []struct {
		ne   [4]int64
		p0   int
		p1   int
		kind tensor.Type
	}{
		{[4]int64{1024, 1, 1, 1}, 1, 0, tensor.F32}, {[4]int64{1024, 16, 1, 1}, 0, 1, tensor.F32},
		{[4]int64{1023, 8, 1, 1}, 1, 0, tensor.F32}, {[4]int64{1025, 8, 1, 1}, 1, 0, tensor.F32},
		{[4]int64{100, 1, 1, 1}, 100, 0, tensor.F32}, {[4]int64{100, 100, 1, 1}, 50, 50, tensor.F32},
	} {
		out = append(out, shapePadCase(c.kind, c.ne, c.p0, c.p1))
	}
	for _, tfrm := range []int{0, 1, 2} {
		out = append(out,
			shapePadExtCase(tensor.F32, [4]int64{512, 512, 1, 1}, [8]int{0, 1, 0, 1, 0, 0, 0, 0}, tfrm),
			shapePadExtCase(tensor.F32, [4]int64{11, 22, 33, 44}, [8]int{1, 2, 3, 4, 5, 6, 7, 8}, tfrm))
	}
	out = append(out,
		shapePadExtCase(tensor.F32, [4]int64{64, 20, 3, 1}, [8]int{1, 1, 1, 1, 1, 1, 1, 1}, 0),
		shapePadExtCase(tensor.F32, [4]int64{16, 5, 3, 2}, [8]int{4, 8, 2, 0, 1, 2, 0, 1}, 0),  // 16-byte units
		shapePadExtCase(tensor.BF16, [4]int64{24, 5, 3, 2}, [8]int{8, 0, 0, 2, 1, 0, 1, 1}, 0), // 16-byte units
		shapePadExtCase(tensor.I32, [4]int64{7, 5, 3, 2}, [8]int{1, 2, 0, 2, 1, 0, 1, 0}, 2))

	out = append(out,
		shapeArangeCase(0, 10, 1),
		shapeArangeCase(0, 1048576, 1),
		shapeArangeCase(-2.5, 7.3, 0.35),
		shapeTimestepCase([4]int64{2, 1, 1, 1}, 320, 10000),
		shapeTimestepCase([4]int64{12, 1, 1, 1}, 15, 10000),
		shapeTimestepCase([4]int64{300, 1, 1, 1}, 64, 100))

	for _, mode := range []graph.ScaleMode{graph.ScaleNearest, graph.ScaleBilinear} {
		out = append(out,
			shapeUpscaleCase([4]int64{40, 24, 3, 2}, 2, mode, false),
			shapeUpscaleCase([4]int64{40, 24, 3, 2}, 3, mode, true),
			shapeInterpolateCase([4]int64{2, 5, 7, 11}, [4]int64{5, 7, 11, 13}, mode),
			shapeInterpolateCase([4]int64{5, 7, 11, 13}, [4]int64{2, 5, 7, 11}, mode),
			shapeInterpolateCase([4]int64{2, 5, 7, 11}, [4]int64{5, 7, 11, 13}, mode|graph.ScaleAlignCorners),
			shapeInterpolateCase([4]int64{1, 4, 3, 2}, [4]int64{2, 8, 3, 2}, mode|graph.ScaleAlignCorners),
			shapeInterpolateCase([4]int64{4, 1, 3, 2}, [4]int64{1, 1, 3, 2}, mode|graph.ScaleAlignCorners))
	}
	return out
}

// shapePerfs are large cases of each op (test-backend-ops has no perf cases
// for them): its own large eval cases (UPSCALE 512x512, ARANGE 1M) and one
// large case of every other op.
func shapePerfs() []Case {
	out := []Case{
		shapeRepeatCase(tensor.F32, [4]int64{4096, 1024, 1, 1}, [4]int{1, 1, 8, 1}, false),
		shapeRepeatCase(tensor.F32, [4]int64{10, 5, 4, 1}, [4]int{2, 2, 2, 2}, false),
		shapeConcatCase(tensor.F32, [4]int64{4096, 4096, 2, 1}, 2, 2, 0),
		shapeConcatCase(tensor.F32, [4]int64{2048, 4096, 2, 1}, 2048, 0, 0),
		shapeConcatCase(tensor.F32, [4]int64{11, 12, 13, 14}, 7, 1, 0),
		shapePadCase(tensor.F32, [4]int64{4096, 4096, 1, 1}, 1, 1),
		shapePadCase(tensor.F32, [4]int64{512, 512, 1, 1}, 1, 1),
		shapePadExtCase(tensor.F32, [4]int64{4096, 4096, 1, 1}, [8]int{4, 4, 1, 1, 0, 0, 0, 0}, 0),
		shapeArangeCase(0, 1048576, 1),
		shapeArangeCase(0, 10, 1),
		shapeTimestepCase([4]int64{4096, 1, 1, 1}, 1280, 10000),
		shapeTimestepCase([4]int64{2, 1, 1, 1}, 320, 10000),
		shapeInterpolateCase([4]int64{2, 5, 7, 11}, [4]int64{5, 7, 11, 13}, graph.ScaleNearest),
	}
	for _, mode := range []graph.ScaleMode{graph.ScaleNearest, graph.ScaleBilinear} {
		out = append(out,
			shapeUpscaleCase([4]int64{512, 512, 3, 2}, 2, mode, false),
			shapeUpscaleCase([4]int64{512, 512, 3, 2}, 2, mode, true))
	}
	return out
}
