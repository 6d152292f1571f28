package arch_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
)

func TestConstants(t *testing.T) {
	tests := []struct {
		name string
		got  arch.CC
		want int
	}{
		{"OffsetAMD", arch.OffsetAMD, 0x1000000},
		{"OffsetMThreads", arch.OffsetMThreads, 0x100000},
		{"Pascal", arch.Pascal, 600},
		{"DP4A", arch.DP4A, 610},
		{"Volta", arch.Volta, 700},
		{"Turing", arch.Turing, 750},
		{"Ampere", arch.Ampere, 800},
		{"AdaLovelace", arch.AdaLovelace, 890},
		{"Hopper", arch.Hopper, 900},
		{"Blackwell", arch.Blackwell, 1200},
		{"DGXSpark", arch.DGXSpark, 1210},
		{"Rubin", arch.Rubin, 1300},
		{"GCN4", arch.GCN4, 0x1000803},
		{"Vega", arch.Vega, 0x1000900},
		{"Vega20", arch.Vega20, 0x1000906},
		{"CDNA1", arch.CDNA1, 0x1000908},
		{"CDNA2", arch.CDNA2, 0x100090a},
		{"CDNA3", arch.CDNA3, 0x1000942},
		{"CDNA4", arch.CDNA4, 0x1000950},
		{"RDNA1", arch.RDNA1, 0x1001010},
		{"RDNA2", arch.RDNA2, 0x1001030},
		{"RDNA3", arch.RDNA3, 0x1001100},
		{"RDNA3_5", arch.RDNA3_5, 0x1001150},
		{"RDNA4", arch.RDNA4, 0x1001200},
		{"QY1", arch.QY1, 0x100210},
		{"QY2", arch.QY2, 0x100220},
		{"PH1", arch.PH1, 0x100310},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, arch.CC(tt.want), tt.got)
		})
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name string
		got  arch.CC
		want arch.CC
	}{
		{"NVIDIA 6.0 is Pascal", arch.NVIDIA(6, 0), arch.Pascal},
		{"NVIDIA 6.1 is DP4A", arch.NVIDIA(6, 1), arch.DP4A},
		{"NVIDIA 8.6", arch.NVIDIA(8, 6), 860},
		{"NVIDIA 8.9 is Ada", arch.NVIDIA(8, 9), arch.AdaLovelace},
		{"NVIDIA 9.0 is Hopper", arch.NVIDIA(9, 0), arch.Hopper},
		{"NVIDIA 12.0 is Blackwell", arch.NVIDIA(12, 0), arch.Blackwell},
		{"NVIDIA 12.1 is DGX Spark", arch.NVIDIA(12, 1), arch.DGXSpark},
		{"NVIDIA 13.0 is Rubin", arch.NVIDIA(13, 0), arch.Rubin},
		{"AMD 9.0 is Vega", arch.AMD(9, 0), arch.Vega},
		{"AMD 10.3 is RDNA2", arch.AMD(10, 3), 0x1000a30},
		{"AMD 16.3 reads like gfx1030", arch.AMD(0x10, 3), arch.RDNA2},
		{"AMD 8.0", arch.AMD(8, 0), 0x1000800},
		{"MThreads 2.1 is QY1", arch.MThreads(2, 1), arch.QY1},
		{"MThreads 2.2 is QY2", arch.MThreads(2, 2), arch.QY2},
		{"MThreads 3.1 is PH1", arch.MThreads(3, 1), arch.PH1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got)
		})
	}
}

// predicatesOf lists the names of the predicates that hold for cc.
func predicatesOf(cc arch.CC) []string {
	all := []struct {
		name string
		f    func() bool
	}{
		{"NVIDIA", cc.IsNVIDIA}, {"AMD", cc.IsAMD}, {"MThreads", cc.IsMThreads},
		{"GCN", cc.IsGCN},
		{"CDNA", cc.IsCDNA}, {"CDNA1", cc.IsCDNA1}, {"CDNA2", cc.IsCDNA2}, {"CDNA3", cc.IsCDNA3}, {"CDNA4", cc.IsCDNA4},
		{"RDNA", cc.IsRDNA}, {"RDNA1", cc.IsRDNA1}, {"RDNA2", cc.IsRDNA2}, {"RDNA3", cc.IsRDNA3},
		{"RDNA3_0", cc.IsRDNA3_0}, {"RDNA3_5", cc.IsRDNA3_5}, {"RDNA4", cc.IsRDNA4},
		{"QY1", cc.IsQY1}, {"QY2", cc.IsQY2}, {"PH1", cc.IsPH1},
	}
	var out []string
	for _, p := range all {
		if p.f() {
			out = append(out, p.name)
		}
	}
	return out
}

func TestFamilyPredicatesAtBoundaries(t *testing.T) {
	tests := []struct {
		name   string
		cc     arch.CC
		vendor arch.Vendor
		family string
		preds  []string
	}{
		{"NVIDIA 0", 0, arch.VendorNVIDIA, "unknown", []string{"NVIDIA"}},
		{"sm_21", 210, arch.VendorNVIDIA, "pre-Kepler", []string{"NVIDIA"}},
		{"sm_30", 300, arch.VendorNVIDIA, "Kepler", []string{"NVIDIA"}},
		{"sm_37", 370, arch.VendorNVIDIA, "Kepler", []string{"NVIDIA"}},
		{"sm_50", 500, arch.VendorNVIDIA, "Maxwell", []string{"NVIDIA"}},
		{"below Pascal", arch.Pascal - 1, arch.VendorNVIDIA, "Maxwell", []string{"NVIDIA"}},
		{"Pascal", arch.Pascal, arch.VendorNVIDIA, "Pascal", []string{"NVIDIA"}},
		{"DP4A", arch.DP4A, arch.VendorNVIDIA, "Pascal", []string{"NVIDIA"}},
		{"below Volta", arch.Volta - 1, arch.VendorNVIDIA, "Pascal", []string{"NVIDIA"}},
		{"Volta", arch.Volta, arch.VendorNVIDIA, "Volta", []string{"NVIDIA"}},
		{"sm_72", 720, arch.VendorNVIDIA, "Volta", []string{"NVIDIA"}},
		{"Turing", arch.Turing, arch.VendorNVIDIA, "Turing", []string{"NVIDIA"}},
		{"below Ampere", arch.Ampere - 1, arch.VendorNVIDIA, "Turing", []string{"NVIDIA"}},
		{"Ampere", arch.Ampere, arch.VendorNVIDIA, "Ampere", []string{"NVIDIA"}},
		{"sm_86", 860, arch.VendorNVIDIA, "Ampere", []string{"NVIDIA"}},
		{"below Ada", arch.AdaLovelace - 1, arch.VendorNVIDIA, "Ampere", []string{"NVIDIA"}},
		{"Ada", arch.AdaLovelace, arch.VendorNVIDIA, "AdaLovelace", []string{"NVIDIA"}},
		{"Hopper", arch.Hopper, arch.VendorNVIDIA, "Hopper", []string{"NVIDIA"}},
		{"sm_100", 1000, arch.VendorNVIDIA, "Blackwell", []string{"NVIDIA"}},
		{"Blackwell", arch.Blackwell, arch.VendorNVIDIA, "Blackwell", []string{"NVIDIA"}},
		{"DGX Spark", arch.DGXSpark, arch.VendorNVIDIA, "Blackwell", []string{"NVIDIA"}},
		{"Rubin", arch.Rubin, arch.VendorNVIDIA, "Rubin", []string{"NVIDIA"}},
		{"last NVIDIA", arch.OffsetMThreads - 1, arch.VendorNVIDIA, "Rubin", []string{"NVIDIA"}},

		{"OffsetMThreads", arch.OffsetMThreads, arch.VendorMThreads, "unknown", []string{"MThreads"}},
		{"below QY1", arch.QY1 - 1, arch.VendorMThreads, "unknown", []string{"MThreads"}},
		{"QY1", arch.QY1, arch.VendorMThreads, "QY1", []string{"MThreads", "QY1"}},
		{"below QY2", arch.QY2 - 1, arch.VendorMThreads, "QY1", []string{"MThreads", "QY1"}},
		{"QY2", arch.QY2, arch.VendorMThreads, "QY2", []string{"MThreads", "QY2"}},
		{"below PH1", arch.PH1 - 1, arch.VendorMThreads, "QY2", []string{"MThreads", "QY2"}},
		{"PH1", arch.PH1, arch.VendorMThreads, "PH1", []string{"MThreads", "PH1"}},
		{"last MThreads", arch.OffsetAMD - 1, arch.VendorMThreads, "PH1", []string{"MThreads", "PH1"}},

		{"OffsetAMD", arch.OffsetAMD, arch.VendorAMD, "unknown", []string{"AMD"}},
		{"first GCN", arch.OffsetAMD + 1, arch.VendorAMD, "GCN", []string{"AMD", "GCN"}},
		{"GCN4", arch.GCN4, arch.VendorAMD, "GCN", []string{"AMD", "GCN"}},
		{"Vega", arch.Vega, arch.VendorAMD, "GCN", []string{"AMD", "GCN"}},
		{"Vega20", arch.Vega20, arch.VendorAMD, "GCN", []string{"AMD", "GCN"}},
		{"below CDNA1", arch.CDNA1 - 1, arch.VendorAMD, "GCN", []string{"AMD", "GCN"}},
		{"CDNA1", arch.CDNA1, arch.VendorAMD, "CDNA1", []string{"AMD", "CDNA", "CDNA1"}},
		{"below CDNA2", arch.CDNA2 - 1, arch.VendorAMD, "CDNA1", []string{"AMD", "CDNA", "CDNA1"}},
		{"CDNA2", arch.CDNA2, arch.VendorAMD, "CDNA2", []string{"AMD", "CDNA", "CDNA2"}},
		{"gfx90c is CDNA2 by number", arch.OffsetAMD + 0x90c, arch.VendorAMD, "CDNA2", []string{"AMD", "CDNA", "CDNA2"}},
		{"below CDNA3", arch.CDNA3 - 1, arch.VendorAMD, "CDNA2", []string{"AMD", "CDNA", "CDNA2"}},
		{"CDNA3", arch.CDNA3, arch.VendorAMD, "CDNA3", []string{"AMD", "CDNA", "CDNA3"}},
		{"below CDNA4", arch.CDNA4 - 1, arch.VendorAMD, "CDNA3", []string{"AMD", "CDNA", "CDNA3"}},
		{"CDNA4", arch.CDNA4, arch.VendorAMD, "CDNA4", []string{"AMD", "CDNA", "CDNA4"}},
		{"below RDNA1", arch.RDNA1 - 1, arch.VendorAMD, "CDNA4", []string{"AMD", "CDNA", "CDNA4"}},
		{"RDNA1", arch.RDNA1, arch.VendorAMD, "RDNA1", []string{"AMD", "RDNA", "RDNA1"}},
		{"below RDNA2", arch.RDNA2 - 1, arch.VendorAMD, "RDNA1", []string{"AMD", "RDNA", "RDNA1"}},
		{"RDNA2", arch.RDNA2, arch.VendorAMD, "RDNA2", []string{"AMD", "RDNA", "RDNA2"}},
		{"below RDNA3", arch.RDNA3 - 1, arch.VendorAMD, "RDNA2", []string{"AMD", "RDNA", "RDNA2"}},
		{"RDNA3", arch.RDNA3, arch.VendorAMD, "RDNA3", []string{"AMD", "RDNA", "RDNA3", "RDNA3_0"}},
		{"below RDNA3_5", arch.RDNA3_5 - 1, arch.VendorAMD, "RDNA3", []string{"AMD", "RDNA", "RDNA3", "RDNA3_0"}},
		{"RDNA3_5", arch.RDNA3_5, arch.VendorAMD, "RDNA3_5", []string{"AMD", "RDNA", "RDNA3", "RDNA3_5"}},
		{"below RDNA4", arch.RDNA4 - 1, arch.VendorAMD, "RDNA3_5", []string{"AMD", "RDNA", "RDNA3", "RDNA3_5"}},
		{"RDNA4", arch.RDNA4, arch.VendorAMD, "RDNA4", []string{"AMD", "RDNA", "RDNA4"}},
		{"gfx1201", arch.OffsetAMD + 0x1201, arch.VendorAMD, "RDNA4", []string{"AMD", "RDNA", "RDNA4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.vendor, tt.cc.Vendor(), "vendor")
			assert.Equal(t, tt.family, tt.cc.Family(), "family")
			assert.Equal(t, tt.preds, predicatesOf(tt.cc), "predicates")
		})
	}
}

func TestWaveSize(t *testing.T) {
	tests := []struct {
		name string
		cc   arch.CC
		want int
	}{
		{"Pascal", arch.Pascal, 32},
		{"Hopper", arch.Hopper, 32},
		{"Rubin", arch.Rubin, 32},
		{"QY1", arch.QY1, 32},
		{"PH1", arch.PH1, 32},
		{"OffsetAMD", arch.OffsetAMD, 64},
		{"GCN4", arch.GCN4, 64},
		{"Vega", arch.Vega, 64},
		{"CDNA1", arch.CDNA1, 64},
		{"CDNA2", arch.CDNA2, 64},
		{"CDNA3", arch.CDNA3, 64},
		{"CDNA4", arch.CDNA4, 64},
		{"below RDNA1", arch.RDNA1 - 1, 64},
		{"RDNA1", arch.RDNA1, 32},
		{"RDNA2", arch.RDNA2, 32},
		{"RDNA3", arch.RDNA3, 32},
		{"RDNA3_5", arch.RDNA3_5, 32},
		{"RDNA4", arch.RDNA4, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cc.WaveSize())
		})
	}
}

func TestNameAndString(t *testing.T) {
	tests := []struct {
		cc         arch.CC
		name, text string
	}{
		{arch.Pascal, "sm_60", "600"},
		{arch.Turing, "sm_75", "750"},
		{860, "sm_86", "860"},
		{arch.Hopper, "sm_90", "900"},
		{1000, "sm_100", "1000"},
		{arch.Blackwell, "sm_120", "1200"},
		{arch.DGXSpark, "sm_121", "1210"},
		{arch.GCN4, "gfx803", "0x1000803"},
		{arch.Vega20, "gfx906", "0x1000906"},
		{arch.CDNA2, "gfx90a", "0x100090a"},
		{arch.CDNA3, "gfx942", "0x1000942"},
		{arch.RDNA2, "gfx1030", "0x1001030"},
		{arch.RDNA3, "gfx1100", "0x1001100"},
		{arch.RDNA3_5, "gfx1150", "0x1001150"},
		{arch.OffsetAMD + 0x1201, "gfx1201", "0x1001201"},
		{arch.QY1, "mp_21", "0x100210"},
		{arch.QY2, "mp_22", "0x100220"},
		{arch.PH1, "mp_31", "0x100310"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.name, tt.cc.Name())
			assert.Equal(t, tt.text, tt.cc.String())
		})
	}
}

func TestVendor(t *testing.T) {
	tests := []struct {
		v    arch.Vendor
		want string
	}{
		{arch.VendorNVIDIA, "nvidia"},
		{arch.VendorAMD, "amd"},
		{arch.VendorMThreads, "mthreads"},
		{0, "unknown"},
		{42, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.v.String())
		})
	}

	t.Run("json round trip", func(t *testing.T) {
		b, err := json.Marshal([]arch.Vendor{arch.VendorNVIDIA, arch.VendorAMD, arch.VendorMThreads})
		require.NoError(t, err)
		assert.JSONEq(t, `["nvidia","amd","mthreads"]`, string(b))
		var back []arch.Vendor
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, []arch.Vendor{arch.VendorNVIDIA, arch.VendorAMD, arch.VendorMThreads}, back)
	})

	for _, s := range []string{"CUDA", "hip", "rocm", "musa", " nvidia "} {
		t.Run("parse "+s, func(t *testing.T) {
			_, err := arch.ParseVendor(s)
			assert.NoError(t, err)
		})
	}
	t.Run("parse bad", func(t *testing.T) {
		_, err := arch.ParseVendor("intel")
		require.ErrorIs(t, err, arch.ErrSyntax)
		assert.ErrorContains(t, err, `"intel"`)
	})
}
