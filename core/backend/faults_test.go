package backend

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// faultyBackend is a backend over a host driver wrapped by vendorapi/faulty.
func faultyBackend(t *testing.T) (*Backend, *faulty.Driver) {
	t.Helper()
	hd, err := host.New(host.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = hd.Close() })
	fd := faulty.New(hd)
	b, err := New(fd, 0, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b, fd
}

// chain builds y = (x + 1)·2 on n floats.
func chain(n int) (*graph.Graph, *graph.Tensor, error) {
	ctx := graph.NewContext()
	x := ctx.FromFloats(make([]float32, n), int64(n))
	one := make([]float32, n)
	for i := range one {
		one[i] = 1
	}
	y := x.Add(ctx.FromFloats(one, int64(n))).Scale(2)
	g, err := ctx.Build(y)
	return g, y, err
}

// TestInjectedFaults drives core's error paths with failures a GPU vendor
// returns: every one is an error from Compute or Synchronize, and the
// backend computes correctly afterwards.
func TestInjectedFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		rule faulty.Rule
		is   error // the error matches it (nil: any error)
		sync bool  // reported by Synchronize rather than Compute
	}{
		{"the compute buffer cannot be allocated", faulty.FailMallocOver(1 << 20), vendorapi.ErrOutOfMemory, false},
		{"a launch fails", faulty.Fail("Launch", 1, vendorapi.ErrInvalidValue), vendorapi.ErrInvalidValue, false},
		{"a launch fails asynchronously", faulty.FailLaunchAsync(1), nil, true},
		{"an upload fails", faulty.Fail("CopyHtoDAsync", 1, vendorapi.ErrInvalidValue), vendorapi.ErrInvalidValue, false},
		{"the pinned staging memory cannot be allocated", faulty.Fail("HostAlloc", 1, vendorapi.ErrOutOfMemory), nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, fd := faultyBackend(t)
			require.NoError(t, fd.Add(c.rule))
			g, y, err := chain(1 << 19) // 2 MiB a tensor
			require.NoError(t, err)
			err = b.Compute(g)
			if c.sync {
				require.NoError(t, err)
				err = b.Synchronize()
			}
			if c.name == "the pinned staging memory cannot be allocated" {
				// Not an error: uploads fall back to synchronous copies.
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.True(t, faulty.Injected(err), "%v", err)
				if c.is != nil {
					assert.True(t, errors.Is(err, c.is), "%v", err)
				}
			}
			fd.Reset()
			g, y, err = chain(1 << 19)
			require.NoError(t, err)
			require.NoError(t, b.Compute(g), "the backend computes after the failure")
			v, err := y.Floats()
			require.NoError(t, err)
			for i := range v {
				if v[i] != 2 {
					t.Fatalf("y[%d] = %v after the failure, want 2", i, v[i])
				}
			}
		})
	}
}

// TestPoolOutOfMemoryUnderFaults runs a MUL_MAT whose temporaries come from
// the pool while the driver refuses a pool allocation: an out-of-memory
// error, and the next compute works.
func TestPoolOutOfMemoryUnderFaults(t *testing.T) {
	b, fd := faultyBackend(t)
	ctx := graph.NewContext()
	w := ctx.FromFloatsAs(tensor.F16, make([]float32, 64*32), 64, 32)
	x := ctx.FromFloats(make([]float32, 64*8), 64, 8) // f32 src1 of an f16 gemm: converted in a pool buffer
	y := w.MulMat(x)
	g, err := ctx.Build(y)
	require.NoError(t, err)
	require.NoError(t, b.Compute(g))
	require.NoError(t, b.Synchronize())
	// Fail every new device allocation or VMM chunk from now on, once the
	// pool's cache is flushed: the conversion buffer cannot be had.
	require.NoError(t, b.Pool().Flush())
	require.NoError(t, fd.Add(faulty.Rule{Method: "VMMCreate", Kind: vendorapi.ErrOutOfMemory}))
	require.NoError(t, fd.Add(faulty.Rule{Method: "Malloc", Kind: vendorapi.ErrOutOfMemory}))
	ctx2 := graph.NewContext()
	x2 := ctx2.FromFloats(make([]float32, 64*16), 64, 16)
	g2, err := ctx2.Build(w.MulMat(x2))
	require.NoError(t, err)
	err = b.Compute(g2)
	require.Error(t, err)
	assert.ErrorIs(t, err, vendorapi.ErrOutOfMemory)
	fd.Reset()
	require.NoError(t, b.Compute(g2), "computes once memory is back")
	require.NoError(t, b.Synchronize())
}

// nvidiaDriver reports a Hopper compute capability for every device, so that
// BLAS gives the library a workspace (the host driver's CC is 0), and fails
// BLASSetWorkspace with wsErr when set (faulty's rules cover only
// vendorapi.Driver's methods).
type nvidiaDriver struct {
	*faulty.Driver
	wsErr  error
	wsSets int
}

func (d *nvidiaDriver) Props(dev int) (vendorapi.Props, error) {
	p, err := d.Driver.Props(dev)
	p.CC = arch.Hopper
	return p, err
}

func (d *nvidiaDriver) BLASSetWorkspace(h vendorapi.BLASHandle, p vendorapi.DevicePtr, size uint64) error {
	d.wsSets++
	if d.wsErr != nil {
		return &vendorapi.Error{Vendor: "test", Call: "BLASSetWorkspace", Device: h.Device, Kind: d.wsErr}
	}
	return d.Driver.BLASSetWorkspace(h, p, size)
}

// TestBLASWorkspaceFreedOnce checks that the BLAS workspace goes back to the
// driver exactly once on every path: taken (freed by Close), refused with
// ErrNotSupported (the library keeps its own; BLAS works on) and refused
// otherwise (BLAS fails).
func TestBLASWorkspaceFreedOnce(t *testing.T) {
	for _, c := range []struct {
		name    string
		fail    error // BLASSetWorkspace's error; nil: it succeeds
		wantErr bool
		frees   int // Free calls made by BLAS
	}{
		{"taken", nil, false, 0},
		{"not supported", vendorapi.ErrNotSupported, false, 1},
		{"failed", vendorapi.ErrInvalidValue, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			hd, err := host.New(host.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = hd.Close() })
			fd := faulty.New(hd)
			nd := &nvidiaDriver{Driver: fd, wsErr: c.fail}
			b, err := New(nd, 0, quiet)
			require.NoError(t, err)
			mallocs, frees := fd.Calls("Malloc"), fd.Calls("Free")
			_, err = b.BLAS()
			if c.wantErr {
				require.ErrorIs(t, err, c.fail)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, 1, nd.wsSets)
			assert.Equal(t, mallocs+1, fd.Calls("Malloc"), "one workspace allocated")
			assert.Equal(t, frees+c.frees, fd.Calls("Free"), "Free calls made by BLAS")
			require.NoError(t, b.Close())
			assert.Equal(t, frees+1, fd.Calls("Free"), "the workspace is freed once in all")
		})
	}
}

// TestEmptyNodesLaunchNothing: nodes with no elements (an ADD of [0,4]
// tensors, a MUL_MAT with m = 0, a copy of an empty view) compute without a
// launch, as ggml-cuda skips them; the non-empty node beside them runs.
func TestEmptyNodesLaunchNothing(t *testing.T) {
	b, fd := faultyBackend(t)
	ctx := graph.NewContext()
	add := ctx.Empty(tensor.F32, 0, 4).Add(ctx.Empty(tensor.F32, 0, 1))
	mm := ctx.Empty(tensor.F16, 8, 0).MulMat(ctx.Empty(tensor.F32, 8, 3))
	cpy := ctx.Empty(tensor.F32, 4, 0).Permute(1, 0, 2, 3).Cont()
	g, err := ctx.Build(add, mm, cpy)
	require.NoError(t, err)
	for _, n := range []*graph.Tensor{add, mm, cpy} {
		require.True(t, n.Layout().Empty(), "%s", n)
	}
	require.NoError(t, b.Compute(g))
	require.NoError(t, b.Synchronize())
	assert.Zero(t, fd.Calls("Launch"), "an empty node launched a kernel")
	assert.Zero(t, fd.Calls("Gemm")+fd.Calls("GemmBatched"), "an empty node called the BLAS")

	y, _, err := chain(8)
	require.NoError(t, err)
	require.NoError(t, b.Compute(y))
	assert.Equal(t, 2, fd.Calls("Launch"), "the non-empty chain launches its two kernels")
}
