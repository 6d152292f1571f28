package host

import (
	"fmt"

	"github.com/ternion/ternion/internal/ranges"
	"github.com/ternion/ternion/vendorapi"
)

// regionKind says what a range of the address space is.
type regionKind uint8

const (
	regDevice     regionKind = iota + 1 // Malloc: one device's memory
	regPinned                           // HostAlloc: pinned host memory, reachable from every device
	regReserve                          // VMMReserve: address space backed by mappings
	regRegistered                       // HostRegister: caller's memory, for asynchronous copies
	regFreed                            // freed memory kept reserved, inaccessible, in quarantine
)

func (k regionKind) String() string {
	switch k {
	case regDevice:
		return "device allocation"
	case regPinned:
		return "pinned host allocation"
	case regReserve:
		return "VMM reserved range"
	case regRegistered:
		return "registered host range"
	case regFreed:
		return "freed range"
	}
	return "region"
}

// region is one range of memory the driver knows about.
type region struct {
	kind     regionKind
	was      regionKind // regFreed: what the range was before it was freed
	dev      int        // owner device; -1 for host memory
	base     uintptr
	mem      []byte // the usable bytes, [base, base+len(mem))
	mapped   []byte // the whole mapping to unmap, guard page included (not for registered ranges)
	size     uint64 // bytes accounted against dev
	writable bool
	maps     ranges.Table[*mapping] // regReserve: mappings, by offset in the range
}

// extent is the range of addresses r occupies in its table: the whole
// mapping (slack and guard page included) or the registered bytes.
func (r *region) extent() ranges.Range[*region] {
	n := max(len(r.mapped), len(r.mem))
	return ranges.Range[*region]{Lo: uint64(r.base), Hi: uint64(r.base) + uint64(n), Val: r}
}

// stale says that address a is in freed region r.
func (r *region) stale(a uintptr) string {
	return fmt.Sprintf("address %#x is in a %s at %#x that was freed", a, r.was, r.base)
}

// mapping is a physical chunk mapped into a reserved range.
type mapping struct {
	chunk  *chunk
	access uint32 // bit d set: device d may read and write it
}

// table is a set of disjoint regions sorted by base address.
type table struct{ ranges.Table[*region] }

// find returns the region whose extent contains address p, or nil.
func (t *table) find(p uintptr) *region {
	r, _ := t.Find(uint64(p))
	return r.Val
}

// at returns the region starting exactly at p, or nil.
func (t *table) at(p uintptr) *region {
	r, _ := t.At(uint64(p))
	return r.Val
}

// overlaps reports whether any region intersects [lo, hi).
func (t *table) overlaps(lo, hi uintptr) bool { return t.Overlaps(uint64(lo), uint64(hi)) }

// insert adds r; false when it overlaps a region of t.
func (t *table) insert(r *region) bool { return t.Insert(r.extent()) }

// remove forgets r.
func (t *table) remove(r *region) { t.Remove(uint64(r.base)) }

// span resolves [p, p+size) as memory device dev may use and returns its bytes;
// why is empty on success and otherwise says what is wrong. A zero size is
// always valid and touches nothing. align is the required alignment of p.
// The caller holds memMu.
func (d *Driver) span(dev int, p vendorapi.DevicePtr, size, align uint64) (b []byte, why string) {
	if size == 0 {
		return nil, ""
	}
	a := uintptr(p)
	if p == 0 {
		return nil, "null pointer"
	}
	if align > 1 && uint64(a)%align != 0 {
		return nil, fmt.Sprintf("address %#x is misaligned (needs %d-byte alignment)", a, align)
	}
	r := d.regions.find(a)
	if r == nil {
		return nil, fmt.Sprintf("address %#x is not in any live allocation", a)
	}
	if r.kind == regFreed {
		return nil, r.stale(a)
	}
	off := uint64(a - r.base)
	if off >= uint64(len(r.mem)) || size > uint64(len(r.mem))-off {
		return nil, fmt.Sprintf("range [%#x, +%d) runs past the end of its %s [%#x, +%d)", a, size, r.kind, r.base, len(r.mem))
	}
	switch r.kind {
	case regPinned:
	case regDevice:
		if r.dev != dev && !d.peer[dev][r.dev] {
			return nil, fmt.Sprintf("address %#x belongs to device %d and peer access from device %d is not enabled", a, r.dev, dev)
		}
	case regReserve:
		if why := r.covered(dev, off, size); why != "" {
			return nil, fmt.Sprintf("range [%#x, +%d): %s", a, size, why)
		}
	default:
		return nil, fmt.Sprintf("address %#x is in a %s", a, r.kind)
	}
	return r.mem[off : off+size : off+size], ""
}

// covered checks that [off, off+size) of a reserve is mapped throughout and
// accessible from dev.
func (r *region) covered(dev int, off, size uint64) string {
	at, end := off, off+size
	for m := range r.maps.Overlapping(off, end) {
		if m.Lo > at {
			break
		}
		if m.Val.access&(1<<dev) == 0 {
			return fmt.Sprintf("the mapping at offset %d is not accessible from device %d (VMMSetAccess)", m.Lo, dev)
		}
		at = m.Hi
	}
	if at < end {
		return fmt.Sprintf("offset %d of the reserved range is not mapped", at)
	}
	return ""
}

// hostSpan resolves a pinned host buffer: memory from HostAlloc or a
// HostRegister range (which must be writable when write is set).
func (d *Driver) hostSpan(h vendorapi.HostBuffer, write bool) ([]byte, string) {
	if h.Size == 0 {
		return nil, ""
	}
	if h.Ptr == 0 {
		return nil, "null host pointer"
	}
	r := d.regions.find(h.Ptr)
	if r != nil && r.kind == regFreed && r.was == regPinned {
		return nil, "host " + r.stale(h.Ptr)
	}
	if r == nil || r.kind != regPinned {
		r = d.registered.find(h.Ptr)
	}
	if r == nil {
		return nil, fmt.Sprintf("host address %#x is not pinned (HostAlloc) or registered (HostRegister) memory", h.Ptr)
	}
	off := uint64(h.Ptr - r.base)
	if off >= uint64(len(r.mem)) || h.Size > uint64(len(r.mem))-off {
		return nil, fmt.Sprintf("host range [%#x, +%d) runs past the end of its %s [%#x, +%d)", h.Ptr, h.Size, r.kind, r.base, len(r.mem))
	}
	if write && !r.writable {
		return nil, fmt.Sprintf("host range [%#x, +%d) is read-only", h.Ptr, h.Size)
	}
	return r.mem[off : off+h.Size : off+h.Size], ""
}
