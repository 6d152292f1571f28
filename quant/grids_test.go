package quant

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readGridFile parses grids/<name>.txt on its own (not through parseGrid),
// so the tests below compare the embedded tables with the files.
func readGridFile(t *testing.T, name string) []uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("grids", name+".txt"))
	require.NoError(t, err)
	var out []uint64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseUint(f, 16, 64)
		require.NoError(t, err, "%s: %q", name, f)
		out = append(out, v)
	}
	return out
}

func widen[T uint8 | uint32 | uint64](s []T) []uint64 {
	out := make([]uint64, len(s))
	for i, v := range s {
		out[i] = uint64(v)
	}
	return out
}

func TestGridFiles(t *testing.T) {
	tests := []struct {
		name    string   // file name, ggml's table name
		table   []uint64 // the embedded, parsed table
		count   int      // entries in ggml's declaration
		digits  int      // hex digits per line: 2 * sizeof(entry)
		sha256  string   // of the file; a changed byte fails the test
		entry   int      // bytes of an entry that hold values
		letters []byte   // the bytes the entries are made of
	}{
		{"iq2xxs_grid", widen(iq2xxsGrid), 256, 16, "bb558ad5e9b3f42202ced5e4ac2a153f7961089ee6f9434efe947b5d0a40c136", 8, []byte{0x08, 0x19, 0x2b}},
		{"iq2xs_grid", widen(iq2xsGrid), 512, 16, "09c47d3e6238d2cf784e839debf358c88a4a260db75d1c5a1bd73d121fb1beb0", 8, []byte{0x08, 0x19, 0x2b}},
		{"iq2s_grid", widen(iq2sGrid), 1024, 16, "60695b99f8f5c3b480e2c6ea53c329f34043c78d66b5c62f673c1d3cf014912c", 8, []byte{0x08, 0x19, 0x2b}},
		{"iq3xxs_grid", widen(iq3xxsGrid), 256, 8, "823463e5c624321b57e09865d01c783011f181a1589e7cb4520400642e20cdcc", 4, []byte{4, 12, 20, 28, 36, 44, 52, 62}},
		{"iq3s_grid", widen(iq3sGrid), 512, 8, "c508f58ad9a2b602ba7c51941427732c61edbeb2f8f0f22a6e8ab66c94404471", 4, []byte{1, 3, 5, 7, 9, 11, 13, 15}},
		{"iq1s_grid", widen(iq1sGrid), 2048, 16, "108927a641ea62b7ab4ed72a9e6afee0425f86c558c57fa55cf981f5ffad23a7", 8, []byte{0x00, 0x01, 0xff}},
		{"ksigns_iq2xs", widen(ksignsIQ2XS), 128, 2, "e41a948927df0716625f98504fee678f21edf47e25526a3ee1545fce1aaf06a1", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("grids", tt.name+".txt"))
			require.NoError(t, err)
			sum := sha256.Sum256(raw)
			assert.Equal(t, tt.sha256, hex.EncodeToString(sum[:]), "checksum of grids/%s.txt", tt.name)

			lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
			assert.Len(t, lines, tt.count, "lines")
			for i, l := range lines {
				if !assert.Len(t, l, tt.digits, "line %d", i+1) {
					break
				}
			}
			assert.Len(t, tt.table, tt.count, "entries of the embedded table")
			assert.Equal(t, readGridFile(t, tt.name), tt.table, "embedded table vs file")

			seen := map[uint64]bool{}
			for _, v := range tt.table {
				assert.False(t, seen[v], "entry %#x repeats", v)
				seen[v] = true
			}
			if tt.entry == 0 {
				return
			}
			used := map[byte]bool{}
			for _, v := range tt.table {
				for j := range tt.entry {
					used[byte(v>>(8*j))] = true
				}
			}
			var got []byte
			for b := range used {
				got = append(got, b)
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			assert.Equal(t, tt.letters, got, "bytes the grid is made of")
		})
	}
}

// ksigns_iq2xs[i] is i with bit 7 set when i has an odd number of bits: the
// eighth sign makes the count of minus signs in 8 values even.
func TestGridKsignsParity(t *testing.T) {
	for i, s := range ksignsIQ2XS {
		want := uint8(i) | uint8(bits.OnesCount8(uint8(i))&1)<<7
		assert.Equal(t, want, s, "ksigns_iq2xs[%d]", i)
		assert.Zero(t, bits.OnesCount8(s)&1, "ksigns_iq2xs[%d] has an odd count of minus signs", i)
	}
}

func TestGridParseRejects(t *testing.T) {
	tests := []struct {
		name, text string
	}{
		{"too few", "00000001\n00000002\n"},
		{"too many", "00000001\n00000002\n00000003\n00000004\n"},
		{"short entry", "00000001\n0000002\n00000003\n"},
		{"long entry", "00000001\n000000002\n00000003\n"},
		{"not hex", "00000001\n0000g002\n00000003\n"},
		{"sign", "00000001\n+0000002\n00000003\n"},
		{"blank line", "00000001\n\n00000003\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Panics(t, func() { parseGrid[uint32]("test", tt.text, 3) })
		})
	}
	assert.Equal(t, []uint32{1, 0xfffffffe}, parseGrid[uint32]("ok", "00000001\nfffffffe\n", 2))
	assert.Equal(t, []uint8{0x81}, parseGrid[uint8]("ok", "81", 1), "last line without newline")
}
