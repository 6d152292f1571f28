package switches

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
)

func TestParseBool(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, " ": false, "0": false, "false": false, "FALSE": false, "no": false, "Off": false, " off ": false,
		"1": true, "yes": true, "on": true, "true": true, "x": true, "2": true, "-1": true,
	} {
		t.Run(v, func(t *testing.T) {
			got, err := parseBool(v)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		name, v string
		lo, hi  int
		want    int
		err     string
	}{
		{"plain", "64", 0, math.MaxInt32, 64, ""},
		{"space", " 7 ", 0, 10, 7, ""},
		{"zero allowed", "0", 0, 10, 0, ""},
		{"lowest", "1", 1, 16, 1, ""},
		{"highest", "16", 1, 16, 16, ""},
		{"below", "0", 1, 16, 0, "want an integer from 1 to 16"},
		{"above", "17", 1, 16, 0, "want an integer from 1 to 16"},
		{"negative", "-1", 0, math.MaxInt, 0, "want an integer of at least 0"},
		{"word", "abc", 0, 10, 0, "want an integer from 0 to 10"},
		{"fraction", "1.5", 0, 10, 0, "want an integer"},
		{"overflow", "99999999999999999999999", 0, math.MaxInt, 0, "want an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := intParser(tc.lo, tc.hi)(tc.v)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseUint64(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {" 18446744073709551615 ", math.MaxUint64, true},
		{"18446744073709551616", 0, false}, {"-1", 0, false}, {"0x10", 0, false}, {"seed", 0, false},
	} {
		t.Run(tc.v, func(t *testing.T) {
			got, err := parseUint64(tc.v)
			assert.Equal(t, tc.ok, err == nil, "error %v", err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		name, v string
		want    uint64
	}{
		{"GiB", "1GiB", 1 << 30},
		{"MiB", "512MiB", 512 << 20},
		{"KiB", "64KiB", 64 << 10},
		{"TiB", "1TiB", 1 << 40},
		{"GB is decimal", "2GB", 2e9},
		{"plain bytes", "1048576", 1 << 20},
		{"B suffix", "4096B", 4096},
		{"space and lower case", "3 mib", 3 << 20},
		{"surrounding space", " 1GiB ", 1 << 30},
		{"fraction", "1.5GiB", 3 << 29},
		{"fraction of a byte dropped", "1.5", 1},
		{"single letter is binary", "2g", 2 << 30},
		{"largest", "9223372036854775807", math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSize(tc.v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseSizeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, v, err string
	}{
		{"negative bytes", "-5", "the size is negative"},
		{"negative with unit", "-1GiB", "the size is negative"},
		{"negative with space", " -2 MiB", "the size is negative"},
		{"unknown unit", "12XB", `unknown unit "XB"`},
		{"plus sign", "+5", `unknown unit "+5"`},
		{"unit only", "GiB", "want a number of bytes"},
		{"dot only", ".", "want a number of bytes"},
		{"zero", "0", "at least one byte"},
		{"less than a byte", "0.5", "at least one byte"},
		{"two dots", "1.2.3MiB", "want a number of bytes"},
		{"too large", "100000000TiB", "too large"},
		{"just too large", "9223372036854775808", "too large"},
		{"long unit is cut", "5" + strings.Repeat("x", 1<<20), "more bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSize(tc.v)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.err)
			assert.Less(t, len(err.Error()), 300)
		})
	}
}

// TestParseSizeOrZero: "0" is 0 (a limit turned off), anything else as
// parseSize, errors included.
func TestParseSizeOrZero(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want uint64
		err  string
	}{
		{"0", 0, ""}, {" 0 ", 0, ""}, {"16MiB", 16 << 20, ""}, {"4096", 4096, ""},
		{"0.5", 0, "at least one byte"}, {"0B", 0, "at least one byte"}, {"-1", 0, "negative"}, {"12 lumps", 0, "unknown unit"},
	} {
		got, err := parseSizeOrZero(tc.v)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.v)
			continue
		}
		require.NoError(t, err, tc.v)
		assert.Equal(t, tc.want, got, tc.v)
	}
}

func TestParseList(t *testing.T) {
	parse := listParser(Vendors)
	for _, tc := range []struct {
		name, v string
		want    []string
		err     string
	}{
		{"one", "hip", []string{"hip"}, ""},
		{"commas", "cuda,hip", []string{"cuda", "hip"}, ""},
		{"spaces", "musa cuda", []string{"musa", "cuda"}, ""},
		{"repeats dropped", "hip, hip,cuda", []string{"hip", "cuda"}, ""},
		{"empty fields", ",,hip,", []string{"hip"}, ""},
		{"unknown", "cuda,rocm", nil, `unknown value "rocm" (want cuda, hip, musa)`},
		{"case matters", "HIP", nil, `unknown value "HIP"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.v)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseProportions(t *testing.T) {
	for _, tc := range []struct {
		name, v string
		want    []float64
		err     string
	}{
		{"two", "0.7,0.3", []float64{0.7, 0.3}, ""},
		{"slashes as ggml", "3/1", []float64{3, 1}, ""},
		{"spaces around", " 1 , 2 ,3", []float64{1, 2, 3}, ""},
		{"zeros allowed", "0,1", []float64{0, 1}, ""},
		{"all zero is the default split", "0,0", []float64{0, 0}, ""},
		{"exponent", "1e-1,9e-1", []float64{0.1, 0.9}, ""},
		{"negative", "1,-1", nil, `proportion 1, "-1", is not a finite number of at least 0`},
		{"word", "half,half", nil, `proportion 0, "half"`},
		{"infinite", "inf,1", nil, "not a finite number"},
		{"not a number", "NaN", nil, "not a finite number"},
		{"repeated separators count once, as in ggml", "1,,2", []float64{1, 2}, ""},
		{"blank item", "1, ,2", nil, `proportion 1, " "`},
		{"separators only", ",/", nil, "want numbers separated by commas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProportions(tc.v)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseArchs(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Of[[]arch.CC]
		v    string
		want []arch.CC
		err  string
	}{
		{"cuda numbers", CUDAArchs, "75,80,90", []arch.CC{750, 800, 900}, ""},
		{"cuda names, sorted and deduplicated", CUDAArchs, "90,80 sm_86;80", []arch.CC{800, 860, 900}, ""},
		{"cuda arch-specific", CUDAArchs, "sm_90a", []arch.CC{900}, ""},
		{"cuda bad", CUDAArchs, "nine", nil, `TERNION_CUDA_ARCHS="nine": invalid sm name "sm_nine"`},
		{"hip", HIPArchs, "gfx1100, 90a", []arch.CC{arch.CDNA2, arch.RDNA3}, ""},
		{"hip features", HIPArchs, "gfx90a:xnack-", []arch.CC{arch.CDNA2}, ""},
		{"hip bad", HIPArchs, "gfx", nil, "invalid gfx name"},
		{"hip repeated feature", HIPArchs, "gfx90a:xnack+:xnack-", nil, "both on and off"},
		{"musa", MUSAArchs, "mp_31 22", []arch.CC{arch.QY2, arch.PH1}, ""},
		{"musa bad", MUSAArchs, "mp_2", nil, "invalid mp name"},
		{"separators only", CUDAArchs, ",;", nil, "want at least one arch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, set, err := Get(env(map[string]string{tc.s.Name: tc.v}), tc.s)
			assert.True(t, set)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorIs(t, err, ErrMalformed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseGfxVersion(t *testing.T) {
	cc, err := parseGfxVersion("10.3.0")
	require.NoError(t, err)
	assert.Equal(t, arch.RDNA2, cc)
	_, err = parseGfxVersion("gfx1030")
	assert.EqualError(t, err, "want major.minor.stepping", "the reason alone: the Error quotes the value")
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GiB", "512MiB", "64KiB", "2GB", "1048576", "1.5 gib", "", ".", "1e9", "-3", "-1GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err == nil && (n == 0 || n > math.MaxInt64) {
			t.Fatalf("parseSize(%q) = %d without error", s, n)
		}
		if err != nil && len(err.Error()) > 4*quote.Max+200 { // each quoted byte at most 4 characters (\xff)
			t.Fatalf("parseSize: %d-byte error", len(err.Error()))
		}
		if strings.HasPrefix(strings.TrimSpace(s), "-") && (err == nil || !strings.Contains(err.Error(), "negative")) {
			t.Fatalf("parseSize(%q): %v, want a negative-size error", s, err)
		}
	})
}
