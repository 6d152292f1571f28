package backend

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// TestHostBufferRoundTrip moves an input in through a host buffer, computes
// y = 2x + 1 and moves y out through the same buffer, with pinned memory,
// with TERNION_NO_PINNED, and with a driver that has no pinned memory to
// give (the fall-back is logged).
func TestHostBufferRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name   string
		env    map[string]string
		fail   bool // HostAlloc fails
		pinned bool
		warns  bool
	}{
		{"pinned", nil, false, true, false},
		{"TERNION_NO_PINNED", map[string]string{switches.NoPinned.Name: "1"}, false, false, false},
		{"no pinned memory to give", nil, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			hd, err := host.New(host.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = hd.Close() })
			fd := faulty.New(hd)
			if c.fail {
				require.NoError(t, fd.Add(faulty.Rule{Method: "HostAlloc", Kind: vendorapi.ErrOutOfMemory}))
			}
			var logs bytes.Buffer
			b, err := New(fd, 0, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Env: func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }})
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })

			const n = 64
			leafs := graph.NewContext()
			x := leafs.Empty(tensor.F32, n)
			_, err = b.AllocTensors(x)
			require.NoError(t, err)
			h, err := b.AllocHost(3 * 4 * n)
			require.NoError(t, err)
			assert.Equal(t, c.pinned, h.Pinned())
			assert.Equal(t, uint64(3*4*n), h.Size())
			assert.Equal(t, c.warns, bytes.Contains(logs.Bytes(), []byte("no pinned host memory")), logs.String())

			r := rand.New(rand.NewPCG(5, 6))
			in := make([]float32, n)
			for i := range in {
				in[i] = 2*r.Float32() - 1
			}
			copy(h.Bytes()[4*n:], le.FromF32(in)) // the input at byte 4n
			require.NoError(t, h.SetTensor(x, 4*n))

			ctx := graph.NewContext()
			y := x.ScaleBias(2, 1)
			g, err := ctx.Build(y)
			require.NoError(t, err)
			require.NoError(t, b.Compute(g))
			require.NoError(t, h.GetTensor(y, 8*n)) // the result at byte 8n, after the compute
			require.NoError(t, b.Synchronize())

			got := le.ToF32(h.Bytes()[8*n:])
			for i, v := range in {
				assert.Equal(t, 2*v+1, got[i], "element %d", i)
			}
			assert.Equal(t, in, le.ToF32(h.Bytes()[4*n:8*n]), "the input bytes are untouched")
			require.NoError(t, h.Free())
			assert.Nil(t, h.Bytes())
		})
	}
}

// TestHostBufferErrors checks every refusal: each is an error before any
// copy, and the backend works afterwards.
func TestHostBufferErrors(t *testing.T) {
	d, err := host.New(host.Options{Devices: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	b, err := New(d, 0, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	other, err := New(d, 1, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })

	leafs := graph.NewContext()
	m := leafs.Empty(tensor.F32, 8, 4)
	elsewhere := leafs.Empty(tensor.F32, 8)
	unplaced := leafs.Empty(tensor.F32, 8)
	_, err = b.AllocTensors(m)
	require.NoError(t, err)
	_, err = other.AllocTensors(elsewhere)
	require.NoError(t, err)
	h, err := b.AllocHost(64)
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"not allocated", h.SetTensor(unplaced, 0), "not allocated"},
		{"another device's tensor", h.GetTensor(elsewhere, 0), "not of host:0"},
		{"not contiguous", h.GetTensor(m.Transpose(), 0), "not contiguous"},
		{"past the host buffer", h.SetTensor(m, 0), "outside the 64-byte host buffer"},
		{"offset past the end", h.SetTensor(m.View(0, []int64{8}, nil), 40), "outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			assert.Contains(t, c.err.Error(), c.want)
		})
	}
	require.NoError(t, leafs.Err())

	row := m.View(0, []int64{8}, nil)
	copy(h.Bytes(), le.FromF32([]float32{1, 2, 3, 4, 5, 6, 7, 8}))
	require.NoError(t, h.SetTensor(row, 0))
	require.NoError(t, b.Synchronize())
	got, err := row.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8}, got, "the backend works after the refusals")

	require.NoError(t, h.Free())
	assert.ErrorContains(t, h.SetTensor(row, 0), "freed")
	assert.ErrorContains(t, h.Free(), "freed twice")
}
