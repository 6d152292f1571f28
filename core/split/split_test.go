package split

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/host"
)

func TestFromMemory(t *testing.T) {
	cases := []struct {
		name   string
		totals []uint64
		want   []float64
	}{
		{"none", nil, []float64{}},
		{"one device", []uint64{80 << 30}, []float64{0}},
		{"equal pair", []uint64{4 << 30, 4 << 30}, []float64{0, 0.5}},
		{"by memory", []uint64{24 << 30, 8 << 30, 16 << 30}, []float64{0, 0.5, 2.0 / 3}},
		{"all zero", []uint64{0, 0, 0, 0}, []float64{0, 0.25, 0.5, 0.75}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FromMemory(c.totals)
			assert.Len(t, got, len(c.want))
			for i := range c.want {
				assert.InDelta(t, c.want[i], got[i], 1e-12, "device %d", i)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	d, err := host.New(host.Options{Devices: 4, MemoryLimit: 1 << 30})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	got, err := Default(d)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0.25, 0.5, 0.75}, got)
}
