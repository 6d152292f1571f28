package host

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/vendorapi"
)

// feeder keeps a stream busy forever: its tail is always a blocked item.
// Each step queues a small memset and a new blocked item, then releases the
// previous one, so work keeps flowing while the stream is never empty. A
// call that waited for the stream to drain would never return; a call that
// waits for the work queued before it returns once the feeder has taken one
// more step.
type feeder struct {
	steps atomic.Uint64 // steps completed: each one queued more work
	stop  chan struct{}
	done  chan struct{}
}

// feed starts a feeder on s, writing to the 64 bytes at p; it stops when t ends.
func feed(t *testing.T, d *Driver, s vendorapi.Stream, p vendorapi.DevicePtr) *feeder {
	t.Helper()
	st := lookup(t, d, s)
	f := &feeder{stop: make(chan struct{}), done: make(chan struct{})}
	release := blockStream(st)
	go func() {
		defer close(f.done)
		defer func() { release() }()
		for {
			select {
			case <-f.stop:
				return
			default:
			}
			if err := d.MemsetAsync(s, p, byte(f.steps.Load()), 64); err != nil {
				t.Errorf("feeder: %v", err)
				return
			}
			next := blockStream(st)
			f.steps.Add(1)
			release()
			release = next
		}
	}()
	t.Cleanup(func() {
		close(f.stop)
		<-f.done
	})
	return f
}

// running fails t when the feeder has stopped.
func (f *feeder) running(t *testing.T) {
	t.Helper()
	select {
	case <-f.done:
		t.Fatal("the feeder stopped")
	default:
	}
}

// TestNoStarvation checks that the calls that wait for queued work wait only
// for the work queued before them: with a stream that is never empty they
// return, and the feeder queued more work while they waited. (They used to
// wait until every stream of every device was empty.)
func TestNoStarvation(t *testing.T) {
	for _, tc := range []struct {
		name string
		// call prepares what the call needs on d and returns the call.
		call func(t *testing.T, d *Driver, s vendorapi.Stream) func() error
	}{
		{"StreamSynchronize", func(t *testing.T, d *Driver, s vendorapi.Stream) func() error {
			return func() error { return d.StreamSynchronize(s) }
		}},
		{"DeviceSynchronize", func(t *testing.T, d *Driver, s vendorapi.Stream) func() error {
			return func() error { return d.DeviceSynchronize(0) }
		}},
		{"Free", func(t *testing.T, d *Driver, s vendorapi.Stream) func() error {
			p, err := d.Malloc(0, 4096)
			require.NoError(t, err)
			return func() error { return d.Free(0, p) }
		}},
		{"HostFree", func(t *testing.T, d *Driver, s vendorapi.Stream) func() error {
			hb, err := d.HostAlloc(4096)
			require.NoError(t, err)
			return func() error { return d.HostFree(hb) }
		}},
		{"HostUnregister", func(t *testing.T, d *Driver, s vendorapi.Stream) func() error {
			b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			require.NoError(t, err)
			t.Cleanup(func() { _ = unix.Munmap(b) })
			require.NoError(t, d.HostRegister(addr(b), 4096))
			return func() error { return d.HostUnregister(addr(b)) }
		}},
		{"VMMUnmap", func(t *testing.T, d *Driver, s vendorapi.Stream) func() error {
			vr, err := d.VMMReserve(0, d.gran)
			require.NoError(t, err)
			c, err := d.VMMCreate(0, d.gran)
			require.NoError(t, err)
			require.NoError(t, d.VMMMap(vr.Base, c))
			require.NoError(t, d.VMMSetAccess(0, vr.Base, d.gran))
			return func() error { return d.VMMUnmap(0, vr.Base, d.gran) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t, Options{})
			s := mkStream(t, d, 0)
			p, err := d.Malloc(0, 64)
			require.NoError(t, err)
			call := tc.call(t, d, s)
			f := feed(t, d, s, p)
			start := f.steps.Load()
			require.NoError(t, await(t, async(call), tc.name+" with a stream that is never empty"))
			f.running(t)
			assert.Greater(t, f.steps.Load(), start, "the feeder queued more work while %s waited", tc.name)
		})
	}
}

// TestWaitsWhereItMatters checks which streams Free and HostFree wait for:
// the streams that may use the memory, not the others.
func TestWaitsWhereItMatters(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s0, s1 := mkStream(t, d, 0), mkStream(t, d, 1)

	// A stream of device 0, blocked, does not hold up freeing device 1's memory.
	release := gate(t, d, s0)
	q, err := d.Malloc(1, 64)
	require.NoError(t, err)
	require.NoError(t, await(t, async(func() error { return d.Free(1, q) }), "Free of another device's memory"))
	release()

	// Nor does a blocked stream of device 1 hold up DeviceSynchronize(0)
	// or StreamSynchronize of another stream (TestDeviceSynchronize).

	// With peer access from device 0 to device 1, device 0's streams may use
	// device 1's memory: Free waits for them.
	d2 := newDriver(t, Options{Devices: 2})
	t0 := mkStream(t, d2, 0)
	require.NoError(t, d2.EnablePeerAccess(0, 1))
	q, err = d2.Malloc(1, 64)
	require.NoError(t, err)
	release = gate(t, d2, t0)
	require.NoError(t, d2.MemsetAsync(t0, q, 7, 64), "device 0 writes device 1's memory through peer access")
	done := async(func() error { return d2.Free(1, q) })
	stillWaiting(t, done, "Free while a peer's stream may still use the memory")
	release()
	require.NoError(t, await(t, done, "Free"))
	require.NoError(t, d2.StreamSynchronize(t0), "the memset ran before the memory was freed")

	// Without peer access, a copy between devices queued on device 0's
	// stream still uses device 1's memory: Free waits for it.
	d3 := newDriver(t, Options{Devices: 2})
	u0 := mkStream(t, d3, 0)
	src, err := d3.Malloc(1, 64)
	require.NoError(t, err)
	require.NoError(t, d3.Memset(1, src, 9, 64))
	dst, err := d3.Malloc(0, 64)
	require.NoError(t, err)
	release = gate(t, d3, u0)
	require.NoError(t, d3.CopyPeerAsync(u0, 0, dst, 1, src, 64))
	done = async(func() error { return d3.Free(1, src) })
	stillWaiting(t, done, "Free while a copy between devices may still read the memory")
	release()
	require.NoError(t, await(t, done, "Free"))
	require.NoError(t, d3.StreamSynchronize(u0), "the copy ran before its source was freed")
	b := make([]byte, 64)
	require.NoError(t, d3.CopyDtoH(0, b, dst))
	assert.Equal(t, byte(9), b[63])

	// Pinned memory may be used by any stream: HostFree waits for device 1's.
	hb, err := d.HostAlloc(64)
	require.NoError(t, err)
	release = gate(t, d, s1)
	require.NoError(t, d.CopyDtoHAsync(s1, hb, mustMalloc(t, d, 1, 64)))
	done = async(func() error { return d.HostFree(hb) })
	stillWaiting(t, done, "HostFree while a stream may still use the memory")
	release()
	require.NoError(t, await(t, done, "HostFree"))
	require.NoError(t, d.StreamSynchronize(s1))
}

// TestSynchronizeTakesErrorsOnce checks that an asynchronous error is
// reported by exactly one of several synchronizing calls racing for it.
func TestSynchronizeTakesErrorsOnce(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	release := gate(t, d, s)
	badBatchedGemm(t, d, s)
	results := []<-chan error{
		async(func() error { return d.StreamSynchronize(s) }),
		async(func() error { return d.DeviceSynchronize(0) }),
		async(func() error { return d.StreamSynchronize(s) }),
	}
	release()
	reported := 0
	for _, ch := range results {
		if err := await(t, ch, "synchronize"); err != nil {
			requireHostErr(t, err, vendorapi.ErrInvalidValue)
			reported++
		}
	}
	assert.Equal(t, 1, reported)
}

// mustMalloc allocates size bytes on dev.
func mustMalloc(t *testing.T, d *Driver, dev int, size uint64) vendorapi.DevicePtr {
	t.Helper()
	p, err := d.Malloc(dev, size)
	require.NoError(t, err)
	return p
}
