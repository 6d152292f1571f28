package pool

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/ternion/ternion/internal/align"
	"github.com/ternion/ternion/vendorapi"
)

// span is one mapping in the VMM pool's range, or one buffer out: bytes
// [off, off+size) from the range's base.
type span struct {
	off, size uint64
}

// frame is one VMM buffer out.
type frame struct {
	span
	gen uint64
}

// VMM is the seed's virtual-memory pool (ggml_cuda_pool_vmm): on first use it
// reserves a range of address space (Options.VMMReserve, 32 GiB by default)
// and grows by mapping physical chunks, rounded up to the device's VMM
// granularity, at the end of what is mapped. Allocations, rounded up to
// VMMAlign, are stacked one after another and must be freed in reverse order
// (checked: any other Free is an error and changes nothing). Mappings are
// kept in a list and unmapped one by one, which HIP needs and every vendor
// accepts. It is safe for concurrent use, though concurrent users must still
// free in reverse order of allocation.
type VMM struct {
	common  // the device, the logger, the lock and the accounting
	vm      vendorapi.VirtualMemory
	gran    uint64
	reserve uint64 // bytes of address space to reserve, a multiple of gran

	// guarded by mu:
	r      vendorapi.VirtualRange // the reserved range; Size 0 before first use
	mapped uint64                 // bytes mapped from r.Base (the seed's pool_size)
	used   uint64                 // bytes handed out from r.Base (the seed's pool_used)
	maps   []span                 // mappings in address order, tiling [0, mapped)
	stack  []frame                // buffers out in allocation order, tiling [0, used)
	gen    uint64                 // last generation handed out
	closed bool
}

var _ Pool = (*VMM)(nil)

// NewVMM returns a VMM pool on device dev mapping chunks of multiples of
// granularity (Props.VMMGranularity) through vm. Nothing is reserved or
// mapped before the first Alloc.
func NewVMM(vm vendorapi.VirtualMemory, dev int, granularity uint64, o Options) (*VMM, error) {
	if granularity == 0 {
		return nil, fmt.Errorf("pool: device %d: VMM pool needs the device's VMM granularity, got 0: %w", dev, vendorapi.ErrInvalidValue)
	}
	reserve := o.VMMReserve
	if reserve == 0 {
		reserve = DefaultVMMReserve
	}
	if reserve > maxRequest {
		return nil, fmt.Errorf("pool: device %d: VMM reserve of %d bytes is too large: %w", dev, reserve, vendorapi.ErrInvalidValue)
	}
	return &VMM{common: newCommon(dev, "vmm", o), vm: vm, gran: granularity, reserve: align.Up(reserve, granularity)}, nil
}

// Alloc returns the next size bytes (rounded up to VMMAlign) of the pool's
// range, mapping more memory when needed. See Pool.Alloc.
func (p *VMM) Alloc(size uint64) (Buffer, error) {
	if size == 0 {
		return Buffer{}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Buffer{}, fmt.Errorf("%w: device %d: VMM pool cannot allocate %d bytes", ErrClosed, p.dev, size)
	}
	if size > p.reserve-p.used || align.Up(size, VMMAlign) > p.reserve-p.used {
		return Buffer{}, fmt.Errorf("pool: device %d: VMM pool cannot allocate %d bytes: %d of its %d bytes of address space are in use (Options.VMMReserve): %w",
			p.dev, size, p.used, p.reserve, vendorapi.ErrOutOfMemory)
	}
	n := align.Up(size, VMMAlign)
	if n > p.mapped-p.used {
		if err := p.grow(size, n); err != nil {
			return Buffer{}, err
		}
	}
	p.gen++
	p.stack = append(p.stack, frame{span: span{off: p.used, size: n}, gen: p.gen})
	b := Buffer{Ptr: p.r.Base.Add(p.used), Size: n, owner: p, slot: uint32(len(p.stack) - 1), gen: p.gen}
	p.used += n
	p.account()
	return b, nil
}

// account derives the byte counts of p.st from used and mapped.
func (p *VMM) account() {
	p.st.InUse = p.used
	p.st.Buffers = len(p.stack)
	p.st.Cached = p.mapped - p.used
	p.st.noteUse()
}

// grow maps enough memory for n more bytes (size asked for); on out of
// memory it returns the unused tail to the driver and retries once.
func (p *VMM) grow(size, n uint64) error {
	if p.r.Size == 0 {
		r, err := p.vm.VMMReserve(p.dev, p.reserve)
		if err != nil {
			return fmt.Errorf("pool: device %d: VMM pool reserving %d bytes of address space: %w", p.dev, p.reserve, err)
		}
		p.r = r
		p.st.Reserved = r.Size
	}
	err := p.mapMore(n)
	if errors.Is(err, vendorapi.ErrOutOfMemory) {
		ferr := p.flushLocked()
		p.st.Flushes++
		p.debug("pool: out of memory, unmapped the unused tail and retrying", slog.Uint64("asked", n), slog.Any("flushError", ferr))
		if err = p.mapMore(n); err != nil {
			return oomError("VMM", p.dev, size, p.st, errors.Join(err, ferr))
		}
	}
	if err != nil {
		return fmt.Errorf("pool: device %d: VMM pool growing for %d bytes: %w", p.dev, n, err)
	}
	return nil
}

// mapMore maps one chunk at the end of the mapped part so that n more bytes
// fit after used. On failure nothing changes.
func (p *VMM) mapMore(n uint64) error {
	chunk := align.Up(p.used+n-p.mapped, p.gran)
	c, err := p.vm.VMMCreate(p.dev, chunk)
	if err != nil {
		return err
	}
	at := p.r.Base.Add(p.mapped)
	if err := p.vm.VMMMap(at, c); err != nil {
		return errors.Join(err, p.vm.VMMRelease(c))
	}
	if err := p.vm.VMMSetAccess(p.dev, at, chunk); err != nil {
		return errors.Join(err, p.vm.VMMUnmap(p.dev, at, chunk), p.vm.VMMRelease(c))
	}
	// The handle is no longer needed: the mapping keeps the memory.
	if err := p.vm.VMMRelease(c); err != nil {
		return errors.Join(err, p.vm.VMMUnmap(p.dev, at, chunk))
	}
	p.maps = append(p.maps, span{off: p.mapped, size: chunk})
	p.mapped += chunk
	p.st.DriverAllocs++
	p.debug("pool: VMM pool size increased", slog.Uint64("size", p.mapped), slog.Uint64("chunk", chunk),
		slog.Int("mappings", len(p.maps)))
	return nil
}

// release takes back b, which must be the most recent allocation still out.
func (p *VMM) release(b Buffer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := int(b.slot)
	if i >= len(p.stack) || p.stack[i].gen != b.gen || p.r.Base.Add(p.stack[i].off) != b.Ptr {
		return fmt.Errorf("%w: device %d: VMM pool: buffer at %#x (%d bytes) is not out",
			ErrFreed, p.dev, uintptr(b.Ptr), b.Size)
	}
	if top := p.stack[len(p.stack)-1]; i != len(p.stack)-1 {
		return fmt.Errorf("%w: device %d: VMM pool: freeing %d bytes at %#x while the allocation of %d bytes at %#x, made after it, is still out; free in reverse order of allocation",
			ErrOrder, p.dev, b.Size, uintptr(b.Ptr), top.size, uintptr(p.r.Base.Add(top.off)))
	}
	p.used = p.stack[i].off
	p.stack = p.stack[:i]
	p.account()
	if p.closed {
		return p.flushLocked()
	}
	return nil
}

// Flush unmaps the mappings that lie wholly past the memory in use.
func (p *VMM) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked()
}

// flushLocked unmaps, last first and one by one, the mappings wholly past
// used; a closed pool with nothing in use also frees its reserved range.
func (p *VMM) flushLocked() error {
	defer p.account()
	for len(p.maps) > 0 {
		m := p.maps[len(p.maps)-1]
		if m.off < p.used {
			break
		}
		if err := p.vm.VMMUnmap(p.dev, p.r.Base.Add(m.off), m.size); err != nil {
			return fmt.Errorf("pool: device %d: VMM pool unmapping %d bytes at offset %d: %w", p.dev, m.size, m.off, err)
		}
		p.maps = p.maps[:len(p.maps)-1]
		p.mapped = m.off
		p.st.DriverFrees++
	}
	if p.closed && p.used == 0 && p.r.Size != 0 {
		if err := p.vm.VMMFree(p.r); err != nil {
			return fmt.Errorf("pool: device %d: VMM pool freeing its %d bytes of address space: %w", p.dev, p.r.Size, err)
		}
		p.r = vendorapi.VirtualRange{}
		p.st.Reserved = 0
	}
	return nil
}

// Close unmaps every mapping, one by one, and frees the reserved range.
// Buffers still out make it an error matching ErrInUse: the memory under them
// stays mapped, and is unmapped as they are freed. Closing again is harmless.
func (p *VMM) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	err := p.flushLocked()
	if len(p.stack) > 0 {
		return errors.Join(err, fmt.Errorf("%w: device %d: VMM pool closed with %d buffers (%d bytes) still out; their memory is unmapped when they are freed",
			ErrInUse, p.dev, len(p.stack), p.used))
	}
	if err == nil && (p.mapped != 0 || len(p.maps) != 0 || p.r.Size != 0) {
		err = fmt.Errorf("pool: device %d: VMM pool accounting is not zero after close: %d bytes in %d mappings", p.dev, p.mapped, len(p.maps))
	}
	return err
}
