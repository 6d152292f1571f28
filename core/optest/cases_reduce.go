package optest

import (
	"math"
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_reduce.go holds the cases of GET_ROWS, ARGMAX, COUNT_EQUAL, SUM,
// SUM_ROWS, MEAN and ARGSORT (test-backend-ops' test_get_rows, test_argmax,
// test_count_equal, test_sum, test_sum_rows, test_mean, test_argsort).

func init() { register(reduceTests, reducePerfs) }

// reduceShuffled makes an f32 leaf of shape ne whose every row holds 0 ..
// ne0-1 shuffled: distinct values, so ARGMAX and ARGSORT have one answer
// (as test-backend-ops initialises them).
func reduceShuffled(ctx *graph.Context, r *rand.Rand, ne [4]int64) *graph.Tensor {
	v := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for row := int64(0); row < int64(len(v)); row += ne[0] {
		for i, j := range r.Perm(int(ne[0])) {
			v[row+int64(i)] = float32(j)
		}
	}
	return ctx.FromFloats(v, ne[:]...)
}

// getrowsCase is test_get_rows: r row indices in [0, m) per matrix of
// src0 [n, m, be1, be2] of type t; v reads src1 through a view of its
// first r/2 indices (non-contiguous).
func getrowsCase(t tensor.Type, n, m, r, be1, be2 int64, v bool) Case {
	return Case{Name: name("GET_ROWS", "type", t, "n", n, "m", m, "r", r, "be1", be1, "be2", be2, "v", v),
		Op: graph.OpGetRows, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, rng *rand.Rand) *graph.Tensor {
			var in *graph.Tensor
			if t == tensor.I32 { // integers that survive the float comparison exactly
				vals := make([]int32, n*m*be1*be2)
				for i := range vals {
					vals[i] = rng.Int32N(2001) - 1000
				}
				in = ctx.FromInts(vals, n, m, be1, be2)
			} else {
				in = input(ctx, rng, t, [4]int64{n, m, be1, be2})
			}
			idx := make([]int32, r*be1*be2)
			for i := range idx {
				idx[i] = rng.Int32N(int32(m))
			}
			rows := ctx.FromInts(idx, r, be1, be2)
			if v {
				nb := rows.Nb()
				rows = rows.View(0, []int64{r / 2, be1, be2}, []int64{nb[1], nb[2]})
			}
			return in.GetRows(rows)
		}}
}

// reduceArgmaxCase is test_argmax.
func reduceArgmaxCase(ne [4]int64) Case {
	return Case{Name: name("ARGMAX", "type", tensor.F32, "ne", ne), Op: graph.OpArgmax, MaxNMSE: 0,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return reduceShuffled(ctx, r, ne).Argmax()
		}}
}

// reduceCountEqualCase is test_count_equal: the count of equal ARGMAX results of
// two inputs.
func reduceCountEqualCase(ne [4]int64) Case {
	return Case{Name: name("COUNT_EQUAL", "type", tensor.F32, "ne", ne), Op: graph.OpCountEqual, MaxNMSE: 0,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := reduceShuffled(ctx, r, ne).Argmax()
			b := reduceShuffled(ctx, r, ne).Argmax()
			return a.CountEqual(b)
		}}
}

// reduceSumCase is test_sum: inputs uniform in [-0.9, 1.1], permuted when perm
// is set.
func reduceSumCase(ne [4]int64, perm [4]int) Case {
	kv := []any{"type", tensor.F32, "ne", ne}
	if perm != noPerm {
		kv = append(kv, "permute", perm)
	}
	return Case{Name: name("SUM", kv...), Op: graph.OpSum, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := inputRange(ctx, r, tensor.F32, ne, -0.9, 1.1)
			if perm != noPerm {
				a = a.Permute(perm[:]...)
			}
			return a.Sum()
		}}
}

// reduceSumOffsetCase sums a packed f32 view starting one element into its
// source (not 16-byte aligned: the element-wise flat sum); test-backend-ops
// has no such case.
func reduceSumOffsetCase(ne [4]int64) Case {
	return Case{Name: name("SUM", "type", tensor.F32, "ne", ne, "offset", 1), Op: graph.OpSum, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := inputRange(ctx, r, tensor.F32, [4]int64{ne[0]*ne[1]*ne[2]*ne[3] + 1, 1, 1, 1}, -0.9, 1.1)
			return a.View(4, ne[:], []int64{4 * ne[0], 4 * ne[0] * ne[1], 4 * ne[0] * ne[1] * ne[2]}).Sum()
		}}
}

// reduceSumRowsCase is test_sum_rows: slice takes every other matrix of dim 2 and
// skips the first of dim 3; permute moves dims (0, 2, 3, 1).
func reduceSumRowsCase(ne [4]int64, permute, slice bool) Case {
	return Case{Name: name("SUM_ROWS", "type", tensor.F32, "ne", ne, "permute", permute, "slice", slice),
		Op: graph.OpSumRows, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := input(ctx, r, tensor.F32, ne)
			if slice {
				nb := a.Nb()
				a = a.View(nb[3], []int64{ne[0], ne[1], ne[2] / 2, ne[3] - 1}, []int64{nb[1], 2 * nb[2], nb[3]})
			}
			if permute {
				a = a.Permute(0, 2, 3, 1)
			}
			return a.SumRows()
		}}
}

// reduceMeanCase is test_mean: inputs uniform in [-0.9, 1.1].
func reduceMeanCase(ne [4]int64) Case {
	return Case{Name: name("MEAN", "type", tensor.F32, "ne", ne), Op: graph.OpMean, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return inputRange(ctx, r, tensor.F32, ne, -0.9, 1.1).Mean()
		}}
}

// argsortCase is test_argsort on rows of distinct values: the indices must
// match exactly (MaxNMSE 0; ggml's 1e-7 would pass two swapped indices of a
// long row).
func argsortCase(ne [4]int64, order graph.SortOrder) Case {
	return Case{Name: name("ARGSORT", "type", tensor.F32, "ne", ne, "order", int32(order)), Op: graph.OpArgsort,
		MaxNMSE: 0,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return reduceShuffled(ctx, r, ne).Argsort(order)
		}}
}

// argsortTiedCase is argsortCase on rows of integers in [-100, 100] with
// -0 for every other zero: many equal keys (ordered by index), negative keys
// and zeros of both signs (equal).
func argsortTiedCase(ne [4]int64, order graph.SortOrder) Case {
	c := argsortCase(ne, order)
	c.Build = func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
		v := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
		zeros := 0
		for i := range v {
			v[i] = float32(r.IntN(201) - 100)
			if v[i] == 0 {
				if zeros%2 == 1 {
					v[i] = float32(math.Copysign(0, -1))
				}
				zeros++
			}
		}
		return ctx.FromFloats(v, ne[:]...).Argsort(order)
	}
	return c
}

// reduceTests are test-backend-ops' eval cases of the group (GET_ROWS'
// large ones are perf cases here: too large for CI on the host; ARGSORT's
// single-row sizes stop at 2^16).
func reduceTests() []Case {
	var out []Case
	out = append(out, getrowsCase(tensor.F32, 1, 8, 2, 1, 1, false))
	for _, t := range []tensor.Type{tensor.F32, tensor.F16, tensor.BF16, tensor.I32} {
		for _, b := range []int64{1, 7} {
			for _, v := range []bool{false, true} {
				out = append(out, getrowsCase(t, 256, 5, 4, b, 1, v))
			}
		}
	}
	out = append(out, getrowsCase(tensor.F16, 3, 9, 6, 2, 3, true), getrowsCase(tensor.I32, 3, 9, 6, 2, 3, true))
	out = append(out, reduceCountEqualCase([4]int64{4, 500, 1, 1}), reduceCountEqualCase([4]int64{4, 5000, 1, 1}))
	for _, ne := range [][4]int64{{32, 1, 1, 1}, {32, 513, 1, 1}, {100, 10, 1, 1}, {1024, 10, 1, 1}, {1024, 12, 1, 1},
		{2000, 10, 1, 1}, {5438, 3, 1, 1}, {8000, 3, 1, 1}, {4100, 2, 1, 1}, {16384, 5, 1, 1}, {16388, 300, 1, 1}} {
		out = append(out, reduceArgmaxCase(ne))
	}
	out = append(out, reduceSumCase([4]int64{10, 5, 4, 3}, noPerm),
		reduceSumCase([4]int64{11, 5, 6, 3}, [4]int{0, 2, 1, 3}),
		reduceSumCase([4]int64{11, 5, 6, 3}, [4]int{0, 3, 2, 1}),
		reduceSumCase([4]int64{11, 5, 6, 3}, [4]int{0, 1, 3, 2}))
	for _, ne := range [][4]int64{{10, 5, 4, 3}, {33, 1, 1, 1}, {33, 256, 1, 1}, {32769, 1, 1, 1}, {32, 1, 1, 1},
		{32, 256, 1, 1}, {32768, 1, 1, 1}} {
		out = append(out, reduceMeanCase(ne))
	}
	out = append(out, reduceSumCase([4]int64{33, 1, 1, 1}, noPerm), reduceSumCase([4]int64{33, 1024, 1, 1}, noPerm),
		reduceSumCase([4]int64{33, 256, 1, 1}, noPerm), reduceSumCase([4]int64{33, 256, 1, 1}, [4]int{1, 0, 2, 3}),
		reduceSumOffsetCase([4]int64{33, 7, 1, 1}))
	out = append(out, reduceSumRowsCase([4]int64{10, 5, 4, 3}, false, false), reduceSumRowsCase([4]int64{4100, 3, 2, 1}, false, false))
	for _, ne := range [][4]int64{{11, 5, 6, 3}, {16, 5, 6, 3}} {
		out = append(out, reduceSumRowsCase(ne, true, false), reduceSumRowsCase(ne, false, true), reduceSumRowsCase(ne, true, true))
	}
	for _, ne := range [][4]int64{{33, 1, 1, 1}, {33, 1024, 1, 1}, {33, 256, 1, 1}} {
		out = append(out, reduceSumRowsCase(ne, false, false))
	}
	// test-backend-ops' size loop passes no order (ascending) in both of its
	// order loops: its cases appear once here.
	for i := int64(4); i <= 1<<16; i *= 2 {
		out = append(out, argsortCase([4]int64{i - 1, 1, 1, 1}, graph.SortAsc), argsortCase([4]int64{i, 1, 1, 1}, graph.SortAsc))
	}
	for _, order := range []graph.SortOrder{graph.SortAsc, graph.SortDesc} {
		for _, ne := range [][4]int64{{16, 10, 10, 10}, {60, 10, 10, 10}, {1023, 2, 1, 3}, {1024, 2, 1, 3}, {1025, 2, 1, 3},
			{1025, 256, 1, 1}, {2047, 2, 1, 3}, {2048, 2, 1, 3}, {2049, 2, 1, 3}, {2, 8, 8192, 1}, {2048, 512, 1, 1}} {
			out = append(out, argsortCase(ne, order))
		}
	}
	// Descending rows long enough to merge (test-backend-ops' long rows are
	// all ascending).
	out = append(out, argsortCase([4]int64{10000, 3, 1, 1}, graph.SortDesc))
	// Enough elements for the radix passes (core/ops argsortRadixMin): a last
	// tile of one element, descending; several tiles, ascending.
	out = append(out, argsortCase([4]int64{4097, 128, 1, 1}, graph.SortDesc), argsortTiedCase([4]int64{10000, 60, 1, 1}, graph.SortAsc))
	return out
}

// reducePerfs are the speed goals and test-backend-ops' perf cases
// of the group, with its large GET_ROWS eval cases.
func reducePerfs() []Case {
	out := []Case{
		getrowsCase(tensor.F32, 300*256, 5, 4, 1, 2, false),
		getrowsCase(tensor.F32, 256, 80000, 70000, 2, 1, false),
		getrowsCase(tensor.F32, 256, 5, 4, 700, 100, false),
		reduceArgmaxCase([4]int64{32, 10, 1, 1}),
		reduceArgmaxCase([4]int64{1024, 10, 1, 1}),
		reduceArgmaxCase([4]int64{32000, 512, 1, 1}),
		reduceMeanCase([4]int64{256, 256, 3, 1}),
	}
	for _, ne := range [][4]int64{{8192, 1, 1, 1}, {8192, 8192, 1, 1}, {128, 8192, 1, 1}} {
		out = append(out, reduceMeanCase(ne), reduceSumRowsCase(ne, false, false), reduceSumCase(ne, noPerm))
	}
	for _, ne := range [][4]int64{{65000, 16, 1, 1}, {200000, 1, 1, 1}, {200000, 16, 1, 1}} {
		out = append(out, argsortCase(ne, graph.SortAsc))
	}
	return out
}
