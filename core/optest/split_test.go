package optest

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/backend"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/host"
)

// TestSplitAgainstReference runs the MUL_MAT cases with src0 split over 2,
// 3 and 4 host devices (uneven, one device without rows, by memory) against
// core/ref, as `ternion ops test --split` does: cases whose src0 cannot be
// split (batches, permuted views) are not supported with the reason; the
// others pass with MUL_MAT's threshold.
func TestSplitAgainstReference(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := Match(Tests(), graph.OpMulMat.String(), nil)
	require.NotEmpty(t, cases)
	for _, cfg := range []struct {
		devices int
		props   []float64
	}{{2, []float64{0.7, 0.3}}, {3, []float64{1, 0, 1}}, {4, nil}} {
		t.Run(fmt.Sprintf("%d devices %v", cfg.devices, cfg.props), func(t *testing.T) {
			d, err := host.New(host.Options{Devices: cfg.devices, MemoryLimit: 512 << 20})
			require.NoError(t, err)
			defer d.Close()
			be, err := backend.New(d, 0, backend.Options{Logger: quiet, TensorSplit: cfg.props,
				Env: func(string) (string, bool) { return "", false }})
			require.NoError(t, err)
			defer be.Close()
			passed, spread := 0, 0
			for i, c := range cases {
				if gpuSizedCase(c) {
					continue
				}
				r := CheckSplit(c, be, nil, uint64(3000+i), 2)
				switch r.Outcome() {
				case Passed:
					passed++
					if strings.Contains(c.Name, "m=320,") {
						spread++
					}
				case NotSupported:
					assert.Contains(t, r.Reason, "src0 cannot be split", c.Name)
				default:
					t.Errorf("%s: %s (NMSE %g, seed %d)", c.Name, r.Reason, r.NMSE, r.Seed)
				}
			}
			assert.Equal(t, 21, spread, "every case with rows for several devices passes")
			assert.Greater(t, passed, spread)
		})
	}
}
