package host

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/internal/align"
	"github.com/ternion/ternion/internal/gomem"
	"github.com/ternion/ternion/vendorapi"
)

// mmapGuarded maps size bytes (rounded up to whole pages, at least one) of
// fresh zeroed read-write memory followed by one guard page without access,
// so that an address one past the end of the memory is never inside the next
// mapping. It returns the usable bytes and the whole mapping.
func (d *Driver) mmapGuarded(size uint64) (mem, mapped []byte, err error) {
	n := align.Up(max(size, 1), d.page)
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+d.page), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	mapped = unsafe.Slice((*byte)(p), n+d.page)
	if err := unix.Mprotect(mapped[n:], unix.PROT_NONE); err != nil {
		_ = munmap(mapped)
		return nil, nil, err
	}
	return mapped[:size:size], mapped, nil
}

// munmap unmaps a mapping made by mmapGuarded or VMMReserve.
func munmap(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}

// bytesAt views size bytes at address a, memory the driver does not own.
func bytesAt(a uintptr, size uint64) []byte {
	return unsafe.Slice(*(**byte)(unsafe.Pointer(&a)), size)
}

// addr returns the address of b's first byte.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// maxMapping bounds a single mapping so that size arithmetic cannot overflow.
const maxMapping = math.MaxInt64 / 2

// Malloc maps size bytes for dev, counting them against dev's memory limit.
func (d *Driver) Malloc(dev int, size uint64) (vendorapi.DevicePtr, error) {
	return d.malloc("hostMalloc", dev, size)
}

// MallocManaged allocates memory addressable from the host and dev; on the
// host device all device memory is, so it is Malloc.
func (d *Driver) MallocManaged(dev int, size uint64) (vendorapi.DevicePtr, error) {
	return d.malloc("hostMallocManaged", dev, size)
}

func (d *Driver) malloc(call string, dev int, size uint64) (vendorapi.DevicePtr, error) {
	if err := d.checkDev(call, dev); err != nil {
		return 0, err
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if err := d.reserveBytes(call, dev, size); err != nil {
		return 0, err
	}
	mem, mapped, err := d.mmapGuarded(size)
	if err != nil {
		d.used[dev] -= size
		return 0, osErr(call, dev, "mmap", err)
	}
	r := &region{kind: regDevice, dev: dev, base: addr(mapped), mem: mem, mapped: mapped, size: size, writable: true}
	if err := d.insertMapped(call, r); err != nil {
		d.used[dev] -= size
		return 0, err
	}
	return vendorapi.DevicePtr(r.base), nil
}

// insertMapped adds r, just mapped, to the region table. The table keeps
// every range the driver has mapped, so mmap cannot return one of them
// unless a mapping was unmapped behind the driver's back (munmap of a device
// pointer); then r is unmapped again and the call fails. The caller holds
// memMu for writing.
func (d *Driver) insertMapped(call string, r *region) error {
	if d.regions.insert(r) {
		return nil
	}
	_ = munmap(r.mapped)
	return newErr(errOperatingSystem, call, r.dev,
		"mmap returned %#x, inside a range the driver has mapped: was a driver mapping unmapped behind its back?", r.base)
}

// reserveBytes counts size bytes against dev's limit or reports out of memory.
// The caller holds memMu for writing.
func (d *Driver) reserveBytes(call string, dev int, size uint64) error {
	free := d.limit - d.used[dev]
	if size > free || size > maxMapping {
		return newErr(errMemoryAllocation, call, dev,
			"out of memory: requested %d bytes, %d bytes free of %d", size, free, d.limit)
	}
	d.used[dev] += size
	return nil
}

// Free releases memory from Malloc after the work queued so far that might
// use it has completed (as cudaFree synchronizes): the work of dev's streams,
// of streams of devices with peer access to dev, and copies between devices
// queued elsewhere. Work queued after the call starts is not waited for.
// Freeing 0 is a no-op. The freed addresses stay reserved for a while (see
// quarantine), so a second Free of p, or a copy through p, is an error even
// when an allocation was made in between.
func (d *Driver) Free(dev int, p vendorapi.DevicePtr) error {
	const call = "hostFree"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	d.settleDevices(1 << dev)
	d.memMu.Lock()
	defer d.memMu.Unlock()
	what := fmt.Sprintf("address %#x", uintptr(p))
	r, err := d.liveRegion(call, dev, uintptr(p), regDevice, what, "the start of a live allocation")
	if err != nil {
		return err
	}
	if r.dev != dev {
		return invalid(call, dev, "%s was allocated on device %d", what, r.dev)
	}
	return d.retire(r)
}

// liveRegion returns the live region of kind that starts at a, which call
// frees. Otherwise it returns call's error on dev: "<what> was freed
// already" where a region of kind was freed, else "<what> is not <isnt>"
// (what names the address or range). The caller holds memMu.
func (d *Driver) liveRegion(call string, dev int, a uintptr, kind regionKind, what, isnt string) (*region, error) {
	r := d.regions.at(a)
	switch {
	case r != nil && r.kind == regFreed && r.was == kind:
		return nil, invalid(call, dev, "%s was freed already", what)
	case r == nil || r.kind != kind:
		return nil, invalid(call, dev, "%s is not %s", what, isnt)
	}
	return r, nil
}

// unmapRegion unmaps r at once, forgets it and returns its bytes to its
// device, for Close. The caller holds memMu for writing.
func (d *Driver) unmapRegion(r *region) error {
	switch r.kind {
	case regDevice:
		d.used[r.dev] -= r.size
	case regReserve:
		for m := range r.maps.Overlapping(0, uint64(len(r.mem))) {
			m.Val.chunk.unref(d)
		}
		r.maps.Clear()
	}
	d.regions.remove(r)
	if err := munmap(r.mapped); err != nil {
		return osErr("hostFree", r.dev, "munmap", err)
	}
	return nil
}

// HostAlloc maps size bytes of pinned host memory.
func (d *Driver) HostAlloc(size uint64) (vendorapi.HostBuffer, error) {
	const call = "hostHostAlloc"
	if size > maxMapping {
		return vendorapi.HostBuffer{}, newErr(errMemoryAllocation, call, -1, "out of memory: requested %d bytes", size)
	}
	mem, mapped, err := d.mmapGuarded(size)
	if err != nil {
		return vendorapi.HostBuffer{}, osErr(call, -1, "mmap", err)
	}
	r := &region{kind: regPinned, dev: -1, base: addr(mapped), mem: mem, mapped: mapped, writable: true}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if err := d.insertMapped(call, r); err != nil {
		return vendorapi.HostBuffer{}, err
	}
	return vendorapi.HostBuffer{Ptr: r.base, Size: size}, nil
}

// HostFree releases memory from HostAlloc once the work queued so far on any
// stream is done (any device may use pinned memory). Like Free, it keeps the
// addresses reserved for a while, so a second HostFree is an error.
func (d *Driver) HostFree(b vendorapi.HostBuffer) error {
	const call = "hostFreeHost"
	if b.Ptr == 0 {
		return nil
	}
	d.settleAll()
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r, err := d.liveRegion(call, -1, b.Ptr, regPinned, fmt.Sprintf("address %#x", b.Ptr), "the start of a pinned host allocation")
	if err != nil {
		return err
	}
	return d.retire(r)
}

// HostRegister records [ptr, ptr+size) as pinned memory that asynchronous
// copies may use. The range must be mapped memory of this process and not
// Go's; a read-only range may only be copied from. Go memory is refused where
// it can be recognized (the garbage collector may free or move it): a range
// that starts or ends inside a live Go heap object, or that touches a heap
// arena the driver has seen holding heap objects or goroutine stacks. Go gives
// no complete test, so a range that merely passes over Go memory, in an arena
// not seen, is not caught. Package variables are not refused: they are
// never moved or freed.
func (d *Driver) HostRegister(ptr uintptr, size uint64) error {
	const call = "hostHostRegister"
	if ptr == 0 || size == 0 || size > maxMapping || ptr+uintptr(size) < ptr {
		return invalid(call, -1, "bad range [%#x, +%d)", ptr, size)
	}
	mapped, writable := procMapped(ptr, ptr+uintptr(size))
	if !mapped {
		return invalid(call, -1, "range [%#x, +%d) is not mapped memory of this process", ptr, size)
	}
	if err := gomem.Check(ptr, size); err != nil {
		return invalid(call, -1, "range [%#x, +%d) is Go memory, which the garbage collector may free or move (%v); register memory from mmap or C",
			ptr, size, err)
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if d.registered.overlaps(ptr, ptr+uintptr(size)) || d.regions.overlaps(ptr, ptr+uintptr(size)) {
		return newErr(errAlreadyRegistered, call, -1, "range [%#x, +%d) overlaps registered or driver-owned memory", ptr, size)
	}
	d.registered.insert(&region{kind: regRegistered, dev: -1, base: ptr, mem: bytesAt(ptr, size), writable: writable})
	return nil
}

// HostUnregister forgets a range from HostRegister once the work queued so
// far on any stream is done.
func (d *Driver) HostUnregister(ptr uintptr) error {
	const call = "hostHostUnregister"
	d.settleAll()
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r := d.registered.at(ptr)
	if r == nil {
		return newErr(errNotRegistered, call, -1, "address %#x is not the start of a registered range", ptr)
	}
	d.registered.remove(r)
	return nil
}

// procMapping is one mapping of this process: [lo, hi) with its
// permissions ("rw-p").
type procMapping struct {
	lo, hi uintptr
	perms  string
}

// procMaps returns the mappings of this process in address order, from
// /proc/self/maps.
func procMaps() ([]procMapping, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var maps []procMapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		a, b, ok := strings.Cut(fields[0], "-")
		lo, err1 := strconv.ParseUint(a, 16, 64)
		hi, err2 := strconv.ParseUint(b, 16, 64)
		if ok && err1 == nil && err2 == nil {
			maps = append(maps, procMapping{uintptr(lo), uintptr(hi), fields[1]})
		}
	}
	return maps, nil
}

// procMapped reports whether [lo, hi) is mapped readable throughout and whether
// it is writable, from /proc/self/maps. Without /proc it trusts the caller.
func procMapped(lo, hi uintptr) (mapped, writable bool) {
	maps, err := procMaps()
	if err != nil {
		return true, true
	}
	at, writable := lo, true
	for _, m := range maps {
		if at >= hi {
			break
		}
		if m.hi <= at {
			continue
		}
		if m.lo > at || m.perms[0] != 'r' {
			return false, false
		}
		writable = writable && len(m.perms) > 1 && m.perms[1] == 'w'
		at = m.hi
	}
	return at >= hi, writable
}
