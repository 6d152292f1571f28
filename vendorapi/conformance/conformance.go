// Package conformance states the vendorapi contract as tests. Every vendor
// (host, cuda, hip, musa) calls Run from its own tests, so all of them are
// held to the same behaviour: device properties, memory and copies, virtual
// memory, stream order, events, graph capture and update, catalog kernels,
// BLAS gemms and the error type.
//
// Every rule the contract's doc comments state is a test that fails when a
// vendor breaks it; RULES.md maps rules to tests and lists the host bugs
// planted to prove the suite catches them. The checks use only behaviour the
// vendor APIs guarantee, so they hold on real GPUs; the few that cannot (a
// failure of queued work, a kernel touching memory it may not) run only
// where the driver implements vendorapi.FaultInjector or
// vendorapi.LaunchChecker, since on a GPU they would need a device fault,
// which on CUDA is sticky. The last group closes the driver.
//
// Inputs are random (math/rand/v2, a fresh seed per test, printed when the
// test fails; set TERNION_CONFORMANCE_SEED to replay one) and never zero, and
// every destination is surrounded by known bytes that must survive the call.
// Sizes are small so the whole suite takes seconds on the host device.
package conformance

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// Run runs the whole contract against d as subtests of t. Every vendor calls it from its own tests.
func Run(t *testing.T, d vendorapi.Driver) {
	require.NotNil(t, d, "driver")
	require.NotEmpty(t, d.Vendor(), "Vendor() names the vendor")
	n, err := d.DeviceCount()
	require.NoError(t, err, "DeviceCount")
	require.GreaterOrEqual(t, n, 0, "DeviceCount")
	if n == 0 {
		t.Skip("no devices")
	}
	s := &suite{d: d, n: n, startFree: make([]uint64, n)}
	for dev := range n {
		free, _, err := d.MemInfo(dev)
		require.NoError(t, err, "MemInfo(%d)", dev)
		s.startFree[dev] = free
	}
	t.Run("properties are sane", s.properties)
	t.Run("memory", s.memory)
	t.Run("peer access and copies", s.peer)
	t.Run("out of memory", s.outOfMemory)
	t.Run("virtual memory", s.virtualMemory)
	t.Run("stream order", s.streamOrder)
	t.Run("events", s.events)
	t.Run("graphs", s.graphs)
	t.Run("kernels", s.kernels)
	t.Run("blas", s.blas)
	t.Run("errors", s.errors)
	t.Run("memory ranges are checked", s.ranges)
	t.Run("peer and VMM access are enforced", s.access)
	t.Run("queries tell pending work from done", s.busy)
	t.Run("capture rules", s.captureRules)
	t.Run("handles", s.handles)
	t.Run("launch limits", s.launchLimits)
	t.Run("launch memory checks", s.launchChecks)
	t.Run("gemm memory and empty gemms", s.gemmRules)
	t.Run("failures of queued work", s.asyncFaults)
	t.Run("managed memory", s.managed)
	t.Run("close releases everything", s.closing) // last: it closes the driver
}

// suite is one driver under test.
type suite struct {
	d         vendorapi.Driver
	n         int      // device count
	startFree []uint64 // MemInfo free of each device when Run started
}

// eachDevice runs f as a subtest per device.
func (s *suite) eachDevice(t *testing.T, f func(t *testing.T, dev int)) {
	t.Helper()
	for dev := range s.n {
		t.Run(fmt.Sprintf("device %d", dev), func(t *testing.T) { f(t, dev) })
	}
}

// malloc allocates size bytes on dev and frees them when t ends (after
// waiting for dev, so no queued work still uses the memory).
func (s *suite) malloc(t *testing.T, dev int, size uint64) vendorapi.DevicePtr {
	t.Helper()
	p, err := s.d.Malloc(dev, size)
	require.NoError(t, err, "Malloc(%d, %d)", dev, size)
	require.NotZero(t, p, "Malloc(%d, %d) returned the zero pointer", dev, size)
	t.Cleanup(func() {
		if err := s.d.DeviceSynchronize(dev); err != nil {
			t.Errorf("DeviceSynchronize(%d) before Free: %v", dev, err)
		}
		if err := s.d.Free(dev, p); err != nil {
			t.Errorf("Free(%d, %#x): %v", dev, p, err)
		}
	})
	return p
}

// upload allocates a device buffer holding b.
func (s *suite) upload(t *testing.T, dev int, b []byte) vendorapi.DevicePtr {
	t.Helper()
	p := s.malloc(t, dev, uint64(len(b)))
	require.NoError(t, s.d.CopyHtoD(dev, p, b), "CopyHtoD")
	return p
}

// freedPtr returns a pointer to size bytes of dev's memory that were freed.
func (s *suite) freedPtr(t *testing.T, dev int, size uint64) vendorapi.DevicePtr {
	t.Helper()
	p, err := s.d.Malloc(dev, size)
	require.NoError(t, err, "Malloc")
	require.NoError(t, s.d.Free(dev, p), "Free")
	return p
}

// download copies n bytes at p on dev to a new slice.
func (s *suite) download(t *testing.T, dev int, p vendorapi.DevicePtr, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	require.NoError(t, s.d.CopyDtoH(dev, b, p), "CopyDtoH")
	return b
}

// stream creates a stream on dev, destroyed when t ends.
func (s *suite) stream(t *testing.T, dev int) vendorapi.Stream {
	t.Helper()
	st, err := s.d.StreamCreate(dev)
	require.NoError(t, err, "StreamCreate(%d)", dev)
	require.Equal(t, dev, st.Device, "StreamCreate: Stream.Device")
	require.NotZero(t, st.Handle, "StreamCreate: zero handle")
	t.Cleanup(func() {
		if err := s.d.StreamDestroy(st); err != nil {
			t.Errorf("StreamDestroy: %v", err)
		}
	})
	return st
}

// event creates an event on dev, destroyed when t ends.
func (s *suite) event(t *testing.T, dev int, timing bool) vendorapi.Event {
	t.Helper()
	e, err := s.d.EventCreate(dev, timing)
	require.NoError(t, err, "EventCreate(%d, %v)", dev, timing)
	require.Equal(t, dev, e.Device, "EventCreate: Event.Device")
	t.Cleanup(func() {
		if err := s.d.EventDestroy(e); err != nil {
			t.Errorf("EventDestroy: %v", err)
		}
	})
	return e
}

// blasHandle creates a BLAS handle bound to st, destroyed when t ends.
func (s *suite) blasHandle(t *testing.T, st vendorapi.Stream) vendorapi.BLASHandle {
	t.Helper()
	h, err := s.d.BLASCreate(st)
	require.NoError(t, err, "BLASCreate")
	t.Cleanup(func() { assert.NoError(t, s.d.BLASDestroy(h), "BLASDestroy") })
	return h
}

// pinned allocates size bytes of pinned host memory and returns it with a Go
// view of it; it is freed when t ends, after every device is idle.
func (s *suite) pinned(t *testing.T, size uint64) (vendorapi.HostBuffer, []byte) {
	t.Helper()
	hb, err := s.d.HostAlloc(size)
	require.NoError(t, err, "HostAlloc(%d)", size)
	require.NotZero(t, hb.Ptr, "HostAlloc: zero pointer")
	require.GreaterOrEqual(t, hb.Size, size, "HostAlloc: buffer size")
	orig := hb
	t.Cleanup(func() {
		for dev := range s.n {
			if err := s.d.DeviceSynchronize(dev); err != nil {
				t.Errorf("DeviceSynchronize(%d) before HostFree: %v", dev, err)
			}
		}
		if err := s.d.HostFree(orig); err != nil {
			t.Errorf("HostFree: %v", err)
		}
	})
	hb.Size = size
	return hb, hb.Bytes()
}

// kernel returns catalog kernel name on dev.
func (s *suite) kernel(t *testing.T, dev int, name string) vendorapi.Function {
	t.Helper()
	f, err := s.d.Kernel(dev, name)
	require.NoError(t, err, "Kernel(%d, %q)", dev, name)
	require.Equal(t, dev, f.Device, "Kernel(%d, %q): Function.Device", dev, name)
	require.Equal(t, name, f.Name, "Kernel(%d, %q): Function.Name", dev, name)
	return f
}

// Launch geometry used throughout: deliberately fewer threads than elements,
// because the element-wise catalog kernels are grid-stride loops.
var (
	smallGrid  = vendorapi.Dim3{X: 3, Y: 1, Z: 1}
	smallBlock = vendorapi.Dim3{X: 64, Y: 1, Z: 1}
)

// launch queues catalog kernel name on st with the small grid.
func (s *suite) launch(t *testing.T, st vendorapi.Stream, name string, a *vendorapi.Args) {
	t.Helper()
	f := s.kernel(t, st.Device, name)
	require.NoError(t, s.d.Launch(f, smallGrid, smallBlock, 0, st, a), "Launch(%s)", name)
}

// sync waits for st.
func (s *suite) sync(t *testing.T, st vendorapi.Stream) {
	t.Helper()
	require.NoError(t, s.d.StreamSynchronize(st), "StreamSynchronize")
}
