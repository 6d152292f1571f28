package pool

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// propsDriver overrides a driver's VMM properties.
type propsDriver struct {
	vendorapi.Driver
	vmm  bool
	gran uint64
}

func (d propsDriver) Props(dev int) (vendorapi.Props, error) {
	p, err := d.Driver.Props(dev)
	p.VMM, p.VMMGranularity = d.vmm, d.gran
	return p, err
}

func TestNewChoosesThePool(t *testing.T) {
	h := newHost(t, 16<<20)
	for _, tc := range []struct {
		name    string
		d       Driver
		noVMM   bool
		want    string
		wantErr error
	}{
		{"host reports VMM", h, false, "*pool.VMM", nil},
		{"TERNION_NO_VMM", h, true, "*pool.Legacy", nil},
		{"device without VMM", propsDriver{h, false, 0}, false, "*pool.Legacy", nil},
		{"device without VMM and NO_VMM", propsDriver{h, false, 0}, true, "*pool.Legacy", nil},
		{"VMM without a granularity", propsDriver{h, true, 0}, false, "", vendorapi.ErrInvalidValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.d, 0, Options{NoVMM: tc.noVMM})
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, fmt.Sprintf("%T", p))
			require.NoError(t, p.Close())
		})
	}
	_, err := New(h, 3, Options{})
	require.ErrorIs(t, err, vendorapi.ErrInvalidValue, "no device 3")
}

func TestFreeMisuse(t *testing.T) {
	require.NoError(t, Buffer{}.Free(), "the zero Buffer")
	b, err := NewLegacy(newFakeAlloc(0), 0, Options{}).Alloc(0)
	require.NoError(t, err)
	require.Equal(t, Buffer{}, b, "Alloc(0) is the zero Buffer")
	require.ErrorIs(t, Buffer{Ptr: 0x1000, Size: 8}.Free(), ErrFreed, "a Buffer not from a pool")

	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			_, p, _ := newPool(t, k, 16<<20, Options{VMMReserve: 1 << 20})
			keep, err := p.Alloc(300)
			require.NoError(t, err)
			b, err := p.Alloc(1000)
			require.NoError(t, err)
			cp := b
			require.NoError(t, b.Free())
			before := p.Stats()
			for name, again := range map[string]Buffer{"the same value": b, "a copy": cp} {
				err := again.Free()
				require.ErrorIs(t, err, ErrFreed, name)
				assert.Contains(t, err.Error(), "device 0")
				assert.Equal(t, before, p.Stats(), "%s: the pool is unchanged", name)
			}
			forged := keep
			forged.Ptr++
			require.ErrorIs(t, forged.Free(), ErrFreed, "a Buffer whose pointer was changed")
			require.NoError(t, keep.Free())
		})
	}
}

func TestCloseWithBuffersOut(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			d, p, start := newPool(t, k, 16<<20, Options{VMMReserve: 4 << 20})
			a, err := p.Alloc(1000)
			require.NoError(t, err)
			b, err := p.Alloc(200000)
			require.NoError(t, err)
			c, err := p.Alloc(300000)
			require.NoError(t, err)
			require.NoError(t, c.Free()) // cached (legacy) or in its own mapping past the end (VMM)
			out := a.Size + b.Size

			err = p.Close()
			require.ErrorIs(t, err, ErrInUse)
			assert.Contains(t, err.Error(), fmt.Sprintf("2 buffers (%d bytes) still out", out))
			// What is not in use goes back at once: every cached buffer, every
			// mapping wholly past the memory in use.
			assert.Equal(t, uint64(1), p.Stats().DriverFrees)
			if k.name == "legacy" {
				assert.Zero(t, p.Stats().Cached)
			}

			_, err = p.Alloc(10)
			require.ErrorIs(t, err, ErrClosed)

			// The buffers stay valid until freed; then their memory goes back.
			require.NoError(t, d.Memset(0, b.Ptr, 7, b.Size))
			require.NoError(t, b.Free())
			require.NoError(t, a.Free())
			require.ErrorIs(t, a.Free(), ErrFreed)
			assert.Equal(t, start, memFree(t, d))
			require.NoError(t, p.Close(), "closing again once everything is back")
			st := p.Stats()
			assert.Zero(t, st.InUse)
			assert.Zero(t, st.Cached)
		})
	}
}

func TestOutOfMemoryRecovery(t *testing.T) {
	const limit = 8 << 20
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			d, p, start := newPool(t, k, limit, Options{})
			require.Equal(t, uint64(limit), start)

			var bufs []Buffer
			var oom error
			for range 100 {
				b, err := p.Alloc(1 << 20)
				if err != nil {
					oom = err
					break
				}
				bufs = append(bufs, b)
			}
			require.Error(t, oom, "8 MiB cannot hold 100 MiB")
			require.ErrorIs(t, oom, vendorapi.ErrOutOfMemory)
			var ve *vendorapi.Error
			require.ErrorAs(t, oom, &ve, "the driver's error is kept")
			st := p.Stats()
			msg := oom.Error()
			for _, want := range []string{"device 0", "1048576 bytes", fmt.Sprintf("%d B (", st.InUse), "in use", "cached"} {
				assert.Contains(t, msg, want)
			}
			assert.Equal(t, uint64(1), st.Flushes, "one flush before giving up")
			assert.Len(t, bufs, st.Buffers, "the failure changed no buffer")
			assert.NotEmpty(t, bufs)

			// Free everything: the pool caches it (legacy) or keeps it mapped (VMM).
			for _, b := range slices.Backward(bufs) {
				require.NoError(t, b.Free())
			}
			st = p.Stats()
			assert.Zero(t, st.InUse)
			assert.NotZero(t, st.Cached)

			// A larger, differently sized request: the legacy pool has no cached
			// buffer that fits and the driver none free until the pool flushes.
			big := uint64(3<<20 + 12345)
			b, err := p.Alloc(big)
			require.NoError(t, err, "the pool recovers after running out of memory")
			assert.GreaterOrEqual(t, b.Size, big)
			require.NoError(t, d.Memset(0, b.Ptr, 0xab, b.Size))
			st = p.Stats()
			if k.name == "legacy" {
				assert.Equal(t, uint64(2), st.Flushes, "the cached buffers were flushed and the allocation retried")
				assert.Zero(t, st.Cached)
				assert.Equal(t, uint64(len(bufs)), st.DriverFrees)
			}
			require.NoError(t, b.Free())
		})
	}
}

func TestInjectedFailures(t *testing.T) {
	for _, k := range kinds {
		for _, tc := range []struct {
			name        string
			fail        int   // allocation calls to fail; <0 for all
			kind        error // failure kind; nil for out of memory
			wantErr     error
			wantFlushes uint64
		}{
			{"one out of memory is retried after a flush", 1, nil, nil, 1},
			{"two out of memory fail the allocation", 2, nil, vendorapi.ErrOutOfMemory, 1},
			{"persistent out of memory", -1, nil, vendorapi.ErrOutOfMemory, 1},
			{"another failure is not retried", 1, vendorapi.ErrInvalidValue, vendorapi.ErrInvalidValue, 0},
		} {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				d, p, _ := newTestPool(t, k, 64<<20, Options{VMMReserve: 16 << 20})
				// Something to flush: a small buffer in use, a larger one freed.
				keep, err := p.Alloc(100)
				require.NoError(t, err)
				tmp, err := p.Alloc(300000)
				require.NoError(t, err)
				require.NoError(t, tmp.Free())
				cachedBefore := p.Stats().Cached
				require.NotZero(t, cachedBefore)

				d.failWith = tc.kind
				d.failNext(tc.fail)
				b, err := p.Alloc(1 << 20)
				st := p.Stats()
				assert.Equal(t, tc.wantFlushes, st.Flushes)
				if tc.wantFlushes > 0 {
					assert.Less(t, st.Cached, cachedBefore, "the flush returned cached memory")
				} else {
					assert.Equal(t, cachedBefore, st.Cached, "no flush")
				}
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
					if tc.wantErr != vendorapi.ErrOutOfMemory {
						assert.NotErrorIs(t, err, vendorapi.ErrOutOfMemory)
					}
					assert.Equal(t, 1, st.Buffers, "the failure changed no buffer")
					// The pool stays usable once the driver recovers.
					d.failNext(0)
					b, err = p.Alloc(1 << 20)
				}
				require.NoError(t, err)
				require.NoError(t, d.Memset(0, b.Ptr, 1, b.Size))
				require.NoError(t, b.Free())
				require.NoError(t, keep.Free())
			})
		}
	}
}

func TestMemoryIntact(t *testing.T) {
	// One buffer holds random bytes while others are allocated, written,
	// freed and reallocated around it (with growth, cache hits and flushes);
	// every live buffer keeps its own bytes.
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			d, p, _ := newPool(t, k, 32<<20, Options{VMMReserve: 16 << 20})
			rng := rand.New(rand.NewPCG(1, 2))
			type live struct {
				b    Buffer
				data []byte
			}
			fill := func(size uint64) live {
				b, err := p.Alloc(size)
				require.NoError(t, err)
				data := make([]byte, size)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				require.NoError(t, d.CopyHtoD(0, b.Ptr, data))
				return live{b, data}
			}
			check := func(l live, step int) {
				got := make([]byte, len(l.data))
				require.NoError(t, d.CopyDtoH(0, got, l.b.Ptr))
				require.True(t, bytes.Equal(l.data, got), "step %d: buffer at %#x changed", step, uintptr(l.b.Ptr))
			}
			first := fill(70000)
			var stack []live
			for step := range 300 {
				switch {
				case len(stack) > 0 && rng.IntN(3) == 0:
					// Free: any buffer from the legacy pool, the last from the VMM pool.
					i := len(stack) - 1
					if k.name == "legacy" {
						i = rng.IntN(len(stack))
					}
					check(stack[i], step)
					require.NoError(t, stack[i].b.Free())
					stack = slices.Delete(stack, i, i+1)
				case step%50 == 49:
					require.NoError(t, p.Flush())
				default:
					stack = append(stack, fill(uint64(1+rng.IntN(100000))))
				}
				check(first, step)
				if step%25 == 0 {
					for _, l := range stack {
						check(l, step)
					}
				}
			}
			for _, l := range slices.Backward(stack) {
				check(l, -1)
				require.NoError(t, l.b.Free())
			}
			check(first, -1)
			require.NoError(t, first.b.Free())
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	// Run under -race: goroutines share one pool. VMM frees that come out of
	// order are refused and retried until the buffers above have gone.
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			_, p, _ := newPool(t, k, 64<<20, Options{VMMReserve: 32 << 20})
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for g := range 4 {
				wg.Go(func() {
					for i := range 200 {
						b, err := p.Alloc(uint64(128 * (1 + (g+i)%16)))
						if err != nil {
							errs <- err
							return
						}
						_ = p.Stats()
						for {
							err = b.Free()
							if !errors.Is(err, ErrOrder) {
								break
							}
							runtime.Gosched()
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			st := p.Stats()
			assert.Zero(t, st.Buffers)
			assert.Zero(t, st.InUse)
		})
	}
}

func TestDebugLog(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d := newTestDriver(t, 8<<20)

	l := NewLegacy(d, 0, Options{Logger: log})
	bufs := make([]Buffer, MaxBuffers+1)
	for i := range bufs {
		var err error
		bufs[i], err = l.Alloc(100)
		require.NoError(t, err)
	}
	for _, b := range bufs {
		require.NoError(t, b.Free())
	}
	d.failNext(1)
	b, err := l.Alloc(1000)
	require.NoError(t, err)
	require.NoError(t, b.Free())
	require.NoError(t, l.Close())

	v, err := NewVMM(d, 0, gran, Options{Logger: log, VMMReserve: 1 << 20})
	require.NoError(t, err)
	b, err = v.Alloc(100)
	require.NoError(t, err)
	require.NoError(t, b.Free())
	require.NoError(t, v.Close())

	for _, want := range []string{
		`level=DEBUG msg="pool: driver allocation" asked=100 allocated=256 cached=0 poolSize=256 device=0 pool=legacy`,
		`msg="pool: buffer pool full, freeing to the driver" slots=256 size=256 device=0 pool=legacy`,
		`msg="pool: out of memory, flushed the cache and retrying" asked=1280 flushError=<nil> device=0 pool=legacy`,
		`msg="pool: VMM pool size increased" size=65536 chunk=65536 mappings=1 device=0 pool=vmm`,
	} {
		assert.Contains(t, out.String(), want)
	}

	// Nothing is logged above debug level.
	out.Reset()
	quiet := slog.New(slog.NewTextHandler(&out, nil))
	q := NewLegacy(d, 0, Options{Logger: quiet})
	b, err = q.Alloc(100)
	require.NoError(t, err)
	require.NoError(t, b.Free())
	require.NoError(t, q.Close())
	assert.Empty(t, out.String())
}
