//go:build cuda

package gpushim

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCUDAStatusNames checks the names CUDA reports for the statuses the
// issue names against the classification tables. It needs libcudart, and for
// driver statuses libcuda (skipped without), but no GPU.
func TestCUDAStatusNames(t *testing.T) {
	_, err := Open(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Logf("Open: %v", err)
	driverNames := cStatus(srcDriver, 2).name != ""
	for _, c := range cudaStatusCases {
		st := cStatus(c.src, c.code)
		if c.src == srcDriver && !driverNames {
			t.Logf("driver status %d: no libcuda to name it; skipped", c.code)
			continue
		}
		e := st.toError("cuda", 0)
		assert.ErrorIs(t, e, c.kind, "%s status %d named %q", sourceName(c.src), c.code, e.CodeName)
		assert.NotEmpty(t, e.Message, "%s status %d", sourceName(c.src), c.code)
	}
}
