package quant

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
)

const goldenDir = "testdata/ggml-golden"

// goldenManifest is testdata/ggml-golden/manifest.json: the input tensor
// and, per ggml type name, its ggml_quantize_chunk blocks and their
// dequantization.
type goldenManifest struct {
	Input struct {
		File string `json:"file"`
		Ne   []int  `json:"ne"`
	} `json:"input"`
	Types map[string]struct {
		Quantized   string  `json:"quantized"`
		Bytes       int     `json:"bytes"`
		Dequantized string  `json:"dequantized"`
		NMSE        float64 `json:"nmse_vs_input"`
	} `json:"types"`
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	require.NoError(t, err)
	return b
}

// formatNamed finds a registered format by its ggml name.
func formatNamed(t *testing.T, name string) *Format {
	t.Helper()
	for _, f := range Formats() {
		if f.Name == name {
			return f
		}
	}
	require.Failf(t, "format not registered", "%s", name)
	return nil
}

// TestGoldenGGML checks every type of the golden manifest against ggml's
// own output: Quantize must reproduce ggml_quantize_chunk's blocks byte for
// byte and Dequantize ggml's to_float bit for bit.
func TestGoldenGGML(t *testing.T) {
	var m goldenManifest
	require.NoError(t, json.Unmarshal(readGolden(t, "manifest.json"), &m))
	input := le.ToF32(readGolden(t, m.Input.File))
	require.Len(t, input, m.Input.Ne[0]*m.Input.Ne[1]*m.Input.Ne[2]*m.Input.Ne[3])

	names := make([]string, 0, len(m.Types))
	for name := range m.Types {
		names = append(names, name)
	}
	sort.Strings(names)
	require.NotEmpty(t, names)
	for _, name := range names {
		want := m.Types[name]
		t.Run(name, func(t *testing.T) {
			f := formatNamed(t, name)
			blocks := readGolden(t, want.Quantized)
			require.Len(t, blocks, want.Bytes)
			require.Equal(t, f.RowBytes(len(input)), len(blocks))

			t.Run("quantize", func(t *testing.T) {
				got := make([]byte, len(blocks))
				require.NoError(t, f.Quantize(got, input))
				for b := 0; b < len(blocks); b += f.BlockBytes {
					if !assert.Equal(t, blocks[b:b+f.BlockBytes], got[b:b+f.BlockBytes],
						"first differing block %d (values %d..%d)", b/f.BlockBytes,
						b/f.BlockBytes*f.BlockElems, (b/f.BlockBytes+1)*f.BlockElems-1) {
						break
					}
				}
			})
			t.Run("dequantize", func(t *testing.T) {
				wantF := le.ToF32(readGolden(t, want.Dequantized))
				require.Len(t, wantF, len(input))
				got := make([]float32, len(input))
				require.NoError(t, f.Dequantize(got, blocks))
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(wantF[i]) {
						assert.Failf(t, "dequantized value differs",
							"first differing block %d: value %d is %g (%#08x), ggml has %g (%#08x)",
							i/f.BlockElems, i, got[i], math.Float32bits(got[i]), wantF[i], math.Float32bits(wantF[i]))
						break
					}
				}
				assert.InDelta(t, want.NMSE, nmse(input, got), 1e-6*want.NMSE+1e-12)
			})
		})
	}
}

// nmse is Σ(got - want)² / Σwant², in float64.
func nmse(want, got []float32) float64 {
	var num, den float64
	for i, w := range want {
		d := float64(got[i]) - float64(w)
		num += d * d
		den += float64(w) * float64(w)
	}
	return num / den
}
