package switches

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is a Lookup over a map.
func env(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"unset", nil, false},
		{"1", map[string]string{DisableGraphs.Name: "1"}, true},
		{"yes", map[string]string{DisableGraphs.Name: "yes"}, true},
		{"0", map[string]string{DisableGraphs.Name: "0"}, false},
		{"off", map[string]string{DisableGraphs.Name: "OFF"}, false},
		{"blank", map[string]string{DisableGraphs.Name: " "}, false},
		{"other switch", map[string]string{NoVMM.Name: "1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, On(env(tc.env), DisableGraphs))
		})
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		name, v string
		set     bool
		want    int
		err     string
	}{
		{"unset is the default", "", false, 128, ""},
		{"blank is the default", "  ", true, 128, ""},
		{"value", "64", true, 64, ""},
		{"zero", "0", true, 0, ""},
		{"malformed", "abc", true, 128, `TERNION_PEER_MAX_BATCH_SIZE="abc": want an integer from 0 to 2147483647`},
		{"negative", "-1", true, 128, `TERNION_PEER_MAX_BATCH_SIZE="-1": want an integer from 0 to 2147483647`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{}
			if tc.set {
				m[PeerMaxBatchSize.Name] = tc.v
			}
			got, err := Int(env(m), PeerMaxBatchSize)
			assert.Equal(t, tc.want, got)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.err)
			assert.ErrorIs(t, err, ErrMalformed)
			var se *Error
			require.True(t, errors.As(err, &se))
			assert.Equal(t, PeerMaxBatchSize.Name, se.Name)
			assert.Equal(t, tc.v, se.Value)
		})
	}
}

func TestGet(t *testing.T) {
	n, set, err := Get(env(map[string]string{HostMemory.Name: "512MiB"}), HostMemory)
	require.NoError(t, err)
	assert.True(t, set)
	assert.Equal(t, uint64(512<<20), n)

	n, set, err = Get(env(nil), HostMemory)
	require.NoError(t, err)
	assert.False(t, set)
	assert.Zero(t, n, "unset: the reader's own default applies")

	_, _, err = Get(env(map[string]string{HostMemory.Name: "-5"}), HostMemory)
	assert.EqualError(t, err, `TERNION_HOST_MEMORY="-5": the size is negative; want a number of bytes with an optional unit (512MiB, 2GB)`)

	seed, set, err := Get(env(map[string]string{ConformanceSeed.Name: "18446744073709551615"}), ConformanceSeed)
	require.NoError(t, err)
	assert.True(t, set)
	assert.Equal(t, uint64(1<<64-1), seed)

	split, set, err := Get(env(map[string]string{TensorSplit.Name: "3,1"}), TensorSplit)
	require.NoError(t, err)
	assert.True(t, set)
	assert.Equal(t, []float64{3, 1}, split)

	path, set, err := Get(env(map[string]string{NVCC.Name: "/opt/cuda/bin/nvcc"}), NVCC)
	require.NoError(t, err)
	assert.True(t, set)
	assert.Equal(t, "/opt/cuda/bin/nvcc", path)
}

func TestGetNilLookupIsTheEnvironment(t *testing.T) {
	t.Setenv(HostDevices.Name, "3")
	n, err := Int(nil, HostDevices)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func TestErrorBounded(t *testing.T) {
	big := strings.Repeat("9", 1<<20)
	for _, tc := range []struct {
		name string
		run  func(Lookup) error
		sw   *Switch
	}{
		{"int", func(l Lookup) error { _, err := Int(l, PeerMaxBatchSize); return err }, PeerMaxBatchSize.Switch},
		{"size", func(l Lookup) error { _, _, err := Get(l, HostMemory); return err }, HostMemory.Switch},
		{"size unit", func(l Lookup) error { _, _, err := Get(l, HostMemory); return err }, HostMemory.Switch},
		{"list", func(l Lookup) error { _, _, err := Get(l, GenVendors); return err }, GenVendors.Switch},
		{"archs", func(l Lookup) error { _, _, err := Get(l, HIPArchs); return err }, HIPArchs.Switch},
		{"proportions", func(l Lookup) error { _, _, err := Get(l, TensorSplit); return err }, TensorSplit.Switch},
		{"seed", func(l Lookup) error { _, _, err := Get(l, ConformanceSeed); return err }, ConformanceSeed.Switch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := "x" + big
			if tc.name == "size unit" {
				v = "1" + strings.Repeat("x", 1<<20)
			}
			err := tc.run(env(map[string]string{tc.sw.Name: v}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.sw.Name)
			assert.Contains(t, err.Error(), "more bytes)")
			assert.Less(t, len(err.Error()), 600, "%.200s", err)
		})
	}
}

func TestDefaultValue(t *testing.T) {
	assert.Equal(t, 128, PeerMaxBatchSize.DefaultValue())
	assert.Equal(t, 1, GraphWarmup.DefaultValue())
	assert.Equal(t, 32, GraphRetry.DefaultValue())
	assert.False(t, DisableGraphs.DefaultValue())
	for _, s := range []Of[int]{GraphWarmup, GraphCache, GraphIdleSeconds, GraphRetry} {
		assert.Equal(t, strconv.Itoa(s.DefaultValue()), s.Default, s.Name)
	}
}
