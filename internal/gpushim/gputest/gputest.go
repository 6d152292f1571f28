//go:build cuda || hip || musa

// Package gputest holds the tests every GPU vendor package (cuda, hip, musa)
// runs against its driver, written once: each vendor's _test.go calls them
// with its name and what it expects (driver library, run-time compiler, BLAS
// library). They skip, saying why, where the vendor's driver or a device is
// missing, so they pass on machines without a GPU.
package gputest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/gpushim"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/conformance"
)

// Vendor is what a vendor package expects of its driver.
type Vendor struct {
	Name      string        // "hip"
	DriverLib string        // the library a missing-driver message starts with: "libamdhip64.so"
	BLASName  string        // "rocBLAS"
	BLASLib   string        // where BLAS may be absent at run time, the library its error names: "librocblas"
	RTC       string        // KERNELS value of run-time compiled kernels: "hiprtc"; "none" without a compiler
	Image     kernels.Image // the embedded code object (the zero Image when none was built)
}

// Suite runs every test of this package against v as subtests (Open,
// Conformance, RuntimeCompilation, EmbeddedImage, NoKernel, FreshThreads);
// each skips, saying why, where it cannot run.
func Suite(t *testing.T, v Vendor) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Open", func(t *testing.T) { Open(t, v) }},
		{"Conformance", func(t *testing.T) { Conformance(t, v.Name) }},
		{"RuntimeCompilation", func(t *testing.T) { RuntimeCompilation(t, v) }},
		{"EmbeddedImage", func(t *testing.T) { EmbeddedImage(t, v) }},
		{"NoKernel", func(t *testing.T) { NoKernel(t, v.Name) }},
		{"FreshThreads", func(t *testing.T) { FreshThreads(t, v.Name) }},
		{"Carveout", func(t *testing.T) { Carveout(t, v) }},
	} {
		t.Run(c.name, c.run)
	}
}

// OpenOrSkip opens vendor name, skipping tb when there is no driver or no
// device, with the reason.
func OpenOrSkip(tb testing.TB, name string) vendorapi.Driver {
	tb.Helper()
	d, err := vendorapi.Open(name)
	if errors.Is(err, vendorapi.ErrNoDriver) {
		tb.Skipf("%s: no driver: %v", name, err)
	}
	require.NoError(tb, err, "vendorapi.Open(%s)", name)
	n, err := d.DeviceCount()
	require.NoError(tb, err)
	if n == 0 {
		tb.Skipf("%s: 0 devices", name)
	}
	return d
}

// Open checks what Open says on any machine: no driver is ErrNoDriver whose
// message starts with the driver library; otherwise the driver describes
// itself, and BLAS either works or (where it is loaded at run time) fails
// with ErrNoDriver naming its library.
func Open(t *testing.T, v Vendor) {
	d, err := vendorapi.Open(v.Name)
	if err != nil {
		require.ErrorIs(t, err, vendorapi.ErrNoDriver, "without a usable driver Open reports ErrNoDriver")
		var ve *vendorapi.Error
		require.True(t, errors.As(err, &ve), "%T is a *vendorapi.Error", err)
		assert.Equal(t, v.Name, ve.Vendor)
		if ve.Call == "dlopen" {
			assert.True(t, strings.HasPrefix(ve.Message, v.DriverLib), "message %q names the library", ve.Message)
		}
		t.Skipf("%s: %v", v.Name, err)
	}
	n, err := d.DeviceCount()
	require.NoError(t, err)
	t.Logf("%s: %d devices", v.Name, n)
	fl, ok := d.(vendorapi.FeatureLister)
	require.True(t, ok, "the %s driver lists features", v.Name)
	names := map[string]string{}
	for _, f := range fl.Features() {
		names[f.Name] = f.Value
	}
	t.Logf("features: %v", names)
	assert.Contains(t, []string{"embedded", v.RTC, "embedded+" + v.RTC}, names["KERNELS"])
	assert.Equal(t, "128", names["PEER_MAX_BATCH_SIZE"])
	blas, err := d.BLASVersion()
	if v.BLASLib != "" && errors.Is(err, vendorapi.ErrNoDriver) {
		assert.Contains(t, err.Error(), v.BLASLib, "the error names the library")
		t.Logf("BLAS: %v", err)
	} else {
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(blas, v.BLASName+" "), blas)
	}
	for dev := range n {
		p, err := d.Props(dev)
		require.NoError(t, err)
		t.Logf("device %d: %s %s (cc %v), warp %d, override %q, compiled archs %v", dev, p.Name, p.ArchName, p.CC,
			p.WarpSize, p.ArchOverride, p.CompiledArchs)
		assert.Equal(t, v.Name == "cuda", p.CC.IsNVIDIA(), "the cc encodes the vendor")
		assert.Positive(t, p.WarpSize)
	}
}

// Conformance holds the driver to the vendorapi contract.
func Conformance(t *testing.T, name string) {
	conformance.Run(t, OpenOrSkip(t, name))
}

// logger returns a logger writing into buf.
func logger(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

// RuntimeCompilation forces the run-time compiler: the first driver compiles
// and caches, the second finds the cache. It skips without a compiler.
func RuntimeCompilation(t *testing.T, v Vendor) {
	OpenOrSkip(t, v.Name)
	if v.RTC == "none" {
		t.Skipf("%s has no run-time compiler", v.Name)
	}
	dir := t.TempDir()
	for _, want := range []string{"compiled for", "cache hit"} {
		var logs bytes.Buffer
		d, err := gpushim.Open(gpushim.Config{ForceRTC: true, CacheDir: dir, Logger: logger(&logs)})
		require.NoError(t, err)
		if _, err := d.Kernel(0, "scale_f32"); errors.Is(err, vendorapi.ErrNoKernel) {
			t.Skipf("no run-time compiler here: %v", err)
		}
		scale(t, d, 0)
		assert.Contains(t, logs.String(), want)
		assert.Contains(t, d.Features(), vendorapi.Feature{Name: "KERNELS", Value: v.RTC})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "one cached code object")
}

// EmbeddedImage loads the code object go generate embedded, when there is
// one that runs on device 0.
func EmbeddedImage(t *testing.T, v Vendor) {
	OpenOrSkip(t, v.Name)
	if v.Image.Empty() {
		t.Skip("no code object embedded: run go generate ./kernels")
	}
	var logs bytes.Buffer
	d, err := gpushim.Open(gpushim.Config{Image: v.Image, DisableRTC: true, Logger: logger(&logs)})
	require.NoError(t, err)
	p, err := d.Props(0)
	require.NoError(t, err)
	if p.CompiledArchs == nil {
		t.Skipf("the code object (%s) does not cover %s: %s", v.Image.Describe(), p.ArchName, logs.String())
	}
	scale(t, d, 0)
	assert.Contains(t, logs.String(), "embedded code object")
}

// NoKernel checks the error when nothing can provide a kernel: ErrNoKernel
// naming the kernel, the arch and the arch list.
func NoKernel(t *testing.T, name string) {
	OpenOrSkip(t, name)
	d, err := gpushim.Open(gpushim.Config{DisableRTC: true})
	require.NoError(t, err)
	p, err := d.Props(0)
	require.NoError(t, err)
	_, err = d.Kernel(0, "add_f32")
	require.ErrorIs(t, err, vendorapi.ErrNoKernel)
	for _, s := range []string{"add_f32", p.CC.Name(), "compiled in: none"} {
		assert.Contains(t, err.Error(), s)
	}
}

// FreshThreads runs buffers, streams and launches on many goroutines, each on
// a new OS thread where no device is current yet: every entry point must set
// its own.
func FreshThreads(t *testing.T, name string) {
	d := OpenOrSkip(t, name)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: Go discards the thread afterwards
			assert.NoError(t, scaleOnes(d, 0, float32(w+1), 4096), "worker %d", w)
		}()
	}
	wg.Wait()
}

// Carveout opens the driver with TERNION_CARVEOUT=100: on CUDA every kernel
// is loaded with the largest shared-memory carveout preferred (the device's
// log line says carveout=100) and still runs; elsewhere the log says the
// switch is not applied.
func Carveout(t *testing.T, v Vendor) {
	OpenOrSkip(t, v.Name)
	var logs bytes.Buffer
	env := func(name string) (string, bool) { // this switch only: the others at their defaults
		return "100", name == switches.Carveout.Name
	}
	d, err := gpushim.Open(gpushim.Config{Image: v.Image, Env: env, Logger: logger(&logs)})
	require.NoError(t, err)
	if _, err := d.Kernel(0, "scale_f32"); errors.Is(err, vendorapi.ErrNoKernel) {
		t.Skipf("no kernels here (embedded or run-time compiled): %v", err)
	}
	scale(t, d, 0)
	if v.Name == "cuda" {
		assert.Contains(t, logs.String(), "carveout=100")
	} else {
		assert.Contains(t, logs.String(), switches.Carveout.Name+"=100 is not applied")
	}
}

// scale runs scale_f32 on dev and checks the result.
func scale(t *testing.T, d vendorapi.Driver, dev int) {
	t.Helper()
	require.NoError(t, scaleOnes(d, dev, 2.5, 1000))
}

// scaleOnes uploads n ones, scales them by v with scale_f32 on a new stream
// and checks the result.
func scaleOnes(d vendorapi.Driver, dev int, v float32, n int) error {
	f, err := d.Kernel(dev, "scale_f32")
	if err != nil {
		return err
	}
	s, err := d.StreamCreate(dev)
	if err != nil {
		return err
	}
	defer d.StreamDestroy(s)
	p, err := d.Malloc(dev, uint64(4*n))
	if err != nil {
		return err
	}
	defer d.Free(dev, p)
	buf := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(1))
	}
	if err := d.CopyHtoD(dev, p, buf); err != nil {
		return err
	}
	args := vendorapi.NewArgs().Ptr(p).Ptr(p).F32(v).F32(0).I64(int64(n))
	if err := d.Launch(f, vendorapi.Dim3{X: 4}, vendorapi.Dim3{X: 128}, 0, s, args); err != nil {
		return err
	}
	if err := d.StreamSynchronize(s); err != nil {
		return err
	}
	if err := d.CopyDtoH(dev, buf, p); err != nil {
		return err
	}
	for i := range n {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])); got != v {
			return fmt.Errorf("element %d is %v, want %v", i, got, v)
		}
	}
	return nil
}
