package kernels

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/kernels/internal/gridgen"
)

// TestQuantGridsHeader regenerates quant_grids.h from quant/grids/*.txt
// (which package quant's tests pin by SHA-256) and requires the embedded,
// checked-in header to be identical: `go generate ./kernels` rewrites it.
func TestQuantGridsHeader(t *testing.T) {
	want, err := gridgen.Generate(os.DirFS(gridgen.GridsDir))
	require.NoError(t, err)
	got, err := Sources.ReadFile(gridgen.Header)
	require.NoError(t, err, "kernels embeds %s", gridgen.Header)
	assert.True(t, string(want) == string(got), "%s differs from quant/grids/*.txt: run go generate ./kernels (or go run ./internal/gridgen/write in kernels/)", gridgen.Header)
	quant, err := Sources.ReadFile("quant.h")
	require.NoError(t, err)
	assert.Contains(t, string(quant), `#include "`+gridgen.Header+`"`)
}
