package switches

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// environ returns env as os.Environ would.
func environ(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	return kv
}

func TestInEffect(t *testing.T) {
	m := map[string]string{
		"TERNION_NO_VMM":              "1",
		"TERNION_HOST_DEVICES":        "2",
		"TERNION_SOMETHING_NEW":       "x",
		"TERNION_FORCE_CUBLAS":        "1",
		"HSA_OVERRIDE_GFX_VERSION_1":  "11.0.0",
		"HSA_OVERRIDE_GFX_VERSION_x":  "11.0.0",
		"TERNION_PEER_MAX_BATCH_SIZE": "abc",
		"PATH":                        "/bin",
	}
	all := Settings(env(m), environ(m))
	before := slices.Clone(all)
	got := InEffect(all)
	assert.Equal(t, before, all, "the settings are left as they are")
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
		assert.True(t, s.Set)
	}
	assert.Equal(t, []string{
		"TERNION_NO_VMM", "TERNION_PEER_MAX_BATCH_SIZE", "TERNION_HOST_DEVICES", // list order
		"HSA_OVERRIDE_GFX_VERSION_1", "TERNION_FORCE_CUBLAS", "TERNION_SOMETHING_NEW", // then sorted
	}, names)
	byName := map[string]Setting{}
	for _, s := range got {
		byName[s.Name] = s
	}
	assert.EqualError(t, byName["TERNION_PEER_MAX_BATCH_SIZE"].Err, `TERNION_PEER_MAX_BATCH_SIZE="abc": want an integer from 0 to 2147483647`)
	assert.Same(t, HSAOverride.Switch, byName["HSA_OVERRIDE_GFX_VERSION_1"].Switch)
	assert.Nil(t, byName["TERNION_SOMETHING_NEW"].Switch)
	assert.Equal(t, "not a ternion switch", byName["TERNION_SOMETHING_NEW"].Hint())
	assert.Equal(t, "not a ternion switch; TERNION_FORCE_BLAS is ggml's GGML_CUDA_FORCE_CUBLAS", byName["TERNION_FORCE_CUBLAS"].Hint())
	assert.Empty(t, byName["TERNION_NO_VMM"].Hint())
}

func TestSettingsListsEverySwitch(t *testing.T) {
	got := Settings(env(nil), nil)
	require.Len(t, got, len(All()))
	for i, s := range All() {
		assert.Equal(t, s.Name, got[i].Name)
		assert.False(t, got[i].Set)
		assert.NoError(t, got[i].Err)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing set", nil, nil},
		{"valid values", map[string]string{"TERNION_HOST_MEMORY": "1GiB", "TERNION_DISABLE_GRAPHS": "anything",
			"TERNION_TENSOR_SPLIT": "3,1", "HSA_OVERRIDE_GFX_VERSION": "10.3.0", "TERNION_SOMETHING_NEW": "x"}, nil},
		{"blank values are unset", map[string]string{"TERNION_HOST_DEVICES": " ", "TERNION_CUDA_ARCHS": ""}, nil},
		{"negative size", map[string]string{"TERNION_HOST_MEMORY": "-5"},
			[]string{`TERNION_HOST_MEMORY="-5": the size is negative; want a number of bytes with an optional unit (512MiB, 2GB)`}},
		{"several, in list order", map[string]string{"TERNION_HOST_DEVICES": "0", "TERNION_PEER_MAX_BATCH_SIZE": "lots"},
			[]string{`TERNION_PEER_MAX_BATCH_SIZE="lots": want an integer from 0 to 2147483647`,
				`TERNION_HOST_DEVICES="0": want an integer from 1 to 16`}},
		{"per-device override", map[string]string{"HSA_OVERRIDE_GFX_VERSION_1": "11.x"},
			[]string{`HSA_OVERRIDE_GFX_VERSION_1="11.x": want major.minor.stepping`}},
		{"bad vendor", map[string]string{"TERNION_GEN_VENDORS": "cuda,rocm"},
			[]string{`TERNION_GEN_VENDORS="cuda,rocm": unknown value "rocm" (want cuda, hip, musa)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, err := range Check(Settings(env(tc.env), environ(tc.env))) {
				assert.ErrorIs(t, err, ErrMalformed)
				got = append(got, err.Error())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
