package optest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPerfRepeats checks the op's count in a perf graph against
// test-backend-ops' n_runs = min(graph_size - n_nodes, target / op) + 1.
func TestPerfRepeats(t *testing.T) {
	for _, tc := range []struct {
		name          string
		target, work  float64
		nodes, repeat int
	}{
		{"MUL_MAT m=4096 n=512 k=14336: 60.1 GFLOP of 100", 100e9, 2 * 4096 * 512 * 14336, 1, 2},
		{"an op of more than the target runs once", 100e9, 350e9, 1, 1},
		{"exactly the target: twice", 100e9, 100e9, 1, 2},
		{"a small op fills the graph's free nodes", 32 << 30, 4096, 1, perfGraphSize},
		{"free nodes count the graph's own", 32 << 30, 4096, 3, perfGraphSize - 2},
		{"n=1 q4_0 m=4096 k=14336: 117 MFLOP", 100e9, 2 * 4096 * 14336, 1, 852},
	} {
		assert.Equal(t, tc.repeat, perfRepeats(tc.target, tc.work, tc.nodes), tc.name)
	}
}
