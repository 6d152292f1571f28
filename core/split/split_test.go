package split

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/tensor"
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

	s, err := ForDriver(d, []float64{3, 1})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0.75, 1, 1}, s.Starts())
	assert.Equal(t, ByOption, s.Source())
	assert.Equal(t, "0:0.750 1:0.250 2:0.000 3:0.000", s.String())
	s, err = ForDriver(d, nil)
	require.NoError(t, err)
	assert.Equal(t, ByMemory, s.Source())
	_, err = ForDriver(d, []float64{1, 1, 1, 1, 1})
	assert.ErrorIs(t, err, ErrBadSplit)
}

func TestStarts(t *testing.T) {
	cases := []struct {
		name    string
		props   []float64
		devices int
		want    []float64
		err     string
	}{
		{"0.7/0.3", []float64{0.7, 0.3}, 2, []float64{0, 0.7}, ""},
		{"3/1", []float64{3, 1}, 2, []float64{0, 0.75}, ""},
		{"fewer than devices", []float64{1, 1}, 4, []float64{0, 0.5, 1, 1}, ""},
		{"zero in the middle", []float64{1, 0, 1}, 3, []float64{0, 0.5, 0.5}, ""},
		{"one device", []float64{5}, 1, []float64{0}, ""},
		{"all zero", []float64{0, 0}, 2, nil, "does not sum to a positive"},
		{"empty", []float64{}, 2, nil, "does not sum to a positive"},
		{"negative", []float64{1, -1}, 2, nil, "proportion 1 of 1,-1 is -1"},
		{"NaN", []float64{math.NaN(), 1}, 2, nil, "is NaN"},
		{"infinite", []float64{math.Inf(1), 1}, 2, nil, "is +Inf"},
		{"sum overflows", []float64{math.MaxFloat64, math.MaxFloat64}, 2, nil, "positive finite"},
		{"more than devices", []float64{1, 1, 1}, 2, nil, "names 3 devices, only 2 exist"},
		{"no devices", []float64{1}, 0, nil, "0 devices"},
		{"too many devices", nil, MaxDevices + 1, nil, "17 devices"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Starts(c.props, c.devices)
			if c.err != "" {
				require.ErrorIs(t, err, ErrBadSplit)
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.InDeltaSlice(t, c.want, got, 1e-12)
		})
	}
}

func TestMMQY(t *testing.T) {
	// The seed's get_mmq_y_host.
	cases := []struct {
		cc   arch.CC
		want int64
	}{
		{0, 64}, // the host device
		{arch.Pascal, 64},
		{arch.DP4A, 64},
		{arch.Volta, 128},
		{arch.Turing, 128},
		{arch.Hopper, 128},
		{arch.GCN4, 128},
		{arch.Vega20, 128},
		{arch.CDNA2, 128},
		{arch.CDNA3, 128},
		{arch.RDNA1, 64},
		{arch.AMD(0x10, 0x1), 64}, // gfx1011, still RDNA1
		{arch.RDNA2, 128},
		{arch.RDNA3, 128},
		{arch.RDNA4, 128},
		{arch.QY1, 128},
		{arch.PH1, 128},
	}
	for _, c := range cases {
		t.Run(c.cc.String(), func(t *testing.T) {
			assert.Equal(t, c.want, MMQY(c.cc))
			for _, ty := range []tensor.Type{tensor.F32, tensor.F16, tensor.BF16, tensor.Q4_0, tensor.Q4_K} {
				assert.Equal(t, c.want, RowRounding(ty, c.cc), "%s: the seed rounds every type alike", ty)
			}
		})
	}
}

func TestRows(t *testing.T) {
	volta, host := arch.Volta, arch.CC(0)
	cases := []struct {
		name  string
		props []float64 // nil: by memory
		ccs   []arch.CC
		nrows int64
		want  []Range
	}{
		{"one device", nil, []arch.CC{host}, 100, []Range{{0, 100}}},
		{"0.7/0.3 host", []float64{0.7, 0.3}, []arch.CC{host, host}, 256, []Range{{0, 128}, {128, 256}}},
		{"0.7/0.3 volta", []float64{0.7, 0.3}, []arch.CC{volta, volta}, 1000, []Range{{0, 640}, {640, 1000}}},
		{"mixed rounding: the largest", []float64{1, 1}, []arch.CC{host, volta}, 300, []Range{{0, 128}, {128, 300}}},
		{"fewer rows than a tile", []float64{0.7, 0.3}, []arch.CC{host, host}, 40, []Range{{0, 0}, {0, 40}}},
		{"zero share first", []float64{0, 1}, []arch.CC{host, host}, 200, []Range{{0, 0}, {0, 200}}},
		{"zero share last", []float64{1, 1, 0}, []arch.CC{host, host, host}, 200, []Range{{0, 64}, {64, 200}, {200, 200}}},
		{"zero share middle", []float64{1, 0, 1}, []arch.CC{host, host, host}, 256, []Range{{0, 128}, {128, 128}, {128, 256}}},
		{"four even", nil, []arch.CC{host, host, host, host}, 512, []Range{{0, 128}, {128, 256}, {256, 384}, {384, 512}}},
		{"no rows", []float64{1, 1}, []arch.CC{host, host}, 0, []Range{{0, 0}, {0, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.props, c.ccs, make([]uint64, len(c.ccs)))
			require.NoError(t, err)
			got := s.Rows(tensor.F32, c.nrows)
			assert.Equal(t, c.want, got)
			var total int64
			for i, r := range got {
				if i > 0 {
					assert.Equal(t, got[i-1].Hi, r.Lo, "ranges follow each other")
				}
				total += r.Rows()
			}
			assert.Equal(t, c.nrows, total, "every row on one device")
		})
	}
}

func TestRounding(t *testing.T) {
	s, err := New([]float64{1, 0}, []arch.CC{arch.Volta, 0}, []uint64{0, 0})
	require.NoError(t, err)
	assert.Equal(t, int64(128), s.Rounding(tensor.F16), "device 1 has no share: its tile does not count")
	s, err = New([]float64{0, 1}, []arch.CC{arch.Volta, 0}, []uint64{0, 0})
	require.NoError(t, err)
	assert.Equal(t, int64(64), s.Rounding(tensor.F16))
}

func TestNewErrors(t *testing.T) {
	_, err := New(nil, []arch.CC{0}, nil)
	assert.ErrorIs(t, err, ErrBadSplit)
	_, err = New(nil, nil, nil)
	assert.ErrorIs(t, err, ErrBadSplit)
	_, err = New([]float64{1, math.Inf(-1)}, []arch.CC{0, 0}, []uint64{0, 0})
	assert.ErrorIs(t, err, ErrBadSplit)
}

func TestDeviceBytes(t *testing.T) {
	cases := []struct {
		name      string
		ty        tensor.Type
		ne0, rows int64
		want      uint64
	}{
		{"no rows", tensor.F32, 100, 0, 0},
		{"f32 whole 512s", tensor.F32, 1024, 3, 3 * 4096},
		{"f32 padded", tensor.F32, 100, 2, 2*400 + 412*4},
		{"f16 padded", tensor.F16, 600, 1, 1200 + 424*2},
		{"q4_0 padded", tensor.Q4_0, 64, 2, 2*2*18 + 14*18},
		{"q4_0 whole", tensor.Q4_0, 512, 2, 2 * 16 * 18},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, DeviceBytes(c.ty, c.ne0, c.rows))
		})
	}
}
