package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

func TestFlashAttnChoose(t *testing.T) {
	all := []arch.CC{arch.Turing, arch.Ampere, arch.NVIDIA(8, 6), arch.AdaLovelace, arch.Hopper}
	cases := []struct {
		name     string
		nq, gqa  int64
		cc       arch.CC
		compiled []arch.CC
		want     fattnPath
	}{
		{"decode on the H200", 1, 4, arch.Hopper, all, fattnDec},
		{"decode, MHA", 1, 1, arch.Hopper, all, fattnDec},
		{"decode, GQA 8", 1, 8, arch.Hopper, all, fattnDec},
		{"decode, GQA 16 falls back to the vector kernel", 1, 16, arch.Hopper, all, fattnVec},
		{"decode on AMD CDNA3", 1, 4, arch.CDNA3, nil, fattnDec},
		{"2 queries take the vector kernel", 2, 4, arch.Hopper, all, fattnVec},
		{"8 queries stay on the vector kernel", 8, 4, arch.Hopper, all, fattnVec},
		{"9 queries take the tensor cores", 9, 4, arch.Hopper, all, fattnMMA},
		{"prefill on Ampere", 512, 4, arch.Ampere, all, fattnMMA},
		{"NVRTC build (no compiled list)", 512, 4, arch.Hopper, nil, fattnMMA},
		{"Turing has no m16n8k16", 512, 4, arch.Turing, all, fattnVec},
		{"Hopper running sm_75 code only", 512, 4, arch.Hopper, []arch.CC{arch.Turing}, fattnVec},
		{"AMD CDNA3", 512, 4, arch.CDNA3, nil, fattnVec},
		{"Moore Threads", 512, 4, arch.QY2, nil, fattnVec},
		{"host device runs every path", 512, 4, 0, nil, fattnMMA},
		{"host decode", 1, 4, 0, nil, fattnDec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, fattnChoose(c.nq, c.gqa, c.cc, c.compiled))
		})
	}
}

func TestFlashAttnVecGeometry(t *testing.T) {
	cases := []struct {
		name                    string
		nq, gqa, nhkv, ne3, nkv int64
		sms                     int
		rows                    int64
		grid                    vendorapi.Dim3
		chunk                   int64
	}{
		{"speed goal: 32 q heads on 8 kv heads, 16384 positions", 1, 4, 8, 1, 16384, 132, 4, vendorapi.Dim3{X: 64, Y: 1, Z: 8}, 256},
		{"12 rows take two groups of 8", 3, 4, 2, 1, 512, 132, 8, vendorapi.Dim3{X: 8, Y: 2, Z: 2}, 64},
		{"one tile is one chunk", 1, 1, 4, 1, 64, 132, 4, vendorapi.Dim3{X: 1, Y: 1, Z: 4}, 64},
		{"few multiprocessors, few chunks", 1, 1, 1, 1, 512, 1, 4, vendorapi.Dim3{X: 4, Y: 1, Z: 1}, 128},
		{"batches multiply the kv heads", 1, 1, 4, 3, 113, 2, 4, vendorapi.Dim3{X: 1, Y: 1, Z: 12}, 128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, grid, chunk := fattnVecGeometry(c.nq, c.gqa, c.nhkv, c.ne3, c.nkv, c.sms)
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
		{"q8_0 K/V", build(128, 128, tensor.Q8_0, tensor.Q8_0, 0), "issue 10"},
		{"q4_0 V", build(128, 128, tensor.F16, tensor.Q4_0, 0), "issue 10"},
		{"bf16 K/V", build(128, 128, tensor.BF16, tensor.BF16, 0), "bf16"},
		{"f32 K/V", build(128, 128, tensor.F32, tensor.F32, 0), "f16 K/V"},
		{"head size 72", build(72, 72, tensor.F16, tensor.F16, 0), "head size 72"},
		{"192/128", build(192, 128, tensor.F16, tensor.F16, 0), "only for 576/512"},
		{"576/512", build(576, 512, tensor.F16, tensor.F16, 0), "not implemented yet"},
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
