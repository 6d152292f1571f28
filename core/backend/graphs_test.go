package backend

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// graphBackend is a backend on device 0 of d reading the switches from env.
func graphBackend(t *testing.T, d vendorapi.Driver, env map[string]string) *Backend {
	t.Helper()
	o := quiet
	o.Env = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	b, err := New(d, 0, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func hostDriver(t *testing.T) *host.Driver {
	t.Helper()
	d, err := host.New(host.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// step is a small decode-step-shaped graph, y = silu((x + w)·s)·w over n
// floats: x an input the caller sets before each call (in a buffer of its
// own, as a model's inputs), w a weight.
type step struct {
	g     *graph.Graph
	x, y  *graph.Tensor
	w     []float32
	scale float32
}

func newStep(t *testing.T, b *Backend, n int, scale float32, rng *rand.Rand) step {
	t.Helper()
	leafs := graph.NewContext()
	w := randFloats(rng, n)
	wt := leafs.FromFloats(w, int64(n))
	x := leafs.Empty(tensor.F32, int64(n))
	_, err := b.AllocTensors(wt, x)
	require.NoError(t, err)
	ctx := graph.NewContext()
	y := x.Add(wt).Scale(scale).SILU().Mul(wt)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	return step{g: g, x: x, y: y, w: w, scale: scale}
}

func randFloats(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// run computes s with fresh inputs and checks y against the same math in Go.
func (s step) run(t *testing.T, b *Backend, rng *rand.Rand, call string) {
	t.Helper()
	x := randFloats(rng, len(s.w))
	require.NoError(t, s.x.SetFloats(x))
	require.NoError(t, b.Compute(s.g), call)
	got, err := s.y.Floats()
	require.NoError(t, err)
	for i := range x {
		v := float64((x[i] + s.w[i]) * s.scale)
		want := v / (1 + math.Exp(-v)) * float64(s.w[i])
		require.InDelta(t, want, got[i], 1e-5, "%s, element %d", call, i)
	}
}

// TestComputeGraphs runs graphs through Compute's capture path on the
// host device (which captures and replays like CUDA) and checks every
// result against Go, with the policy's counts.
func TestComputeGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	t.Run("warm-up, capture, replay", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), nil)
		s := newStep(t, b, 1000, 0.5, rng)
		for i := range 5 {
			s.run(t, b, rng, "call "+string(rune('1'+i)))
		}
		st := b.GraphStats()
		assert.Equal(t, 1, st.Eager, "the first call warms up")
		assert.Equal(t, 1, st.Capture)
		assert.Equal(t, 3, st.Replay)
		assert.Equal(t, 1, st.Graphs)
	})
	t.Run("TERNION_DISABLE_GRAPHS launches eagerly", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), map[string]string{switches.DisableGraphs.Name: "1"})
		s := newStep(t, b, 100, 2, rng)
		for range 4 {
			s.run(t, b, rng, "disabled")
		}
		st := b.GraphStats()
		assert.Equal(t, 4, st.Eager)
		assert.Zero(t, st.Capture+st.Replay)
	})
	t.Run("three decode shapes each replay their own graph", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), nil)
		steps := []step{newStep(t, b, 256, 1, rng), newStep(t, b, 512, 1, rng), newStep(t, b, 768, 1, rng)}
		var mid GraphStats
		for round := range 5 {
			// Round 0 grows the compute buffer (the smaller shapes move
			// once: warm-up again in round 1), round 2 captures what is
			// left, rounds 3 and 4 replay.
			if round == 3 {
				mid = b.GraphStats()
			}
			for i, s := range steps {
				s.run(t, b, rng, "round "+string(rune('0'+round))+" shape "+string(rune('0'+i)))
			}
		}
		st := b.GraphStats()
		assert.Equal(t, 3, st.Capture, "one capture a shape: %v", st)
		assert.Equal(t, 6, st.Replay-mid.Replay, "rounds 3 and 4 replay every shape: %v", st)
		assert.Equal(t, st.Eager, mid.Eager, "%v", st)
		assert.Zero(t, st.Update+st.Evictions, "no thrash: %v", st)
		assert.Equal(t, 3, st.Graphs)
	})
	t.Run("moved weights update the graph", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), nil)
		a, c := newStep(t, b, 300, 1.5, rng), newStep(t, b, 300, 1.5, rng) // one shape, other buffers
		a.run(t, b, rng, "a warm-up")
		a.run(t, b, rng, "a capture")
		c.run(t, b, rng, "c: other pointers")
		c.run(t, b, rng, "c again")
		a.run(t, b, rng, "a again")
		st := b.GraphStats()
		assert.Equal(t, 1, st.Capture)
		assert.Equal(t, 2, st.Update, "c's pointers, then a's again")
		assert.Equal(t, 1, st.Replay)
	})
	t.Run("a graph that keeps changing falls back, and is tried again", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), map[string]string{switches.GraphRetry.Name: "2", switches.GraphWarmup.Name: "0"})
		a, c := newStep(t, b, 64, 1, rng), newStep(t, b, 64, 1, rng)
		for range 6 {
			a.run(t, b, rng, "a")
			c.run(t, b, rng, "c")
		}
		st := b.GraphStats()
		assert.Positive(t, st.Fallbacks, "%v", st)
		assert.Positive(t, st.Eager, "%v", st)
		assert.GreaterOrEqual(t, st.Capture, 2, "tried again after the eager window: %v", st)
	})
	t.Run("the seed's policy disables graphs for good", func(t *testing.T) {
		b := graphBackend(t, hostDriver(t), map[string]string{switches.GraphRetry.Name: "-1",
			switches.GraphWarmup.Name: "0", switches.GraphCache.Name: "1"})
		a, c := newStep(t, b, 64, 1, rng), newStep(t, b, 64, 1, rng)
		for range 5 {
			a.run(t, b, rng, "a")
			c.run(t, b, rng, "c")
		}
		st := b.GraphStats()
		assert.Equal(t, 1, st.Fallbacks, "%v", st)
		assert.Equal(t, 1, st.Capture, "%v", st)
		assert.Equal(t, 3, st.Update, "%v", st)
		assert.Equal(t, 6, st.Eager, "every call after the 4th: %v", st)
	})
}

// TestComputeGraphFaults injects capture and update failures: the call
// still computes the right result (eagerly, or through a new executable
// graph), the failure is counted, and the stream is not left capturing.
func TestComputeGraphFaults(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct {
		name  string
		rule  faulty.Rule // Nth counts from the rule's Add (see below)
		check func(t *testing.T, st GraphStats)
	}{
		{"BeginCapture refused", faulty.FailCapture("BeginCapture", 1), func(t *testing.T, st GraphStats) {
			assert.Equal(t, 1, st.CaptureFailures, "%v", st)
		}},
		{"the capture invalidated", faulty.FailCapture("EndCapture", 1), func(t *testing.T, st GraphStats) {
			assert.Equal(t, 1, st.CaptureFailures, "%v", st)
		}},
		{"instantiation fails", faulty.Fail("GraphInstantiate", 1, vendorapi.ErrOutOfMemory), func(t *testing.T, st GraphStats) {
			assert.Equal(t, 1, st.CaptureFailures, "%v", st)
		}},
		{"an exec update fails", faulty.FailGraphExecUpdate(1), func(t *testing.T, st GraphStats) {
			assert.Equal(t, 1, st.Reinstantiate, "%v", st)
			assert.Zero(t, st.CaptureFailures, "%v", st)
		}},
		{"a launch fails under capture", faulty.Fail("Launch", 2, vendorapi.ErrInvalidValue), func(t *testing.T, st GraphStats) {
			assert.Equal(t, 1, st.CaptureFailures, "%v", st)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd := faulty.New(hostDriver(t))
			b := graphBackend(t, fd, map[string]string{switches.GraphRetry.Name: "0"})
			a, o := newStep(t, b, 128, 1, rng), newStep(t, b, 128, 1, rng)
			a.run(t, b, rng, "warm-up")
			c.rule.Nth += fd.Calls(c.rule.Method) // the n-th call from now
			require.NoError(t, fd.Add(c.rule))
			a.run(t, b, rng, "capture")
			o.run(t, b, rng, "update")
			a.run(t, b, rng, "again")
			a.run(t, b, rng, "and again")
			st, err := fd.CaptureStatus(b.Stream())
			require.NoError(t, err)
			assert.Equal(t, vendorapi.CaptureNone, st, "the stream is not left capturing")
			c.check(t, b.GraphStats())
		})
	}
}
