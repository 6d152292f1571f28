package optest

import (
	"math/rand/v2"
	"strings"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_unary.go: UNARY, GLU, SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU,
// ADD1 and ACC, as test-backend-ops' test_unary, test_glu, test_glu_split,
// test_sqr ... test_leaky_relu and test_acc build them, and a few variants
// of ours (in place, unaligned views, non-contiguous sources) that reach
// every kernel path.

func init() { register(unaryTests, unaryPerfs) }

// unaryTypes are the types test-backend-ops runs the element-wise ops on.
var unaryTypes = []tensor.Type{tensor.F16, tensor.F32}

// unaryView returns a leaf of shape ne, or with v = 1 a view of shape ne
// into a leaf mul times as large in each dimension (test_unary's
// non-contiguous a), with values uniform in [lo, hi].
func unaryView(ctx *graph.Context, r *rand.Rand, t tensor.Type, ne [4]int64, v int, mul [4]int64, lo, hi float32) *graph.Tensor {
	if v&1 == 0 {
		return inputRange(ctx, r, t, ne, lo, hi)
	}
	big := [4]int64{ne[0] * mul[0], ne[1] * mul[1], ne[2] * mul[2], ne[3] * mul[3]}
	a := inputRange(ctx, r, t, big, lo, hi)
	nb := a.Nb()
	return a.View(0, ne[:], nb[1:])
}

// unaryCase is test_unary: op u of a (ne_a, v = 1: a non-contiguous view),
// values in [-150, 150] ([-10, 10] for f16 EXP and EXPM1). inplace and
// offset (elements the view of a starts late, so it is not 16-byte
// aligned) are ours.
func unaryCase(u graph.UnaryOp, t tensor.Type, ne [4]int64, v int, inplace bool, offset int64) Case {
	kv := []any{"type", t, "ne_a", ne, "v", v}
	if inplace {
		kv = append(kv, "inplace", 1)
	}
	if offset != 0 {
		kv = append(kv, "offset", offset)
	}
	lo, hi := float32(-150), float32(150)
	if t == tensor.F16 && (u == graph.UnaryExp || u == graph.UnaryExpm1) {
		lo, hi = -10, 10
	}
	return Case{Name: name(u.String(), kv...), Op: graph.OpUnary, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			var a *graph.Tensor
			if offset != 0 {
				whole := inputRange(ctx, r, t, [4]int64{ne[0]*ne[1]*ne[2]*ne[3] + offset, 1, 1, 1}, lo, hi)
				a = whole.View(offset*t.BlockBytes(), ne[:], []int64{ne[0] * t.BlockBytes(), ne[0] * ne[1] * t.BlockBytes(),
					ne[0] * ne[1] * ne[2] * t.BlockBytes()})
			} else {
				a = unaryView(ctx, r, t, ne, v, [4]int64{3, 2, 5, 4}, lo, hi)
			}
			if inplace {
				return a.UnaryInplace(u)
			}
			return a.Unary(u)
		}}
}

// gluCase is test_glu (b == false: a split in halves, swapped) and
// test_glu_split (b: two operands), values in [-150, 150]; v = 1 views a
// (and b) in a tensor three times as wide.
func gluCase(op graph.GLUOp, t tensor.Type, ne [4]int64, v int, swapped, split bool) Case {
	n := name(op.String(), "type", t, "ne_a", ne, "v", v, "swapped", swapped)
	if split {
		n = strings.TrimSuffix(name(op.String(), "type", t, "ne_a", ne, "v", v), ")") + ",split)"
	}
	return Case{Name: n, Op: graph.OpGLU, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			mul := [4]int64{3, 1, 1, 1}
			a := unaryView(ctx, r, t, ne, v, mul, -150, 150)
			if split {
				return a.GLUSplit(unaryView(ctx, r, t, ne, v, mul, -150, 150), op)
			}
			return a.GLU(op, swapped)
		}}
}

// unaryElementCase is test_sqr, test_sqrt, test_log, test_sin, test_cos,
// test_clamp (in place, as ggml_clamp is) and test_leaky_relu (in place,
// as test_leaky_relu builds it). v = 1 (ours) takes a non-contiguous view.
func unaryElementCase(op graph.Op, t tensor.Type, ne [4]int64, v int) Case {
	lo, hi := float32(-1), float32(1)
	kv := []any{"type", t, "ne", ne}
	const clampLo, clampHi, slope = float32(-0.5), float32(0.5), float32(0.1)
	switch op {
	case graph.OpSqrt:
		lo, hi = 50, 100
	case graph.OpLog:
		lo, hi = 0.9, 1.1
	case graph.OpSin, graph.OpCos:
		lo, hi = -6.5, 6.5
	case graph.OpClamp:
		kv = append(kv, "min", clampLo, "max", clampHi)
	case graph.OpLeakyRelu:
		kv = []any{"type", t, "ne_a", ne, "negative_slope", slope}
	}
	if v != 0 {
		kv = append(kv, "v", v)
	}
	return Case{Name: name(op.String(), kv...), Op: op, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := unaryView(ctx, r, t, ne, v, [4]int64{2, 1, 3, 1}, lo, hi)
			switch op {
			case graph.OpSqr:
				return a.Sqr()
			case graph.OpSqrt:
				return a.Sqrt()
			case graph.OpLog:
				return a.Log()
			case graph.OpSin:
				return a.Sin()
			case graph.OpCos:
				return a.Cos()
			case graph.OpClamp:
				return a.Clamp(clampLo, clampHi)
			}
			return a.LeakyReluInplace(slope)
		}}
}

// add1Case adds a scalar to a of type t (ours: test-backend-ops has no ADD1 case).
func add1Case(t tensor.Type, ne [4]int64, inplace bool) Case {
	kv := []any{"type", t, "ne", ne}
	if inplace {
		kv = append(kv, "inplace", 1)
	}
	return Case{Name: name("ADD1", kv...), Op: graph.OpAdd1, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a, b := input(ctx, r, t, ne), input(ctx, r, t, [4]int64{1, 1, 1, 1})
			if inplace {
				return a.Add1Inplace(b)
			}
			return a.Add1(b)
		}}
}

// accCase is test_acc: b added into a's view of b's shape with a's strides;
// stride_dim 1..3 makes b a view (at an offset) into a tensor one larger in
// that dimension. inplace and offset (in rows of a) are ours.
func accCase(neA, neB [4]int64, strideDim int, inplace bool, offRows int64) Case {
	kv := []any{"type", tensor.F32, "ne_a", neA, "ne_b", neB, "stride_dim", strideDim}
	if inplace {
		kv = append(kv, "inplace", 1)
	}
	if offRows != 0 {
		kv = append(kv, "offset_rows", offRows)
	}
	return Case{Name: name("ACC", kv...), Op: graph.OpAcc, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := input(ctx, r, tensor.F32, neA)
			var b *graph.Tensor
			if strideDim >= 1 && strideDim <= 3 {
				pad := neB
				pad[strideDim]++
				bp := input(ctx, r, tensor.F32, pad)
				nb := bp.Nb()
				b = bp.View(nb[1], neB[:], nb[1:])
			} else {
				b = input(ctx, r, tensor.F32, neB)
			}
			nb := a.Nb()
			if inplace {
				return a.AccInplace(b, nb[1], nb[2], nb[3], offRows*nb[1])
			}
			return a.Acc(b, nb[1], nb[2], nb[3], offRows*nb[1])
		}}
}

// accStridesCase adds b (of shape neB) into the view of a with strides nb
// (bytes; nb[0] is 4) at offset 0: views whose strides do not nest take ACC's
// copy-then-add path instead of acc_f32.
func accStridesCase(neA, neB, nb [4]int64) Case {
	return Case{Name: name("ACC", "type", tensor.F32, "ne_a", neA, "ne_b", neB, "nb", nb), Op: graph.OpAcc, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, tensor.F32, neA).Acc(input(ctx, r, tensor.F32, neB), nb[1], nb[2], nb[3], 0)
		}}
}

// unaryTests are the correctness cases of cases_unary.go's ops.
func unaryTests() []Case {
	var out []Case
	shapes := [][4]int64{{128, 2, 2, 2}, {5, 7, 11, 13}}
	for _, t := range unaryTypes {
		for _, v := range []int{0, 1} {
			for _, u := range graph.UnaryOps() {
				if u == graph.UnaryXIELU {
					continue // takes parameters: not built
				}
				for _, ne := range shapes {
					out = append(out, unaryCase(u, t, ne, v, false, 0))
				}
			}
		}
		for _, u := range []graph.UnaryOp{graph.UnarySILU, graph.UnaryGELU, graph.UnaryExp} {
			out = append(out, unaryCase(u, t, shapes[0], 0, true, 0), unaryCase(u, t, shapes[1], 1, true, 0),
				unaryCase(u, t, shapes[0], 0, false, 1))
		}
	}
	for _, t := range unaryTypes {
		for _, v := range []int{0, 1} {
			for _, op := range []graph.GLUOp{graph.GLUReGLU, graph.GLUGeGLU, graph.GLUSwiGLU, graph.GLUGeGLUErf, graph.GLUGeGLUQuick} {
				for _, swapped := range []bool{false, true} {
					for _, ne := range shapes {
						out = append(out, gluCase(op, t, ne, v, swapped, false))
					}
				}
				for _, ne := range shapes {
					out = append(out, gluCase(op, t, ne, v, false, true))
				}
			}
		}
	}
	for _, t := range unaryTypes {
		for _, op := range unaryElementOpsTested {
			def := [4]int64{10, 5, 4, 3}
			switch op {
			case graph.OpSqrt:
				def = [4]int64{10, 3, 3, 2}
			case graph.OpSin, graph.OpCos:
				def = [4]int64{10, 2, 2, 2}
			}
			out = append(out, unaryElementCase(op, t, def, 0), unaryElementCase(op, t, [4]int64{7, 1, 5, 3}, 0),
				unaryElementCase(op, t, [4]int64{1024, 1024, 1, 1}, 0), unaryElementCase(op, t, def, 1))
		}
		out = append(out, add1Case(t, [4]int64{10, 5, 4, 3}, false), add1Case(t, [4]int64{10, 5, 4, 3}, true))
	}
	out = append(out,
		accCase([4]int64{256, 17, 1, 1}, [4]int64{256, 16, 1, 1}, -1, false, 0),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{256, 16, 2, 3}, -1, false, 0),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{128, 16, 2, 3}, -1, false, 0),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{256, 16, 2, 3}, 1, false, 0),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{128, 16, 2, 3}, 2, false, 0),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{64, 16, 2, 3}, 3, false, 0),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{64, 16, 2, 3}, -1, true, 1),
		// Dims 1 and 2 of the view swapped (rows 32 bytes apart, matrices 8):
		// not nested, so copied then added.
		accStridesCase([4]int64{32, 4, 1, 1}, [4]int64{2, 3, 4, 1}, [4]int64{4, 32, 8, 512}))
	return out
}

// unaryElementOpsTested are the ops unaryElementCase builds.
var unaryElementOpsTested = []graph.Op{graph.OpSqr, graph.OpSqrt, graph.OpLog, graph.OpSin, graph.OpCos, graph.OpClamp,
	graph.OpLeakyRelu}

// unaryPerfs are test-backend-ops' SWIGLU perf cases and the issue's: the
// unary ops on [4096, 4096] f32 (bandwidth) and on test_unary's default
// [128, 2, 2, 2] (launch floor); then the other ops at the largest shapes
// of their test-backend-ops cases (ADD1, which it has none of, as ADD's
// [4096, 4096] perf case).
func unaryPerfs() []Case {
	var out []Case
	for _, t := range unaryTypes {
		for _, n := range []int64{512, 2048} {
			out = append(out, gluCase(graph.GLUSwiGLU, t, [4]int64{2 * 17408, n, 1, 1}, 0, false, false),
				gluCase(graph.GLUSwiGLU, t, [4]int64{17408, n, 1, 1}, 0, false, true))
		}
	}
	big, tiny := [4]int64{4096, 4096, 1, 1}, [4]int64{128, 2, 2, 2}
	for _, u := range []graph.UnaryOp{graph.UnarySILU, graph.UnaryGELU, graph.UnaryGELUErf, graph.UnaryRELU,
		graph.UnaryTanh, graph.UnarySigmoid, graph.UnaryExp, graph.UnaryNeg} {
		out = append(out, unaryCase(u, tensor.F32, big, 0, false, 0))
	}
	out = append(out, unaryCase(graph.UnarySILU, tensor.F16, big, 0, false, 0),
		unaryCase(graph.UnaryGELU, tensor.F16, big, 0, false, 0),
		unaryCase(graph.UnarySILU, tensor.F32, tiny, 0, false, 0),
		unaryCase(graph.UnaryGELU, tensor.F32, tiny, 0, false, 0),
		gluCase(graph.GLUSwiGLU, tensor.F32, tiny, 0, false, false))
	for _, op := range unaryElementOpsTested {
		out = append(out, unaryElementCase(op, tensor.F32, [4]int64{1024, 1024, 1, 1}, 0))
	}
	return append(out, add1Case(tensor.F32, [4]int64{4096, 4096, 1, 1}, false),
		accCase([4]int64{256, 17, 2, 3}, [4]int64{256, 16, 2, 3}, -1, false, 0))
}
