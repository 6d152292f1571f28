package backend

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/split"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// envOf is a switches.Lookup over a map (nothing from the process).
func envOf(kv map[string]string) switches.Lookup {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// newSplitHost returns a backend on device 0 of a fresh host driver of n
// devices, with the options o (quiet, env from kv).
func newSplitHost(t *testing.T, n int, props []float64, kv map[string]string) (*Backend, vendorapi.Driver) {
	t.Helper()
	d, err := host.New(host.Options{Devices: n, MemoryLimit: 256 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return newSplitOn(t, d, props, kv), d
}

func newSplitOn(t *testing.T, d vendorapi.Driver, props []float64, kv map[string]string) *Backend {
	t.Helper()
	o := quiet
	o.TensorSplit, o.Env = props, envOf(kv)
	b, err := New(d, 0, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// mulMat computes src0ᵀ·src1 on b with src0 of type ty from a and src1 f32
// from x ([k, n, batch]); with split src0 goes in a split buffer.
func mulMat(t *testing.T, b *Backend, split bool, ty tensor.Type, a []float32, m, k int64, x []float32, n, batch int64) []float32 {
	t.Helper()
	weights := graph.NewContext()
	w := weights.FromFloatsAs(ty, a, k, m)
	if split {
		buf, err := b.AllocSplit(w)
		require.NoError(t, err)
		defer func() { require.NoError(t, buf.Free()) }()
	} else {
		buf, err := b.AllocTensors(w)
		require.NoError(t, err)
		defer func() { require.NoError(t, buf.Free()) }()
	}
	ctx := graph.NewContext()
	y := w.MulMat(ctx.FromFloats(x, k, n, batch))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))
	got, err := y.Floats()
	require.NoError(t, err)
	return got
}

func nmse(got, want []float32) float64 {
	var num, den float64
	for i := range got {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(got[i]) * float64(got[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}

func TestSplitMulMat(t *testing.T) {
	const m, k = 320, 64
	configs := []struct {
		name    string
		devices int
		props   []float64
		rows    []split.Range // of the 320 rows
	}{
		{"2 devices 0.7/0.3", 2, []float64{0.7, 0.3}, []split.Range{{Lo: 0, Hi: 192}, {Lo: 192, Hi: 320}}},
		{"3 devices, the middle one without rows", 3, []float64{1, 0, 1}, []split.Range{{Lo: 0, Hi: 128}, {Lo: 128, Hi: 128}, {Lo: 128, Hi: 320}}},
		{"4 devices by memory", 4, nil, []split.Range{{Lo: 0, Hi: 64}, {Lo: 64, Hi: 128}, {Lo: 128, Hi: 192}, {Lo: 192, Hi: 320}}},
		{"4 devices, the main one without rows", 4, []float64{0, 1, 2, 1}, []split.Range{{Lo: 0, Hi: 0}, {Lo: 0, Hi: 64}, {Lo: 64, Hi: 192}, {Lo: 192, Hi: 320}}},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			b, _ := newSplitHost(t, cfg.devices, cfg.props, nil)
			r := rand.New(rand.NewPCG(1, uint64(cfg.devices)))
			a := randFloats(r, int(m*k))
			for _, ty := range []tensor.Type{tensor.F32, tensor.F16, tensor.BF16} {
				for _, n := range []int64{1, 7, 128, 300} {
					t.Run(fmt.Sprintf("%s n=%d", ty, n), func(t *testing.T) {
						x := randFloats(r, int(k*n))
						want := mulMat(t, b, false, ty, a, m, k, x, n, 1)
						got := mulMat(t, b, true, ty, a, m, k, x, n, 1)
						assert.LessOrEqual(t, nmse(got, want), 5e-4)
						assert.LessOrEqual(t, nmse(got, want), 1e-10, "the same kernels on the same rows")
					})
				}
			}
			weights := graph.NewContext()
			w := weights.FromFloats(a, k, m)
			buf, err := b.AllocSplit(w)
			require.NoError(t, err)
			defer buf.Free()
			rows, err := buf.Rows(w)
			require.NoError(t, err)
			assert.Equal(t, cfg.rows, rows)
		})
	}
}

func TestSplitMulMatBatchedSrc1(t *testing.T) {
	// src0 one matrix, src1 a batch of 3 (broadcast): the seed loops over
	// the batch per device.
	b, _ := newSplitHost(t, 2, []float64{0.5, 0.5}, nil)
	r := rand.New(rand.NewPCG(2, 2))
	const m, k, n, batch = 256, 32, 130, 3
	a, x := randFloats(r, int(m*k)), randFloats(r, int(k*n*batch))
	want := mulMat(t, b, false, tensor.F32, a, m, k, x, n, batch)
	got := mulMat(t, b, true, tensor.F32, a, m, k, x, n, batch)
	assert.LessOrEqual(t, nmse(got, want), 1e-10)
}

// noPeer is a driver whose devices cannot access each other.
type noPeer struct{ vendorapi.Driver }

func (noPeer) CanAccessPeer(dev, peer int) (bool, error) { return false, nil }

func TestSplitMulMatThroughHost(t *testing.T) {
	const m, k = 256, 48
	mk := func(t *testing.T) vendorapi.Driver {
		d, err := host.New(host.Options{Devices: 3, MemoryLimit: 256 << 20})
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	for _, c := range []struct {
		name string
		drv  func(t *testing.T) vendorapi.Driver
		env  map[string]string
	}{
		{"TERNION_NO_PEER_COPY", mk, map[string]string{switches.NoPeerCopy.Name: "1"}},
		{"no peer access", func(t *testing.T) vendorapi.Driver { return noPeer{mk(t)} }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newSplitOn(t, c.drv(t), []float64{0.4, 0.3, 0.3}, c.env)
			r := rand.New(rand.NewPCG(3, 3))
			a := randFloats(r, int(m*k))
			for _, n := range []int64{1, 7, 300} {
				x := randFloats(r, int(k*n))
				want := mulMat(t, b, false, tensor.F16, a, m, k, x, n, 2/2)
				got := mulMat(t, b, true, tensor.F16, a, m, k, x, n, 1)
				assert.LessOrEqual(t, nmse(got, want), 1e-10, "n=%d", n)
			}
		})
	}
}

func TestSplitPeerAccessByBatch(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		steps []struct {
			n  int64
			on bool
		}
	}{
		{"default 128", nil, []struct {
			n  int64
			on bool
		}{{1, true}, {128, true}, {129, false}, {300, false}, {7, true}}},
		{"TERNION_PEER_MAX_BATCH_SIZE=8", map[string]string{switches.PeerMaxBatchSize.Name: "8"}, []struct {
			n  int64
			on bool
		}{{8, true}, {9, false}, {1, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, d := newSplitHost(t, 2, []float64{1, 1}, c.env)
			probe, err := d.Malloc(1, 64) // device 1's memory: device 0 may touch it only with peer access
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(4, 4))
			const m, k = 128, 16
			a := randFloats(r, int(m*k))
			for _, s := range c.steps {
				mulMat(t, b, true, tensor.F32, a, m, k, randFloats(r, int(k*s.n)), s.n, 1)
				err := d.Memset(0, probe, 0, 64)
				if s.on {
					assert.NoError(t, err, "n=%d: peer access on", s.n)
				} else {
					assert.ErrorIs(t, err, vendorapi.ErrInvalidValue, "n=%d: peer access off", s.n)
				}
			}
		})
	}
}

func TestSplitBufferSetGet(t *testing.T) {
	b, d := newSplitHost(t, 3, []float64{0.5, 0.25, 0.25}, nil)
	const m, k = 300, 100 // rows of 100 f32: each device's slice padded to 512 elements
	ctx := graph.NewContext()
	r := rand.New(rand.NewPCG(5, 5))
	v := randFloats(r, int(m*k))
	w := ctx.FromFloats(v, k, m)
	h := ctx.FromFloatsAs(tensor.F16, v[:k*64], k, 64)
	free0, _, err := d.MemInfo(1)
	require.NoError(t, err)
	buf, err := b.AllocSplit(w, h)
	require.NoError(t, err)

	rows, err := buf.Rows(w)
	require.NoError(t, err)
	assert.Equal(t, []split.Range{{Lo: 0, Hi: 128}, {Lo: 128, Hi: 192}, {Lo: 192, Hi: 300}}, rows)
	hrows, err := buf.Rows(h)
	require.NoError(t, err)
	assert.Equal(t, []split.Range{{Lo: 0, Hi: 0}, {Lo: 0, Hi: 0}, {Lo: 0, Hi: 64}}, hrows, "64 rows: the boundaries round to 0")
	want := []uint64{
		split.DeviceBytes(tensor.F32, k, 128),
		split.DeviceBytes(tensor.F32, k, 64),
		split.DeviceBytes(tensor.F32, k, 108) + split.DeviceBytes(tensor.F16, k, 64),
	}
	assert.Equal(t, uint64(64*400+412*4), want[1], "64 rows of 100 f32 and 412 f32 of padding")
	assert.Equal(t, want, buf.DeviceBytes())
	free1, _, err := d.MemInfo(1)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, free0-free1, buf.DeviceBytes()[1], "device 1's memory holds its share")

	// Each device holds its rows, the padding zeroed.
	p1, r1, err := buf.Slice(w, 1)
	require.NoError(t, err)
	assert.Equal(t, split.Range{Lo: 128, Hi: 192}, r1)
	raw := make([]byte, split.DeviceBytes(tensor.F32, k, 64))
	require.NoError(t, d.CopyDtoH(1, raw, p1))
	img, err := tensor.FromFloat32(w.Layout(), v)
	require.NoError(t, err)
	assert.Equal(t, img[128*400:192*400], raw[:64*400])
	assert.Equal(t, make([]byte, 412*4), raw[64*400:])
	p0, _, err := buf.Slice(h, 0)
	require.NoError(t, err)
	assert.Zero(t, p0, "no rows on device 0")
	_, _, err = buf.Slice(w, 3)
	assert.ErrorIs(t, err, vendorapi.ErrInvalidValue)

	// Get the whole tensor, and parts across a device boundary.
	got, err := w.Floats()
	require.NoError(t, err)
	assert.Equal(t, v, got)
	part := make([]byte, 400*10+8)
	pl, _ := w.Placement()
	require.NoError(t, buf.Read(pl.Offset+400*123, part))
	assert.Equal(t, img[400*123:400*123+len(part)], part)
	// Set across a boundary, read back.
	ones := bytes.Repeat([]byte{0x3f}, 400*70)
	require.NoError(t, buf.Write(pl.Offset+400*100, ones))
	all, err := w.Bytes()
	require.NoError(t, err)
	assert.Equal(t, ones, all[400*100:400*170])
	assert.Equal(t, img[:400*100], all[:400*100])

	assert.ErrorIs(t, buf.Read(pl.Offset+uint64(len(img))-4, make([]byte, 8)), vendorapi.ErrInvalidValue, "past the tensor")
	require.NoError(t, buf.Free())
	assert.ErrorIs(t, buf.Free(), ErrFreed)
	assert.ErrorIs(t, buf.Read(pl.Offset, make([]byte, 4)), ErrFreed)
	free2, _, err := d.MemInfo(1)
	require.NoError(t, err)
	assert.Equal(t, free0, free2, "device 1's memory back")
}

func TestSplitBadInput(t *testing.T) {
	ctx := graph.NewContext()
	for _, c := range []struct {
		name    string
		devices int
		props   []float64
		env     map[string]string
		tensor  func() *graph.Tensor
		want    string
		is      error
	}{
		{"more devices than exist", 2, []float64{1, 1, 1}, nil, nil, "names 3 devices, only 2 exist", split.ErrBadSplit},
		{"all zero", 2, []float64{0, 0}, nil, nil, "does not sum to a positive", split.ErrBadSplit},
		{"negative", 2, []float64{1, -0.5}, nil, nil, "is -0.5", split.ErrBadSplit},
		{"NaN", 2, []float64{math.NaN(), 1}, nil, nil, "is NaN", split.ErrBadSplit},
		{"infinite", 2, []float64{1, math.Inf(1)}, nil, nil, "is +Inf", split.ErrBadSplit},
		{"TERNION_TENSOR_SPLIT malformed", 2, nil, map[string]string{switches.TensorSplit.Name: "0.7,x"}, nil,
			"TERNION_TENSOR_SPLIT", nil},
		{"TERNION_TENSOR_SPLIT too long", 2, nil, map[string]string{switches.TensorSplit.Name: "1,1,1"}, nil,
			"(TERNION_TENSOR_SPLIT): bad tensor split: 1,1,1 names 3 devices", split.ErrBadSplit},
		{"a view", 2, []float64{1, 1}, nil, func() *graph.Tensor { return ctx.Empty(tensor.F32, 8, 8).Transpose() },
			"is a view", nil},
		{"a batch", 2, []float64{1, 1}, nil, func() *graph.Tensor { return ctx.Empty(tensor.F32, 8, 8, 2) },
			"is a batch of matrices", nil},
		{"more than a device holds", 2, []float64{1, 1}, nil, func() *graph.Tensor { return ctx.Empty(tensor.F32, 1<<16, 1<<12) },
			"device 0 holds", vendorapi.ErrOutOfMemory},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, d := newSplitHost(t, c.devices, c.props, c.env)
			free, _, err := d.MemInfo(0)
			require.NoError(t, err)
			w := ctx.Empty(tensor.F32, 8, 256)
			if c.tensor != nil {
				w = c.tensor()
			}
			_, err = b.AllocSplit(w)
			require.Error(t, err)
			assert.ErrorContains(t, err, c.want)
			assert.ErrorContains(t, err, "host:0")
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			after, _, err := d.MemInfo(0)
			require.NoError(t, err)
			assert.Equal(t, free, after, "nothing allocated")
			// The backend stays usable.
			x := graph.NewContext()
			y := x.FromFloats([]float32{1, 2}, 2).Scale(2)
			g, err := x.Build(y)
			require.NoError(t, err)
			require.NoError(t, b.Compute(g))
			got, err := y.Floats()
			require.NoError(t, err)
			assert.Equal(t, []float32{2, 4}, got)
		})
	}
}

func TestSplitSupports(t *testing.T) {
	b, d := newSplitHost(t, 2, []float64{1, 1}, nil)
	weights := graph.NewContext()
	w := weights.FromFloats(make([]float32, 16*128), 16, 128)
	wh := weights.Empty(tensor.F16, 16, 128)
	buf, err := b.AllocSplit(w, wh)
	require.NoError(t, err)
	other, err := New(d, 1, quiet)
	require.NoError(t, err)
	defer other.Close()
	for _, c := range []struct {
		name  string
		be    *Backend
		build func(ctx *graph.Context) *graph.Tensor
		want  string
	}{
		{"ADD of a split tensor", b, func(ctx *graph.Context) *graph.Tensor { return w.Add(ctx.Empty(tensor.F32, 16, 128)) },
			"src0 is a split tensor: only MUL_MAT reads one, as src0"},
		{"split src1", b, func(ctx *graph.Context) *graph.Tensor { return ctx.Empty(tensor.F32, 16, 4).MulMat(w) },
			"src1 is a split tensor"},
		{"f16 src1", b, func(ctx *graph.Context) *graph.Tensor { return wh.MulMat(ctx.Empty(tensor.F16, 16, 4)) },
			"the row-split path takes f32 src1"},
		{"a view of a split tensor", b, func(ctx *graph.Context) *graph.Tensor {
			return w.View(0, []int64{16, 64}, []int64{64}).MulMat(ctx.Empty(tensor.F32, 16, 4))
		}, "view of a split tensor"},
		{"another main device", other, func(ctx *graph.Context) *graph.Tensor { return w.MulMat(ctx.Empty(tensor.F32, 16, 4)) },
			"split by backend host:0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := graph.NewContext()
			y := c.build(ctx)
			g, err := ctx.Build(y)
			require.NoError(t, err)
			err = c.be.Compute(g)
			require.ErrorIs(t, err, ops.ErrNotSupported)
			assert.ErrorContains(t, err, c.want)
		})
	}
	require.NoError(t, buf.Free())
	ctx := graph.NewContext()
	y := w.MulMat(ctx.Empty(tensor.F32, 16, 4))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	assert.ErrorContains(t, b.Compute(g), "split buffer was freed")
}

// logLines collects debug log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := r.Message
	r.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
	l.lines = append(l.lines, s)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }

func TestSplitNotCaptured(t *testing.T) {
	d, err := host.New(host.Options{Devices: 2, MemoryLimit: 256 << 20})
	require.NoError(t, err)
	defer d.Close()
	logs := &logLines{}
	b, err := New(d, 0, Options{Logger: slog.New(logs), TensorSplit: []float64{1, 1}, Env: envOf(nil)})
	require.NoError(t, err)
	defer b.Close()
	r := rand.New(rand.NewPCG(6, 6))
	const m, k, n = 128, 16, 3
	weights := graph.NewContext()
	a := randFloats(r, int(m*k))
	w := weights.FromFloats(a, k, m)
	buf, err := b.AllocSplit(w)
	require.NoError(t, err)
	defer buf.Free()
	ctx := graph.NewContext()
	x := randFloats(r, int(k*n))
	y := w.MulMat(ctx.FromFloats(x, k, n)).Scale(2)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	var first []float32
	for run := range 4 {
		require.NoError(t, b.Compute(g))
		got, err := y.Floats()
		require.NoError(t, err)
		if run == 0 {
			first = got
		}
		assert.Equal(t, first, got, "run %d", run)
	}
	st := b.GraphStats()
	assert.Equal(t, 4, st.Eager)
	assert.Zero(t, st.Capture+st.Replay+st.Update, "a graph that reads a split buffer is never captured")
	found := false
	for _, l := range logs.lines {
		found = found || strings.Contains(l, "node 0 (MUL_MAT) reads a split buffer")
	}
	assert.True(t, found, "the reason is logged:\n%s", strings.Join(logs.lines, "\n"))
}

// TestSplitMulMatFaults fails one driver call of the row-split path at a
// time: Compute returns an error naming the op and the device, and the
// backend computes the same graph correctly afterwards.
func TestSplitMulMatFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		rule faulty.Rule
		env  map[string]string
		want string
	}{
		{"the peer copy of src1", faulty.Fail("CopyPeerAsync", 1, vendorapi.ErrInvalidValue), nil, "device 1: src1 columns 0..128"},
		{"the 2D peer copy of the result", faulty.Fail("Copy2DPeerAsync", 1, vendorapi.ErrInvalidValue), nil, "device 1: gathering its rows of dst"},
		{"a temporary on device 1", faulty.Rule{Method: "VMMCreate", Kind: vendorapi.ErrOutOfMemory}, nil, "device 1: src1"},
		{"the staging memory", faulty.Rule{Method: "HostAlloc", Kind: vendorapi.ErrOutOfMemory}, map[string]string{switches.NoPeerCopy.Name: "1"},
			"device 1: staging its rows of dst"},
		{"the done event", faulty.Rule{Method: "EventRecord", Kind: vendorapi.ErrInvalidValue}, nil, "device 1"},
		{"peer access off for 130 columns", faulty.Fail("DisablePeerAccess", 1, vendorapi.ErrInvalidValue), nil, "peer access 0 → 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hd, err := host.New(host.Options{Devices: 2, MemoryLimit: 256 << 20})
			require.NoError(t, err)
			defer hd.Close()
			fd := faulty.New(hd)
			b := newSplitOn(t, fd, []float64{1, 1}, c.env)
			r := rand.New(rand.NewPCG(8, 8))
			const m, k, n = 256, 16, 130
			a, x := randFloats(r, m*k), randFloats(r, k*n)
			want := mulMat(t, b, false, tensor.F32, a, m, k, x, n, 1)

			weights := graph.NewContext()
			w := weights.FromFloats(a, k, m)
			buf, err := b.AllocSplit(w)
			require.NoError(t, err)
			defer buf.Free()
			ctx := graph.NewContext()
			y := w.MulMat(ctx.FromFloats(x, k, n))
			g, err := ctx.Build(y)
			require.NoError(t, err)
			rule := c.rule
			if rule.Method == "EventRecord" {
				// This Compute records the upload's event, the ready event, then device 1's done event.
				rule.Nth = fd.Calls("EventRecord") + 3
			}
			require.NoError(t, fd.Add(rule))
			err = b.Compute(g)
			require.Error(t, err, "%v", fd.Counts())
			assert.True(t, faulty.Injected(err), "%v", err)
			assert.ErrorContains(t, err, "MUL_MAT with src0 split over 2 devices")
			assert.ErrorContains(t, err, c.want)
			fd.Reset()
			require.NoError(t, b.Compute(g))
			got, err := y.Floats()
			require.NoError(t, err)
			assert.LessOrEqual(t, nmse(got, want), 1e-10)
		})
	}
}
