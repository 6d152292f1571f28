package quant

import (
	_ "embed"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// The lookup tables of ggml's i-quants, copied as data from ggml's
// src/ggml-common.h into grids/ (see grids/README.md). Each file holds one
// table entry per line in fixed-width lower-case hex; parseGrid checks the
// entry count, so a truncated file fails at package initialisation.
//
// ggml's eighth table, kmask_iq2xs (1, 2, 4, ..., 128), is not stored: the
// decoders test sign bit j as signs>>j&1, which is the same thing.

//go:embed grids/iq2xxs_grid.txt
var iq2xxsGridText string

//go:embed grids/iq2xs_grid.txt
var iq2xsGridText string

//go:embed grids/iq2s_grid.txt
var iq2sGridText string

//go:embed grids/iq3xxs_grid.txt
var iq3xxsGridText string

//go:embed grids/iq3s_grid.txt
var iq3sGridText string

//go:embed grids/iq1s_grid.txt
var iq1sGridText string

//go:embed grids/ksigns_iq2xs.txt
var ksignsIQ2XSText string

var (
	// iq2xxsGrid: 256 points of 8 magnitudes (bytes 8, 25 or 43), byte j of
	// an entry (little-endian) is element j. Used by iq2_xxs.
	iq2xxsGrid = parseGrid[uint64]("iq2xxs_grid", iq2xxsGridText, 256)
	// iq2xsGrid: 512 points of 8 magnitudes, used by iq2_xs.
	iq2xsGrid = parseGrid[uint64]("iq2xs_grid", iq2xsGridText, 512)
	// iq2sGrid: 1024 points of 8 magnitudes, used by iq2_s.
	iq2sGrid = parseGrid[uint64]("iq2s_grid", iq2sGridText, 1024)
	// iq3xxsGrid: 256 points of 4 magnitudes (bytes 4..62), used by iq3_xxs.
	iq3xxsGrid = parseGrid[uint32]("iq3xxs_grid", iq3xxsGridText, 256)
	// iq3sGrid: 512 points of 4 odd magnitudes (1..15), used by iq3_s.
	iq3sGrid = parseGrid[uint32]("iq3s_grid", iq3sGridText, 512)
	// iq1sGrid: 2048 points of 8 signed bytes (-1, 0 or +1), used by iq1_s
	// and iq1_m.
	iq1sGrid = parseGrid[uint64]("iq1s_grid", iq1sGridText, 2048)
	// ksignsIQ2XS maps a 7-bit sign index to the 8 sign bits of a group of
	// 8 values (bit j set: element j negative); bit 7 makes the number of
	// minus signs even.
	ksignsIQ2XS = parseGrid[uint8]("ksigns_iq2xs", ksignsIQ2XSText, 128)
)

// parseGrid reads n entries of T, one per line, each exactly as many hex
// digits as T has nibbles. Malformed embedded data is a build defect, so it
// panics.
func parseGrid[T uint8 | uint32 | uint64](name, text string, n int) []T {
	size := bits.Len64(uint64(^T(0)))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != n {
		panic(fmt.Sprintf("quant: grids/%s.txt has %d entries, want %d", name, len(lines), n))
	}
	out := make([]T, n)
	for i, line := range lines {
		v, err := strconv.ParseUint(line, 16, size)
		if err != nil || len(line) != size/4 {
			panic(fmt.Sprintf("quant: grids/%s.txt line %d: bad entry %q", name, i+1, line))
		}
		out[i] = T(v)
	}
	return out
}
