package faulty_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/conformance"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// newHost returns a host driver of devices devices, closed when t ends.
func newHost(t *testing.T, devices int) *host.Driver {
	t.Helper()
	d, err := host.New(host.Options{Devices: devices, MemoryLimit: 256 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

// TestConformance holds the wrapper without rules to the contract: it
// forwards every call unchanged.
func TestConformance(t *testing.T) {
	conformance.Run(t, faulty.New(newHost(t, 2)))
}

// requireInjected checks that err is an injected failure of call on dev
// matching kind (nil: matching no sentinel).
func requireInjected(t *testing.T, err error, call string, dev int, kind error) {
	t.Helper()
	require.Error(t, err, "%s must fail", call)
	assert.True(t, faulty.Injected(err), "%v is injected", err)
	var ve *vendorapi.Error
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, host.Vendor, ve.Vendor, "Error.Vendor is the wrapped driver's")
	assert.Equal(t, call, ve.Call)
	assert.Equal(t, dev, ve.Device)
	assert.Equal(t, faulty.CodeName, ve.CodeName)
	if kind != nil {
		assert.ErrorIs(t, err, kind)
	} else {
		assert.Nil(t, ve.Kind, "an unclassified failure")
	}
}

func TestMallocRules(t *testing.T) {
	for _, c := range []struct {
		name  string
		rule  faulty.Rule
		sizes []uint64
		fails []bool
	}{
		{"the second Malloc", faulty.FailMalloc(2), []uint64{64, 64, 64}, []bool{false, true, false}},
		{"every Malloc over 1 MiB", faulty.FailMallocOver(1 << 20), []uint64{1 << 20, 1<<20 + 1, 64, 2 << 20}, []bool{false, true, false, true}},
		{"every Malloc", faulty.Rule{Method: "Malloc", Kind: vendorapi.ErrOutOfMemory}, []uint64{1, 2}, []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := faulty.New(newHost(t, 2))
			require.NoError(t, d.Add(c.rule))
			for i, size := range c.sizes {
				dev := i % 2
				p, err := d.Malloc(dev, size)
				if c.fails[i] {
					requireInjected(t, err, "Malloc", dev, vendorapi.ErrOutOfMemory)
					assert.Zero(t, p)
					continue
				}
				require.NoError(t, err, "Malloc %d of %d bytes", i+1, size)
				require.NoError(t, d.Free(dev, p))
			}
			assert.Equal(t, len(c.sizes), d.Calls("Malloc"), "every call counted, failed ones too")
		})
	}
}

// fillGraph captures fill_f32(x, v) on st and returns its exec.
func fillGraph(t *testing.T, d vendorapi.Driver, st vendorapi.Stream, x vendorapi.DevicePtr, v float32, n int) (vendorapi.Graph, vendorapi.GraphExec) {
	t.Helper()
	f, err := d.Kernel(st.Device, "fill_f32")
	require.NoError(t, err)
	require.NoError(t, d.BeginCapture(st))
	require.NoError(t, d.Launch(f, vendorapi.Dim3{X: 4}, vendorapi.Dim3{X: 64}, 0, st, vendorapi.NewArgs().Ptr(x).F32(v).I64(int64(n))))
	g, err := d.EndCapture(st)
	require.NoError(t, err)
	x2, err := d.GraphInstantiate(g)
	require.NoError(t, err)
	return g, x2
}

// read returns n float32s at p on dev.
func read(t *testing.T, d vendorapi.Driver, dev int, p vendorapi.DevicePtr, n int) []float32 {
	t.Helper()
	b := make([]byte, 4*n)
	require.NoError(t, d.CopyDtoH(dev, b, p))
	return le.ToF32(b)
}

// constant returns n copies of v.
func constant(v float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestGraphAndCaptureRules(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		name string
		rule faulty.Rule
		run  func(t *testing.T, d *faulty.Driver, st vendorapi.Stream, x vendorapi.DevicePtr)
	}{
		{"GraphExecUpdate fails and the exec stays as it was", faulty.FailGraphExecUpdate(1),
			func(t *testing.T, d *faulty.Driver, st vendorapi.Stream, x vendorapi.DevicePtr) {
				_, exec := fillGraph(t, d, st, x, 1, n)
				g2, _ := fillGraph(t, d, st, x, 2, n)
				requireInjected(t, d.GraphExecUpdate(exec, g2), "GraphExecUpdate", 0, vendorapi.ErrGraphUpdate)
				require.NoError(t, d.GraphLaunch(exec, st))
				require.NoError(t, d.StreamSynchronize(st))
				assert.Equal(t, constant(1, n), read(t, d, 0, x, n))
				require.NoError(t, d.GraphExecUpdate(exec, g2), "the second update is not failed")
			}},
		{"BeginCapture fails and starts no capture", faulty.FailCapture("BeginCapture", 1),
			func(t *testing.T, d *faulty.Driver, st vendorapi.Stream, _ vendorapi.DevicePtr) {
				requireInjected(t, d.BeginCapture(st), "BeginCapture", 0, vendorapi.ErrNotSupported)
				status, err := d.CaptureStatus(st)
				require.NoError(t, err)
				assert.Equal(t, vendorapi.CaptureNone, status)
			}},
		{"EndCapture fails and still ends the capture", faulty.FailCapture("EndCapture", 1),
			func(t *testing.T, d *faulty.Driver, st vendorapi.Stream, x vendorapi.DevicePtr) {
				require.NoError(t, d.BeginCapture(st))
				require.NoError(t, d.MemsetAsync(st, x, 0, 4*n))
				_, err := d.EndCapture(st)
				requireInjected(t, err, "EndCapture", 0, vendorapi.ErrNotSupported)
				status, err := d.CaptureStatus(st)
				require.NoError(t, err)
				assert.Equal(t, vendorapi.CaptureNone, status)
				require.NoError(t, d.StreamSynchronize(st), "the stream works")
			}},
		{"any method by name", faulty.Fail("StreamQuery", 2, vendorapi.ErrInvalidValue),
			func(t *testing.T, d *faulty.Driver, st vendorapi.Stream, _ vendorapi.DevicePtr) {
				require.NoError(t, d.StreamQuery(st))
				requireInjected(t, d.StreamQuery(st), "StreamQuery", 0, vendorapi.ErrInvalidValue)
				require.NoError(t, d.StreamQuery(st))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := faulty.New(newHost(t, 1))
			require.NoError(t, d.Add(c.rule))
			st, err := d.StreamCreate(0)
			require.NoError(t, err)
			x, err := d.Malloc(0, 4*n)
			require.NoError(t, err)
			c.run(t, d, st, x)
		})
	}
}

func TestLaunchFailsAsynchronously(t *testing.T) {
	const n = 64
	for _, c := range []struct {
		name   string
		report func(d vendorapi.Driver, st vendorapi.Stream, e vendorapi.Event) error
	}{
		{"StreamSynchronize", func(d vendorapi.Driver, st vendorapi.Stream, _ vendorapi.Event) error { return d.StreamSynchronize(st) }},
		{"EventSynchronize", func(d vendorapi.Driver, _ vendorapi.Stream, e vendorapi.Event) error { return d.EventSynchronize(e) }},
		{"DeviceSynchronize", func(d vendorapi.Driver, st vendorapi.Stream, _ vendorapi.Event) error {
			return d.DeviceSynchronize(st.Device)
		}},
	} {
		t.Run("reported once by "+c.name, func(t *testing.T) {
			d := faulty.New(newHost(t, 2))
			require.NoError(t, d.Add(faulty.FailLaunchAsync(2)))
			st, err := d.StreamCreate(1)
			require.NoError(t, err)
			other, err := d.StreamCreate(0)
			require.NoError(t, err)
			e, err := d.EventCreate(1, false)
			require.NoError(t, err)
			x, err := d.Malloc(1, 4*n)
			require.NoError(t, err)
			f, err := d.Kernel(1, "fill_f32")
			require.NoError(t, err)
			launch := func(v float32) error {
				return d.Launch(f, vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 32}, 0, st, vendorapi.NewArgs().Ptr(x).F32(v).I64(n))
			}
			require.NoError(t, launch(1))
			require.NoError(t, launch(2), "a launch failed asynchronously returns nil")
			require.NoError(t, d.EventRecord(e, st))
			require.NoError(t, d.StreamSynchronize(other), "another device's synchronize reports nothing")
			requireInjected(t, c.report(d, st, e), "Launch", 1, nil)
			require.NoError(t, d.StreamSynchronize(st), "reported once")
			require.NoError(t, d.DeviceSynchronize(1), "reported once")
			assert.Equal(t, constant(1, n), read(t, d, 1, x, n), "the failed launch ran nothing")
			require.NoError(t, launch(3), "the third launch is not failed")
			require.NoError(t, d.StreamSynchronize(st))
			assert.Equal(t, constant(3, n), read(t, d, 1, x, n))
		})
	}
}

// TestOptionalMethodRules fails methods of the optional interfaces the
// wrapper forwards (vendorapi.ManagedAllocator, vendorapi.BLASWorkspacer):
// Add takes their rules and the calls fail as rules say.
func TestOptionalMethodRules(t *testing.T) {
	d := faulty.New(newHost(t, 1))
	require.NoError(t, d.Add(
		faulty.Fail("MallocManaged", 1, vendorapi.ErrOutOfMemory),
		faulty.Fail("BLASSetWorkspace", 2, vendorapi.ErrInvalidValue),
	))
	_, err := d.MallocManaged(0, 64)
	requireInjected(t, err, "MallocManaged", 0, vendorapi.ErrOutOfMemory)
	p, err := d.MallocManaged(0, 64)
	require.NoError(t, err, "the second MallocManaged is not failed")
	require.NoError(t, d.Free(0, p))

	st, err := d.StreamCreate(0)
	require.NoError(t, err)
	h, err := d.BLASCreate(st)
	require.NoError(t, err)
	ws, err := d.Malloc(0, 1<<20)
	require.NoError(t, err)
	require.NoError(t, d.BLASSetWorkspace(h, ws, 1<<20), "the first BLASSetWorkspace is not failed")
	requireInjected(t, d.BLASSetWorkspace(h, ws, 1<<20), "BLASSetWorkspace", 0, vendorapi.ErrInvalidValue)
	require.NoError(t, d.BLASSetWorkspace(h, ws, 1<<20), "the third BLASSetWorkspace is not failed")
	assert.Equal(t, 3, d.Calls("BLASSetWorkspace"))
	require.NoError(t, d.BLASDestroy(h))
	require.NoError(t, d.Free(0, ws))
	require.NoError(t, d.StreamDestroy(st))
}

// TestMissingCapability wraps a driver that has only the vendorapi.Driver
// methods: the optional methods fail with ErrNotSupported, which is not an
// injected failure.
func TestMissingCapability(t *testing.T) {
	d := faulty.New(struct{ vendorapi.Driver }{newHost(t, 1)})
	st, err := d.StreamCreate(0)
	require.NoError(t, err)
	h, err := d.BLASCreate(st)
	require.NoError(t, err)
	_, mmErr := d.MallocManaged(0, 64)
	for call, err := range map[string]error{"MallocManaged": mmErr, "BLASSetWorkspace": d.BLASSetWorkspace(h, 0, 64)} {
		require.ErrorIs(t, err, vendorapi.ErrNotSupported, call)
		assert.False(t, faulty.Injected(err), "%s: %v is not injected", call, err)
		var ve *vendorapi.Error
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, host.Vendor, ve.Vendor)
		assert.Equal(t, call, ve.Call)
		assert.Equal(t, 0, ve.Device)
	}
	assert.Nil(t, d.Features())
	require.NoError(t, d.BLASDestroy(h))
	require.NoError(t, d.StreamDestroy(st))
}

func TestAddRefusesBadRules(t *testing.T) {
	d := faulty.New(newHost(t, 1))
	for _, c := range []struct {
		name string
		rule faulty.Rule
	}{
		{"no such method", faulty.Fail("Mallocate", 1, vendorapi.ErrOutOfMemory)},
		{"asynchronous failure of a method other than Launch", faulty.Rule{Method: "Malloc", Async: true}},
		{"negative call number", faulty.Fail("Malloc", -1, nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Error(t, d.Add(faulty.FailMalloc(1), c.rule))
			_, err := d.Malloc(0, 64)
			require.NoError(t, err, "a refused Add adds none of its rules")
		})
	}
}

func TestCountsAndReset(t *testing.T) {
	d := faulty.New(newHost(t, 1))
	require.NoError(t, d.Add(faulty.Rule{Method: "StreamCreate", Kind: vendorapi.ErrOutOfMemory}))
	for range 3 {
		_, err := d.StreamCreate(0)
		requireInjected(t, err, "StreamCreate", 0, vendorapi.ErrOutOfMemory)
	}
	_, err := d.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"StreamCreate": 3, "DeviceCount": 1}, d.Counts())
	d.Reset()
	s, err := d.StreamCreate(0)
	require.NoError(t, err, "Reset removed the rule")
	require.NoError(t, d.StreamDestroy(s))
	assert.Equal(t, 4, d.Calls("StreamCreate"), "Reset keeps the counters")
}

// TestConcurrentCallsFailExactlyOnce makes many goroutines allocate at once:
// the rule for the 50th Malloc fails exactly one of them.
func TestConcurrentCallsFailExactlyOnce(t *testing.T) {
	d := faulty.New(newHost(t, 1))
	require.NoError(t, d.Add(faulty.FailMalloc(50)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range 8 {
		wg.Go(func() {
			for range 25 {
				p, err := d.Malloc(0, 256)
				if err != nil {
					if !errors.Is(err, vendorapi.ErrOutOfMemory) || !faulty.Injected(err) {
						t.Errorf("unexpected error %v", err)
					}
					mu.Lock()
					failed++
					mu.Unlock()
					continue
				}
				if err := d.Free(0, p); err != nil {
					t.Errorf("Free: %v", err)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, failed)
	assert.Equal(t, 200, d.Calls("Malloc"))
}

func TestInjectedTellsRealErrors(t *testing.T) {
	d := faulty.New(newHost(t, 1))
	_, err := d.Malloc(0, 1<<40)
	require.ErrorIs(t, err, vendorapi.ErrOutOfMemory, "a real out of memory")
	assert.False(t, faulty.Injected(err))
	assert.False(t, faulty.Injected(nil))
	assert.Equal(t, d.Unwrap().Vendor(), d.Vendor())
}
