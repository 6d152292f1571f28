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

// TestFattnFold: a one-query FLASH_ATTN_EXT split over KV chunks is merged
// by the last block of each kv head (no fattn_dec_combine launch), eagerly
// and in captured graphs replayed with new inputs, with the same result as
// the separate combine kernel (TERNION_NO_FATTN_FOLD; on the host device
// both merge with the same arithmetic, so bit for bit), and leaves every
// tile counter zero.
func TestFattnFold(t *testing.T) {
	for _, graphs := range []bool{false, true} {
		t.Run(map[bool]string{false: "eager", true: "captured graphs"}[graphs], func(t *testing.T) {
			env := map[string]string{}
			if !graphs {
				env[switches.DisableGraphs.Name] = "1"
			}
			// Chunks planned for 4 blocks a multiprocessor: several KV
			// chunks on the host device (the separate merge launches
			// fattn_dec_combine, asserted below).
			t.Setenv(switches.FattnDecBlocks.Name, "4")
			fold := graphBackend(t, hostDriver(t), env)
			t.Setenv(switches.NoFattnFold.Name, "")
			af := newDecodeAttn(t, fold)
			var got [][]float32
			for i := range 4 {
				got = append(got, af.run(t, fold, uint64(i)))
			}
			require.NoError(t, fold.Synchronize())
			ptr, n := fold.TileCounters()
			require.NotZero(t, ptr, "the graph's FLASH_ATTN_EXT made the tile counters")
			require.Equal(t, ops.TileCounterWords, n)
			words := make([]byte, 4*n)
			require.NoError(t, fold.drv.CopyDtoH(fold.dev, words, ptr))
			for i := range n {
				require.Zero(t, binary.LittleEndian.Uint32(words[4*i:]), "tile counter %d after the calls", i)
			}
			loaded := fold.LoadedKernels()
			assert.NotContains(t, loaded, "fattn_dec_combine")
			assert.True(t, slices.ContainsFunc(loaded, func(k string) bool { return k == "fattn_dect_d128_r8" }),
				"the tensor-core decode kernel ran (loaded: %v)", loaded)
			if graphs {
				assert.Positive(t, fold.GraphStats().Replay, "later calls replayed a captured graph")
			}

			t.Setenv(switches.NoFattnFold.Name, "1")
			sep := graphBackend(t, hostDriver(t), env)
			as := newDecodeAttn(t, sep)
			for i := range 4 {
				assert.Equal(t, got[i], as.run(t, sep, uint64(i)), "call %d: folded and separate merges differ", i)
			}
			assert.Contains(t, sep.LoadedKernels(), "fattn_dec_combine")
			assert.NotEqual(t, got[0], got[1], "fresh inputs give a fresh output")
		})
	}
}
