//go:build cuda

package cuda

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/gpushim"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// fillAndCheck runs fill_f32 on device 0 of d and checks the result.
func fillAndCheck(t *testing.T, d *gpushim.Driver) {
	t.Helper()
	const n = 1000
	f, err := d.Kernel(0, "fill_f32")
	require.NoError(t, err, "Kernel")
	s, err := d.StreamCreate(0)
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.StreamDestroy(s)) }()
	p, err := d.Malloc(0, 4*n)
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.Free(0, p)) }()
	args := []vendorapi.Arg{vendorapi.PtrArg(p), vendorapi.F32Arg(2.5), vendorapi.I64Arg(n)}
	require.NoError(t, d.Launch(f, vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 128}, 0, s, args))
	require.NoError(t, d.StreamSynchronize(s))
	got := make([]byte, 4*n)
	require.NoError(t, d.CopyDtoH(0, got, p))
	for i := 0; i < n; i++ {
		v := math.Float32frombits(uint32(got[4*i]) | uint32(got[4*i+1])<<8 | uint32(got[4*i+2])<<16 | uint32(got[4*i+3])<<24)
		if v != 2.5 {
			t.Fatalf("dst[%d] = %v, want 2.5", i, v)
		}
	}
}

// TestRuntimeCompilation forces the NVRTC path: the first driver compiles and
// caches, the second finds the cache.
func TestRuntimeCompilation(t *testing.T) {
	openOrSkip(t)
	dir := t.TempDir()
	for _, want := range []string{"compiled for", "cache hit"} {
		var logs bytes.Buffer
		d, err := gpushim.Open(gpushim.Config{ForceRTC: true, CacheDir: dir,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, err)
		if _, err := d.Kernel(0, "fill_f32"); errors.Is(err, vendorapi.ErrNoKernel) {
			t.Skipf("no run-time compiler here: %v", err)
		}
		fillAndCheck(t, d)
		assert.Contains(t, logs.String(), want)
		t.Log(logs.String())
		f, ok := d.Features(), false
		for _, x := range f {
			ok = ok || (x.Name == "KERNELS" && x.Value == "nvrtc")
		}
		assert.True(t, ok, "KERNELS=nvrtc in %v", f)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "one cached code object")
}

// TestEmbeddedFatbin loads the fatbin go generate embedded, when there is one
// that runs on device 0.
func TestEmbeddedFatbin(t *testing.T) {
	openOrSkip(t)
	img, err := kernels.CUDAImage()
	require.NoError(t, err)
	if img.Empty() {
		t.Skip("no fatbin embedded: run go generate ./kernels")
	}
	var logs bytes.Buffer
	d, err := gpushim.Open(gpushim.Config{Image: img, DisableRTC: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	p, err := d.Props(0)
	require.NoError(t, err)
	if p.CompiledArchs == nil {
		t.Skipf("the fatbin (%s) does not cover %s: %s", img.Describe(), p.ArchName, logs.String())
	}
	fillAndCheck(t, d)
	assert.Contains(t, logs.String(), "embedded code object")
}

// TestNoKernelWithoutRuntimeCompiler checks the error when nothing can
// provide a kernel: ErrNoKernel naming the kernel, the arch and the arch list.
func TestNoKernelWithoutRuntimeCompiler(t *testing.T) {
	openOrSkip(t)
	d, err := gpushim.Open(gpushim.Config{DisableRTC: true})
	require.NoError(t, err)
	p, err := d.Props(0)
	require.NoError(t, err)
	assert.Nil(t, p.CompiledArchs)
	_, err = d.Kernel(0, "add_f32")
	require.ErrorIs(t, err, vendorapi.ErrNoKernel)
	for _, s := range []string{"add_f32", p.ArchName, "compiled in: none"} {
		assert.Contains(t, err.Error(), s)
	}
	var ve *vendorapi.Error
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, 0, ve.Device)
}
