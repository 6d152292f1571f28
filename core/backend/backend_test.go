package backend

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
)

var quiet = Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

// newHost returns a backend on device dev of a fresh host driver.
func newHost(t *testing.T, o host.Options, dev int) (*Backend, *host.Driver) {
	t.Helper()
	d, err := host.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	b, err := New(d, dev, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b, d
}

func TestComputeErrorsBeforeLaunch(t *testing.T) {
	b, d := newHost(t, host.Options{Devices: 2}, 0)
	other, err := New(d, 1, quiet)
	require.NoError(t, err)
	defer other.Close()

	weights := graph.NewContext()
	w := weights.FromFloats([]float32{1, 2, 3, 4}, 4)
	_, err = other.AllocTensors(w) // on device 1
	require.NoError(t, err)
	unplaced := weights.Empty(tensor.F32, 4)
	freedW := weights.FromFloats([]float32{1, 2, 3, 4}, 4)
	buf, err := b.AllocTensors(freedW)
	require.NoError(t, err)
	require.NoError(t, buf.Free())
	q := weights.Empty(tensor.Q4_0, 256, 2)
	_, err = b.AllocTensors(q)
	require.NoError(t, err)

	for _, c := range []struct {
		name  string
		build func(ctx *graph.Context) *graph.Tensor
		want  string
		is    error
	}{
		{"a buffer of another device", func(ctx *graph.Context) *graph.Tensor {
			return ctx.FromFloats([]float32{1, 1, 1, 1}, 4).Add(w)
		}, "buffer of host:1", nil},
		{"a freed buffer", func(ctx *graph.Context) *graph.Tensor {
			return ctx.FromFloats([]float32{1, 1, 1, 1}, 4).Add(freedW)
		}, "freed", nil},
		{"an unsupported op", func(ctx *graph.Context) *graph.Tensor {
			return q.MulMat(ctx.FromFloatsAs(tensor.F16, make([]float32, 512), 256, 2)) // quantized src0 takes f32 src1 only
		}, "src1 must be f32", ops.ErrNotSupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := graph.NewContext()
			sentinel := ctx.FromFloats([]float32{5}, 1).Scale(2) // runs first if anything runs
			out := c.build(ctx)
			g, err := ctx.Build(out, sentinel)
			require.NoError(t, err)
			err = b.Compute(g)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			require.NoError(t, b.Synchronize())
			// Nothing ran: the SCALE node's output was never written. Its
			// memory may hold anything, but not the value a run would give.
			if v, err := sentinel.Floats(); err == nil {
				assert.NotEqual(t, []float32{10}, v, "a node ran although the graph was refused")
			}
		})
	}
	// An input the caller never placed is placed by the graph allocation.
	ctx := graph.NewContext()
	out := unplaced.Add(ctx.FromFloats([]float32{1, 2, 3, 4}, 4))
	g, err := ctx.Build(out)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))

	// The backend works after every refusal.
	ctx = graph.NewContext()
	y := ctx.FromFloats([]float32{1, 2}, 2).Scale(3)
	g, err = ctx.Build(y)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))
	v, err := y.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 6}, v)
}

func TestOutOfMemoryLeavesBackendUsable(t *testing.T) {
	const limit = 64 << 20
	b, d := newHost(t, host.Options{MemoryLimit: limit}, 0)
	free0, _, err := d.MemInfo(0)
	require.NoError(t, err)
	// Allocate until the device is full.
	var bufs []*Buffer
	for {
		buf, err := b.Alloc(8 << 20)
		if err != nil {
			require.ErrorIs(t, err, vendorapi.ErrOutOfMemory)
			break
		}
		bufs = append(bufs, buf)
	}
	require.NotEmpty(t, bufs)
	// A graph that needs memory fails cleanly.
	ctx := graph.NewContext()
	x := ctx.FromFloats(make([]float32, 4<<20), 4<<20)
	g, err := ctx.Build(x.Scale(2))
	require.NoError(t, err)
	err = b.Compute(g)
	require.Error(t, err)
	assert.True(t, errors.Is(err, vendorapi.ErrOutOfMemory), "%v", err)
	for _, buf := range bufs {
		require.NoError(t, buf.Free())
	}
	// Allocate again and compute.
	ctx = graph.NewContext()
	y := ctx.FromFloats([]float32{1, 2, 3}, 3).Scale(2)
	g, err = ctx.Build(y)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))
	v, err := y.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6}, v)
	// Closing the backend gives back everything it took.
	require.NoError(t, b.Close())
	free1, _, err := d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, free0, free1, "MemInfo back where it started")
}

func TestBufferMisuse(t *testing.T) {
	b, _ := newHost(t, host.Options{}, 0)
	buf, err := b.Alloc(64)
	require.NoError(t, err)
	assert.ErrorIs(t, buf.Read(60, make([]byte, 8)), vendorapi.ErrInvalidValue)
	assert.ErrorIs(t, buf.Write(65, []byte{1}), vendorapi.ErrInvalidValue)
	require.NoError(t, buf.Write(0, []byte{1, 2, 3}))
	require.NoError(t, buf.Clear(7))
	got := make([]byte, 4)
	require.NoError(t, buf.Read(0, got))
	assert.Equal(t, []byte{7, 7, 7, 7}, got)
	require.NoError(t, buf.Free())
	assert.ErrorIs(t, buf.Free(), ErrFreed)
	assert.ErrorIs(t, buf.Read(0, got), ErrFreed)

	ctx := graph.NewContext()
	v := ctx.Empty(tensor.F32, 4).Transpose()
	_, err = b.AllocTensors(v)
	assert.ErrorContains(t, err, "view")
	l := ctx.Empty(tensor.F32, 4)
	_, err = b.AllocTensors(l)
	require.NoError(t, err)
	_, err = b.AllocTensors(l)
	assert.ErrorContains(t, err, "already placed")
}

func TestAllocTensorsPadsQuantizedRows(t *testing.T) {
	b, _ := newHost(t, host.Options{}, 0)
	ctx := graph.NewContext()
	q := ctx.Empty(tensor.Q4_0, 96, 3) // 3 blocks a row: padded to 512 elements past the last row
	f := ctx.FromFloats([]float32{1, 2, 3}, 3)
	assert.Equal(t, uint64(q.Layout().Bytes()+tensor.Q4_0.RowSize(512-96)), AllocSize(q))
	assert.Equal(t, uint64(12), AllocSize(f))
	buf, err := b.AllocTensors(q, f)
	require.NoError(t, err)
	pq, _ := q.Placement()
	pf, _ := f.Placement()
	assert.Zero(t, pq.Offset%Alignment)
	assert.Zero(t, pf.Offset%Alignment)
	assert.GreaterOrEqual(t, pf.Offset, pq.Offset+AllocSize(q))
	pad := make([]byte, AllocSize(q)-uint64(q.Layout().Bytes()))
	require.NoError(t, buf.Read(pq.Offset+uint64(q.Layout().Bytes()), pad))
	assert.Equal(t, make([]byte, len(pad)), pad, "the row padding is zeroed")
	v, err := f.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, v, "host data uploaded")
}

func TestOffloadOp(t *testing.T) {
	b, _ := newHost(t, host.Options{}, 0)
	ctx := graph.NewContext()
	w := ctx.Empty(tensor.F16, 64, 64)
	assert.False(t, b.OffloadOp(w.MulMat(ctx.Empty(tensor.F32, 64, 31))))
	assert.True(t, b.OffloadOp(w.MulMat(ctx.Empty(tensor.F32, 64, 32))))
}

func TestNoPinnedFallsBackToSynchronousUploads(t *testing.T) {
	d, err := host.New(host.Options{})
	require.NoError(t, err)
	defer d.Close()
	env := func(k string) (string, bool) {
		if k == "TERNION_NO_PINNED" {
			return "1", true
		}
		return "", false
	}
	b, err := New(d, 0, Options{Logger: quiet.Logger, Env: env})
	require.NoError(t, err)
	defer b.Close()
	ctx := graph.NewContext()
	y := ctx.FromFloats([]float32{1, 2, 3}, 3).Add(ctx.FromFloats([]float32{1, 1, 1}, 3))
	g, err := ctx.Build(y)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))
	v, err := y.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4}, v)
	assert.False(t, b.staging.pinned)
}

// TestComputeAgain computes one graph again (the prepared replay), after
// its input changed in place, and after a leaf moved (a full Compute).
func TestComputeAgain(t *testing.T) {
	b, _ := newHost(t, host.Options{}, 0)
	weights := graph.NewContext()
	w := weights.FromFloats([]float32{1, 2, 3, 4}, 2, 2)
	_, err := b.AllocTensors(w)
	require.NoError(t, err)
	ctx := graph.NewContext()
	x := ctx.Empty(tensor.F32, 2, 1)
	y := w.MulMat(x).Add(ctx.FromFloats([]float32{10, 20}, 2)).Scale(2)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	for i, in := range [][]float32{{1, 0}, {0, 1}, {1, 1}} {
		if i == 0 {
			require.NoError(t, b.Compute(g)) // places x
		}
		require.NoError(t, x.SetFloats(in))
		require.NoError(t, b.Compute(g))
		require.NotNil(t, b.last, "prepared for the next run")
		got, err := y.Floats()
		require.NoError(t, err)
		want := []float32{2 * (w1(0, in) + 10), 2 * (w1(1, in) + 20)}
		assert.Equal(t, want, got, "input %v", in)
	}
	// Weights moved: the graph is planned and checked again.
	w2 := graph.NewContext().FromFloats([]float32{0, 0, 0, 0}, 2, 2)
	_, err = b.AllocTensors(w2)
	require.NoError(t, err)
	buf, err := b.Alloc(1024)
	require.NoError(t, err)
	require.NoError(t, w.Place(buf, 0)) // uninitialized memory, then filled
	require.NoError(t, w.SetFloats([]float32{1, 1, 1, 1}))
	require.NoError(t, b.Compute(g))
	got, err := y.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{2 * (2 + 10), 2 * (2 + 20)}, got)
	require.NoError(t, buf.Free())
	assert.Error(t, b.Compute(g), "a freed weight buffer is refused, not replayed")
}

// w1 is row r of [[1,2],[3,4]] (ggml layout: ne0 = 2 columns) times in.
func w1(r int, in []float32) float32 {
	w := []float32{1, 2, 3, 4}
	return w[2*r]*in[0] + w[2*r+1]*in[1]
}

func TestCopyTensorAcrossDevices(t *testing.T) {
	b0, d := newHost(t, host.Options{Devices: 2}, 0)
	b1, err := New(d, 1, quiet)
	require.NoError(t, err)
	defer b1.Close()
	ctx := graph.NewContext()
	src := ctx.FromFloats([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	dst0 := ctx.Empty(tensor.F32, 3, 2)
	dst1 := ctx.Empty(tensor.F32, 3, 2)
	_, err = b0.AllocTensors(src, dst0)
	require.NoError(t, err)
	_, err = b1.AllocTensors(dst1)
	require.NoError(t, err)
	require.NoError(t, CopyTensor(dst0, src))
	require.NoError(t, CopyTensor(dst1, dst0))
	got, err := dst1.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, got)
	assert.Error(t, CopyTensor(ctx.Empty(tensor.F16, 3, 2), src), "type mismatch")
	assert.Error(t, CopyTensor(dst1, src.Transpose()), "not contiguous")
	assert.Error(t, CopyTensor(ctx.Empty(tensor.F32, 3, 2), src), "not allocated")
}
