package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ternion/ternion/vendorapi"
)

// Seed constants (REFERENCE.md, "Pools (seed)").
const (
	// MaxBuffers is how many freed buffers the legacy pool caches; a buffer
	// freed while all slots are taken goes back to the driver.
	MaxBuffers = 256
	// LegacyAlign is the legacy pool's rounding of a driver allocation, made
	// LookAhead (1.05) times the size asked for.
	LegacyAlign = 256
	// LookAhead is the factor by which the legacy pool over-allocates on a miss,
	// so that a slightly larger request later reuses the buffer.
	LookAhead = 1.05
	// VMMAlign is the VMM pool's rounding of every allocation, which keeps
	// every buffer aligned for every data type.
	VMMAlign = 128
	// DefaultVMMReserve is the address space a VMM pool reserves on first use
	// when Options.VMMReserve is zero: 32 GiB, the seed's CUDA_POOL_VMM_MAX_SIZE.
	DefaultVMMReserve = 32 << 30
)

// Errors a pool returns for misuse; match them with errors.Is. Running out of
// memory is vendorapi.ErrOutOfMemory.
var (
	// ErrClosed reports an Alloc on a closed pool.
	ErrClosed = errors.New("pool: closed")
	// ErrFreed reports a Free of a buffer already freed, or of a Buffer that
	// did not come from a pool. The pool is unchanged.
	ErrFreed = errors.New("pool: buffer already freed")
	// ErrOrder reports a VMM pool Free that is not of the most recent
	// allocation still out. The pool is unchanged and the buffer still out.
	ErrOrder = errors.New("pool: free out of allocation order")
	// ErrInUse reports a Close while buffers are still out.
	ErrInUse = errors.New("pool: buffers still in use")
)

// Pool hands out device memory of one device for work queued on one stream.
// Both implementations are safe for concurrent use (a mutex guards each).
type Pool interface {
	// Alloc returns a buffer of at least size bytes (Alloc(0) returns the zero
	// Buffer). On out of memory it flushes, retries once and then returns an
	// error matching vendorapi.ErrOutOfMemory that names the device, the size
	// and the pool's state; the pool stays usable.
	Alloc(size uint64) (Buffer, error)
	// Flush returns the memory the pool holds but does not use to the driver.
	Flush() error
	// Stats returns the pool's accounting.
	Stats() Stats
	// Close returns everything the pool holds to the driver. With buffers
	// still out it returns an error matching ErrInUse that names them, keeps
	// their memory until they are freed and refuses new allocations.
	Close() error
}

// owner is the pool a Buffer returns to.
type owner interface {
	release(b Buffer) error
}

// Buffer is device memory from a Pool. It is a small value: copies refer to
// the same memory, and the pool notices a second Free through any copy.
type Buffer struct {
	// Ptr is the buffer's device address.
	Ptr vendorapi.DevicePtr
	// Size is the bytes usable at Ptr: at least the size asked for, rounded as
	// the pool rounds (the legacy pool may return a larger cached buffer).
	Size uint64

	owner owner
	slot  uint32 // index in the owner's table of buffers out
	gen   uint64 // the allocation's generation, unique within its pool; never 0
}

// Free returns b to its pool. Freeing the zero Buffer does nothing. A second
// Free of the same buffer returns an error matching ErrFreed and changes
// nothing; so does any Free in a VMM pool that is not of the most recent
// allocation still out, with ErrOrder. Free never panics.
func (b Buffer) Free() error {
	if b.owner == nil {
		if b.Ptr == 0 && b.Size == 0 {
			return nil
		}
		return fmt.Errorf("%w: buffer at %#x (%d bytes) did not come from a pool", ErrFreed, uintptr(b.Ptr), b.Size)
	}
	return b.owner.release(b)
}

// Stats is a pool's accounting, for logs and tests.
type Stats struct {
	InUse        uint64 // bytes in buffers out (their Size)
	Buffers      int    // buffers out
	Cached       uint64 // bytes held from the driver and not in use
	PeakInUse    uint64 // high-water mark of InUse
	PeakHeld     uint64 // high-water mark of InUse+Cached: the pool's largest footprint
	DriverAllocs uint64 // successful driver allocations (Malloc; VMMCreate for the VMM pool)
	DriverFrees  uint64 // memory given back to the driver (Free; VMMUnmap of one mapping)
	Flushes      uint64 // out-of-memory flushes (cached memory returned, then one retry)
	Reserved     uint64 // VMM address space reserved; 0 for the legacy pool or before first use
}

// Held returns the bytes the pool holds from the driver.
func (s Stats) Held() uint64 { return s.InUse + s.Cached }

// String formats s for a log line or an error message.
func (s Stats) String() string {
	return fmt.Sprintf("%s in use in %d buffers, %s cached, peak %s held, %d driver allocations, %d frees, %d flushes",
		bytesString(s.InUse), s.Buffers, bytesString(s.Cached), bytesString(s.PeakHeld),
		s.DriverAllocs, s.DriverFrees, s.Flushes)
}

// noteUse updates the high-water marks.
func (s *Stats) noteUse() {
	s.PeakInUse = max(s.PeakInUse, s.InUse)
	s.PeakHeld = max(s.PeakHeld, s.InUse+s.Cached)
}

// bytesString writes n bytes exactly, with a binary-unit approximation when large.
func bytesString(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%d B (%.2f GiB)", n, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d B (%.2f MiB)", n, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d B (%.2f KiB)", n, float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Options configures a pool.
type Options struct {
	// NoVMM makes New choose the legacy pool even where the device supports
	// VMM (TERNION_NO_VMM; the caller parses the switch).
	NoVMM bool
	// VMMReserve is the address space a VMM pool reserves on first use,
	// rounded up to the granularity; 0 means DefaultVMMReserve. It bounds the
	// pool's size; the device's memory bounds what can be mapped in it.
	VMMReserve uint64
	// Logger receives debug records of pool growth, flushes and full caches;
	// nil means slog.Default(). Add the stream with Logger.With if wanted.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// common is what both pools have: the device, the logger, the lock and the
// accounting it guards, with Stats and debug over them.
type common struct {
	dev  int
	kind string // the pool's name in debug records: "legacy", "vmm"
	log  *slog.Logger

	mu sync.Mutex // guards st and the embedding pool's state
	st Stats
}

func newCommon(dev int, kind string, o Options) common {
	return common{dev: dev, kind: kind, log: o.logger()}
}

// Stats returns the pool's accounting.
func (c *common) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

// debug logs a debug record naming the pool's device and kind after attrs.
func (c *common) debug(msg string, attrs ...slog.Attr) {
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.LogAttrs(context.Background(), slog.LevelDebug, msg, append(attrs, slog.Int("device", c.dev), slog.String("pool", c.kind))...)
	}
}

// Allocator is the driver memory a legacy pool draws from;
// vendorapi.Memory (so every vendorapi.Driver) provides it.
type Allocator interface {
	// Malloc allocates size bytes on dev; errors.Is(err, vendorapi.ErrOutOfMemory) when it cannot.
	Malloc(dev int, size uint64) (vendorapi.DevicePtr, error)
	// Free releases memory from Malloc.
	Free(dev int, p vendorapi.DevicePtr) error
}

// Driver is what New needs from a vendor: device properties, plain
// allocation and virtual memory. Every vendorapi.Driver is one.
type Driver interface {
	// Props returns the properties of device dev (VMM and VMMGranularity are read).
	Props(dev int) (vendorapi.Props, error)
	Allocator
	vendorapi.VirtualMemory
}

// New returns a pool for device dev: a VMM pool when the device reports VMM
// support and o.NoVMM is false, as the seed chooses, otherwise a legacy pool.
func New(d Driver, dev int, o Options) (Pool, error) {
	props, err := d.Props(dev)
	if err != nil {
		return nil, fmt.Errorf("pool: device %d: %w", dev, err)
	}
	if props.VMM && !o.NoVMM {
		return NewVMM(d, dev, props.VMMGranularity, o)
	}
	return NewLegacy(d, dev, o), nil
}

// oomError is the error an Alloc returns when the driver is out of memory
// after the flush and the retry: it names the device, the size asked and the
// pool's state, and wraps the driver's error.
func oomError(kind string, dev int, size uint64, st Stats, err error) error {
	return fmt.Errorf("pool: device %d: %s pool cannot allocate %d bytes (after returning cached memory and retrying; %s): %w",
		dev, kind, size, st, err)
}
