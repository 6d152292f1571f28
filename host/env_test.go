package host

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/switches"
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
		{"empty values keep defaults", map[string]string{switches.HostDevices.Name: "", switches.HostMemory.Name: " "}, Options{Devices: 1}},
		{"two devices", map[string]string{switches.HostDevices.Name: "2"}, Options{Devices: 2}},
		{"sixteen devices", map[string]string{switches.HostDevices.Name: " 16 "}, Options{Devices: 16}},
		{"GiB", map[string]string{switches.HostMemory.Name: "1GiB"}, Options{Devices: 1, MemoryLimit: 1 << 30}},
		{"MiB", map[string]string{switches.HostMemory.Name: "512MiB"}, Options{Devices: 1, MemoryLimit: 512 << 20}},
		{"GB is decimal", map[string]string{switches.HostMemory.Name: "2GB"}, Options{Devices: 1, MemoryLimit: 2e9}},
		{"plain bytes", map[string]string{switches.HostMemory.Name: "1048576"}, Options{Devices: 1, MemoryLimit: 1 << 20}},
		{"both", map[string]string{switches.HostDevices.Name: "4", switches.HostMemory.Name: "1TiB"}, Options{Devices: 4, MemoryLimit: 1 << 40}},
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
		{"zero devices", switches.HostDevices.Name, "0"},
		{"too many devices", switches.HostDevices.Name, "17"},
		{"negative devices", switches.HostDevices.Name, "-1"},
		{"devices not a number", switches.HostDevices.Name, "two"},
		{"devices fraction", switches.HostDevices.Name, "1.5"},
		{"unknown unit", switches.HostMemory.Name, "12XB"},
		{"zero bytes", switches.HostMemory.Name, "0"},
		{"negative", switches.HostMemory.Name, "-1GiB"},
		{"negative bytes", switches.HostMemory.Name, "-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OptionsFromEnv(env(map[string]string{tc.key: tc.value}))
			require.Error(t, err)
			assert.ErrorIs(t, err, vendorapi.ErrInvalidValue)
			assert.ErrorIs(t, err, switches.ErrMalformed)
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

func TestMaxDevicesIsTheSwitchRange(t *testing.T) {
	_, err := OptionsFromEnv(env(map[string]string{switches.HostDevices.Name: strconv.Itoa(MaxDevices)}))
	require.NoError(t, err)
	_, err = OptionsFromEnv(env(map[string]string{switches.HostDevices.Name: strconv.Itoa(MaxDevices + 1)}))
	require.Error(t, err)
}

func TestRegistered(t *testing.T) {
	assert.Contains(t, vendorapi.Vendors(), Vendor)
	assert.Equal(t, Vendor, vendorapi.Vendors()[0], "host is listed first")
}
