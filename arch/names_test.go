package arch_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
)

func TestParseSM(t *testing.T) {
	tests := []struct {
		in   string
		want arch.CC
	}{
		{"sm_90", arch.Hopper},
		{"sm_120a", arch.Blackwell},
		{"compute_90", arch.Hopper},
		{"sm_75", arch.Turing},
		{"sm_61", arch.DP4A},
		{"sm_86", 860},
		{"sm_89", arch.AdaLovelace},
		{"sm_90a", arch.Hopper},
		{"sm_100f", 1000},
		{"sm_121", arch.DGXSpark},
		{"compute_120a", arch.Blackwell},
		{"SM_80", arch.Ampere},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := arch.ParseSM(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	for _, in := range []string{"", "sm_", "sm_a", "sm_9", "sm_x0", "sm90", "sm-90", "gfx90a", "sm_09", "sm_00", "sm_90b", "sm_90aa", "sm_12345", "compute_", "mp_22", "sm_ 90"} {
		t.Run("malformed "+strconv.Quote(in), func(t *testing.T) {
			_, err := arch.ParseSM(in)
			require.ErrorIs(t, err, arch.ErrSyntax)
			assert.ErrorContains(t, err, quote.Q(in))
		})
	}
}

func TestParseMP(t *testing.T) {
	tests := []struct {
		in   string
		want arch.CC
	}{
		{"mp_21", arch.QY1},
		{"mp_22", arch.QY2},
		{"mp_31", arch.PH1},
		{"MP_22", arch.QY2},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := arch.ParseMP(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, arch.VendorMThreads, got.Vendor())
		})
	}

	for _, in := range []string{"", "mp_", "mp_2", "mp_ab", "sm_21", "mp_02", "mp21", "mp_22a"} {
		t.Run("malformed "+strconv.Quote(in), func(t *testing.T) {
			_, err := arch.ParseMP(in)
			require.ErrorIs(t, err, arch.ErrSyntax)
			assert.ErrorContains(t, err, quote.Q(in))
		})
	}
}

// Name is the inverse of the name parsers for canonical values.
func TestNameRoundTrip(t *testing.T) {
	for _, cc := range []arch.CC{
		arch.Pascal, arch.DP4A, arch.Volta, arch.Turing, arch.Ampere, arch.AdaLovelace, arch.Hopper,
		arch.Blackwell, arch.DGXSpark, arch.Rubin,
		arch.GCN4, arch.Vega, arch.Vega20, arch.CDNA1, arch.CDNA2, arch.CDNA3, arch.CDNA4,
		arch.RDNA1, arch.RDNA2, arch.RDNA3, arch.RDNA3_5, arch.RDNA4,
		arch.QY1, arch.QY2, arch.PH1,
	} {
		t.Run(cc.Name(), func(t *testing.T) {
			d, err := arch.Decode(cc.Name(), "")
			require.NoError(t, err)
			assert.Equal(t, cc, d.CC)
		})
	}
}
