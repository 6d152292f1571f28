package pool

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"

	"github.com/ternion/ternion/internal/align"
	"github.com/ternion/ternion/vendorapi"
)

// maxRequest bounds a request so that size arithmetic cannot overflow; no
// device has this much memory.
const maxRequest = 1 << 60

// block is one driver allocation.
type block struct {
	ptr  vendorapi.DevicePtr
	size uint64
}

// outEntry is a legacy buffer out; gen 0 marks an unused entry.
type outEntry struct {
	block
	gen uint64
}

// Legacy is the seed's legacy pool (ggml_cuda_pool_leg): up to MaxBuffers
// freed buffers are cached; Alloc takes the best-fitting cached buffer (the
// smallest at least as large as asked, an exact fit at once) and on a miss
// allocates LookAhead times the size, rounded up to LegacyAlign, from the
// driver. A freed buffer goes back to the cache, or to the driver when the
// cache is full. It is safe for concurrent use.
type Legacy struct {
	common // the device, the logger, the lock and the accounting
	a      Allocator

	// guarded by mu:
	cache  []block    // cached buffers sorted by size, at most MaxBuffers
	out    []outEntry // buffers out, indexed by Buffer.slot
	spare  []uint32   // unused indices of out
	gen    uint64     // last generation handed out
	held   uint64     // bytes allocated from the driver and not freed (the seed's pool_size)
	closed bool
}

var _ Pool = (*Legacy)(nil)

// NewLegacy returns a legacy pool drawing from a's memory on device dev.
func NewLegacy(a Allocator, dev int, o Options) *Legacy {
	return &Legacy{common: newCommon(dev, "legacy", o), a: a, cache: make([]block, 0, MaxBuffers)}
}

// lookAheadSize is the seed's look-ahead size: LookAhead × size rounded up
// to LegacyAlign.
func lookAheadSize(size uint64) uint64 {
	return align.Up(uint64(LookAhead*float64(size)), LegacyAlign)
}

// Alloc returns the best-fitting cached buffer of at least size bytes, or a
// new driver allocation of the look-ahead size. See Pool.Alloc.
func (p *Legacy) Alloc(size uint64) (Buffer, error) {
	if size == 0 {
		return Buffer{}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Buffer{}, fmt.Errorf("%w: device %d: legacy pool cannot allocate %d bytes", ErrClosed, p.dev, size)
	}
	var b block
	if i := p.bestFit(size); i < len(p.cache) {
		b = p.cache[i]
		p.cache = slices.Delete(p.cache, i, i+1)
		p.st.Cached -= b.size
	} else {
		var err error
		if b, err = p.grow(size); err != nil {
			return Buffer{}, err
		}
	}
	return p.handOut(b), nil
}

// bestFit returns the index of the smallest cached buffer of at least size
// bytes, or len(p.cache) if none is that large.
func (p *Legacy) bestFit(size uint64) int {
	return sort.Search(len(p.cache), func(i int) bool { return p.cache[i].size >= size })
}

// grow allocates the look-ahead size for a request of size bytes from the
// driver; on out of memory it flushes the cache and retries once.
func (p *Legacy) grow(size uint64) (block, error) {
	if size > maxRequest {
		return block{}, fmt.Errorf("pool: device %d: legacy pool cannot allocate %d bytes: larger than any device: %w",
			p.dev, size, vendorapi.ErrOutOfMemory)
	}
	n := lookAheadSize(size)
	ptr, err := p.a.Malloc(p.dev, n)
	if errors.Is(err, vendorapi.ErrOutOfMemory) {
		ferr := p.flushLocked()
		p.st.Flushes++
		p.debug("pool: out of memory, flushed the cache and retrying", slog.Uint64("asked", n), slog.Any("flushError", ferr))
		if ptr, err = p.a.Malloc(p.dev, n); err != nil {
			return block{}, oomError("legacy", p.dev, size, p.st, errors.Join(err, ferr))
		}
	}
	if err != nil {
		return block{}, fmt.Errorf("pool: device %d: legacy pool allocating %d bytes: %w", p.dev, n, err)
	}
	p.held += n
	p.st.DriverAllocs++
	p.debug("pool: driver allocation", slog.Uint64("asked", size), slog.Uint64("allocated", n),
		slog.Int("cached", len(p.cache)), slog.Uint64("poolSize", p.held))
	return block{ptr: ptr, size: n}, nil
}

// handOut records b as out and returns its Buffer.
func (p *Legacy) handOut(b block) Buffer {
	p.gen++
	var slot uint32
	if n := len(p.spare); n > 0 {
		slot = p.spare[n-1]
		p.spare = p.spare[:n-1]
	} else {
		slot = uint32(len(p.out))
		p.out = append(p.out, outEntry{})
	}
	p.out[slot] = outEntry{block: b, gen: p.gen}
	p.st.InUse += b.size
	p.st.Buffers++
	p.st.noteUse()
	return Buffer{Ptr: b.ptr, Size: b.size, owner: p, slot: slot, gen: p.gen}
}

// release takes b back: into the cache, or to the driver when the cache is
// full or the pool closed.
func (p *Legacy) release(buf Buffer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if int(buf.slot) >= len(p.out) || p.out[buf.slot].gen != buf.gen || p.out[buf.slot].ptr != buf.Ptr {
		return fmt.Errorf("%w: device %d: legacy pool: buffer at %#x (%d bytes) is not out",
			ErrFreed, p.dev, uintptr(buf.Ptr), buf.Size)
	}
	b := p.out[buf.slot].block
	p.out[buf.slot] = outEntry{}
	p.spare = append(p.spare, buf.slot)
	p.st.InUse -= b.size
	p.st.Buffers--
	if !p.closed && len(p.cache) < MaxBuffers {
		i := p.bestFit(b.size + 1)             // after the cached buffers of the same size
		p.cache = slices.Insert(p.cache, i, b) // within the capacity of MaxBuffers: no reallocation
		p.st.Cached += b.size
		p.st.noteUse()
		return nil
	}
	if !p.closed {
		p.debug("pool: buffer pool full, freeing to the driver", slog.Int("slots", MaxBuffers), slog.Uint64("size", b.size))
	}
	return p.driverFree(b)
}

// driverFree returns b to the driver.
func (p *Legacy) driverFree(b block) error {
	if err := p.a.Free(p.dev, b.ptr); err != nil {
		return fmt.Errorf("pool: device %d: legacy pool freeing %d bytes at %#x: %w", p.dev, b.size, uintptr(b.ptr), err)
	}
	p.held -= b.size
	p.st.DriverFrees++
	return nil
}

// Flush frees every cached buffer to the driver.
func (p *Legacy) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked()
}

// flushLocked frees the cached buffers; one the driver refuses stays cached.
func (p *Legacy) flushLocked() error {
	var errs []error
	kept := p.cache[:0]
	for _, b := range p.cache {
		if err := p.driverFree(b); err != nil {
			errs = append(errs, err)
			kept = append(kept, b)
			continue
		}
		p.st.Cached -= b.size
	}
	clear(p.cache[len(kept):])
	p.cache = kept
	return errors.Join(errs...)
}

// Close frees every cached buffer and checks that the pool's accounting is
// zero, as the seed's destructor does, returning an error where it asserts.
// Buffers still out make it an error matching ErrInUse; each goes to the
// driver when freed later. Closing again is harmless.
func (p *Legacy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	err := p.flushLocked()
	if p.st.Buffers > 0 {
		return errors.Join(err, fmt.Errorf("%w: device %d: legacy pool closed with %d buffers (%d bytes) still out; each returns to the driver when freed",
			ErrInUse, p.dev, p.st.Buffers, p.st.InUse))
	}
	if err == nil && (p.held != 0 || p.st.InUse != 0 || p.st.Cached != 0) {
		err = fmt.Errorf("pool: device %d: legacy pool accounting is not zero after close: %d bytes held, %s", p.dev, p.held, p.st)
	}
	return err
}
