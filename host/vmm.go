package host

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/internal/align"
	"github.com/ternion/ternion/internal/ranges"
	"github.com/ternion/ternion/vendorapi"
)

// chunk is physical memory from VMMCreate: a memfd of size bytes.
type chunk struct {
	id   uintptr
	dev  int
	fd   int
	size uint64
	refs int // one for the live handle plus one per mapping
}

// unref drops one reference; the last returns the bytes to the device.
// The caller holds memMu for writing.
func (c *chunk) unref(d *Driver) {
	c.refs--
	if c.refs == 0 {
		d.used[c.dev] -= c.size
	}
}

// release closes the memfd; mappings keep the memory alive.
func (c *chunk) release() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
}

// checkGran reports an error unless size is a positive multiple of the granularity.
func (d *Driver) checkGran(call string, dev int, size uint64) error {
	if size == 0 || size%d.gran != 0 || size > maxMapping {
		return invalid(call, dev, "size %d is not a positive multiple of the VMM granularity %d", size, d.gran)
	}
	return nil
}

// VMMReserve reserves size bytes of address space (PROT_NONE), aligned to the granularity.
func (d *Driver) VMMReserve(dev int, size uint64) (vendorapi.VirtualRange, error) {
	const call = "hostMemAddressReserve"
	if err := d.checkDev(call, dev); err != nil {
		return vendorapi.VirtualRange{}, err
	}
	if err := d.checkGran(call, dev, size); err != nil {
		return vendorapi.VirtualRange{}, err
	}
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size+d.gran), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return vendorapi.VirtualRange{}, osErr(call, dev, "mmap", err)
	}
	all := unsafe.Slice((*byte)(p), size+d.gran)
	head := align.Up(uint64(addr(all)), d.gran) - uint64(addr(all))
	// Trim the unaligned head and the tail but for one guard page (the tail
	// is at least a page: the head is at most gran-page); failures only leak
	// address space.
	_ = munmap(all[:head])
	_ = munmap(all[head+size+d.page:])
	r := &region{kind: regReserve, dev: dev, mem: all[head : head+size : head+size], mapped: all[head : head+size+d.page]}
	r.base = addr(r.mem)
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if err := d.insertMapped(call, r); err != nil {
		return vendorapi.VirtualRange{}, err
	}
	return vendorapi.VirtualRange{Device: dev, Base: vendorapi.DevicePtr(r.base), Size: size}, nil
}

// VMMFree releases a reserved range; it fails while mappings remain in it.
// Like Free, it keeps the addresses reserved for a while, so a second VMMFree
// is an error.
func (d *Driver) VMMFree(vr vendorapi.VirtualRange) error {
	const call = "hostMemAddressFree"
	d.memMu.Lock()
	defer d.memMu.Unlock()
	const isnt = "a reserved range"
	what := fmt.Sprintf("[%#x, +%d)", uintptr(vr.Base), vr.Size)
	r, err := d.liveRegion(call, vr.Device, uintptr(vr.Base), regReserve, what, isnt)
	if err != nil {
		return err
	}
	if uint64(len(r.mem)) != vr.Size {
		return invalid(call, vr.Device, "%s is not %s", what, isnt)
	}
	if n := r.maps.Len(); n > 0 {
		return invalid(call, r.dev, "%d mappings remain in the reserved range at %#x; unmap them first", n, r.base)
	}
	return d.retire(r)
}

// VMMCreate allocates a physical chunk (a memfd), counted against dev's memory limit.
func (d *Driver) VMMCreate(dev int, size uint64) (vendorapi.PhysicalChunk, error) {
	const call = "hostMemCreate"
	if err := d.checkDev(call, dev); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	if err := d.checkGran(call, dev, size); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if err := d.reserveBytes(call, dev, size); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	fd, err := memfd(size)
	if err != nil {
		d.used[dev] -= size
		return vendorapi.PhysicalChunk{}, osErr(call, dev, "memfd", err)
	}
	c := &chunk{id: d.id(), dev: dev, fd: fd, size: size, refs: 1}
	d.chunks[c.id] = c
	return vendorapi.PhysicalChunk{Device: dev, Handle: c.id, Size: size}, nil
}

// memfd returns a file descriptor of size bytes of shared memory: a memfd, or
// an unlinked temporary file where memfd_create is unavailable.
func memfd(size uint64) (int, error) {
	fd, err := unix.MemfdCreate("ternion-vmm", unix.MFD_CLOEXEC)
	if err != nil {
		f, ferr := os.CreateTemp("", "ternion-vmm-*")
		if ferr != nil {
			return -1, errors.Join(err, ferr)
		}
		_ = os.Remove(f.Name())
		fd, err = unix.Dup(int(f.Fd()))
		_ = f.Close()
		if err != nil {
			return -1, err
		}
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// VMMRelease frees a chunk's handle; mapped memory lives on until unmapped.
func (d *Driver) VMMRelease(pc vendorapi.PhysicalChunk) error {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	c := d.chunks[pc.Handle]
	if c == nil {
		return newErr(errInvalidHandle, "hostMemRelease", pc.Device, "unknown or released physical chunk %d", pc.Handle)
	}
	delete(d.chunks, c.id)
	c.release()
	c.unref(d)
	return nil
}

// VMMMap maps chunk pc at p, inside a reserved range and not over a mapping.
// The mapping is inaccessible until VMMSetAccess.
func (d *Driver) VMMMap(p vendorapi.DevicePtr, pc vendorapi.PhysicalChunk) error {
	const call = "hostMemMap"
	d.memMu.Lock()
	defer d.memMu.Unlock()
	c := d.chunks[pc.Handle]
	if c == nil {
		return newErr(errInvalidHandle, call, pc.Device, "unknown or released physical chunk %d", pc.Handle)
	}
	r, off, err := d.reserveRange(call, c.dev, p, c.size)
	if err != nil {
		return err
	}
	if r.maps.Overlaps(off, off+c.size) {
		return invalid(call, c.dev, "[%#x, +%d) overlaps a mapping of its reserved range", uintptr(p), c.size)
	}
	_, merr := unix.MmapPtr(c.fd, 0, unsafe.Pointer(&r.mem[off]), uintptr(c.size), unix.PROT_NONE, unix.MAP_SHARED|unix.MAP_FIXED)
	if merr != nil {
		return osErr(call, c.dev, "mmap", merr)
	}
	r.maps.Insert(ranges.Range[*mapping]{Lo: off, Hi: off + c.size, Val: &mapping{chunk: c}})
	c.refs++
	return nil
}

// reserveRange finds the reserved range holding [p, p+size), which must start
// at a multiple of the granularity. The caller holds memMu.
func (d *Driver) reserveRange(call string, dev int, p vendorapi.DevicePtr, size uint64) (*region, uint64, error) {
	r := d.regions.find(uintptr(p))
	if r != nil && r.kind == regFreed {
		return nil, 0, invalid(call, dev, "%s", r.stale(uintptr(p)))
	}
	if r == nil || r.kind != regReserve {
		return nil, 0, invalid(call, dev, "address %#x is not in a reserved range", uintptr(p))
	}
	off := uint64(uintptr(p) - r.base)
	if off%d.gran != 0 {
		return nil, 0, invalid(call, dev, "address %#x is not a multiple of the granularity %d into its range", uintptr(p), d.gran)
	}
	if size == 0 || size > uint64(len(r.mem))-off {
		return nil, 0, invalid(call, dev, "[%#x, +%d) does not fit in the reserved range [%#x, +%d)", uintptr(p), size, r.base, len(r.mem))
	}
	return r, off, nil
}

// mappedRange returns the reserved region holding [p, p+size), p's offset in
// it and the mappings that exactly tile the range. The caller holds memMu.
func (d *Driver) mappedRange(call string, dev int, p vendorapi.DevicePtr, size uint64) (*region, uint64, []ranges.Range[*mapping], error) {
	r, off, err := d.reserveRange(call, dev, p, size)
	if err != nil {
		return nil, 0, nil, err
	}
	maps, ok := r.maps.Tiles(off, off+size)
	if !ok {
		return nil, 0, nil, invalid(call, dev, "[%#x, +%d) is not exactly covered by mappings", uintptr(p), size)
	}
	return r, off, maps, nil
}

// VMMSetAccess makes the mappings tiling [p, p+size) readable and writable from dev.
func (d *Driver) VMMSetAccess(dev int, p vendorapi.DevicePtr, size uint64) error {
	const call = "hostMemSetAccess"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r, _, maps, err := d.mappedRange(call, dev, p, size)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if err := unix.Mprotect(r.mem[m.Lo:m.Hi], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return osErr(call, dev, "mprotect", err)
		}
		m.Val.access |= 1 << dev
	}
	return nil
}

// VMMUnmap unmaps the mappings tiling [p, p+size), leaving the range reserved,
// after the work queued so far that may use them has completed (that of the
// streams of the devices with access to them, and copies between devices
// involving those devices); work queued after the call starts is not waited for.
func (d *Driver) VMMUnmap(dev int, p vendorapi.DevicePtr, size uint64) error {
	const call = "hostMemUnmap"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	d.memMu.RLock()
	_, _, maps, err := d.mappedRange(call, dev, p, size)
	var access uint32
	for _, m := range maps {
		access |= m.Val.access
	}
	d.memMu.RUnlock()
	if err != nil {
		return err
	}
	d.settleDevices(access)
	d.memMu.Lock()
	defer d.memMu.Unlock()
	r, off, maps, err := d.mappedRange(call, dev, p, size)
	if err != nil {
		return err
	}
	if err := inaccessible(r.mem[off : off+size]); err != nil {
		return osErr(call, dev, "mmap", err)
	}
	for _, m := range maps {
		m.Val.chunk.unref(d)
	}
	r.maps.RemoveWithin(off, off+size)
	return nil
}
