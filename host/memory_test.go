package host

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/vendorapi"
)

func TestProps(t *testing.T) {
	d := newDriver(t, Options{Devices: 2, MemoryLimit: 1 << 30})
	p, err := d.Props(1)
	require.NoError(t, err)
	assert.Equal(t, "ternion host device 1", p.Name)
	assert.Equal(t, "host", p.ArchName)
	assert.Equal(t, 1, p.Index)
	assert.Equal(t, 32, p.WarpSize)
	assert.Equal(t, runtime.NumCPU(), p.SMs)
	assert.Equal(t, 48<<10, p.SharedMemPerBlock)
	assert.Equal(t, 228<<10, p.SharedMemPerBlockOptin)
	assert.Equal(t, uint64(1<<30), p.TotalMemory)
	assert.True(t, p.Integrated)
	assert.True(t, p.VMM)
	assert.NotZero(t, p.VMMGranularity)
	assert.Zero(t, p.VMMGranularity&(p.VMMGranularity-1), "granularity is a power of two")
	assert.Zero(t, p.CC)
	assert.Equal(t, "host", d.Vendor())

	_, err = d.Props(2)
	requireHostErr(t, err, vendorapi.ErrInvalidValue)
	ok, err := d.CanAccessPeer(0, 1)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Contains(t, d.Features(), vendorapi.Feature{Name: "DEVICES", Value: "2"})
	assert.Contains(t, d.Features(), vendorapi.Feature{Name: "MEMORY_LIMIT", Value: "1073741824"})
}

func TestOutOfMemoryThenRecovery(t *testing.T) {
	const limit = 1 << 20
	d := newDriver(t, Options{Devices: 2, MemoryLimit: limit})
	a, err := d.Malloc(0, limit/2)
	require.NoError(t, err)
	free, total, err := d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(limit/2), free)
	assert.Equal(t, uint64(limit), total)

	_, err = d.Malloc(0, limit/2+1)
	ve := requireHostErr(t, err, vendorapi.ErrOutOfMemory)
	assert.Equal(t, "hostMalloc", ve.Call)
	assert.Equal(t, 2, ve.Code)
	assert.Equal(t, "hostErrorMemoryAllocation", ve.CodeName)
	assert.Equal(t, 0, ve.Device)
	assert.Contains(t, ve.Message, "524289", "the message gives the requested bytes")
	assert.Contains(t, ve.Message, "524288", "the message gives the free bytes")

	// The other device has its own limit; chunks count too.
	b, err := d.Malloc(1, limit)
	require.NoError(t, err)
	_, err = d.VMMCreate(1, d.gran)
	requireHostErr(t, err, vendorapi.ErrOutOfMemory)

	// The device keeps working: free and allocate again.
	require.NoError(t, d.Free(0, a))
	require.NoError(t, d.Free(1, b))
	c, err := d.Malloc(0, limit)
	require.NoError(t, err)
	require.NoError(t, d.Memset(0, c, 7, limit))
	require.NoError(t, d.Free(0, c))
	free, _, err = d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(limit), free)
}

func TestMallocFree(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	z, err := d.Malloc(0, 0)
	require.NoError(t, err)
	assert.NotZero(t, z, "a zero-byte allocation still has a unique address")
	require.NoError(t, d.Free(0, z))
	require.NoError(t, d.Free(0, 0), "freeing 0 is a no-op")

	p, err := d.Malloc(0, 100)
	require.NoError(t, err)
	requireHostErr(t, d.Free(1, p), vendorapi.ErrInvalidValue, "free on the wrong device")
	requireHostErr(t, d.Free(0, p+4), vendorapi.ErrInvalidValue, "free inside an allocation")
	require.NoError(t, d.Free(0, p))
	requireHostErr(t, d.Free(0, p), vendorapi.ErrInvalidValue, "double free")
	requireHostErr(t, d.Memset(0, p, 0, 1), vendorapi.ErrInvalidValue, "use after free")
	_, err = d.Malloc(5, 1)
	requireHostErr(t, err, vendorapi.ErrInvalidValue, "bad device")
}

// TestPointerValidation feeds bad ranges to every call that takes device
// pointers: each must fail with ErrInvalidValue and none may crash.
func TestPointerValidation(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s := mkStream(t, d, 0)
	p, err := d.Malloc(0, 256)
	require.NoError(t, err)
	q, err := d.Malloc(1, 256)
	require.NoError(t, err)
	hb, err := d.HostAlloc(256)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.HostFree(hb) })
	var local [64]byte
	fill, err := d.Kernel(0, "fill_f32")
	require.NoError(t, err)
	add, err := d.Kernel(0, "add_f32")
	require.NoError(t, err)
	grid, block := vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 64}
	bad := vendorapi.DevicePtr(0x1000) // never mapped by the driver

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"memset null", func() error { return d.Memset(0, 0, 0, 4) }},
		{"memset unmapped", func() error { return d.Memset(0, bad, 0, 4) }},
		{"memset past the end", func() error { return d.Memset(0, p, 0, 257) }},
		{"memset inside but past the end", func() error { return d.Memset(0, p+200, 0, 57) }},
		{"memset huge size", func() error { return d.Memset(0, p, 0, ^uint64(0)) }},
		{"memset other device without peer access", func() error { return d.Memset(0, q, 0, 4) }},
		{"memset pinned host buffer on a bad device", func() error { return d.Memset(3, p, 0, 4) }},
		{"htod past the end", func() error { return d.CopyHtoD(0, p+250, local[:]) }},
		{"dtoh past the end", func() error { return d.CopyDtoH(0, local[:], p+250) }},
		{"dtod src unmapped", func() error { return d.CopyDtoD(0, p, bad, 4) }},
		{"dtod dst past the end", func() error { return d.CopyDtoD(0, p+128, p, 129) }},
		{"peer src on the wrong device", func() error { return d.CopyPeer(1, q, 1, p, 4) }},
		{"peer past the end", func() error { return d.CopyPeer(1, q, 0, p, 300) }},
		{"memset async unmapped", func() error { return d.MemsetAsync(s, bad, 1, 4) }},
		{"htod async not pinned", func() error {
			return d.CopyHtoDAsync(s, p, vendorapi.HostBuffer{Ptr: uintptr(bad), Size: 4})
		}},
		{"htod async pinned past the end", func() error {
			return d.CopyHtoDAsync(s, p, vendorapi.HostBuffer{Ptr: hb.Ptr + 200, Size: 100})
		}},
		{"dtoh async device past the end", func() error { return d.CopyDtoHAsync(s, hb, p+8) }},
		{"dtod async", func() error { return d.CopyDtoDAsync(s, p, p+1, 256) }},
		{"peer async stream of neither device", func() error { return d.CopyPeerAsync(s, 1, q, 1, q, 4) }},
		{"2d async rows past the end", func() error { return d.Copy2DAsync(s, p, 64, p, 64, 64, 5) }},
		{"2d async width over pitch", func() error { return d.Copy2DAsync(s, p, 8, p, 64, 16, 2) }},
		{"kernel n past the end", func() error {
			return d.Launch(fill, grid, block, 0, s, vendorapi.NewArgs().Ptr(p).F32(1).I64(65))
		}},
		{"kernel huge n", func() error {
			return d.Launch(fill, grid, block, 0, s, vendorapi.NewArgs().Ptr(p).F32(1).I64(1<<62))
		}},
		{"kernel misaligned", func() error {
			return d.Launch(fill, grid, block, 0, s, vendorapi.NewArgs().Ptr(p+1).F32(1).I64(4))
		}},
		{"kernel peer pointer without access", func() error {
			return d.Launch(add, grid, block, 0, s, vendorapi.NewArgs().Ptr(p).Ptr(p).Ptr(q).I64(4))
		}},
		{"kernel stack pointer", func() error {
			return d.Launch(fill, grid, block, 0, s, vendorapi.NewArgs().Ptr(vendorapi.DevicePtr(addr(local[:]))).F32(1).I64(4))
		}},
		{"kernel wrong argument kinds", func() error {
			return d.Launch(fill, grid, block, 0, s, vendorapi.NewArgs().Ptr(p).U32(1).I64(4))
		}},
		{"kernel too few arguments", func() error {
			return d.Launch(fill, grid, block, 0, s, vendorapi.NewArgs().Ptr(p))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireHostErr(t, tc.call(), vendorapi.ErrInvalidValue)
		})
	}
	require.NoError(t, d.StreamSynchronize(s), "nothing bad was queued")

	// Peer access makes the other device's memory usable from kernels.
	require.NoError(t, d.EnablePeerAccess(0, 1))
	require.NoError(t, d.EnablePeerAccess(0, 1), "enabling twice is fine")
	require.NoError(t, d.Memset(0, q, 0, 16))
	require.NoError(t, d.DisablePeerAccess(0, 1))
	requireHostErr(t, d.Memset(0, q, 0, 16), vendorapi.ErrInvalidValue)
	requireHostErr(t, d.EnablePeerAccess(0, 0), vendorapi.ErrInvalidValue, "a device is not its own peer")
}

func TestPinnedAndRegistered(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	p, err := d.Malloc(0, 64)
	require.NoError(t, err)
	require.NoError(t, d.Memset(0, p, 0x5a, 64))

	// A read-only mapping can be registered and copied from, not into.
	ro, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(ro) })
	rw, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(rw) })
	roBuf := vendorapi.HostBuffer{Ptr: addr(ro), Size: 64}
	rwBuf := vendorapi.HostBuffer{Ptr: addr(rw), Size: 64}

	requireHostErr(t, d.CopyDtoHAsync(s, rwBuf, p), vendorapi.ErrInvalidValue, "not registered yet")
	require.NoError(t, d.HostRegister(roBuf.Ptr, 4096))
	require.NoError(t, d.HostRegister(rwBuf.Ptr, 4096))
	requireHostErr(t, d.HostRegister(rwBuf.Ptr+64, 64), vendorapi.ErrInvalidValue, "overlapping registration")
	requireHostErr(t, d.HostRegister(0x1000, 4096), vendorapi.ErrInvalidValue, "unmapped memory")

	requireHostErr(t, d.CopyDtoHAsync(s, roBuf, p), vendorapi.ErrInvalidValue, "copy into read-only memory")
	require.NoError(t, d.CopyHtoDAsync(s, p, roBuf))
	require.NoError(t, d.CopyDtoHAsync(s, rwBuf, p))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, make([]byte, 64), rw[:64], "zeros from the read-only page went through the device")

	require.NoError(t, d.HostUnregister(roBuf.Ptr))
	require.NoError(t, d.HostUnregister(rwBuf.Ptr))
	requireHostErr(t, d.HostUnregister(rwBuf.Ptr), vendorapi.ErrInvalidValue)
	requireHostErr(t, d.CopyDtoHAsync(s, rwBuf, p), vendorapi.ErrInvalidValue, "unregistered")

	// Pinned memory is usable by async copies and by kernels (an integrated device).
	hb, err := d.HostAlloc(64)
	require.NoError(t, err)
	require.NoError(t, d.Memset(0, p, 0x5a, 64))
	require.NoError(t, d.CopyDtoHAsync(s, hb, p))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, byte(0x5a), bytesAt(hb.Ptr, 64)[63])
	require.NoError(t, d.Memset(0, vendorapi.DevicePtr(hb.Ptr), 1, 64))
	require.NoError(t, d.HostFree(hb))
	requireHostErr(t, d.HostFree(hb), vendorapi.ErrInvalidValue, "double HostFree")
}

// goSink keeps test buffers on the Go heap.
var goSink []any

// TestHostRegisterRefusesGoMemory checks that Go heap memory (the garbage
// collector may free it) cannot be registered. (Stacks, which it may move,
// are internal/gomem's tests: a stack address in a test moves with the stack.)
func TestHostRegisterRefusesGoMemory(t *testing.T) {
	d := newDriver(t, Options{})
	small, large := make([]byte, 4096), make([]byte, 4<<20)
	goSink = append(goSink, small, large)
	t.Cleanup(func() { goSink = nil })
	for _, c := range []struct {
		name string
		p    uintptr
		n    uint64
	}{
		{"make([]byte, 4096)", addr(small), 4096},
		{"make([]byte, 4 MiB)", addr(large), 4 << 20},
		{"inside a heap slice", addr(large[4096:]), 4096},
	} {
		t.Run(c.name, func(t *testing.T) {
			ve := requireHostErr(t, d.HostRegister(c.p, c.n), vendorapi.ErrInvalidValue)
			assert.Contains(t, ve.Message, "Go memory")
			requireHostErr(t, d.HostUnregister(c.p), vendorapi.ErrInvalidValue, "nothing was registered")
		})
	}
}

// TestFreeWaitsForQueuedWork checks that Free lets queued work finish, as
// cudaFree synchronizes, instead of failing it.
func TestFreeWaitsForQueuedWork(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	p, err := d.Malloc(0, 1<<20)
	require.NoError(t, err)
	for range 8 {
		require.NoError(t, d.MemsetAsync(s, p, 1, 1<<20))
	}
	require.NoError(t, d.Free(0, p))
	require.NoError(t, d.StreamSynchronize(s))
}

// TestCloseUnmapsEverything checks that Close unmaps every allocation, pinned
// buffer and reserved range exactly once (it used to skip every other one
// while removing them from the table it ranged over).
func TestCloseUnmapsEverything(t *testing.T) {
	d, err := New(Options{})
	require.NoError(t, err)
	var addrs []uintptr
	for range 5 {
		p, err := d.Malloc(0, 3*d.page)
		require.NoError(t, err)
		addrs = append(addrs, uintptr(p))
		hb, err := d.HostAlloc(d.page)
		require.NoError(t, err)
		addrs = append(addrs, hb.Ptr)
	}
	vr, err := d.VMMReserve(0, 2*d.gran)
	require.NoError(t, err)
	c, err := d.VMMCreate(0, d.gran)
	require.NoError(t, err)
	require.NoError(t, d.VMMMap(vr.Base, c))
	require.NoError(t, d.VMMSetAccess(0, vr.Base, d.gran))
	addrs = append(addrs, uintptr(vr.Base))
	// The mapping holding each address before Close must be gone after
	// it. The address itself may be mapped again by then: the Go runtime
	// (and the race detector) map memory of their own at any time, and the
	// kernel hands out a freed range first; such a mapping has other
	// bounds than ours had (ours may have merged with neighbours, which a
	// reuse would have to match exactly).
	before := make([]procMapping, len(addrs))
	for i, a := range addrs {
		m, ok := mappingAt(t, a)
		require.True(t, ok, "%#x is mapped before Close", a)
		before[i] = m
	}
	require.NoError(t, d.Close())
	for i, a := range addrs {
		m, ok := mappingAt(t, a)
		assert.False(t, ok && m.lo == before[i].lo && m.hi == before[i].hi, "%#x (mapping %#x-%#x) is still mapped after Close", a,
			before[i].lo, before[i].hi)
	}
	free, _, err := d.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, d.limit, free, "Close returns every byte")
}

// mappingAt returns the mapping of this process that holds address a.
func mappingAt(t *testing.T, a uintptr) (procMapping, bool) {
	t.Helper()
	maps, err := procMaps()
	require.NoError(t, err)
	for _, m := range maps {
		if m.lo <= a && a < m.hi {
			return m, true
		}
	}
	return procMapping{}, false
}
