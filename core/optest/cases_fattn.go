package optest

import (
	"math"
	"math/rand/v2"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
)

// cases_fattn.go: FLASH_ATTN_EXT as test-backend-ops' test_flash_attn_ext
// builds and names it (vars hsk, hsv, nh, nr23, kv, nb, mask, sinks,
// max_bias, logit_softcap, prec, type_KV, permute).

func init() { register(fattnTests, fattnPerfs) }

// fattnSpec is one test_flash_attn_ext case.
type fattnSpec struct {
	hsk, hsv, nh int64
	nr23         [2]int64
	kv, nb       int64
	mask, sinks  bool
	maxBias      float32
	softcap      float32
	prec         graph.Prec
	typeKV       tensor.Type
	permute      [4]int
}

// fattnPrecName is ggml's var_to_str of a ggml_prec.
func fattnPrecName(p graph.Prec) string {
	if p == graph.PrecF32 {
		return "f32"
	}
	return "def"
}

// fattnPermuted is test_flash_attn_ext's create_permuted: a tensor of type t
// whose dimensions, after permute, are ne; with view, a view of the first
// half of dimension 1 of a tensor twice as long there (a KV cache).
func fattnPermuted(ctx *graph.Context, r *rand.Rand, t tensor.Type, ne [4]int64, perm [4]int, view bool) *graph.Tensor {
	var np [4]int64
	for i := range ne {
		np[perm[i]] = ne[i]
	}
	var x *graph.Tensor
	if view {
		base := input(ctx, r, t, [4]int64{np[0], 2 * np[1], np[2], np[3]})
		nb := base.Nb()
		x = base.View(0, np[:], nb[1:])
	} else {
		x = input(ctx, r, t, np)
	}
	if perm != [4]int{0, 1, 2, 3} {
		x = x.Permute(perm[:]...)
	}
	return x
}

// fattnMask is test-backend-ops' init_tensor_kq_mask: f16 values uniform in
// [-1, 1] with a fifth of the area overwritten by blocks of -inf or 0. ggml's
// blocks are 128×64, which small masks hold none of; here they shrink to a
// quarter of a row and half the rows so that small cases mask whole tiles too.
func fattnMask(ctx *graph.Context, r *rand.Rand, ne [4]int64) *graph.Tensor {
	n := ne[0] * ne[1] * ne[2] * ne[3]
	v := make([]float32, n)
	for i := range v {
		v[i] = -1 + 2*r.Float32()
	}
	b0, b1 := min(128, max(ne[0]/4, 1)), min(64, max(ne[1]/2, 1))
	blocks := int(0.2 * float64(n) / float64(b0*b1))
	for range blocks {
		p3, p2, p1, p0 := r.Int64N(ne[3]), r.Int64N(ne[2]), r.Int64N(ne[1]), r.Int64N(ne[0])
		x := float32(0)
		if r.IntN(2) == 1 {
			x = float32(math.Inf(-1))
		}
		for i1 := p1; i1 < min(p1+b1, ne[1]); i1++ {
			for i0 := p0; i0 < min(p0+b0, ne[0]); i0++ {
				v[((p3*ne[2]+p2)*ne[1]+i1)*ne[0]+i0] = x
			}
		}
	}
	return ctx.FromFloatsAs(tensor.F16, v, ne[:]...)
}

// fattnCase is test_flash_attn_ext(s).
func fattnCase(s fattnSpec) Case {
	nm := name("FLASH_ATTN_EXT", "hsk", s.hsk, "hsv", s.hsv, "nh", s.nh, "nr23", s.nr23, "kv", s.kv, "nb", s.nb,
		"mask", s.mask, "sinks", s.sinks, "max_bias", s.maxBias, "logit_softcap", s.softcap, "prec", fattnPrecName(s.prec),
		"type_KV", s.typeKV, "permute", s.permute)
	flops := float64(2*s.nh*s.nr23[0]*s.nb*(s.hsk+s.hsv)*s.kv) * float64(s.nr23[1])
	return Case{Name: nm, Op: graph.OpFlashAttnExt, MaxNMSE: nmseMulMat, FLOPs: flops,
		Build: func(ctx *graph.Context, r *rand.Rand) *graph.Tensor {
			q := fattnPermuted(ctx, r, tensor.F32, [4]int64{s.hsk, s.nb, s.nh * s.nr23[0], s.nr23[1]}, s.permute, false)
			k := fattnPermuted(ctx, r, s.typeKV, [4]int64{s.hsk, s.kv, s.nh, s.nr23[1]}, s.permute, true)
			v := fattnPermuted(ctx, r, s.typeKV, [4]int64{s.hsv, s.kv, s.nh, s.nr23[1]}, s.permute, true)
			var m *graph.Tensor
			if s.mask {
				m = fattnMask(ctx, r, [4]int64{s.kv, s.nb, 1, s.nr23[1]})
			}
			out := q.FlashAttnExt(k, v, m, float32(1/math.Sqrt(float64(s.hsk))), s.maxBias, s.softcap)
			if s.sinks {
				out = out.FlashAttnExtAddSinks(inputRange(ctx, r, tensor.F32, [4]int64{s.nh * s.nr23[0], 1, 1, 1}, -10, 10))
			}
			return out.FlashAttnExtSetPrec(s.prec)
		}}
}

// fattnDefault is test_flash_attn_ext's defaults for head size hs with nh
// heads, GQA nr23, kv positions and nb queries.
func fattnDefault(hs, nh int64, nr23 [2]int64, kv, nb int64) fattnSpec {
	return fattnSpec{hsk: hs, hsv: hs, nh: nh, nr23: nr23, kv: kv, nb: nb, mask: true, prec: graph.PrecF32,
		typeKV: tensor.F16, permute: [4]int{0, 1, 2, 3}}
}

// fattnTests cover every kernel: for each head size the vector kernel with
// 4 and 8 rows a block (KV tails, GQA), the mma kernel (a query tail) and
// the one-query decode kernels for GQA 1, 4 and 6 (fattn_dec's r1, r4, r8
// where fattn_dect does not take them or TERNION_NO_FATTN_TC is set;
// fattn_dect's r8 at 64, 128, 256, r16 for GQA 12 and 16);
// one chunk and several (fattn_combine); sinks, ALiBi, softcap, no mask,
// broadcast over dim 3, permuted q/k/v, default precision. (What the device
// does not run is core/ops' TestFlashAttnSupports.)
func fattnTests() []Case {
	var out []Case
	for _, hs := range []int64{64, 80, 96, 112, 128, 256} {
		out = append(out,
			fattnCase(fattnDefault(hs, 4, [2]int64{1, 1}, 113, 2)),  // vec r4, tail tile
			fattnCase(fattnDefault(hs, 2, [2]int64{4, 1}, 512, 3)),  // vec r8, two row groups
			fattnCase(fattnDefault(hs, 4, [2]int64{1, 1}, 113, 32)), // mma, tail tile
			fattnCase(fattnDefault(hs, 4, [2]int64{1, 1}, 113, 1)),  // dec r1, tail step
			fattnCase(fattnDefault(hs, 2, [2]int64{4, 1}, 509, 1)),  // dec r4, tail step
			fattnCase(fattnDefault(hs, 1, [2]int64{6, 1}, 300, 1)),  // dec r8, two padded rows
		)
	}
	add := func(f func(s *fattnSpec), s fattnSpec) { f(&s); out = append(out, fattnCase(s)) }
	add(func(*fattnSpec) {}, fattnDefault(128, 1, [2]int64{1, 1}, 512, 1)) // several chunks on any machine
	add(func(*fattnSpec) {}, fattnDefault(80, 1, [2]int64{4, 2}, 1000, 1)) // dec: several chunks, batches, 80 = idle lanes
	add(func(s *fattnSpec) { s.sinks, s.softcap = true, 20 }, fattnDefault(256, 1, [2]int64{8, 1}, 700, 1))
	add(func(s *fattnSpec) { s.maxBias = 8 }, fattnDefault(64, 2, [2]int64{8, 1}, 300, 1))
	add(func(*fattnSpec) {}, fattnDefault(128, 1, [2]int64{16, 1}, 300, 1)) // GQA 16: dect r16 (or vec)
	add(func(*fattnSpec) {}, fattnDefault(64, 2, [2]int64{12, 2}, 777, 1))  // GQA 12: dect r16 (or vec), batches, tail step
	add(func(*fattnSpec) {}, fattnDefault(64, 4, [2]int64{1, 1}, 64, 8))    // one chunk, nb at the vec limit
	// mma with 16-byte aligned mask rows (the mask tile by cp.async): a KV
	// tail tile, a query tail, GQA; and head size 80 (K/V copied by a strided loop).
	add(func(*fattnSpec) {}, fattnDefault(128, 2, [2]int64{2, 1}, 1000, 70))
	add(func(*fattnSpec) {}, fattnDefault(80, 1, [2]int64{4, 1}, 256, 75))
	// Head size 256 with a query tail past 128 (fattn90 on compute
	// capability 9.0, fattn_mma_w8 under TERNION_FATTN_MMA8) and GQA.
	add(func(*fattnSpec) {}, fattnDefault(256, 1, [2]int64{2, 1}, 320, 150))
	// fattn90 (16-byte aligned mask rows): a softcap with a KV tail and GQA
	// 4; no mask, batches.
	add(func(s *fattnSpec) { s.softcap = 10 }, fattnDefault(256, 2, [2]int64{4, 1}, 200, 40))
	add(func(s *fattnSpec) { s.mask = false }, fattnDefault(128, 2, [2]int64{1, 2}, 96, 20))
	for _, nb := range []int64{1, 32} {
		add(func(s *fattnSpec) { s.sinks, s.maxBias = true, 8 }, fattnDefault(128, 4, [2]int64{1, 1}, 512, nb))
		add(func(s *fattnSpec) { s.sinks = true }, fattnDefault(64, 4, [2]int64{1, 1}, 113, nb))
		add(func(s *fattnSpec) { s.softcap = 10 }, fattnDefault(128, 4, [2]int64{1, 1}, 113, nb))
		add(func(s *fattnSpec) { s.prec = graph.PrecDefault }, fattnDefault(128, 4, [2]int64{1, 1}, 113, nb))
		add(func(s *fattnSpec) { s.permute = [4]int{0, 2, 1, 3} }, fattnDefault(128, 4, [2]int64{1, 1}, 512, nb))
		add(func(s *fattnSpec) { s.permute = [4]int{0, 2, 1, 3} }, fattnDefault(64, 1, [2]int64{4, 1}, 512, nb))
		add(func(*fattnSpec) {}, fattnDefault(64, 4, [2]int64{1, 3}, 113, nb))
	}
	// K/V of other types than f16: decode (q8_0 and q4_0 read as stored by
	// the tensor-core kernel, else converted to f16 first), vector and mma paths
	// (converted), a permuted cache, f32 K/V.
	for _, kv := range []tensor.Type{tensor.Q8_0, tensor.Q4_0} {
		add(func(s *fattnSpec) { s.typeKV = kv }, fattnDefault(128, 2, [2]int64{4, 1}, 509, 1))
		add(func(s *fattnSpec) { s.typeKV = kv }, fattnDefault(128, 4, [2]int64{1, 1}, 113, 3))
		add(func(s *fattnSpec) { s.typeKV = kv }, fattnDefault(128, 4, [2]int64{1, 1}, 113, 32))
	}
	add(func(s *fattnSpec) { s.typeKV, s.permute = tensor.Q8_0, [4]int{0, 2, 1, 3} }, fattnDefault(128, 1, [2]int64{4, 1}, 512, 1))
	add(func(s *fattnSpec) { s.typeKV, s.sinks = tensor.Q8_0, true }, fattnDefault(128, 1, [2]int64{12, 2}, 1000, 1)) // dect r16 q8_0
	add(func(s *fattnSpec) { s.typeKV, s.maxBias = tensor.Q4_0, 8 }, fattnDefault(128, 1, [2]int64{16, 1}, 300, 1))   // dect r16 q4_0
	add(func(s *fattnSpec) { s.typeKV = tensor.F32 }, fattnDefault(128, 2, [2]int64{4, 1}, 300, 1))
	// The seed's one pair of different head sizes, 576/512 (DeepSeek's
	// multi-head latent attention), on the vector kernel: decode, a few
	// queries, prefill, q8_0 K/V.
	mla := func(nb, kv int64) fattnSpec {
		s := fattnDefault(576, 1, [2]int64{16, 1}, kv, nb)
		s.hsv = 512
		return s
	}
	add(func(*fattnSpec) {}, mla(1, 113))
	add(func(*fattnSpec) {}, mla(3, 300))
	add(func(*fattnSpec) {}, mla(32, 64))
	add(func(s *fattnSpec) { s.typeKV = tensor.Q8_0 }, mla(1, 256))
	add(func(s *fattnSpec) { s.mask = false }, fattnDefault(64, 4, [2]int64{1, 1}, 113, 1))
	add(func(s *fattnSpec) { s.mask = false }, fattnDefault(64, 4, [2]int64{1, 1}, 113, 75)) // two q tiles
	add(func(s *fattnSpec) { s.mask = false }, fattnDefault(80, 1, [2]int64{4, 1}, 113, 75))
	return out
}

// fattnPerfs are the two speed goals and test-backend-ops' perf
// cases for FLASH_ATTN_EXT.
func fattnPerfs() []Case {
	q8 := fattnDefault(128, 8, [2]int64{4, 1}, 16384, 1)
	q8.typeKV = tensor.Q8_0
	q4 := q8
	q4.typeKV = tensor.Q4_0
	mla := fattnDefault(576, 1, [2]int64{16, 1}, 16384, 1) // DeepSeek decode (recorded, no goal)
	mla.hsv = 512
	out := []Case{
		fattnCase(fattnDefault(128, 8, [2]int64{4, 1}, 16384, 1)),
		fattnCase(q8),
		fattnCase(q4),
		fattnCase(mla),
		fattnCase(fattnDefault(256, 2, [2]int64{16, 1}, 10000, 512)),
		fattnCase(fattnDefault(128, 8, [2]int64{4, 1}, 8192, 512)), // head-128 prefill (recorded, no goal)
	}
	s := fattnDefault(72, 16, [2]int64{1, 1}, 5776, 5776)
	s.mask = false
	out = append(out, fattnCase(s),
		fattnCase(fattnDefault(64, 8, [2]int64{8, 1}, 7680, 1)),
		fattnCase(fattnDefault(64, 8, [2]int64{8, 1}, 7680, 4)))
	for _, kv := range []int64{4096, 8192, 16384} {
		for _, hs := range []int64{64, 128} {
			for _, nr := range []int64{1, 4} {
				out = append(out, fattnCase(fattnDefault(hs, 8, [2]int64{nr, 1}, kv, 1)))
			}
		}
	}
	return out
}
