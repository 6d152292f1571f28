package backend

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
)

// kvDecode is a decode-shaped loop on one backend: each step computes a new
// row y = x·w·0.5 from an input x, writes it into a KV cache at the step's
// position through a CPY into a view of the cache that moves every step, and
// reads the whole cache back (a CAST to f32, itself a CPY) after the write.
// Each step builds its graph anew, as a model's decode loop does.
type kvDecode struct {
	x, w, cache *graph.Tensor
	d, rows     int64
	trans       bool // the cache is [rows, d] and the row is written as a column (a transposed V cache)
}

func newKVDecode(t *testing.T, b *Backend, kt tensor.Type, d, rows int64, trans bool, w []float32) *kvDecode {
	t.Helper()
	leafs := graph.NewContext()
	k := &kvDecode{w: leafs.FromFloats(w, d), x: leafs.Empty(tensor.F32, d), d: d, rows: rows, trans: trans}
	if trans {
		k.cache = leafs.Empty(kt, rows, d)
	} else {
		k.cache = leafs.Empty(kt, d, rows)
	}
	_, err := b.AllocTensors(k.w, k.x, k.cache)
	require.NoError(t, err)
	require.NoError(t, k.cache.SetFloats(make([]float32, d*rows)))
	return k
}

// step runs the step writing row pos with input x and returns the cache as
// read by the graph.
func (k *kvDecode) step(t *testing.T, b *Backend, pos int64, x []float32) []float32 {
	t.Helper()
	require.NoError(t, k.x.SetFloats(x))
	ctx := graph.NewContext()
	y := k.x.Mul(k.w).Scale(0.5)
	nb := k.cache.Nb()
	var dst *graph.Tensor
	if k.trans {
		dst = k.cache.View(pos*nb[0], []int64{1, k.d}, []int64{nb[1]})
	} else {
		dst = k.cache.View(pos*nb[1], []int64{k.d, 1}, []int64{nb[1]})
	}
	cpy := y.Cpy(dst)
	out := k.cache.Cast(tensor.F32)
	g, err := ctx.Build(cpy, out)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g), "step %d", pos)
	got, err := out.Floats()
	require.NoError(t, err)
	return got
}

// TestCopyIndirectionDecode runs the decode loop with graphs on and with
// graphs off: with the CPY pointer array, every step after the warm-up and
// the capture replays the one executable graph although the write moves
// each step, and the cache and each step's output equal the eager run's.
func TestCopyIndirectionDecode(t *testing.T) {
	const d, rows, steps = 96, 24, 20
	for _, c := range []struct {
		name  string
		kt    tensor.Type
		trans bool
	}{
		{"f32 cache (contiguous same-type copy)", tensor.F32, false},
		{"f16 cache (row conversion)", tensor.F16, false},
		{"bf16 cache", tensor.BF16, false},
		{"transposed f16 V cache (element copy, the write moves by 2 bytes)", tensor.F16, true},
		{"transposed f32 V cache", tensor.F32, true},
		{"q8_0 cache (quantizing copy; the read dequantizes)", tensor.Q8_0, false},
		{"q4_0 cache", tensor.Q4_0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, 4))
			w := randFloats(rng, d)
			gb := graphBackend(t, hostDriver(t), nil)
			eb := graphBackend(t, hostDriver(t), map[string]string{switches.DisableGraphs.Name: "1"})
			gk := newKVDecode(t, gb, c.kt, d, rows, c.trans, w)
			ek := newKVDecode(t, eb, c.kt, d, rows, c.trans, w)
			for pos := range int64(steps) {
				x := randFloats(rng, d)
				got, want := gk.step(t, gb, pos, x), ek.step(t, eb, pos, x)
				require.Equal(t, want, got, "step %d: the cache as the graph read it", pos)
			}
			gc, err := gk.cache.Floats()
			require.NoError(t, err)
			ec, err := ek.cache.Floats()
			require.NoError(t, err)
			assert.Equal(t, ec, gc, "the cache after the loop")
			var nonzero int
			for _, v := range gc {
				if v != 0 {
					nonzero++
				}
			}
			assert.Greater(t, nonzero, steps*d/2, "the steps wrote the cache")

			st := gb.GraphStats()
			assert.Equal(t, GraphStats{Eager: 1, Capture: 1, Replay: steps - 2, Graphs: 1, Shapes: 1}, st,
				"warm-up, capture, then every step replays: %v", st)
			assert.Equal(t, steps, eb.GraphStats().Eager)
		})
	}
}

// TestCopyIndirectionOff checks TERNION_GRAPH_NO_CPY_INDIRECTION: a CPY's
// destination is compared like any pointer, so the moving write updates the
// graph every step (and falls back to eager after four), and the results
// are right all the same.
func TestCopyIndirectionOff(t *testing.T) {
	const d, rows, steps = 64, 12, 10
	rng := rand.New(rand.NewPCG(5, 6))
	w := randFloats(rng, d)
	gb := graphBackend(t, hostDriver(t), map[string]string{switches.GraphNoCopyIndirection.Name: "1", switches.GraphWarmup.Name: "0"})
	eb := graphBackend(t, hostDriver(t), map[string]string{switches.DisableGraphs.Name: "1"})
	gk := newKVDecode(t, gb, tensor.F16, d, rows, false, w)
	ek := newKVDecode(t, eb, tensor.F16, d, rows, false, w)
	for pos := range int64(steps) {
		x := randFloats(rng, d)
		require.Equal(t, ek.step(t, eb, pos, x), gk.step(t, gb, pos, x), "step %d", pos)
	}
	st := gb.GraphStats()
	assert.Equal(t, GraphStats{Eager: steps - 4, Capture: 1, Update: 3, Fallbacks: 1, Shapes: 1}, st,
		"captured, updated three times, then eager: %v", st)
}

// TestCopyIndirectionMovedDestination computes one graph whose CPY writes a
// tensor placed by hand, which moves to another buffer before each call:
// the graph replays, each call writes the tensor where it is now, and the
// buffers it left keep what was written there.
func TestCopyIndirectionMovedDestination(t *testing.T) {
	const d = 200
	rng := rand.New(rand.NewPCG(8, 9))
	b := graphBackend(t, hostDriver(t), nil)
	leafs := graph.NewContext()
	w := randFloats(rng, d)
	wt, x := leafs.FromFloats(w, d), leafs.Empty(tensor.F32, d)
	_, err := b.AllocTensors(wt, x)
	require.NoError(t, err)
	dst := leafs.Empty(tensor.F16, d)
	ctx := graph.NewContext()
	y := x.Mul(wt).Scale(0.5)
	g, err := ctx.Build(y.Cpy(dst), y.Sqr())
	require.NoError(t, err)

	bufs := make([]*Buffer, 3)
	held := make([][]byte, len(bufs)) // what each buffer should hold
	for i := range bufs {
		bufs[i], err = b.Alloc(uint64(dst.Layout().Bytes()))
		require.NoError(t, err)
		held[i] = make([]byte, dst.Layout().Bytes())
		require.NoError(t, bufs[i].Write(0, held[i]))
	}
	const calls = 12
	for call := range calls {
		if call == 7 { // one buffer freed, a new one in its place
			require.NoError(t, bufs[1].Free())
			bufs[1], err = b.Alloc(uint64(dst.Layout().Bytes()))
			require.NoError(t, err)
			held[1] = make([]byte, dst.Layout().Bytes())
			require.NoError(t, bufs[1].Write(0, held[1]))
		}
		k := call % len(bufs)
		require.NoError(t, dst.Place(bufs[k], 0))
		xs := randFloats(rng, d)
		require.NoError(t, x.SetFloats(xs))
		require.NoError(t, b.Compute(g), "call %d", call)
		want := make([]float32, d)
		for i := range want {
			want[i] = xs[i] * w[i] * 0.5
		}
		held[k], err = tensor.FromFloat32(dst.Layout(), want)
		require.NoError(t, err)
		for i, buf := range bufs {
			got := make([]byte, len(held[i]))
			require.NoError(t, buf.Read(0, got))
			require.Equal(t, held[i], got, "call %d: buffer %d", call, i)
		}
	}
	st := b.GraphStats()
	assert.Equal(t, GraphStats{Eager: 1, Capture: 1, Replay: calls - 2, Graphs: 1, Shapes: 1}, st, "%v", st)
}

// TestCopyIndirectionArrayGrows makes the CPY pointer array grow while an
// executable graph made with the smaller array is held: that graph is
// captured again before it replays (it would read the freed array), and
// every result is right.
func TestCopyIndirectionArrayGrows(t *testing.T) {
	const d = 32
	rng := rand.New(rand.NewPCG(1, 2))
	var log bytes.Buffer
	o := quiet
	o.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.Env = func(k string) (string, bool) {
		if k == switches.GraphWarmup.Name {
			return "0", true
		}
		return "", false
	}
	b, err := New(hostDriver(t), 0, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	leafs := graph.NewContext()
	w := randFloats(rng, d)
	wt, x := leafs.FromFloats(w, d), leafs.Empty(tensor.F32, d)
	cache := leafs.Empty(tensor.F16, d, 2*cpyMin)
	_, err = b.AllocTensors(wt, x, cache)
	require.NoError(t, err)
	nb1 := cache.Nb()[1]
	// writes builds a graph writing the new row to n rows from first on.
	writes := func(first, n int64) *graph.Graph {
		ctx := graph.NewContext()
		y := x.Mul(wt).Scale(0.5)
		roots := make([]*graph.Tensor, n)
		for i := range n {
			roots[i] = y.Cpy(cache.View((first+i)*nb1, []int64{d, 1}, []int64{nb1}))
		}
		g, err := ctx.Build(roots...)
		require.NoError(t, err)
		return g
	}
	check := func(what string, first, n int64, xs []float32) {
		t.Helper()
		got, err := cache.Floats()
		require.NoError(t, err)
		row := make([]float32, d)
		for i := range row {
			row[i] = xs[i] * w[i] * 0.5
		}
		f16, err := tensor.FromFloat32(tensor.Layout{Type: tensor.F16, Ne: [4]int64{d, 1, 1, 1}, Nb: [4]int64{2, 2 * d, 2 * d, 2 * d}}, row)
		require.NoError(t, err)
		want, err := tensor.ToFloat32(tensor.Layout{Type: tensor.F16, Ne: [4]int64{d, 1, 1, 1}, Nb: [4]int64{2, 2 * d, 2 * d, 2 * d}}, f16)
		require.NoError(t, err)
		for r := first; r < first+n; r++ {
			require.Equal(t, want, got[r*d:(r+1)*d], "%s: row %d", what, r)
		}
	}
	run := func(what string, g *graph.Graph, first, n int64) {
		t.Helper()
		xs := randFloats(rng, d)
		require.NoError(t, x.SetFloats(xs))
		require.NoError(t, b.Compute(g), what)
		check(what, first, n, xs)
	}
	run("one CPY: capture", writes(0, 1), 0, 1)
	run("one CPY moved: replay", writes(1, 1), 1, 1)
	require.Equal(t, 1, b.GraphStats().Replay)
	small := b.cpy.arr
	run(fmt.Sprintf("%d CPYs: the array grows", cpyMin+6), writes(2, cpyMin+6), 2, cpyMin+6)
	require.NotEqual(t, small, b.cpy.arr, "a new array")
	log.Reset()
	run("one CPY again: captured again with the new array", writes(3, 1), 3, 1)
	// The policy said replay; the backend captured again (its reason logged).
	assert.Contains(t, log.String(), "decision=update")
	assert.Contains(t, log.String(), "CPY pointer array the executable graph reads was replaced")
	log.Reset()
	run("and replayed", writes(4, 1), 4, 1)
	assert.Contains(t, log.String(), "decision=replay")
	assert.NotContains(t, log.String(), "decision=update")
}

// TestCopySlots checks the backend's answers to ops.CopySlots: the word of
// each CPY node of the call, in node order, and 0 for other nodes.
func TestCopySlots(t *testing.T) {
	b := graphBackend(t, hostDriver(t), nil)
	leafs := graph.NewContext()
	x, cache := leafs.Empty(tensor.F32, 8), leafs.Empty(tensor.F32, 8, 4)
	_, err := b.AllocTensors(x, cache)
	require.NoError(t, err)
	ctx := graph.NewContext()
	s := x.Scale(2)
	c0 := s.Cpy(cache.View(0, []int64{8, 1}, []int64{32}))
	c1 := s.Cpy(cache.View(64, []int64{8, 1}, []int64{32}))
	g, err := ctx.Build(c0, c1)
	require.NoError(t, err)
	require.NoError(t, x.SetFloats(make([]float32, 8)))
	require.NoError(t, b.Compute(g))
	require.NotZero(t, b.cpy.arr)
	assert.Equal(t, b.cpy.arr.Add(8), b.CopySlot(c1), "asked out of order")
	assert.Equal(t, b.cpy.arr, b.CopySlot(c0))
	assert.Equal(t, b.cpy.arr.Add(8), b.CopySlot(c1))
	assert.Zero(t, b.CopySlot(s), "not a CPY of the call")

	off := graphBackend(t, hostDriver(t), map[string]string{switches.DisableGraphs.Name: "1"})
	_, err = off.AllocTensors(leafs.Empty(tensor.F32, 8))
	require.NoError(t, err)
	assert.False(t, off.cpy.on, "no pointer array where graphs are off")
}
