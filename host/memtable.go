package host

import (
	"fmt"
	"sort"

	"github.com/ternion/ternion/vendorapi"
)

// regionKind says what a range of the address space is.
type regionKind uint8

const (
	regDevice     regionKind = iota + 1 // Malloc: one device's memory
	regPinned                           // HostAlloc: pinned host memory, reachable from every device
	regReserve                          // VMMReserve: address space backed by mappings
	regRegistered                       // HostRegister: caller's memory, for asynchronous copies
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
	}
	return "region"
}

// region is one live range of memory the driver knows about.
type region struct {
	kind     regionKind
	dev      int // owner device; -1 for host memory
	base     uintptr
	mem      []byte // the usable bytes, [base, base+len(mem))
	mapped   []byte // the whole mapping to munmap (device and pinned memory)
	size     uint64 // bytes accounted against dev
	writable bool
	maps     []*mapping // regReserve: mappings sorted by offset
}

func (r *region) end() uintptr { return r.base + uintptr(len(r.mem)) }

// mapping is a physical chunk mapped into a reserved range.
type mapping struct {
	off, size uint64
	chunk     *chunk
	access    uint32 // bit d set: device d may read and write it
}

// table is a set of disjoint regions sorted by base address.
type table []*region

// find returns the region containing address p, or nil.
func (t table) find(p uintptr) *region {
	i := sort.Search(len(t), func(i int) bool { return t[i].base > p }) - 1
	if i >= 0 && p < t[i].end() {
		return t[i]
	}
	return nil
}

// at returns the region starting exactly at p, or nil.
func (t table) at(p uintptr) *region {
	i := sort.Search(len(t), func(i int) bool { return t[i].base >= p })
	if i < len(t) && t[i].base == p {
		return t[i]
	}
	return nil
}

// overlaps reports whether any region intersects [lo, hi).
func (t table) overlaps(lo, hi uintptr) bool {
	i := sort.Search(len(t), func(i int) bool { return t[i].end() > lo })
	return i < len(t) && t[i].base < hi
}

func (t *table) insert(r *region) {
	i := sort.Search(len(*t), func(i int) bool { return (*t)[i].base >= r.base })
	*t = append(*t, nil)
	copy((*t)[i+1:], (*t)[i:])
	(*t)[i] = r
}

func (t *table) remove(r *region) {
	for i, x := range *t {
		if x == r {
			*t = append((*t)[:i], (*t)[i+1:]...)
			return
		}
	}
}

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
	off := uint64(a - r.base)
	if size > uint64(len(r.mem))-off {
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
	i := sort.Search(len(r.maps), func(i int) bool { return r.maps[i].off+r.maps[i].size > off })
	at, end := off, off+size
	for ; at < end; i++ {
		if i >= len(r.maps) || r.maps[i].off > at {
			return fmt.Sprintf("offset %d of the reserved range is not mapped", at)
		}
		if r.maps[i].access&(1<<dev) == 0 {
			return fmt.Sprintf("the mapping at offset %d is not accessible from device %d (VMMSetAccess)", r.maps[i].off, dev)
		}
		at = r.maps[i].off + r.maps[i].size
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
	if r == nil || r.kind != regPinned {
		r = d.registered.find(h.Ptr)
	}
	if r == nil {
		return nil, fmt.Sprintf("host address %#x is not pinned (HostAlloc) or registered (HostRegister) memory", h.Ptr)
	}
	off := uint64(h.Ptr - r.base)
	if h.Size > uint64(len(r.mem))-off {
		return nil, fmt.Sprintf("host range [%#x, +%d) runs past the end of its %s [%#x, +%d)", h.Ptr, h.Size, r.kind, r.base, len(r.mem))
	}
	if write && !r.writable {
		return nil, fmt.Sprintf("host range [%#x, +%d) is read-only", h.Ptr, h.Size)
	}
	return r.mem[off : off+h.Size : off+h.Size], ""
}
