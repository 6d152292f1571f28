package arch_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
)

func TestDecode(t *testing.T) {
	type want struct {
		vendor   arch.Vendor
		cc       arch.CC
		name     string
		family   string
		gfx      string
		wave     int
		override *arch.Override
	}
	tests := []struct {
		input, override string
		want            want
	}{
		{"gfx90a", "", want{arch.VendorAMD, arch.CDNA2, "gfx90a", "CDNA2", "gfx90a", 64, nil}},
		{"gfx90a:sramecc+:xnack-", "", want{arch.VendorAMD, arch.CDNA2, "gfx90a", "CDNA2", "gfx90a", 64, nil}},
		{"  gfx1100\n", "", want{arch.VendorAMD, arch.RDNA3, "gfx1100", "RDNA3", "gfx1100", 32, nil}},
		{"gfx10-3-generic", "", want{arch.VendorAMD, arch.RDNA2, "gfx1030", "RDNA2", "gfx10-3-generic", 32, nil}},
		{"gfx1031", "10.3.0", want{arch.VendorAMD, arch.RDNA2, "gfx1030", "RDNA2", "gfx1030", 32,
			&arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION", Value: "10.3.0", CC: arch.RDNA2}}},
		{"gfx1030", "11.0.0", want{arch.VendorAMD, arch.RDNA3, "gfx1100", "RDNA3", "gfx1100", 32,
			&arch.Override{Env: "HSA_OVERRIDE_GFX_VERSION", Value: "11.0.0", CC: arch.RDNA3}}},
		{"kfd:90010", "", want{arch.VendorAMD, arch.CDNA2, "gfx90a", "CDNA2", "gfx90a", 64, nil}},
		{"kfd:110001", "", want{arch.VendorAMD, 0x1001101, "gfx1101", "RDNA3", "gfx1101", 32, nil}},
		{"hsa:10.3.0", "", want{arch.VendorAMD, arch.RDNA2, "gfx1030", "RDNA2", "gfx1030", 32, nil}},
		{"amd:9.0", "", want{arch.VendorAMD, arch.Vega, "gfx900", "GCN", "gfx900", 64, nil}},
		{"0x100090a", "", want{arch.VendorAMD, arch.CDNA2, "gfx90a", "CDNA2", "gfx90a", 64, nil}},
		{"sm_90", "", want{arch.VendorNVIDIA, arch.Hopper, "sm_90", "Hopper", "", 32, nil}},
		{"sm_90", "10.3.0", want{arch.VendorNVIDIA, arch.Hopper, "sm_90", "Hopper", "", 32, nil}},
		{"compute_75", "", want{arch.VendorNVIDIA, arch.Turing, "sm_75", "Turing", "", 32, nil}},
		{"nv:8.6", "", want{arch.VendorNVIDIA, 860, "sm_86", "Ampere", "", 32, nil}},
		{"NVIDIA:12.1", "", want{arch.VendorNVIDIA, arch.DGXSpark, "sm_121", "Blackwell", "", 32, nil}},
		{"900", "", want{arch.VendorNVIDIA, arch.Hopper, "sm_90", "Hopper", "", 32, nil}},
		{"mp_31", "", want{arch.VendorMThreads, arch.PH1, "mp_31", "PH1", "", 32, nil}},
		{"mt:2.2", "", want{arch.VendorMThreads, arch.QY2, "mp_22", "QY2", "", 32, nil}},
		{"musa:2.1", "11.0.0", want{arch.VendorMThreads, arch.QY1, "mp_21", "QY1", "", 32, nil}},
		{"0x100220", "", want{arch.VendorMThreads, arch.QY2, "mp_22", "QY2", "", 32, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.input+" "+tt.override, func(t *testing.T) {
			d, err := arch.Decode(tt.input, tt.override)
			require.NoError(t, err)
			w := tt.want
			wantD := arch.Decoded{
				Input: tt.input, Vendor: w.vendor, CC: w.cc, Name: w.name, Family: w.family, Gfx: w.gfx,
				WaveSize: w.wave, Override: w.override, Features: arch.FeaturesOf(w.cc, nil),
			}
			if diff := cmp.Diff(wantD, d, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decode(%q, %q) mismatch (-want +got):\n%s", tt.input, tt.override, diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ input, override string }{
		{"", ""},
		{"   ", ""},
		{"nvidia", ""},
		{"gfxzz", ""},
		{"gfx", ""},
		{"sm_9", ""},
		{"mp_", ""},
		{"kfd:0", ""},
		{"kfd:abc", ""},
		{"hsa:10.3", ""},
		{"foo:1.2", ""},
		{"nv:8", ""},
		{"nv:8.10", ""},
		{"nv:0.0", ""},
		{"amd:9.16", ""},
		{"mt:x.1", ""},
		{"0", ""},
		{"-5", ""},
		{"+900", ""},
		{"0x", ""},
		{"0x1000005", ""},     // AMD value without a major part
		{"0x2000000", ""},     // above every AMD value
		{"gfx90a", "bad"},     // override must parse
		{"sm_90", "10.x.0"},   // even when it would not apply
		{"gfx90a", "gfx1030"}, // override is a version, not a name
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.input)+" "+strconv.Quote(tt.override), func(t *testing.T) {
			_, err := arch.Decode(tt.input, tt.override)
			require.ErrorIs(t, err, arch.ErrSyntax)
		})
	}
}

func TestDecodedJSON(t *testing.T) {
	d, err := arch.Decode("gfx1031", "10.3.0")
	require.NoError(t, err)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, "amd", m["vendor"])
	assert.Equal(t, "gfx1030", m["gfx"])
	assert.Equal(t, "RDNA2", m["family"])
	assert.Equal(t, float64(32), m["wave_size"])
	assert.Equal(t, map[string]any{"env": "HSA_OVERRIDE_GFX_VERSION", "value": "10.3.0", "cc": float64(arch.RDNA2)}, m["override"])
}
