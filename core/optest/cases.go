package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// binCase is ggml's test_bin_bcast: src0 = ne·nr of type t, src1 = ne.
// With transposed, src0 is a transposed view (a non-contiguous src0).
func binCase(op graph.Op, t tensor.Type, ne, nr [4]int64, transposed bool) Case {
	return binCaseMixed(op, t, t, ne, nr, transposed)
}

// binCaseMixed is binCase with src1 of type t1 (named when it differs).
func binCaseMixed(op graph.Op, t, t1 tensor.Type, ne, nr [4]int64, transposed bool) Case {
	kv := []any{"type", t}
	if t1 != t {
		kv = append(kv, "type_src1", t1)
	}
	kv = append(kv, "ne", ne, "nr", nr)
	if transposed {
		kv = append(kv, "src0", "transposed")
	}
	return Case{Name: name(op.String(), kv...), Op: op, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			big := [4]int64{ne[0] * nr[0], ne[1] * nr[1], ne[2] * nr[2], ne[3] * nr[3]}
			var a *graph.Tensor
			if transposed {
				a = input(ctx, r, t, [4]int64{big[1], big[0], big[2], big[3]}).Transpose()
			} else {
				a = input(ctx, r, t, big)
			}
			b := input(ctx, r, t1, ne)
			if op == graph.OpDiv { // dividing by values near zero is ill-conditioned
				b = inputRange(ctx, r, t1, ne, 0.5, 2)
			}
			switch op {
			case graph.OpAdd:
				return a.Add(b)
			case graph.OpSub:
				return a.Sub(b)
			case graph.OpMul:
				return a.Mul(b)
			}
			return a.Div(b)
		}}
}

// scaleCase is ggml's test_scale.
func scaleCase(ne [4]int64, s, b float32) Case {
	return Case{Name: name("SCALE", "type", tensor.F32, "ne", ne, "scale", s, "bias", b), Op: graph.OpScale,
		MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, tensor.F32, ne).ScaleBias(s, b)
		}}
}

// cpyCase is ggml's test_cpy: src of ts (shape ne, then permuted by
// permSrc), copied into a new dst of td with src's shape (permuted by
// permDst when set).
func cpyCase(ts, td tensor.Type, ne [4]int64, permSrc, permDst [4]int) Case {
	max := nmseDefault
	if ts == td {
		max = 0
	}
	return Case{Name: name("CPY", "type_src", ts, "type_dst", td, "ne", ne, "permute_src", permSrc,
		"permute_dst", permDst, "_src_transpose", false), Op: graph.OpCpy, MaxNMSE: max,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			src := input(ctx, r, ts, ne)
			if permSrc != [4]int{} {
				src = src.Permute(permSrc[:]...)
			}
			ne := src.Ne()
			dst := ctx.Empty(td, ne[:]...)
			var d *graph.Tensor = dst
			if permDst != [4]int{} {
				d = dst.Permute(permDst[:]...)
			}
			return src.Cpy(d)
		}}
}

// cpyReshapeCase copies src (shape ne, permuted by perm) into a new dst of
// another shape with as many elements (test_cpy has no such case; ggml's
// CPY allows it).
func cpyReshapeCase(ts, td tensor.Type, ne [4]int64, perm [4]int, neDst [4]int64) Case {
	max := nmseDefault
	if ts == td {
		max = 0
	}
	return Case{Name: name("CPY", "type_src", ts, "type_dst", td, "ne", ne, "permute_src", perm, "ne_dst", neDst),
		Op: graph.OpCpy, MaxNMSE: max,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, ts, ne).Permute(perm[:]...).Cpy(ctx.Empty(td, neDst[:]...))
		}}
}

// cpyViewCase copies rows of ne[0] values taken from a src of ne[0]+2
// values a row, starting at its element 1: packed rows that do not start on
// a 4-element boundary (the one-element-at-a-time branch of cvt_rows).
func cpyViewCase(ts, td tensor.Type, ne [4]int64) Case {
	max := nmseDefault
	if ts == td {
		max = 0
	}
	return Case{Name: name("CPY", "type_src", ts, "type_dst", td, "ne", ne, "view_offset", 1), Op: graph.OpCpy, MaxNMSE: max,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			base := input(ctx, r, ts, [4]int64{ne[0] + 2, ne[1], ne[2], ne[3]})
			nb := base.Nb()
			src := base.View(nb[0], ne[:], nb[1:])
			return src.Cpy(ctx.Empty(td, ne[:]...))
		}}
}

// contCase copies a permuted (or transposed) tensor into a contiguous one
// (ggml's test_cont transposes; perm names any permutation).
func contCase(t tensor.Type, ne [4]int64, perm [4]int) Case {
	return Case{Name: name("CONT", "type", t, "ne", ne, "permute", perm), Op: graph.OpCont, MaxNMSE: 0,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, t, ne).Permute(perm[:]...).Cont()
		}}
}

// dupCase is ggml's test_dup.
func dupCase(t tensor.Type, ne [4]int64, perm [4]int) Case {
	return Case{Name: name("DUP", "type", t, "ne", ne, "permute", perm), Op: graph.OpDup, MaxNMSE: 0,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			src := input(ctx, r, t, ne)
			if perm != [4]int{} {
				src = src.Permute(perm[:]...)
			}
			return src.Dup()
		}}
}

// mulMatCase is ggml's test_mul_mat: a = [k, m, bs0, bs1] of ta, b = [k, n,
// bs0·nr0, bs1·nr1] of tb, both laid out by per and permuted back to that
// shape (a non-contiguous operand when per is not the identity), out = a·b.
func mulMatCase(ta, tb tensor.Type, m, n, k int64, bs, nr [2]int64, per [4]int) Case {
	return Case{Name: name("MUL_MAT", "type_a", ta, "type_b", tb, "m", m, "n", n, "k", k, "bs", bs, "nr", nr,
		"per", per, "v", 0, "o", 1), Op: graph.OpMulMat, MaxNMSE: nmseMulMat,
		FLOPs: float64(2 * m * n * k * bs[0] * nr[0] * bs[1] * nr[1]),
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			aShape := [4]int64{k, m, bs[0], bs[1]}
			bShape := [4]int64{k, n, bs[0] * nr[0], bs[1] * nr[1]}
			if per == [4]int{0, 1, 2, 3} {
				return input(ctx, r, ta, aShape).MulMat(input(ctx, r, tb, bShape))
			}
			// Store in the permuted order, then permute back to the shape.
			inv := [4]int{}
			for i, p := range per {
				inv[p] = i
			}
			permuted := func(t tensor.Type, ne [4]int64) *graph.Tensor {
				var store [4]int64
				for i := range 4 {
					store[per[i]] = ne[i]
				}
				return input(ctx, r, t, store).Permute(inv[:]...)
			}
			return permuted(ta, aShape).MulMat(permuted(tb, bShape))
		}}
}

var (
	floatTypes = []tensor.Type{tensor.F32, tensor.F16, tensor.BF16}
	noPerm     = [4]int{}
)

func init() { register(firstTests, firstPerfs) }

// firstTests are Wave 2 · 2/7's correctness cases: binary ops, SCALE,
// copies, MUL_MAT.
func firstTests() []Case {
	var out []Case
	for _, op := range []graph.Op{graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv} {
		for _, t := range floatTypes {
			for _, c := range []struct{ ne, nr [4]int64 }{
				{[4]int64{1, 1, 8, 1}, [4]int64{1, 1, 1, 1}},
				{[4]int64{1, 1, 1, 1}, [4]int64{32, 1, 1, 1}},
				{[4]int64{1, 1, 320, 320}, [4]int64{1, 1, 1, 1}},
				{[4]int64{16, 10, 1, 1}, [4]int64{1, 1, 1, 1}},
				{[4]int64{16, 10, 10, 1}, [4]int64{1, 1, 1, 1}},
				{[4]int64{16, 10, 10, 10}, [4]int64{1, 1, 1, 1}},
				{[4]int64{16, 10, 10, 10}, [4]int64{2, 1, 1, 1}},
				{[4]int64{16, 10, 10, 10}, [4]int64{1, 2, 1, 1}},
				{[4]int64{16, 10, 10, 10}, [4]int64{1, 1, 2, 1}},
				{[4]int64{16, 10, 10, 10}, [4]int64{1, 1, 1, 2}},
				{[4]int64{16, 10, 10, 10}, [4]int64{1, 1, 2, 2}},
				{[4]int64{16, 10, 10, 10}, [4]int64{1, 2, 2, 2}},
				{[4]int64{16, 10, 10, 10}, [4]int64{2, 2, 2, 2}},
				{[4]int64{1280, 1, 1, 1}, [4]int64{1, 1, 1, 1}},
				{[4]int64{1280, 1, 1, 1}, [4]int64{1, 16, 16, 1}},
				{[4]int64{16, 16, 1280, 1}, [4]int64{1, 1, 1, 1}},
			} {
				out = append(out, binCase(op, t, c.ne, c.nr, false))
			}
			out = append(out, binCase(op, t, [4]int64{16, 10, 3, 1}, [4]int64{1, 2, 1, 1}, true))
		}
	}
	// src1 of another type than src0.
	for _, op := range []graph.Op{graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv} {
		for _, t0 := range floatTypes {
			for _, t1 := range floatTypes {
				if t0 != t1 {
					out = append(out, binCaseMixed(op, t0, t1, [4]int64{16, 10, 10, 10}, [4]int64{2, 1, 1, 1}, false))
				}
			}
		}
	}
	out = append(out,
		scaleCase([4]int64{10, 10, 10, 10}, 2, 0),
		scaleCase([4]int64{10, 10, 10, 10}, -0.25, 1.5),
		scaleCase([4]int64{100, 10, 10, 10}, 1.5, -0.75))
	for _, ts := range floatTypes {
		for _, td := range floatTypes {
			out = append(out,
				cpyCase(ts, td, [4]int64{256, 4, 4, 4}, noPerm, noPerm),
				cpyCase(ts, td, [4]int64{256, 2, 3, 4}, [4]int{0, 2, 1, 3}, noPerm),
				cpyCase(ts, td, [4]int64{256, 2, 3, 4}, noPerm, [4]int{0, 2, 1, 3}),
				cpyCase(ts, td, [4]int64{48, 37, 5, 3}, [4]int{2, 1, 0, 3}, noPerm),
				cpyCase(ts, td, [4]int64{33, 7, 19, 2}, [4]int{1, 2, 0, 3}, noPerm),
				cpyReshapeCase(ts, td, [4]int64{36, 5, 4, 2}, [4]int{0, 2, 1, 3}, [4]int64{12, 30, 2, 2}),
				cpyCase(ts, td, [4]int64{30, 5, 3, 1}, noPerm, noPerm),
				cpyViewCase(ts, td, [4]int64{64, 6, 2, 1}))
		}
		out = append(out,
			contCase(ts, [4]int64{10, 10, 10, 1}, [4]int{1, 0, 2, 3}),
			contCase(ts, [4]int64{48, 40, 33, 1}, [4]int{2, 1, 0, 3}),
			contCase(ts, [4]int64{64, 5, 70, 3}, [4]int{0, 2, 1, 3}),
			dupCase(ts, [4]int64{10, 10, 20, 1}, noPerm),
			dupCase(ts, [4]int64{10, 10, 5, 1}, [4]int{0, 2, 1, 3}))
	}
	for _, ta := range floatTypes {
		for _, n := range []int64{1, 4, 16} {
			for _, c := range []struct {
				bs, nr [2]int64
				per    [4]int
			}{
				{[2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}},
				{[2]int64{10, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}},
				{[2]int64{10, 10}, [2]int64{2, 1}, [4]int{0, 1, 2, 3}},
				{[2]int64{2, 3}, [2]int64{2, 2}, [4]int{0, 1, 2, 3}},
				{[2]int64{2, 3}, [2]int64{1, 1}, [4]int{0, 2, 1, 3}},
				{[2]int64{2, 3}, [2]int64{1, 1}, [4]int{0, 3, 2, 1}},
			} {
				out = append(out, mulMatCase(ta, tensor.F32, 16, n, 256, c.bs, c.nr, c.per))
			}
		}
		out = append(out, mulMatCase(ta, tensor.F32, 33, 1, 250, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
			// Two columns, aligned rows: the vector kernel (mmvn), 37 rows
			// leaving its last block of rows partial.
			mulMatCase(ta, tensor.F32, 37, 2, 1024, [2]int64{2, 1}, [2]int64{2, 1}, [4]int{0, 1, 2, 3}),
			mulMatCase(ta, tensor.F32, 37, 1, 1024, [2]int64{2, 1}, [2]int64{2, 1}, [4]int{0, 1, 2, 3}),
			// 3..8 columns, aligned rows: f16/bf16 on the tensor cores
			// (mmvt) where the device has them: a partial last block of 16
			// rows, k not a multiple of its 128-value groups (1000) or below
			// one group for each of its warps (64), broadcast batches.
			mulMatCase(ta, tensor.F32, 37, 3, 1000, [2]int64{2, 1}, [2]int64{2, 1}, [4]int{0, 1, 2, 3}),
			mulMatCase(ta, tensor.F32, 37, 8, 1000, [2]int64{2, 3}, [2]int64{1, 2}, [4]int{0, 1, 2, 3}),
			mulMatCase(ta, tensor.F32, 20, 7, 64, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}))
	}
	out = append(out, mulMatCase(tensor.F16, tensor.F16, 16, 8, 256, [2]int64{2, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}))
	return out
}

// firstPerfs are test-backend-ops' own perf cases for firstTests' ops.
func firstPerfs() []Case {
	return []Case{
		binCase(graph.OpAdd, tensor.F32, [4]int64{4096, 4096, 1, 1}, [4]int64{1, 1, 1, 1}, false),
		binCase(graph.OpMul, tensor.F32, [4]int64{4096, 4096, 1, 1}, [4]int64{1, 1, 1, 1}, false),
		binCase(graph.OpAdd, tensor.F32, [4]int64{4096, 1, 1, 1}, [4]int64{1, 4096, 1, 1}, false),
		scaleCase([4]int64{4096, 4096, 1, 1}, 2, 0),
		// The launch floor of a node through Compute in the same run: one
		// element, the smallest kernel (tiny ops are measured against it).
		scaleCase([4]int64{1, 1, 1, 1}, 2, 0),
		cpyCase(tensor.F32, tensor.F32, [4]int64{8192, 512, 2, 1}, [4]int{0, 2, 1, 3}, noPerm),
		cpyCase(tensor.F32, tensor.F16, [4]int64{8192, 512, 2, 1}, noPerm, noPerm),
		contCase(tensor.F32, [4]int64{2048, 512, 64, 1}, [4]int{2, 1, 0, 3}),
		mulMatCase(tensor.F16, tensor.F32, 4096, 512, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.BF16, tensor.F32, 4096, 512, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.F16, tensor.F32, 4096, 1, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.BF16, tensor.F32, 4096, 1, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.F32, tensor.F32, 4096, 1, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		// The other projection of the same FFN and a square one (33.5 MB of
		// weights, within the L2 of an H100 or H200), one column.
		mulMatCase(tensor.F16, tensor.F32, 14336, 1, 4096, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.F16, tensor.F32, 4096, 1, 4096, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.F16, tensor.F32, 4096, 8, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.BF16, tensor.F32, 4096, 8, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		// The vector kernel's columns against BLAS (with TERNION_FORCE_BLAS=1).
		mulMatCase(tensor.F16, tensor.F32, 4096, 2, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
		mulMatCase(tensor.F16, tensor.F32, 4096, 4, 14336, [2]int64{1, 1}, [2]int64{1, 1}, [4]int{0, 1, 2, 3}),
	}
}
