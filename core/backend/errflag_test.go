package backend

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// moe is a MUL_MAT_ID of f32 experts w ([k, m, nExpert]) over x ([k, 1,
// tokens]) with nUsed experts a token.
type moe struct {
	k, m, nExpert, nUsed, tokens int64
	w, x                         []float32
	wt                           tensor.Type // the weights' type
}

func newMoE(tokens int64) moe { return newMoEOf(tokens, 16, tensor.F32) }

// newMoEOf is newMoE with rows of k values and weights of type wt.
func newMoEOf(tokens, k int64, wt tensor.Type) moe {
	c := moe{k: k, m: 8, nExpert: 4, nUsed: 2, tokens: tokens, wt: wt}
	c.w = make([]float32, c.k*c.m*c.nExpert)
	for i := range c.w {
		c.w[i] = float32(i%7) - 3
	}
	c.x = make([]float32, c.k*c.tokens)
	for i := range c.x {
		c.x[i] = float32(i%5) * 0.25
	}
	return c
}

// computedIDs builds the MUL_MAT_ID with ids computed on the device: the
// first nUsed columns of ARGSORT (descending) of scores, a [cols, tokens]
// leaf, so an index is out of range when a row's largest scores are in
// columns ≥ nExpert.
func (c moe) computedIDs(t *testing.T, scores []float32, cols int64) (*graph.Graph, *graph.Tensor) {
	t.Helper()
	ctx := graph.NewContext()
	s := ctx.FromFloats(scores, cols, c.tokens).Argsort(graph.SortDesc)
	ids := s.View(0, []int64{c.nUsed, c.tokens}, []int64{s.Nb()[1]})
	y := ctx.FromFloatsAs(c.wt, c.w, c.k, c.m, c.nExpert).MulMatID(ctx.FromFloats(c.x, c.k, 1, c.tokens), ids)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	return g, y
}

// leafIDs builds the MUL_MAT_ID with ids an uploaded leaf.
func (c moe) leafIDs(t *testing.T, ids []int32) (*graph.Graph, *graph.Tensor) {
	t.Helper()
	ctx := graph.NewContext()
	y := ctx.FromFloats(c.w, c.k, c.m, c.nExpert).MulMatID(ctx.FromFloats(c.x, c.k, 1, c.tokens),
		ctx.FromInts(ids, c.nUsed, c.tokens))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	return g, y
}

// want is the MUL_MAT_ID's result for ids ([nUsed, tokens]): NaN rows for
// an expert out of range.
func (c moe) want(ids []int32) []float32 {
	out := make([]float32, c.m*c.nUsed*c.tokens)
	for tok := range c.tokens {
		for e := range c.nUsed {
			ex := int64(ids[tok*c.nUsed+e])
			for r := range c.m {
				o := &out[(tok*c.nUsed+e)*c.m+r]
				if ex < 0 || ex >= c.nExpert {
					*o = float32(math.NaN())
					continue
				}
				var s float64
				for i := range c.k {
					s += float64(c.w[(ex*c.m+r)*c.k+i]) * float64(c.x[tok*c.k+i])
				}
				*o = float32(s)
			}
		}
	}
	return out
}

// scoresFor returns [cols, tokens] scores whose descending ARGSORT starts
// with ids (nUsed distinct experts a token).
func (c moe) scoresFor(ids []int32, cols int64) []float32 {
	s := make([]float32, cols*c.tokens)
	for tok := range c.tokens {
		for e := range c.nUsed {
			s[tok*cols+int64(ids[tok*c.nUsed+e])] = float32(10 - e)
		}
	}
	return s
}

func assertMoE(t *testing.T, want, got []float32) {
	t.Helper()
	assertMoEWithin(t, want, got, 1e-4)
}

// assertMoEWithin is assertMoE with an absolute tolerance.
func assertMoEWithin(t *testing.T, want, got []float32, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if math.IsNaN(float64(want[i])) {
			assert.True(t, math.IsNaN(float64(got[i])), "y[%d] = %v, want NaN", i, got[i])
			continue
		}
		assert.InDelta(t, want[i], got[i], tol, "y[%d]", i)
	}
}

// TestMulMatIDBadExpert: an expert index out of range in MUL_MAT_ID's ids
// is an error matching ErrBadIndex that names the op and the backend —
// from Synchronize (or the first Read) for ids computed on the device,
// where the kernel sets the device error word, which is then zeroed; from
// Compute, before any launch, for ids uploaded as a leaf.
func TestMulMatIDBadExpert(t *testing.T) {
	const cols = 6
	for _, tc := range []struct {
		name    string
		tokens  int64
		graphs  bool // GPU-graph capture on (host replays the captured launches)
		read    bool // the result is read before Synchronize
		repeats int  // the bad graph computed this many times, Synchronize after each
	}{
		{"eager, Synchronize reports", 3, false, false, 1},
		{"eager, the read reports", 3, false, true, 1},
		// One token: a batched MUL_MAT_ID is never captured (as the seed).
		{"the same graph again and again (recorded launches, captured graphs)", 1, true, false, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newMoE(tc.tokens)
			n := c.nUsed * c.tokens
			good := []int32{2, 1, 0, 3, 3, 0}[:n]
			bad := []int32{5, 1, 0, 3, 3, 0}[:n] // token 0's first expert is 5 of 4
			env := map[string]string{}
			if !tc.graphs {
				env["TERNION_DISABLE_GRAPHS"] = "1"
			}
			b := graphBackend(t, hostDriver(t), env)
			g, y := c.computedIDs(t, c.scoresFor(bad, cols), cols)
			for i := range tc.repeats {
				require.NoError(t, b.Compute(g), "the check is the kernel's: Compute queues and returns")
				var err error
				if tc.read {
					_, err = y.Floats()
				} else {
					err = b.Synchronize()
				}
				require.Error(t, err, "call %d", i)
				assert.ErrorIs(t, err, ErrBadIndex)
				assert.ErrorIs(t, err, vendorapi.ErrInvalidValue)
				assert.Contains(t, err.Error(), "MUL_MAT_ID")
				assert.Contains(t, err.Error(), "an expert index in ids is out of range [0, n_expert)")
				assert.Contains(t, err.Error(), b.Name())
				require.NoError(t, b.Synchronize(), "reported once: the word was zeroed")
				got, err := y.Floats()
				require.NoError(t, err)
				assertMoE(t, c.want(bad), got)
			}

			if tc.graphs {
				st := b.GraphStats()
				assert.Positive(t, st.Replay, "the repeats went through captured graphs: %+v", st)
			}

			g, y = c.computedIDs(t, c.scoresFor(good, cols), cols)
			require.NoError(t, b.Compute(g))
			require.NoError(t, b.Synchronize(), "good ids after bad ones")
			got, err := y.Floats()
			require.NoError(t, err)
			assertMoE(t, c.want(good), got)
		})
	}
}

// TestMulMatIDBadExpertQuantized: the same for q8_0 weights, whose
// MUL_MAT_ID multiplies pair by pair (few pairs an expert: mmvq_id on f32
// src1 for k = 64, mmvq8w_id on src1 quantized to 8 bits for k = 256, or
// under TERNION_MMVQ8WF mmvq8wf_id, quantizing src1 in its blocks) or
// groups the pairs by expert first (mmid_group reports the bad index,
// mmvq8_idg multiplies). The tolerance is the two 8-bit quantizations';
// the op's accuracy is ops test's.
func TestMulMatIDBadExpertQuantized(t *testing.T) {
	const cols = 6
	for _, sc := range []struct {
		tokens, k int64
		fused     string
	}{{3, 64, ""}, {3, 256, ""}, {3, 256, "1"}, {16, 64, ""}} {
		tokens := sc.tokens
		t.Run(fmt.Sprintf("%d tokens, k %d, TERNION_MMVQ8WF=%q", tokens, sc.k, sc.fused), func(t *testing.T) {
			t.Setenv("TERNION_MMVQ8WF", sc.fused)
			c := newMoEOf(tokens, sc.k, tensor.Q8_0)
			good := make([]int32, c.nUsed*tokens)
			for tok := range tokens {
				good[tok*c.nUsed], good[tok*c.nUsed+1] = int32(tok%4), int32((tok+1)%4)
			}
			bad := slices.Clone(good)
			bad[0] = 5 // token 0's first expert is 5 of 4
			b := graphBackend(t, hostDriver(t), map[string]string{"TERNION_DISABLE_GRAPHS": "1"})
			g, y := c.computedIDs(t, c.scoresFor(bad, cols), cols)
			require.NoError(t, b.Compute(g))
			err := b.Synchronize()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrBadIndex)
			assert.Contains(t, err.Error(), "MUL_MAT_ID")
			require.NoError(t, b.Synchronize(), "reported once")
			got, err := y.Floats()
			require.NoError(t, err)
			assertMoEWithin(t, c.want(bad), got, 1)

			g, y = c.computedIDs(t, c.scoresFor(good, cols), cols)
			require.NoError(t, b.Compute(g))
			require.NoError(t, b.Synchronize(), "good ids after bad ones")
			got, err = y.Floats()
			require.NoError(t, err)
			assertMoEWithin(t, c.want(good), got, 1)
		})
	}
}

// TestMulMatIDBadLeafIDs: ids uploaded as a leaf are checked before
// anything is launched; the backend computes good ids afterwards.
func TestMulMatIDBadLeafIDs(t *testing.T) {
	c := newMoE(3)
	good := []int32{0, 3, 2, 1, 3, 0}
	for _, tc := range []struct {
		name string
		ids  []int32
		want string
	}{
		{"an expert past the last", []int32{0, 3, 2, 1, 4, 3}, "ids[0, 2] = 4"},
		{"a negative expert", []int32{0, 3, -1, 1, 3, 3}, "ids[0, 1] = -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hd, err := host.New(host.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = hd.Close() })
			fd := faulty.New(hd)
			b, err := New(fd, 0, quiet)
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })

			g, _ := c.leafIDs(t, tc.ids)
			err = b.Compute(g)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrBadIndex)
			assert.Contains(t, err.Error(), "MUL_MAT_ID")
			assert.Contains(t, err.Error(), "out of range [0, 4)")
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), b.Name())
			assert.Zero(t, fd.Calls("Launch"), "nothing launched")
			require.NoError(t, b.Synchronize())

			g, y := c.leafIDs(t, good)
			require.NoError(t, b.Compute(g))
			require.NoError(t, b.Synchronize())
			got, err := y.Floats()
			require.NoError(t, err)
			assertMoE(t, c.want(good), got)
		})
	}
}

// TestErrorFlagOnlyForMulMatID: a backend allocates its device error word
// only once a graph has a node that sets it.
func TestErrorFlagOnlyForMulMatID(t *testing.T) {
	b, _ := faultyBackend(t)
	g, _, err := chain(8)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))
	require.NoError(t, b.Synchronize())
	assert.Zero(t, b.ErrorFlag(), "no MUL_MAT_ID: no word")

	c := newMoE(3)
	g, _ = c.leafIDs(t, []int32{0, 1, 2, 3, 0, 1})
	require.NoError(t, b.Compute(g))
	require.NoError(t, b.Synchronize())
	assert.NotZero(t, b.ErrorFlag())
}

// TestAddIDBadRow: ADD_ID's ids computed on the device with a row out of
// range → Compute succeeds, Synchronize reports it (NaN in that row, the
// others right); an uploaded leaf with a bad row → an error before launch.
func TestAddIDBadRow(t *testing.T) {
	const ne0, rows, used, tokens = 8, 4, 2, 3
	a := make([]float32, ne0*used*tokens)
	for i := range a {
		a[i] = float32(i)
	}
	bias := make([]float32, ne0*rows)
	for i := range bias {
		bias[i] = float32(100 * (i / ne0))
	}
	t.Run("computed ids", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), nil)
		ctx := graph.NewContext()
		// ids = the first 2 columns of a descending ARGSORT over 6 scores a
		// token: token 1 picks column 5, past the 4 bias rows.
		scores := []float32{9, 8, 0, 0, 0, 0, 0, 0, 0, 8, 0, 9, 0, 8, 9, 0, 0, 0}
		s := ctx.FromFloats(scores, 6, tokens).Argsort(graph.SortDesc)
		ids := s.View(0, []int64{used, tokens}, []int64{s.Nb()[1]})
		y := ctx.FromFloats(a, ne0, used, tokens).AddID(ctx.FromFloats(bias, ne0, rows), ids)
		g, err := ctx.Build(y)
		require.NoError(t, err)
		require.NoError(t, b.Compute(g))
		err = b.Synchronize()
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrBadIndex)
		assert.Contains(t, err.Error(), "ADD_ID: a row index in ids is out of range")
		require.NoError(t, b.Synchronize(), "reported once")
		got, err := y.Floats()
		require.NoError(t, err)
		want := map[int64][2]int64{0: {0, 1}, 1: {5, 3}, 2: {2, 1}} // token → its two rows
		for tok := range int64(tokens) {
			for e := range int64(used) {
				for i := range int64(ne0) {
					k := (tok*used+e)*ne0 + i
					row := want[tok][e]
					if row >= rows {
						assert.True(t, math.IsNaN(float64(got[k])), "y[%d] = %v, want NaN", k, got[k])
						continue
					}
					assert.Equal(t, a[k]+bias[row*ne0+i], got[k], "y[%d]", k)
				}
			}
		}
	})
	t.Run("leaf ids", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), nil)
		ctx := graph.NewContext()
		y := ctx.FromFloats(a, ne0, used, tokens).AddID(ctx.FromFloats(bias, ne0, rows),
			ctx.FromInts([]int32{0, 1, 3, 4, 2, 1}, used, tokens))
		g, err := ctx.Build(y)
		require.NoError(t, err)
		err = b.Compute(g)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrBadIndex)
		assert.Contains(t, err.Error(), "ids[1, 1] = 4")
		assert.Contains(t, err.Error(), "out of range [0, 4)")
		require.NoError(t, b.Synchronize())
	})
}
