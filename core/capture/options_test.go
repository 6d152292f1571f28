package capture

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/switches"
)

func env(m map[string]string) switches.Lookup {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

func TestSeedAndDefaultOptions(t *testing.T) {
	assert.Equal(t, Options{Warmup: 0, MaxGraphs: 1, Idle: 0, MaxUpdates: 4, Retry: -1, CopyIndirection: true}, SeedOptions())
	assert.Equal(t, Options{Warmup: 1, MaxGraphs: 8, Idle: 10 * time.Second, MaxUpdates: 4, Retry: 32, CopyIndirection: true},
		DefaultOptions())
}

func TestOptionsFromEnv(t *testing.T) {
	o, err := OptionsFromEnv(env(nil))
	require.NoError(t, err)
	assert.Equal(t, DefaultOptions(), o, "unset switches: the defaults")

	o, err = OptionsFromEnv(env(map[string]string{
		switches.DisableGraphs.Name:          "1",
		switches.GraphWarmup.Name:            "0",
		switches.GraphCache.Name:             "3",
		switches.GraphIdleSeconds.Name:       "0",
		switches.GraphRetry.Name:             "-1",
		switches.GraphNoCopyIndirection.Name: "1",
	}))
	require.NoError(t, err)
	assert.Equal(t, Options{Disabled: true, Warmup: 0, MaxGraphs: 3, Idle: 0, MaxUpdates: 4, Retry: -1}, o)

	o, err = OptionsFromEnv(env(map[string]string{switches.GraphIdleSeconds.Name: "2"}))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, o.Idle)

	for _, bad := range []map[string]string{
		{switches.GraphWarmup.Name: "-1"},
		{switches.GraphCache.Name: "0"},
		{switches.GraphIdleSeconds.Name: "soon"},
		{switches.GraphRetry.Name: "-2"},
	} {
		o, err := OptionsFromEnv(env(bad))
		require.Error(t, err, "%v", bad)
		assert.True(t, errors.Is(err, switches.ErrMalformed))
		for name := range bad {
			assert.Contains(t, err.Error(), name)
		}
		assert.Equal(t, DefaultOptions(), o, "a malformed switch: the defaults")
	}
}
