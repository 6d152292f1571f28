package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestOptionsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Options
	}{
		{"unset", nil, Options{Devices: 1}},
		{"empty values keep defaults", map[string]string{EnvDevices: "", EnvMemory: " "}, Options{Devices: 1}},
		{"two devices", map[string]string{EnvDevices: "2"}, Options{Devices: 2}},
		{"sixteen devices", map[string]string{EnvDevices: " 16 "}, Options{Devices: 16}},
		{"GiB", map[string]string{EnvMemory: "1GiB"}, Options{Devices: 1, MemoryLimit: 1 << 30}},
		{"MiB", map[string]string{EnvMemory: "512MiB"}, Options{Devices: 1, MemoryLimit: 512 << 20}},
		{"KiB", map[string]string{EnvMemory: "64KiB"}, Options{Devices: 1, MemoryLimit: 64 << 10}},
		{"GB is decimal", map[string]string{EnvMemory: "2GB"}, Options{Devices: 1, MemoryLimit: 2e9}},
		{"plain bytes", map[string]string{EnvMemory: "1048576"}, Options{Devices: 1, MemoryLimit: 1 << 20}},
		{"B suffix", map[string]string{EnvMemory: "4096B"}, Options{Devices: 1, MemoryLimit: 4096}},
		{"space and lower case", map[string]string{EnvMemory: "3 mib"}, Options{Devices: 1, MemoryLimit: 3 << 20}},
		{"fraction", map[string]string{EnvMemory: "1.5GiB"}, Options{Devices: 1, MemoryLimit: 3 << 29}},
		{"single letter is binary", map[string]string{EnvMemory: "2g"}, Options{Devices: 1, MemoryLimit: 2 << 30}},
		{"both", map[string]string{EnvDevices: "4", EnvMemory: "1TiB"}, Options{Devices: 4, MemoryLimit: 1 << 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := OptionsFromEnv(env(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestOptionsFromEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
	}{
		{"zero devices", EnvDevices, "0"},
		{"too many devices", EnvDevices, "17"},
		{"negative devices", EnvDevices, "-1"},
		{"devices not a number", EnvDevices, "two"},
		{"devices fraction", EnvDevices, "1.5"},
		{"unknown unit", EnvMemory, "12XB"},
		{"unit only", EnvMemory, "GiB"},
		{"zero bytes", EnvMemory, "0"},
		{"negative", EnvMemory, "-1GiB"},
		{"two dots", EnvMemory, "1.2.3MiB"},
		{"too large", EnvMemory, "100000000TiB"},
		{"less than a byte", EnvMemory, "0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OptionsFromEnv(env(map[string]string{tc.key: tc.value}))
			require.Error(t, err)
			assert.ErrorIs(t, err, vendorapi.ErrInvalidValue)
			assert.Contains(t, err.Error(), tc.key, "the error names the variable")
			assert.Contains(t, err.Error(), tc.value, "the error names the value")
		})
	}
}

func TestNewOptions(t *testing.T) {
	d := newDriver(t, Options{})
	n, err := d.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 1, n, "Devices 0 means one device")
	_, total, err := d.MemInfo(0)
	require.NoError(t, err)
	assert.Positive(t, total)
	assert.LessOrEqual(t, total, uint64(defaultMemoryCap))

	for _, n := range []int{-1, MaxDevices + 1} {
		_, err := New(Options{Devices: n})
		requireHostErr(t, err, vendorapi.ErrInvalidValue, "New with %d devices", n)
	}
}

func TestRegistered(t *testing.T) {
	assert.Contains(t, vendorapi.Vendors(), Vendor)
	assert.Equal(t, Vendor, vendorapi.Vendors()[0], "host is listed first")
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GiB", "512MiB", "64KiB", "2GB", "1048576", "1.5 gib", "", ".", "1e9", "-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err == nil && (n == 0 || n > 1<<63-1) {
			t.Fatalf("parseSize(%q) = %d without error", s, n)
		}
	})
}
