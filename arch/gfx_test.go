package arch_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/internal/quote"
)

func TestParseGfx(t *testing.T) {
	tests := []struct {
		in   string
		want arch.Gfx
	}{
		{"gfx90a", arch.Gfx{Name: "gfx90a", CC: 0x100090a}},
		{"gfx1100", arch.Gfx{Name: "gfx1100", CC: 0x1001100}},
		{"gfx942", arch.Gfx{Name: "gfx942", CC: 0x1000942}},
		{"gfx1030", arch.Gfx{Name: "gfx1030", CC: 0x1001030}},
		{"gfx803", arch.Gfx{Name: "gfx803", CC: arch.GCN4}},
		{"gfx900", arch.Gfx{Name: "gfx900", CC: arch.Vega}},
		{"gfx906", arch.Gfx{Name: "gfx906", CC: arch.Vega20}},
		{"gfx908", arch.Gfx{Name: "gfx908", CC: arch.CDNA1}},
		{"gfx90c", arch.Gfx{Name: "gfx90c", CC: 0x100090c}},
		{"gfx950", arch.Gfx{Name: "gfx950", CC: arch.CDNA4}},
		{"gfx1010", arch.Gfx{Name: "gfx1010", CC: arch.RDNA1}},
		{"gfx1031", arch.Gfx{Name: "gfx1031", CC: 0x1001031}},
		{"gfx1103", arch.Gfx{Name: "gfx1103", CC: 0x1001103}},
		{"gfx1150", arch.Gfx{Name: "gfx1150", CC: arch.RDNA3_5}},
		{"gfx1151", arch.Gfx{Name: "gfx1151", CC: 0x1001151}},
		{"gfx1200", arch.Gfx{Name: "gfx1200", CC: arch.RDNA4}},
		{"gfx1201", arch.Gfx{Name: "gfx1201", CC: 0x1001201}},
		{"GFX90A", arch.Gfx{Name: "gfx90a", CC: 0x100090a}},
		{"gfx0906", arch.Gfx{Name: "gfx906", CC: arch.Vega20}},
		{"gfx90a:sramecc+:xnack-", arch.Gfx{Name: "gfx90a", CC: 0x100090a, Features: []string{"sramecc+", "xnack-"}}},
		{"gfx942:xnack+", arch.Gfx{Name: "gfx942", CC: arch.CDNA3, Features: []string{"xnack+"}}},
		{"gfx10-3-generic", arch.Gfx{Name: "gfx10-3-generic", CC: 0x1001030, Generic: true}},
		{"gfx10-1-generic", arch.Gfx{Name: "gfx10-1-generic", CC: arch.RDNA1, Generic: true}},
		{"gfx9-generic", arch.Gfx{Name: "gfx9-generic", CC: 0x1000900, Generic: true}},
		{"gfx9-4-generic:sramecc+:xnack-", arch.Gfx{Name: "gfx9-4-generic", CC: 0x1000940, Generic: true, Features: []string{"sramecc+", "xnack-"}}},
		{"gfx11-generic", arch.Gfx{Name: "gfx11-generic", CC: 0x1001100, Generic: true}},
		{"gfx12-generic", arch.Gfx{Name: "gfx12-generic", CC: 0x1001200, Generic: true}},
		{"gfx10-3-GENERIC", arch.Gfx{Name: "gfx10-3-generic", CC: 0x1001030, Generic: true}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := arch.ParseGfx(tt.in)
			require.NoError(t, err)
			tt.want.Input = tt.in
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseGfx(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseGfxMalformed(t *testing.T) {
	for _, in := range []string{
		"",
		"g",
		"gfx",
		"gfxzz",
		"nvidia",
		"sm_90",
		"gfx-generic",
		"gfx9",
		"gfx90",
		"gfx00a",         // no major part
		"gfx0-generic",   // major 0
		"gfx12345",       // major 0x123 too large
		"gfx1g00",        // not hex
		"gfx 90a",        // space
		"gfx-90a",        // dash in a non-generic name
		"gfx90a-generic", // major 0x90a too large
		"gfx10-33-generic",
		"gfx10-3-1-generic",
		"gfx10--generic",
		"gfx9-generic-generic",
		"gfxzz-generic",
		"gfx90a:",
		"gfx90a:xnack",
		"gfx90a::xnack-",
		"gfx90a:+",
		"gfx90a:xn ack+",
		"gfx90a:xnack+:xnack-",          // contradictory
		"gfx90a:xnack-:xnack+",          // contradictory
		"gfx90a:xnack+:xnack+",          // repeated
		"gfx90a:sramecc+:xnack-:xnack-", // repeated, not adjacent to the first
		"gfx942:xnack+:XNACK-",          // names compare without case
		"gfx9-4-generic:sramecc-:sramecc+",
		":gfx90a",
		" gfx90a",
	} {
		t.Run(strconv.Quote(in), func(t *testing.T) {
			_, err := arch.ParseGfx(in)
			require.Error(t, err)
			assert.ErrorIs(t, err, arch.ErrSyntax)
			assert.ErrorContains(t, err, quote.Q(in), "error names the input")
		})
	}
}

func TestGfxStringAndFeature(t *testing.T) {
	g, err := arch.ParseGfx("gfx90a:sramecc+:xnack-")
	require.NoError(t, err)
	assert.Equal(t, "gfx90a:sramecc+:xnack-", g.String())

	on, present := g.Feature("sramecc")
	assert.True(t, present)
	assert.True(t, on)
	on, present = g.Feature("xnack")
	assert.True(t, present)
	assert.False(t, on)
	_, present = g.Feature("tgsplit")
	assert.False(t, present)

	plain, err := arch.ParseGfx("gfx1100")
	require.NoError(t, err)
	assert.Equal(t, "gfx1100", plain.String())
}

func TestResolveGfx(t *testing.T) {
	tests := []struct {
		name         string
		gfx          string
		major, minor int
		want         arch.CC
		fallback     bool
	}{
		{"name wins over major/minor", "gfx90a:sramecc+:xnack-", 9, 0, arch.CDNA2, false},
		{"name without runtime version", "gfx1100", 0, 0, arch.RDNA3, false},
		{"generic name", "gfx10-3-generic", 10, 3, arch.RDNA2, false},
		{"bare gfx falls back", "gfx", 9, 0, arch.Vega, true},
		{"empty falls back", "", 9, 4, arch.OffsetAMD + 0x940, true},
		{"no major part falls back", "gfx00a", 9, 0, arch.Vega, true},
		{"garbage falls back", "unknown", 9, 6, arch.OffsetAMD + 0x960, true},
		// The seed's fallback is major*0x100: gfx10+ lands outside its family.
		{"seed quirk for gfx10", "", 10, 3, arch.OffsetAMD + 0xa30, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, fallback, err := arch.ResolveGfx(tt.gfx, tt.major, tt.minor)
			require.NoError(t, err)
			assert.Equal(t, tt.want, cc)
			assert.Equal(t, tt.fallback, fallback)
		})
	}

	t.Run("no name and no major is an error", func(t *testing.T) {
		_, fallback, err := arch.ResolveGfx("gfxzz", 0, 0)
		require.ErrorIs(t, err, arch.ErrSyntax)
		assert.False(t, fallback)
		assert.ErrorContains(t, err, `"gfxzz"`)
	})
}

func TestParseKFDTargetVersion(t *testing.T) {
	tests := []struct {
		in   string
		name string
		cc   arch.CC
	}{
		{"90012", "gfx90c", 0x100090c},
		{"90010", "gfx90a", arch.CDNA2},
		{"100300", "gfx1030", arch.RDNA2},
		{"110001", "gfx1101", 0x1001101},
		{"80003", "gfx803", arch.GCN4},
		{"90006", "gfx906", arch.Vega20},
		{"90402", "gfx942", arch.CDNA3},
		{"110501", "gfx1151", 0x1001151},
		{"120001", "gfx1201", 0x1001201},
		{" 90010\n", "gfx90a", arch.CDNA2},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			g, err := arch.ParseKFDTargetVersion(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.in, g.Input)
			assert.Equal(t, tt.name, g.Name)
			assert.Equal(t, tt.cc, g.CC)
			assert.False(t, g.Generic)
		})
	}

	for _, in := range []string{"", "0", "abc", "-90010", "+90010", "90016", "91600", "9001", "1000000", "1000000000", "90010x", "9.0.10"} {
		t.Run("malformed "+strconv.Quote(in), func(t *testing.T) {
			_, err := arch.ParseKFDTargetVersion(in)
			require.ErrorIs(t, err, arch.ErrSyntax)
			assert.ErrorContains(t, err, quote.Q(in))
		})
	}
}

func TestParseHSAOverride(t *testing.T) {
	tests := []struct {
		in   string
		want arch.CC
	}{
		{"10.3.0", arch.RDNA2},
		{"11.0.0", arch.RDNA3},
		{"11.0.2", 0x1001102},
		{"9.0.10", arch.CDNA2},
		{"9.4.2", arch.CDNA3},
		{"9.0.6", arch.Vega20},
		{"12.0.1", 0x1001201},
		{" 10.3.0\n", arch.RDNA2},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := arch.ParseHSAOverride(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	for _, in := range []string{"", "10", "10.3", "10.3.0.1", "10.x.0", "0.3.0", "10.16.0", "10.3.16", "10..0", "-1.3.0", "gfx1030", "100.0.0", "10.3.0a"} {
		t.Run("malformed "+strconv.Quote(in), func(t *testing.T) {
			_, err := arch.ParseHSAOverride(in)
			require.ErrorIs(t, err, arch.ErrSyntax)
			assert.ErrorContains(t, err, quote.Q(in))
		})
	}
}

func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestHSAOverrideFor(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		device int
		want   arch.Override
		ok     bool
	}{
		{"nothing set", nil, 0, arch.Override{}, false},
		{
			"global applies to every device",
			map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, 1,
			arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION", Value: "10.3.0", CC: arch.RDNA2}, true,
		},
		{
			"per-device beats global",
			map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_1": "11.0.0"}, 1,
			arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION_1", Value: "11.0.0", CC: arch.RDNA3}, true,
		},
		{
			"another device's variable does not apply",
			map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_0": "11.0.0"}, 1,
			arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION", Value: "10.3.0", CC: arch.RDNA2}, true,
		},
		{
			"per-device alone",
			map[string]string{"HSA_OVERRIDE_GFX_VERSION_0": "9.0.6"}, 0,
			arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION_0", Value: "9.0.6", CC: arch.Vega20}, true,
		},
		{
			"blank per-device is skipped",
			map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_2": " "}, 2,
			arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION", Value: "10.3.0", CC: arch.RDNA2}, true,
		},
		{"blank global is unset", map[string]string{"HSA_OVERRIDE_GFX_VERSION": ""}, 0, arch.Override{}, false},
		{
			"negative device reads the global only",
			map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_-1": "11.0.0"}, -1,
			arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION", Value: "10.3.0", CC: arch.RDNA2}, true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := arch.HSAOverrideFor(mapEnv(tt.env), tt.device)
			require.NoError(t, err)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("malformed per-device is an error naming variable and value", func(t *testing.T) {
		env := map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_1": "11.x"}
		o, ok, err := arch.HSAOverrideFor(mapEnv(env), 1)
		require.ErrorIs(t, err, arch.ErrSyntax)
		assert.False(t, ok)
		assert.ErrorContains(t, err, "HSA_OVERRIDE_GFX_VERSION_1")
		assert.ErrorContains(t, err, `"11.x"`)
		assert.Equal(t, "HSA_OVERRIDE_GFX_VERSION_1", o.Env)
		assert.Equal(t, "11.x", o.Value)

		var pe *arch.ParseError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "HSA_OVERRIDE_GFX_VERSION_1", pe.Env)
	})

	t.Run("malformed global is an error", func(t *testing.T) {
		env := map[string]string{"HSA_OVERRIDE_GFX_VERSION": "gfx1030"}
		_, _, err := arch.HSAOverrideFor(mapEnv(env), 0)
		require.ErrorIs(t, err, arch.ErrSyntax)
		assert.ErrorContains(t, err, `HSA_OVERRIDE_GFX_VERSION="gfx1030"`)
	})

	t.Run("nil lookup reads the process environment", func(t *testing.T) {
		t.Setenv("HSA_OVERRIDE_GFX_VERSION", "11.0.0")
		got, ok, err := arch.HSAOverrideFor(nil, 7)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, arch.RDNA3, got.CC)
	})
}

func TestParseErrorBounded(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"gfx id", func() error { _, err := arch.ParseGfx("gfx90a" + big); return err }},
		{"gfx feature", func() error { _, err := arch.ParseGfx("gfx90a:" + big); return err }},
		{"repeated long feature", func() error { _, err := arch.ParseGfx("gfx90a:" + big + "+:" + big + "-"); return err }},
		{"generic", func() error { _, err := arch.ParseGfx("gfx" + big + "-generic"); return err }},
		{"sm", func() error { _, err := arch.ParseSM("sm_" + big); return err }},
		{"hsa", func() error { _, err := arch.ParseHSAOverride(big + ".0.0"); return err }},
		{"decode prefix", func() error { _, err := arch.Decode(big+":1", ""); return err }},
		{"kfd", func() error { _, err := arch.ParseKFDTargetVersion(big); return err }},
		{"env", func() error {
			_, _, err := arch.HSAOverrideFor(func(string) (string, bool) { return big, true }, -1)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			require.ErrorIs(t, err, arch.ErrSyntax)
			assert.Less(t, len(err.Error()), 600, "error: %.300s", err)
			assert.Contains(t, err.Error(), "more bytes)", "says how much was cut")
		})
	}
}
