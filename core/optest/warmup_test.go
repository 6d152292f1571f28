package optest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/switches"
)

// TestWarmUp checks that Perf's warm-up leaves no capture to its timed
// loop: with graphs on it runs the graph eager, captures it and stops at the
// first replay; with graphs off it stops after two eager computes; and the
// first compute after it replays (graphs on).
func TestWarmUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		computes int
		next     func(before, after backend.GraphStats) bool
	}{
		{"graphs on: eager, capture, replay", nil, 3,
			func(b, a backend.GraphStats) bool { return a.Replay == b.Replay+1 }},
		{"graphs off: two eager computes", map[string]string{switches.DisableGraphs.Name: "1"}, 2,
			func(b, a backend.GraphStats) bool { return a.Eager == b.Eager+1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			be, err := backend.Open("host", 0, backend.Options{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			require.NoError(t, err)
			defer be.Close()
			var c Case
			for _, p := range Perfs() {
				if p.Name == "SCALE(type=f32,ne=[1,1,1,1],scale=2.000000,bias=0.000000)" {
					c = p
				}
			}
			require.NotNil(t, c.Build, "the SCALE perf case")
			g, _, err := build(c, 1)
			require.NoError(t, err)
			buf, err := be.AllocTensors(g.Leafs()...)
			require.NoError(t, err)
			defer buf.Free()
			computes := 0
			run := func() error { computes++; return be.Compute(g) }
			require.NoError(t, warmUp(be, run))
			assert.Equal(t, tc.computes, computes)
			before := be.GraphStats()
			require.NoError(t, run())
			assert.True(t, tc.next(before, be.GraphStats()), "the compute after the warm-up: %v then %v", before, be.GraphStats())
		})
	}
}
