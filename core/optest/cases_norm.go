package optest

import (
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_norm.go: NORM, RMS_NORM, L2_NORM, GROUP_NORM and the fused chains
// ggml's test-backend-ops checks them in (RMS_NORM_MUL_ADD, NORM_MUL_ADD,
// ADD_RMS_NORM), named as it names them.

func init() { register(normTests, normPerfs) }

// normView is test-backend-ops' v: a view of a with half of each dimension
// (rows of a's strides, so not contiguous).
func normView(a *graph.Tensor) *graph.Tensor {
	ne, nb := a.Ne(), a.Nb()
	return a.View(0, []int64{ne[0] / 2, ne[1] / 2, ne[2] / 2, ne[3] / 2}, nb[1:])
}

// normCase is test_norm (op NORM: v, eps, noncontig_rows), test_rms_norm
// (RMS_NORM: v, eps, inplace) and test_l2_norm (L2_NORM: eps, v,
// noncontig_rows). flag is noncontig_rows, or inplace for RMS_NORM: the
// norm then runs over the memory of its input (ggml makes it a view of a;
// here the graph allocator places it over a node of its own, a's copy).
func normCase(op graph.Op, ne [4]int64, v bool, eps float32, flag bool) Case {
	var kv []any
	switch op {
	case graph.OpNorm:
		kv = []any{"type", tensor.F32, "ne", ne, "v", v, "eps", eps, "noncontig_rows", flag}
	case graph.OpRMSNorm:
		kv = []any{"type", tensor.F32, "ne", ne, "v", v, "eps", eps, "inplace", flag}
	default:
		kv = []any{"type", tensor.F32, "ne", ne, "eps", eps, "v", v, "noncontig_rows", flag}
	}
	return Case{Name: name(op.String(), kv...), Op: op, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			var a *graph.Tensor
			switch {
			case op == graph.OpRMSNorm:
				// test_rms_norm draws from [-10, 10].
				a = inputRange(ctx, r, tensor.F32, ne, -10, 10)
				if flag {
					a = a.Dup()
				}
			case flag:
				a = input(ctx, r, tensor.F32, [4]int64{ne[1], ne[0], ne[2], ne[3]}).Permute(1, 0, 2, 3)
			default:
				a = input(ctx, r, tensor.F32, ne)
			}
			if v {
				a = normView(a)
			}
			switch op {
			case graph.OpNorm:
				return a.Norm(eps)
			case graph.OpRMSNorm:
				return a.RMSNorm(eps)
			}
			return a.L2Norm(eps)
		}}
}

// normGroupCase is test_group_norm.
func normGroupCase(ne [4]int64, groups int, eps float32) Case {
	return Case{Name: name("GROUP_NORM", "type", tensor.F32, "ne", ne, "num_groups", groups, "eps", eps),
		Op: graph.OpGroupNorm, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			return input(ctx, r, tensor.F32, ne).GroupNorm(groups, eps)
		}}
}

// normMulAddCase is test_rms_norm_mul_add (RMS_NORM: a = a + b + c, twice
// with multiAdd, then rms_norm(a)·b + c, inputs in [-10, 10], a broadcast
// larger with broadcast) and test_norm_mul_add (NORM: a = a + w + b, then
// norm(a)·w + b, a of dims 1..3 doubled with broadcast). The whole chain is
// one kernel on devices that fuse it.
func normMulAddCase(op graph.Op, ne [4]int64, eps float32, broadcast, multiAdd bool) Case {
	big := ne
	lo, hi := float32(-1), float32(1)
	nm, kv := "NORM_MUL_ADD", []any{"type", tensor.F32, "ne", ne, "eps", eps, "broadcast", broadcast}
	if op == graph.OpRMSNorm {
		nm, lo, hi = "RMS_NORM_MUL_ADD", -10, 10
		kv = append(kv, "multi_add", multiAdd)
		if broadcast {
			big = [4]int64{ne[0] * 2, ne[1] * 3, ne[2] * 3, ne[3] * 4}
		}
	} else if broadcast {
		big = [4]int64{ne[0], ne[1] * 2, ne[2] * 2, ne[3] * 2}
	}
	return Case{Name: name(nm, kv...), Op: op, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			a := inputRange(ctx, r, tensor.F32, big, lo, hi)
			b := inputRange(ctx, r, tensor.F32, ne, lo, hi)
			c := inputRange(ctx, r, tensor.F32, ne, lo, hi)
			a = a.Add(b).Add(c)
			if multiAdd {
				a = a.Add(b).Add(c)
			}
			if op == graph.OpNorm {
				return a.Norm(eps).Mul(b).Add(c)
			}
			return a.RMSNorm(eps).Mul(b).Add(c)
		}}
}

// normAddCase is test_add_rms_norm: rms_norm(a + b), inputs in [-10, 10], a
// broadcast larger with broadcast. With residual (ternion's own case, the
// residual stream of a transformer layer) the sum is read again:
// rms_norm(a + b)·w + (a + b), so the fused kernel writes it as well.
func normAddCase(ne [4]int64, eps float32, broadcast, residual bool) Case {
	big := ne
	if broadcast {
		big = [4]int64{ne[0] * 2, ne[1] * 3, ne[2] * 3, ne[3] * 4}
	}
	nm, kv := "ADD_RMS_NORM", []any{"type", tensor.F32, "ne", ne, "eps", eps, "broadcast", broadcast}
	if residual {
		nm, kv = "ADD_RMS_NORM_MUL_ADD", append(kv, "residual", true)
	}
	return Case{Name: name(nm, kv...), Op: graph.OpRMSNorm, MaxNMSE: nmseDefault,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			s := inputRange(ctx, r, tensor.F32, big, -10, 10).Add(inputRange(ctx, r, tensor.F32, ne, -10, 10))
			if !residual {
				return s.RMSNorm(eps)
			}
			return s.RMSNorm(eps).Mul(inputRange(ctx, r, tensor.F32, ne, -1, 1)).Add(s)
		}}
}

// normTests are test-backend-ops' norm cases (its eps and row lengths), with
// rows longer than the kernels keep in registers added.
func normTests() []Case {
	var out []Case
	for _, eps := range []float32{0, 1e-6, 1e-4, 1e-1, 10} {
		for _, n := range []int64{64, 1025} {
			ne := [4]int64{n, 5, 4, 3}
			for _, v := range []bool{false, true} {
				out = append(out, normCase(graph.OpNorm, ne, v, eps, false), normCase(graph.OpRMSNorm, ne, v, eps, false))
			}
			out = append(out, normCase(graph.OpNorm, ne, false, eps, true),
				normCase(graph.OpL2Norm, ne, false, eps, false), normCase(graph.OpL2Norm, ne, true, eps, false),
				normCase(graph.OpL2Norm, ne, false, eps, true))
		}
		for _, n := range []int64{33, 132, 260} {
			for _, v := range []bool{false, true} {
				out = append(out, normCase(graph.OpNorm, [4]int64{n, 5, 4, 3}, v, eps, false),
					normCase(graph.OpRMSNorm, [4]int64{n, 5, 4, 3}, v, eps, false))
			}
		}
	}
	out = append(out, normCase(graph.OpRMSNorm, [4]int64{64, 5, 4, 3}, false, 1e-6, true))
	for _, eps := range []float32{0, 1e-6, 1e-4, 1e-1, 1} {
		for _, n := range []int64{64, 1025} {
			ne := [4]int64{n, 5, 4, 3}
			for _, b := range []bool{false, true} {
				out = append(out, normMulAddCase(graph.OpRMSNorm, ne, eps, b, false), normMulAddCase(graph.OpNorm, ne, eps, b, false),
					normAddCase(ne, eps, b, false))
			}
		}
	}
	for _, n := range []int64{1, 511, 1025, 8192, 33 * 512} {
		for _, multi := range []bool{false, true} {
			out = append(out, normMulAddCase(graph.OpRMSNorm, [4]int64{n, 1, 1, 1}, 1e-6, false, multi))
		}
		out = append(out, normAddCase([4]int64{n, 1, 1, 1}, 1e-6, false, false))
	}
	// Rows longer than the registers hold (512 threads of 8 floats: 4096
	// floats; of 4 float4: 8192), fused or not, and the residual chain.
	for _, n := range []int64{9001, 36000} {
		ne := [4]int64{n, 2, 1, 1}
		out = append(out, normCase(graph.OpNorm, ne, false, 1e-6, false), normCase(graph.OpRMSNorm, ne, false, 1e-6, false),
			normCase(graph.OpL2Norm, ne, false, 1e-6, false), normMulAddCase(graph.OpRMSNorm, ne, 1e-6, false, false),
			normAddCase(ne, 1e-6, false, true))
	}
	for _, ne := range [][4]int64{{64, 5, 4, 3}, {1025, 5, 4, 3}, {36, 2, 1, 1}} {
		out = append(out, normAddCase(ne, 1e-6, false, true), normAddCase(ne, 1e-6, true, true))
	}
	// GROUP_NORM: test-backend-ops' shapes scaled down, channels that do not
	// divide into the groups, several samples (groups held in registers).
	out = append(out, normGroupCase([4]int64{16, 16, 64, 1}, 32, 1e-6), normGroupCase([4]int64{9, 9, 128, 1}, 32, 1e-6),
		normGroupCase([4]int64{8, 4, 10, 3}, 4, 1e-6), normGroupCase([4]int64{5, 3, 7, 2}, 3, 1e-3),
		normGroupCase([4]int64{4, 4, 3, 2}, 8, 0),
		// A group of more than 4096 floats (4356): more than the 1024-thread
		// block holds in registers, so group_norm reads it three times.
		normGroupCase([4]int64{33, 33, 64, 1}, 16, 1e-6))
	return out
}

// normPerfs are the speed goal (RMS_NORM f32 [4096,4096]), the
// other row norms at that size and test-backend-ops' GROUP_NORM shapes.
func normPerfs() []Case {
	ne := [4]int64{4096, 4096, 1, 1}
	return []Case{
		normCase(graph.OpRMSNorm, ne, false, 1e-6, false),
		normCase(graph.OpNorm, ne, false, 1e-6, false),
		normCase(graph.OpL2Norm, ne, false, 1e-6, false),
		normCase(graph.OpRMSNorm, [4]int64{4096, 512, 1, 1}, false, 1e-6, false),
		normGroupCase([4]int64{64, 64, 320, 1}, 32, 1e-6),
		normGroupCase([4]int64{9, 9, 1280, 1}, 32, 1e-6),
	}
}
