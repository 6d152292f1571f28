package ops

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

func TestFlashAttnChoose(t *testing.T) {
	all := []arch.CC{arch.Turing, arch.Ampere, arch.NVIDIA(8, 6), arch.AdaLovelace, arch.Hopper}
	h200 := ccProps(arch.Hopper, all...)
	h200.SharedMemPerBlockOptin = 227 << 10
	rtx := ccProps(arch.NVIDIA(8, 6), all...)
	rtx.SharedMemPerBlockOptin = 99 << 10
	host := vendorapi.Props{SharedMemPerBlockOptin: 228 << 10}
	optin := func(p vendorapi.Props, n int) vendorapi.Props { p.SharedMemPerBlockOptin = n; return p }
	cases := []struct {
		name    string
		nq, gqa int64
		dim     int64
		p       vendorapi.Props
		off     bool // TERNION_NO_FATTN_TC set
		want    fattnPath
	}{
		{"decode on the H200 takes the tensor cores", 1, 4, 128, h200, false, fattnDect},
		{"decode, MHA", 1, 1, 128, h200, false, fattnDect},
		{"decode, GQA 16 on 16 rows", 1, 16, 128, h200, false, fattnDect},
		{"decode, GQA 16 at head size 256: only 8 rows, vector kernel", 1, 16, 256, h200, false, fattnVec},
		{"decode, GQA 8 at head size 256", 1, 8, 256, h200, false, fattnDect},
		{"decode, GQA 17 on the vector kernel", 1, 17, 64, h200, false, fattnVec},
		{"decode, head size 80: SIMT", 1, 4, 80, h200, false, fattnDec},
		{"decode, TERNION_NO_FATTN_TC: SIMT", 1, 4, 128, h200, true, fattnDec},
		{"decode, TERNION_NO_FATTN_TC, GQA 16: vector kernel", 1, 16, 128, h200, true, fattnVec},
		{"decode at 256 where 192 KiB of shared memory do not fit", 1, 4, 256, rtx, false, fattnDec},
		{"decode at 128 on sm_86", 1, 4, 128, rtx, false, fattnDect},
		{"decode on Turing: no m16n8k16", 1, 4, 128, ccProps(arch.Turing, all...), false, fattnDec},
		{"decode on Hopper running sm_75 code only", 1, 4, 128, ccProps(arch.Hopper, arch.Turing), false, fattnDec},
		{"decode on AMD CDNA3", 1, 4, 128, ccProps(arch.CDNA3), false, fattnDec},
		{"2 queries take the vector kernel", 2, 4, 128, h200, false, fattnVec},
		{"8 queries stay on the vector kernel", 8, 4, 128, h200, false, fattnVec},
		{"9 queries take the tensor cores", 9, 4, 128, h200, false, fattnMMA},
		{"prefill on Ampere", 512, 4, 128, optin(ccProps(arch.Ampere, all...), 163<<10), false, fattnMMA},
		{"NVRTC build (no compiled list)", 512, 4, 128, optin(ccProps(arch.Hopper), 227<<10), false, fattnMMA},
		{"prefill at 256 on sm_86 (99 KiB): tensor cores, mask from global memory", 512, 4, 256, rtx, false, fattnMMA},
		{"prefill where the K/V tiles do not fit (48 KiB): vector kernel", 512, 4, 256, optin(rtx, 48<<10), false, fattnVec},
		{"Turing has no m16n8k16", 512, 4, 128, ccProps(arch.Turing, all...), false, fattnVec},
		{"Hopper running sm_75 code only", 512, 4, 128, ccProps(arch.Hopper, arch.Turing), false, fattnVec},
		{"AMD CDNA3", 512, 4, 128, ccProps(arch.CDNA3), false, fattnVec},
		{"Moore Threads", 512, 4, 128, ccProps(arch.QY2), false, fattnVec},
		{"host device runs every path", 512, 4, 128, host, false, fattnMMA},
		{"host decode", 1, 4, 128, host, false, fattnDect},
		{"host decode, TERNION_NO_FATTN_TC", 1, 4, 128, host, true, fattnDec},
		{"576/512 (MLA) decode: vector kernel", 1, 16, 576, h200, false, fattnVec},
		{"576/512 (MLA) prefill: vector kernel", 512, 16, 576, h200, false, fattnVec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.off {
				t.Setenv(switches.NoFattnTC.Name, "1")
			}
			dimV := c.dim // V's head size is K's, except for the MLA pair 576/512
			if c.dim == 576 {
				dimV = 512
			}
			assert.Equal(t, c.want, fattnChoose(c.nq, c.gqa, c.dim, dimV, c.p))
		})
	}
}

func TestFlashAttnDectGeometry(t *testing.T) {
	cases := []struct {
		name                     string
		dim, gqa, nhkv, ne3, nkv int64
		kv                       tensor.Type
		cc                       arch.CC
		sms, optin               int
		r                        int64
		grid                     vendorapi.Dim3
		chunk                    int64
	}{
		{"speed goal: f16 planned for one block a multiprocessor", 128, 4, 8, 1, 16384, tensor.F16, arch.Hopper, 132, 227 << 10, 8, vendorapi.Dim3{X: 16, Y: 8, Z: 1}, 1024},
		{"head size 64: 4 fit, one planned", 64, 8, 8, 1, 7680, tensor.F16, arch.Hopper, 132, 227 << 10, 8, vendorapi.Dim3{X: 15, Y: 8, Z: 1}, 512},
		{"head size 256: 1 block", 256, 8, 2, 1, 10000, tensor.F16, arch.Hopper, 132, 227 << 10, 8, vendorapi.Dim3{X: 53, Y: 2, Z: 1}, 192},
		{"GQA 12 takes 16 rows", 128, 12, 4, 2, 1000, tensor.F16, arch.Hopper, 132, 227 << 10, 16, vendorapi.Dim3{X: 16, Y: 4, Z: 2}, 64},
		{"sm_86's shared memory: 1 block", 128, 4, 8, 1, 16384, tensor.F16, arch.NVIDIA(8, 6), 84, 99 << 10, 8, vendorapi.Dim3{X: 11, Y: 8, Z: 1}, 1536},
		{"one tile is one chunk", 64, 2, 4, 1, 64, tensor.F16, arch.Hopper, 132, 227 << 10, 8, vendorapi.Dim3{X: 1, Y: 4, Z: 1}, 64},
		{"at most 256 chunks", 64, 1, 1, 1, 1 << 20, tensor.F16, arch.Hopper, 1000, 227 << 10, 8, vendorapi.Dim3{X: 256, Y: 1, Z: 1}, 4096},
		{"q8_0 K/V: 83 KiB, 2 blocks", 128, 4, 8, 1, 16384, tensor.Q8_0, arch.Hopper, 132, 227 << 10, 8, vendorapi.Dim3{X: 32, Y: 8, Z: 1}, 512},
		{"q8_0 K/V on sm_86: 1 block", 128, 4, 8, 1, 16384, tensor.Q8_0, arch.NVIDIA(8, 6), 84, 99 << 10, 8, vendorapi.Dim3{X: 11, Y: 8, Z: 1}, 1536},
		{"q4_0 K/V: 59 KiB, but registers for 2 blocks", 128, 4, 8, 1, 16384, tensor.Q4_0, arch.Hopper, 132, 227 << 10, 8, vendorapi.Dim3{X: 32, Y: 8, Z: 1}, 512},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, grid, chunk := fattnDectGeometry(c.gqa, c.nhkv, c.ne3, c.nkv, c.sms, c.optin, fattnDectShared(c.dim, c.kv, c.cc),
				fattnDectBlocks(c.kv, 0), 1)
			assert.Equal(t, c.r, r)
			assert.Equal(t, c.grid, grid)
			assert.Equal(t, c.chunk, chunk)
			assert.LessOrEqual(t, c.gqa, r, "the rows hold every q head of the kv head")
			assert.GreaterOrEqual(t, int64(grid.X)*chunk, c.nkv, "the chunks cover the sequence")
			assert.Less(t, int64(grid.X-1)*chunk, c.nkv, "no chunk is empty")
		})
	}
}

// TestFlashAttnDectWaves: TERNION_FATTN_DEC_WAVES splits the decode goal's
// sequence (planned for one block a multiprocessor, 8 kv heads, 132
// multiprocessors) for that many waves: 16, 32, 43, 128 chunks of 1024,
// 512, 384, 128 positions (whole 64-position tiles).
func TestFlashAttnDectWaves(t *testing.T) {
	shared := fattnDectShared(128, tensor.F16, arch.Hopper)
	for _, c := range []struct {
		waves  int
		chunks uint32
		chunk  int64
	}{{1, 16, 1024}, {2, 32, 512}, {3, 43, 384}, {8, 128, 128}} {
		_, grid, chunk := fattnDectGeometry(4, 8, 1, 16384, 132, 227<<10, shared, fattnDectBlocks(tensor.F16, 0), c.waves)
		assert.Equal(t, c.chunks, grid.X, "%d waves", c.waves)
		assert.Equal(t, c.chunk, chunk, "%d waves", c.waves)
	}
}

// TestFlashAttnDectBlocks: the decode goal's chunks (2 blocks fit a
// multiprocessor) are planned for one block by default with f16 K/V (16
// chunks of 1024 positions), for 2 with quantized K/V (32 of 512);
// TERNION_FATTN_DEC_BLOCKS sets the blocks, never above what registers hold.
func TestFlashAttnDectBlocks(t *testing.T) {
	for _, c := range []struct {
		kv     tensor.Type
		blocks int
		chunks uint32
		chunk  int64
	}{
		{tensor.F16, 0, 16, 1024}, {tensor.F16, 1, 16, 1024}, {tensor.F16, 2, 32, 512}, {tensor.F16, 4, 32, 512},
		{tensor.Q8_0, 0, 32, 512}, {tensor.Q4_0, 0, 32, 512}, {tensor.Q8_0, 1, 16, 1024}, {tensor.Q4_0, 4, 32, 512},
	} {
		shared := fattnDectShared(128, c.kv, arch.Hopper)
		_, grid, chunk := fattnDectGeometry(4, 8, 1, 16384, 132, 227<<10, shared, fattnDectBlocks(c.kv, c.blocks), 1)
		assert.Equal(t, c.chunks, grid.X, "%v K/V, %d blocks", c.kv, c.blocks)
		assert.Equal(t, c.chunk, chunk, "%v K/V, %d blocks", c.kv, c.blocks)
	}
}

func TestFlashAttnDectShared(t *testing.T) {
	cases := []struct {
		name string
		dim  int64
		kv   tensor.Type
		cc   arch.CC
		want int
	}{
		{"f16 128 on sm_90: padded rows", 128, tensor.F16, arch.Hopper, 4*3*2*16*(256+16) + 96},
		{"f16 128 on sm_86: swizzled rows fit 99 KiB", 128, tensor.F16, arch.NVIDIA(8, 6), 4*3*2*16*256 + 96},
		{"f16 256 on sm_90", 256, tensor.F16, arch.Hopper, 4*3*2*16*(512+16) + 96},
		{"q8_0 128 on sm_90: raw stages and one padded f16 stage", 128, tensor.Q8_0, arch.Hopper, 4*(3*2*16*4*34+2*16*(256+16)) + 96},
		{"q4_0 128 on sm_80", 128, tensor.Q4_0, arch.Ampere, 4*(3*2*16*4*18+2*16*256) + 96},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, fattnDectShared(c.dim, c.kv, c.cc))
		})
	}
	assert.LessOrEqual(t, fattnDectShared(128, tensor.F16, arch.NVIDIA(8, 6)), 99<<10, "head size 128 fits sm_86")
	assert.LessOrEqual(t, 2*(fattnDectShared(128, tensor.F16, arch.Hopper)+1024), 228<<10, "two blocks a multiprocessor on sm_90")
}

func TestFlashAttnVecGeometry(t *testing.T) {
	cases := []struct {
		name                    string
		nq, gqa, nhkv, ne3, nkv int64
		sms                     int
		maxRows                 int64
		rows                    int64
		grid                    vendorapi.Dim3
		chunk                   int64
	}{
		{"speed goal: 32 q heads on 8 kv heads, 16384 positions", 1, 4, 8, 1, 16384, 132, 8, 4, vendorapi.Dim3{X: 64, Y: 1, Z: 8}, 256},
		{"12 rows take two groups of 8", 3, 4, 2, 1, 512, 132, 8, 8, vendorapi.Dim3{X: 8, Y: 2, Z: 2}, 64},
		{"12 rows on a kernel of 4 rows: three groups", 3, 4, 2, 1, 512, 132, 4, 4, vendorapi.Dim3{X: 8, Y: 3, Z: 2}, 64},
		{"MLA decode: 16 heads on one kv head, 4 rows a block", 1, 16, 1, 1, 4096, 132, 4, 4, vendorapi.Dim3{X: 64, Y: 4, Z: 1}, 64},
		{"one tile is one chunk", 1, 1, 4, 1, 64, 132, 8, 4, vendorapi.Dim3{X: 1, Y: 1, Z: 4}, 64},
		{"few multiprocessors, few chunks", 1, 1, 1, 1, 512, 1, 8, 4, vendorapi.Dim3{X: 4, Y: 1, Z: 1}, 128},
		{"batches multiply the kv heads", 1, 1, 4, 3, 113, 2, 8, 4, vendorapi.Dim3{X: 1, Y: 1, Z: 12}, 128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, grid, chunk := fattnVecGeometry(c.nq, c.gqa, c.nhkv, c.ne3, c.nkv, c.sms, c.maxRows)
			assert.Equal(t, c.rows, rows)
			assert.Equal(t, c.grid, grid)
			assert.Equal(t, c.chunk, chunk)
			assert.GreaterOrEqual(t, int64(grid.X)*chunk, c.nkv, "the chunks cover the sequence")
			assert.Less(t, int64(grid.X-1)*chunk, c.nkv, "no chunk is empty")
		})
	}
}

func TestFlashAttnDecGeometry(t *testing.T) {
	cases := []struct {
		name                string
		gqa, nhkv, ne3, nkv int64
		sms                 int
		r                   int64
		grid                vendorapi.Dim3
		chunk               int64
	}{
		{"speed goal: 32 q heads on 8 kv heads, 16384 positions", 4, 8, 1, 16384, 132, 4, vendorapi.Dim3{X: 43, Y: 8, Z: 1}, 384},
		{"MHA takes r1", 1, 32, 1, 4096, 132, 1, vendorapi.Dim3{X: 16, Y: 32, Z: 1}, 256},
		{"GQA 6 takes r8", 6, 4, 2, 1000, 132, 8, vendorapi.Dim3{X: 16, Y: 4, Z: 2}, 64},
		{"one tile is one chunk", 2, 4, 1, 64, 132, 4, vendorapi.Dim3{X: 1, Y: 4, Z: 1}, 64},
		{"at most 256 chunks", 1, 1, 1, 1 << 20, 1000, 1, vendorapi.Dim3{X: 256, Y: 1, Z: 1}, 4096},
		{"a tail chunk", 4, 1, 1, 1000, 2, 4, vendorapi.Dim3{X: 6, Y: 1, Z: 1}, 192},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, grid, chunk := fattnDecGeometry(c.gqa, c.nhkv, c.ne3, c.nkv, c.sms)
			assert.Equal(t, c.r, r)
			assert.Equal(t, c.grid, grid)
			assert.Equal(t, c.chunk, chunk)
			assert.GreaterOrEqual(t, int64(grid.X)*chunk, c.nkv, "the chunks cover the sequence")
			assert.Less(t, int64(grid.X-1)*chunk, c.nkv, "no chunk is empty")
		})
	}
}

func TestFlashAttnSupports(t *testing.T) {
	build := func(hsk, hsv int64, kt, vt tensor.Type, kvStride int64) *graph.Tensor {
		ctx := graph.NewContext()
		q := ctx.Empty(tensor.F32, hsk, 4, 8, 1)
		var k *graph.Tensor
		if kvStride == 0 {
			k = ctx.Empty(kt, hsk, 32, 2, 1)
		} else {
			base := ctx.Empty(kt, kvStride, 32, 2, 1)
			nb := base.Nb()
			k = base.View(0, []int64{hsk, 32, 2, 1}, nb[1:])
		}
		v := ctx.Empty(vt, hsv, 32, 2, 1)
		m := ctx.Empty(tensor.F16, 32, 4, 1, 1)
		n := q.FlashAttnExt(k, v, m, 0.125, 0, 0)
		require.NoError(t, ctx.Err())
		return n
	}
	cases := []struct {
		name string
		n    *graph.Tensor
		why  string // "" when supported
	}{
		{"f16 128", build(128, 128, tensor.F16, tensor.F16, 0), ""},
		{"f16 64", build(64, 64, tensor.F16, tensor.F16, 0), ""},
		{"f16 80", build(80, 80, tensor.F16, tensor.F16, 0), ""},
		{"f16 256", build(256, 256, tensor.F16, tensor.F16, 0), ""},
		{"q8_0 K/V", build(128, 128, tensor.Q8_0, tensor.Q8_0, 0), ""},
		{"q4_0 V", build(128, 128, tensor.F16, tensor.Q4_0, 0), ""},
		{"q5_1 K, q4_1 V", build(128, 128, tensor.Q5_1, tensor.Q4_1, 0), ""},
		{"f32 K/V", build(128, 128, tensor.F32, tensor.F32, 0), ""},
		{"q8_0 K in a cache of 160-wide rows (strides of 170 bytes)", build(128, 128, tensor.Q8_0, tensor.Q8_0, 160), ""},
		{"q5_0 V at 64", build(64, 64, tensor.F16, tensor.Q5_0, 0), ""},
		{"q8_0 K at 64", build(64, 64, tensor.Q8_0, tensor.F16, 0), "only f16 K there"},
		{"q8_0 K/V at 256", build(256, 256, tensor.Q8_0, tensor.Q8_0, 0), "only at 128"},
		{"f32 V at 80", build(80, 80, tensor.F16, tensor.F32, 0), "only at 128"},
		{"iq4_nl K/V", build(128, 128, tensor.IQ4_NL, tensor.IQ4_NL, 0), "takes f16, f32, q4_0"},
		{"q4_K K/V", build(256, 256, tensor.Q4_K, tensor.Q4_K, 0), "takes f16, f32, q4_0"},
		{"bf16 K/V", build(128, 128, tensor.BF16, tensor.BF16, 0), "rejects bf16"},
		{"head size 72", build(72, 72, tensor.F16, tensor.F16, 0), "head size 72"},
		{"192/128", build(192, 128, tensor.F16, tensor.F16, 0), "only for 576/512"},
		{"576/512 (MLA)", build(576, 512, tensor.F16, tensor.F16, 0), ""},
		{"576/512 (MLA), q8_0 K/V", build(576, 512, tensor.Q8_0, tensor.Q8_0, 0), ""},
		{"512/576", build(512, 576, tensor.F16, tensor.F16, 0), "only for 576/512"},
		{"K rows not 16-byte aligned", build(64, 64, tensor.F16, tensor.F16, 65), "multiples of 16 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fattnSupports(c.n, vendorapi.Props{})
			if c.why == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, c.why)
			}
		})
	}
}

func TestFlashAttnDectQuant(t *testing.T) {
	k := vendorapi.TensorDesc{Data: 4096, Ne: [4]int64{128, 512, 8, 1}, Nb: [4]int64{34, 136, 136 * 512, 136 * 512 * 8}}
	shifted := k
	shifted.Data += 4
	oddStride := k
	oddStride.Nb[2] += 4
	cases := []struct {
		name   string
		k, v   vendorapi.TensorDesc
		kt, vt tensor.Type
		want   bool
	}{
		{"q8_0 K and V of a cache", k, k, tensor.Q8_0, tensor.Q8_0, true},
		{"q4_0 K and V", k, k, tensor.Q4_0, tensor.Q4_0, true},
		{"q8_0 K, f16 V: converted", k, k, tensor.Q8_0, tensor.F16, false},
		{"q8_0 K, q4_0 V: converted", k, k, tensor.Q8_0, tensor.Q4_0, false},
		{"q5_0 K/V: converted", k, k, tensor.Q5_0, tensor.Q5_0, false},
		{"K data 4 bytes off: converted", shifted, k, tensor.Q8_0, tensor.Q8_0, false},
		{"V head stride 4 bytes off: converted", k, oddStride, tensor.Q8_0, tensor.Q8_0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, fattnDectQuant(fattnCall{k: c.k, v: c.v}, c.kt, c.vt))
		})
	}
	k64 := k
	k64.Ne[0] = 64
	assert.False(t, fattnDectQuant(fattnCall{k: k64, v: k64}, tensor.Q8_0, tensor.Q8_0), "head size 64")
}

// TestFlashAttnMMAWarps checks the prefill kernel's block size: 4 warps
// unless TERNION_FATTN_MMA8 asks for 8 at head size 256 and the device's
// opt-in shared memory holds their tiles; and the shared memory of each
// (the Q and mask tiles a row a query, K and V 64 rows; no mask tile where
// it does not fit).
func TestFlashAttnMMAWarps(t *testing.T) {
	on := func(k string) (string, bool) { return "1", k == switches.FattnMMA8.Name }
	off := func(string) (string, bool) { return "", false }
	h200 := vendorapi.Props{SharedMemPerBlockOptin: 232448}
	sm86 := vendorapi.Props{SharedMemPerBlockOptin: 101376}
	for _, c := range []struct {
		name   string
		dim    int64
		p      vendorapi.Props
		env    switches.Lookup
		warps  int64
		shared uint32
		fits   bool
	}{
		{"default: 4 warps", 256, h200, off, 4, (192*264 + 64*72) * 2, true},
		{"switch on, head 256: 8 warps", 256, h200, on, 8, (256*264 + 128*72) * 2, true},
		{"switch on, head 128: built for 256 only", 128, h200, on, 4, (192*136 + 64*72) * 2, true},
		{"99 KiB (sm_86, sm_89), head 256: 4 warps, mask from global memory", 256, sm86, on, 4, 192 * 264 * 2, true},
		{"99 KiB, head 128: the mask tile fits", 128, sm86, off, 4, (192*136 + 64*72) * 2, true},
		{"48 KiB, head 256: not even the K/V tiles", 256, vendorapi.Props{SharedMemPerBlockOptin: 48 << 10}, off, 4, 192 * 264 * 2, false},
		{"48 KiB, head 128: up to 128 the mask tile always comes along, so no fit", 128, vendorapi.Props{SharedMemPerBlockOptin: 48 << 10}, off, 4, (192*136 + 64*72) * 2, false},
	} {
		w := fattnMMAWarps(c.dim, c.p, c.env)
		assert.Equal(t, c.warps, w, c.name)
		assert.Equal(t, c.shared, fattnMMAShared(c.dim, w, c.p.SharedMemPerBlockOptin), c.name)
		assert.Equal(t, c.fits, fattnMMAFits(c.dim, c.p), c.name)
	}
}

// TestFattnEarlyBits is fattn_dect's early argument: bit 0 for K, bit 1
// for V where the graph's rule allows each, none for a temporary.
func TestFattnEarlyBits(t *testing.T) {
	ctx := graph.NewContext()
	k, v := ctx.Empty(tensor.F16, 64, 16), ctx.Empty(tensor.F16, 64, 16)
	only := func(ts ...*graph.Tensor) func(*graph.Tensor) bool {
		return func(x *graph.Tensor) bool { return slices.Contains(ts, x) }
	}
	for _, c := range []struct {
		name  string
		early func(*graph.Tensor) bool
		kv    [2]*graph.Tensor
		want  int32
	}{
		{"no rule", nil, [2]*graph.Tensor{k, v}, 0},
		{"K and V", only(k, v), [2]*graph.Tensor{k, v}, 3},
		{"K: V's copy is the node before", only(k), [2]*graph.Tensor{k, v}, 1},
		{"V alone", only(v), [2]*graph.Tensor{k, v}, 2},
		{"temporaries", only(k, v), [2]*graph.Tensor{}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, fattnCall{early: c.early, kv: c.kv}.earlyBits())
		})
	}
}
