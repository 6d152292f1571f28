package pool

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
)

// gran is the host device's VMM granularity.
const gran = 64 << 10

// newHost returns a one-device host driver with a memory limit, closed when t ends.
func newHost(t testing.TB, limit uint64) *host.Driver {
	t.Helper()
	d, err := host.New(host.Options{Devices: 1, MemoryLimit: limit})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

// memFree returns device 0's free memory.
func memFree(t testing.TB, d vendorapi.Driver) uint64 {
	t.Helper()
	free, _, err := d.MemInfo(0)
	require.NoError(t, err)
	return free
}

// kind is one of the two pools, built over any driver.
type kind struct {
	name string
	make func(d Driver, o Options) (Pool, error)
}

var (
	legacyKind = kind{"legacy", func(d Driver, o Options) (Pool, error) { return NewLegacy(d, 0, o), nil }}
	vmmKind    = kind{"vmm", func(d Driver, o Options) (Pool, error) { return NewVMM(d, 0, gran, o) }}
	// kinds are the two pools; each test runs both.
	kinds = []kind{legacyKind, vmmKind}
)

// newPool returns a pool of kind k on device 0 of a new host driver with a
// memory limit (newHost), and the device's free memory before the pool. When
// t ends, before the driver closes, the pool is closed (closing again, where
// the test closed it, is harmless) and MemInfo must be back at that start.
func newPool(t *testing.T, k kind, limit uint64, o Options) (*host.Driver, Pool, uint64) {
	t.Helper()
	d := newHost(t, limit)
	p, start := poolOn(t, k, d, o)
	return d, p, start
}

// newTestPool is newPool over a testDriver (newTestDriver).
func newTestPool(t *testing.T, k kind, limit uint64, o Options) (*testDriver, Pool, uint64) {
	t.Helper()
	d := newTestDriver(t, limit)
	p, start := poolOn(t, k, d, o)
	return d, p, start
}

// poolOn makes the pool of newPool and newTestPool over d and registers its
// check, which runs before the cleanups registered earlier (d's Close).
func poolOn(t *testing.T, k kind, d vendorapi.Driver, o Options) (Pool, uint64) {
	t.Helper()
	start := memFree(t, d)
	p, err := k.make(d, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close())
		assert.Equal(t, start, memFree(t, d), "MemInfo returns to the start after Close")
	})
	return p, start
}

// unmapCall is one VMMUnmap a testDriver saw.
type unmapCall struct {
	p    vendorapi.DevicePtr
	size uint64
}

// testDriver wraps a driver for tests: it fails chosen driver allocations
// (Malloc and VMMCreate, counted together from 1) and records VMM calls.
// A general fault-injecting driver package could replace the failing part.
type testDriver struct {
	vendorapi.Driver

	mu        sync.Mutex
	allocs    int   // Malloc and VMMCreate calls so far
	failFrom  int   // first call to fail, 0 for none
	failCount int   // how many calls fail from failFrom on; <0 for all
	failWith  error // the failure's kind; nil means vendorapi.ErrOutOfMemory
	creates   []uint64
	unmaps    []unmapCall
	vmmFrees  int
}

// fail reports whether this allocation call is to fail, and with what.
func (d *testDriver) fail(call string, dev int, size uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.allocs++
	if d.failFrom == 0 || d.allocs < d.failFrom || (d.failCount >= 0 && d.allocs >= d.failFrom+d.failCount) {
		return nil
	}
	kind := d.failWith
	if kind == nil {
		kind = vendorapi.ErrOutOfMemory
	}
	return &vendorapi.Error{Vendor: "test", Call: call, Code: 2, CodeName: "testInjected",
		Message: "injected failure", Device: dev, Kind: kind}
}

// failNext makes the next n allocation calls fail (n < 0: all of them).
func (d *testDriver) failNext(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failFrom, d.failCount = d.allocs+1, n
}

func (d *testDriver) Malloc(dev int, size uint64) (vendorapi.DevicePtr, error) {
	if err := d.fail("testMalloc", dev, size); err != nil {
		return 0, err
	}
	return d.Driver.Malloc(dev, size)
}

func (d *testDriver) VMMCreate(dev int, size uint64) (vendorapi.PhysicalChunk, error) {
	if err := d.fail("testMemCreate", dev, size); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	c, err := d.Driver.VMMCreate(dev, size)
	if err == nil {
		d.mu.Lock()
		d.creates = append(d.creates, size)
		d.mu.Unlock()
	}
	return c, err
}

func (d *testDriver) VMMUnmap(dev int, p vendorapi.DevicePtr, size uint64) error {
	d.mu.Lock()
	d.unmaps = append(d.unmaps, unmapCall{p, size})
	d.mu.Unlock()
	return d.Driver.VMMUnmap(dev, p, size)
}

func (d *testDriver) VMMFree(r vendorapi.VirtualRange) error {
	d.mu.Lock()
	d.vmmFrees++
	d.mu.Unlock()
	return d.Driver.VMMFree(r)
}

// newTestDriver wraps a fresh host driver.
func newTestDriver(t testing.TB, limit uint64) *testDriver {
	return &testDriver{Driver: newHost(t, limit)}
}

// fakeAlloc is a pure-logic Allocator: addresses from a counter, a byte
// budget, every call recorded. It never touches memory.
type fakeAlloc struct {
	next    uintptr
	budget  uint64 // bytes it can hand out; 0 means unlimited
	live    map[vendorapi.DevicePtr]uint64
	used    uint64
	mallocs []uint64
	frees   []uint64
}

func newFakeAlloc(budget uint64) *fakeAlloc {
	return &fakeAlloc{next: 1 << 20, budget: budget, live: map[vendorapi.DevicePtr]uint64{}}
}

func (a *fakeAlloc) Malloc(dev int, size uint64) (vendorapi.DevicePtr, error) {
	if a.budget != 0 && a.used+size > a.budget {
		return 0, &vendorapi.Error{Vendor: "fake", Call: "fakeMalloc", Kind: vendorapi.ErrOutOfMemory, Device: dev}
	}
	p := vendorapi.DevicePtr(a.next)
	a.next += uintptr(size) + 4096
	a.live[p] = size
	a.used += size
	a.mallocs = append(a.mallocs, size)
	return p, nil
}

func (a *fakeAlloc) Free(dev int, p vendorapi.DevicePtr) error {
	size, ok := a.live[p]
	if !ok {
		return &vendorapi.Error{Vendor: "fake", Call: "fakeFree", Kind: vendorapi.ErrInvalidValue, Device: dev}
	}
	delete(a.live, p)
	a.used -= size
	a.frees = append(a.frees, size)
	return nil
}
