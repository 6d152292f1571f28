//go:build cuda && ternion_bench

package cuda

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/gpushim"
)

// BenchmarkLaunchRawCgo is the floor: a C helper doing exactly one
// cuLaunchKernel of the same function per cgo call, from a Go loop on one
// locked OS thread (no checks, no device switch). Measured 2026-12-02 on the
// H200: 4.25 µs/launch.
func BenchmarkLaunchRawCgo(b *testing.B) { forKernels(b, benchLaunchRawCgo) }

func benchLaunchRawCgo(b *testing.B, k tinyKernel) {
	d, f, s, args := tiny(b, k)
	gd, ok := d.(*gpushim.Driver)
	require.True(b, ok, "the cuda driver is a *gpushim.Driver")
	raw, err := gd.Raw(f, s)
	require.NoError(b, err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(b, raw.Bind())
	launchLoop(b, d, s, func() error { return raw.Launch(args) })
}
