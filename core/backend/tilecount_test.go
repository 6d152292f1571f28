package backend

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
)

// decodeAttn is a one-query FLASH_ATTN_EXT (head size 128, 8 q heads on 2
// kv heads, 2048 positions: several KV chunks on the host device) with q,
// k, v inputs the caller sets before each call.
type decodeAttn struct {
	g       *graph.Graph
	q, k, v *graph.Tensor
	y       *graph.Tensor
}

func newDecodeAttn(t *testing.T, b *Backend) decodeAttn {
	t.Helper()
	const d, nkv, nh, nhkv = 128, 2048, 8, 2
	leafs := graph.NewContext()
	a := decodeAttn{q: leafs.Empty(tensor.F32, d, 1, nh), k: leafs.Empty(tensor.F16, d, nkv, nhkv), v: leafs.Empty(tensor.F16, d, nkv, nhkv)}
	_, err := b.AllocTensors(a.q, a.k, a.v)
	require.NoError(t, err)
	a.y = a.q.FlashAttnExt(a.k, a.v, nil, 0.0884, 0, 0)
	a.g, err = graph.NewContext().Build(a.y)
	require.NoError(t, err)
	return a
}

// run sets fresh inputs from seed, computes and returns the output.
func (a decodeAttn) run(t *testing.T, b *Backend, seed uint64) []float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, x := range []*graph.Tensor{a.q, a.k, a.v} {
		ne := x.Ne()
		require.NoError(t, x.SetFloats(randFloats(rng, int(ne[0]*ne[1]*ne[2]*ne[3]))))
	}
	require.NoError(t, b.Compute(a.g))
	y, err := a.y.Floats()
	require.NoError(t, err)
	return y
}

// TestFattnDecSteal: under TERNION_FATTN_DEC_STEAL a one-query
// FLASH_ATTN_EXT split over several blocks a kv head deals its KV steps
// from the tile counters, eagerly and in captured graphs replayed with new
// inputs, with the result of the fixed chunks (the steps merge in another
// order, so to rounding), and leaves every tile counter zero.
func TestFattnDecSteal(t *testing.T) {
	for _, graphs := range []bool{false, true} {
		t.Run(map[bool]string{false: "eager", true: "captured graphs"}[graphs], func(t *testing.T) {
			env := map[string]string{}
			if !graphs {
				env[switches.DisableGraphs.Name] = "1"
			}
			t.Setenv(switches.FattnDecSteal.Name, "1")
			steal := graphBackend(t, hostDriver(t), env)
			as := newDecodeAttn(t, steal)
			var got [][]float32
			for i := range 4 {
				got = append(got, as.run(t, steal, uint64(i)))
			}
			require.NoError(t, steal.Synchronize())
			ptr, n := steal.TileCounters()
			require.NotZero(t, ptr, "the graph's FLASH_ATTN_EXT made the tile counters")
			require.Equal(t, ops.TileCounterWords, n)
			words := make([]byte, 4*n)
			require.NoError(t, steal.drv.CopyDtoH(steal.dev, words, ptr))
			for i := range n {
				require.Zero(t, binary.LittleEndian.Uint32(words[4*i:]), "tile counter %d after the calls", i)
			}
			loaded := steal.LoadedKernels()
			assert.True(t, slices.Contains(loaded, "fattn_dect_d128_r8"), "the tensor-core decode kernel ran (loaded: %v)", loaded)
			assert.Contains(t, loaded, "fattn_dec_combine", "the kernel ran split over KV chunks")
			if graphs {
				assert.Positive(t, steal.GraphStats().Replay, "later calls replayed a captured graph")
			}

			t.Setenv(switches.FattnDecSteal.Name, "")
			fixed := graphBackend(t, hostDriver(t), env)
			af := newDecodeAttn(t, fixed)
			for i := range 4 {
				want := af.run(t, fixed, uint64(i))
				require.Len(t, got[i], len(want))
				// P meets V rounded to f16 against the running maximum of
				// other step groups: differences of f16 rounding, well
				// under ggml's FLASH_ATTN_EXT NMSE bound (5e-4).
				var num, den float64
				for j := range want {
					e := float64(got[i][j] - want[j])
					num += e * e
					den += float64(want[j]) * float64(want[j])
				}
				assert.Less(t, num/den, 1e-6, "call %d: dealt and fixed steps differ", i)
			}
			p, _ := fixed.TileCounters()
			assert.Zero(t, p, "no tile counters without the switch")
			assert.NotEqual(t, got[0], got[1], "fresh inputs give a fresh output")
		})
	}
}
