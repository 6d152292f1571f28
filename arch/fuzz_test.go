package arch_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
)

func FuzzParseGfx(f *testing.F) {
	for _, s := range []string{
		"gfx90a", "gfx1100", "gfx942", "gfx1030", "gfx90a:sramecc+:xnack-", "gfx10-3-generic",
		"gfx9-generic", "gfx11-generic", "gfx9-4-generic:xnack+", "", "gfx", "gfxzz", "nvidia", "gfx-generic",
		"gfx00a", "GFX1151", "gfx12345", "gfx90a:", "gfx10--generic",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := arch.ParseGfx(s)
		if err != nil {
			require.ErrorIs(t, err, arch.ErrSyntax)
			require.Contains(t, err.Error(), quote.Q(s), "error names the input")
			require.Less(t, len(err.Error()), 1024, "the error quotes a bounded part of the input")
			return
		}
		require.Equal(t, s, g.Input)
		require.True(t, g.CC.IsAMD(), "cc %v is not AMD", g.CC)
		require.NotZero(t, g.CC&0xff00, "cc %v has no major part", g.CC)
		require.LessOrEqual(t, g.CC, arch.OffsetAMD+0xffff)

		// The target id (name plus flags) parses back to the same value.
		again, err := arch.ParseGfx(g.String())
		require.NoError(t, err)
		require.Equal(t, g.CC, again.CC)
		require.Equal(t, g.Name, again.Name)
		require.Equal(t, g.Features, again.Features)

		if !g.Generic {
			// A non-generic name's canonical spelling is CC.Name, which parses back.
			require.Equal(t, g.CC.Name(), g.Name)
			back, err := arch.ParseGfx(g.CC.Name())
			require.NoError(t, err)
			require.Equal(t, g.CC, back.CC)
		}

		// Decode agrees, and so does ResolveGfx without falling back.
		d, err := arch.Decode(s, "")
		require.NoError(t, err)
		require.Equal(t, g.CC, d.CC)
		cc, fallback, err := arch.ResolveGfx(s, 9, 0)
		require.NoError(t, err)
		require.False(t, fallback)
		require.Equal(t, g.CC, cc)
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"gfx90a", "gfx90a:sramecc+:xnack-", "gfx10-3-generic", "sm_90", "sm_120a", "compute_90", "mp_22",
		"kfd:90010", "hsa:10.3.0", "nv:8.6", "amd:9.0", "mt:2.2", "900", "0x100090a", "", "nvidia", "x:y:z",
	} {
		f.Add(s, "")
		f.Add(s, "10.3.0")
	}
	f.Add("gfx1031", "garbage")
	f.Fuzz(func(t *testing.T, input, override string) {
		d, err := arch.Decode(input, override)
		if err != nil {
			require.ErrorIs(t, err, arch.ErrSyntax)
			return
		}
		require.Equal(t, input, d.Input)
		require.Equal(t, d.CC.Vendor(), d.Vendor)
		require.Equal(t, d.CC.Name(), d.Name)
		require.Equal(t, d.CC.Family(), d.Family)
		require.Contains(t, []int{32, 64}, d.WaveSize)
		require.Equal(t, d.Vendor == arch.VendorAMD, d.Gfx != "", "gfx name set exactly for AMD")
		if d.Override != nil {
			require.Equal(t, arch.VendorAMD, d.Vendor)
			require.Equal(t, d.Override.CC, d.CC)
		}

		// The value printed by String decodes to itself.
		back, err := arch.Decode(d.CC.String(), "")
		require.NoError(t, err, "Decode(%q)", d.CC.String())
		require.Equal(t, d.CC, back.CC)
		require.Equal(t, d.Vendor, back.Vendor)
	})
}

// kfdVersion is the inverse of ParseKFDTargetVersion for its results: the hex
// digits of the major part were printed from a decimal number.
func kfdVersion(cc arch.CC) (int, error) {
	v := int(cc - arch.OffsetAMD)
	major, err := strconv.Atoi(strconv.FormatInt(int64(v>>8), 16))
	return major*10000 + (v>>4&0xf)*100 + v&0xf, err
}

func FuzzParseKFDTargetVersion(f *testing.F) {
	for _, s := range []string{"90012", "90010", "100300", "110001", "0", "", "abc", "90016", " 90010\n", "-1", "999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := arch.ParseKFDTargetVersion(s)
		if err != nil {
			require.ErrorIs(t, err, arch.ErrSyntax)
			return
		}
		require.True(t, g.CC.IsAMD())
		require.False(t, g.Generic)
		require.Empty(t, g.Features)
		require.Equal(t, g.CC.Name(), g.Name)

		back, err := arch.ParseGfx(g.Name)
		require.NoError(t, err)
		require.Equal(t, g.CC, back.CC)

		v, err := kfdVersion(g.CC)
		require.NoError(t, err)
		want, err := strconv.Atoi(strings.TrimSpace(s))
		require.NoError(t, err)
		assert.Equal(t, want, v)

		d, err := arch.Decode("kfd:"+s, "")
		require.NoError(t, err)
		assert.Equal(t, g.CC, d.CC)
	})
}
