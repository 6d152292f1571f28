package host

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/vendorapi"
)

// mmapAnon maps size bytes of fresh zeroed read-write memory.
func mmapAnon(size uint64) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// munmap unmaps a mapping made by mmapAnon or VMMReserve.
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

func roundUp(n, to uint64) uint64 { return (n + to - 1) / to * to }

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
	b, err := mmapAnon(roundUp(max(size, 1), d.page))
	if err != nil {
		d.used[dev] -= size
		return 0, osErr(call, dev, "mmap", err)
	}
	r := &region{kind: regDevice, dev: dev, base: addr(b), mem: b[:size], mapped: b, size: size, writable: true}
	d.regions.insert(r)
	return vendorapi.DevicePtr(r.base), nil
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

// Free unmaps memory from Malloc after the work queued on every stream that
// might use it has completed. Freeing 0 is a no-op.
func (d *Driver) Free(dev int, p vendorapi.DevicePtr) error {
	const call = "hostFree"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	d.quiesce()
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r := d.regions.at(uintptr(p))
	if r == nil || r.kind != regDevice {
		return invalid(call, dev, "address %#x is not the start of a live allocation", uintptr(p))
	}
	if r.dev != dev {
		return invalid(call, dev, "address %#x was allocated on device %d", uintptr(p), r.dev)
	}
	return d.unmapRegion(r)
}

// unmapRegion unmaps r, forgets it and returns its bytes to its device.
// The caller holds memMu for writing.
func (d *Driver) unmapRegion(r *region) error {
	var err error
	switch r.kind {
	case regDevice, regPinned:
		err = munmap(r.mapped)
		if r.kind == regDevice {
			d.used[r.dev] -= r.size
		}
	case regReserve:
		for _, m := range r.maps {
			m.chunk.unref(d)
		}
		r.maps = nil
		err = munmap(r.mem)
	}
	d.regions.remove(r)
	if err != nil {
		return osErr("hostFree", r.dev, "munmap", err)
	}
	return nil
}

// quiesce waits until every stream has run all the work queued on it so far,
// as cudaFree synchronizes the device. Errors stay with their streams.
func (d *Driver) quiesce() {
	d.mu.Lock()
	list := make([]*stream, 0, len(d.streams))
	for _, s := range d.streams {
		list = append(list, s)
	}
	d.mu.Unlock()
	for _, s := range list {
		s.wait(false)
	}
}

// HostAlloc maps size bytes of pinned host memory.
func (d *Driver) HostAlloc(size uint64) (vendorapi.HostBuffer, error) {
	const call = "hostHostAlloc"
	if size > maxMapping {
		return vendorapi.HostBuffer{}, newErr(errMemoryAllocation, call, -1, "out of memory: requested %d bytes", size)
	}
	b, err := mmapAnon(roundUp(max(size, 1), d.page))
	if err != nil {
		return vendorapi.HostBuffer{}, osErr(call, -1, "mmap", err)
	}
	r := &region{kind: regPinned, dev: -1, base: addr(b), mem: b[:size], mapped: b, writable: true}
	d.memMu.Lock()
	d.regions.insert(r)
	d.memMu.Unlock()
	return vendorapi.HostBuffer{Ptr: r.base, Size: size}, nil
}

// HostFree unmaps memory from HostAlloc once queued work is done with it.
func (d *Driver) HostFree(b vendorapi.HostBuffer) error {
	const call = "hostFreeHost"
	if b.Ptr == 0 {
		return nil
	}
	d.quiesce()
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r := d.regions.at(b.Ptr)
	if r == nil || r.kind != regPinned {
		return invalid(call, -1, "address %#x is not the start of a pinned host allocation", b.Ptr)
	}
	return d.unmapRegion(r)
}

// HostRegister records [ptr, ptr+size) as pinned memory that asynchronous
// copies may use. The range must be mapped memory of this process; a
// read-only range may only be copied from.
func (d *Driver) HostRegister(ptr uintptr, size uint64) error {
	const call = "hostHostRegister"
	if ptr == 0 || size == 0 || size > maxMapping || ptr+uintptr(size) < ptr {
		return invalid(call, -1, "bad range [%#x, +%d)", ptr, size)
	}
	mapped, writable := procMapped(ptr, ptr+uintptr(size))
	if !mapped {
		return invalid(call, -1, "range [%#x, +%d) is not mapped memory of this process", ptr, size)
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if d.registered.overlaps(ptr, ptr+uintptr(size)) || d.regions.overlaps(ptr, ptr+uintptr(size)) {
		return newErr(errAlreadyRegistered, call, -1, "range [%#x, +%d) overlaps registered or driver-owned memory", ptr, size)
	}
	d.registered.insert(&region{kind: regRegistered, dev: -1, base: ptr, mem: bytesAt(ptr, size), writable: writable})
	return nil
}

// HostUnregister forgets a range from HostRegister once queued work is done with it.
func (d *Driver) HostUnregister(ptr uintptr) error {
	const call = "hostHostUnregister"
	d.quiesce()
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r := d.registered.at(ptr)
	if r == nil {
		return newErr(errNotRegistered, call, -1, "address %#x is not the start of a registered range", ptr)
	}
	d.registered.remove(r)
	return nil
}

// procMapped reports whether [lo, hi) is mapped readable throughout and whether
// it is writable, from /proc/self/maps. Without /proc it trusts the caller.
func procMapped(lo, hi uintptr) (mapped, writable bool) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return true, true
	}
	defer f.Close()
	at, writable := lo, true
	sc := bufio.NewScanner(f)
	for sc.Scan() && at < hi {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		a, b, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(a, 16, 64)
		end, err2 := strconv.ParseUint(b, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		if uintptr(end) <= at {
			continue
		}
		if uintptr(start) > at || fields[1][0] != 'r' {
			return false, false
		}
		writable = writable && len(fields[1]) > 1 && fields[1][1] == 'w'
		at = uintptr(end)
	}
	return at >= hi, writable
}
