//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
*/
import "C"

import (
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// vmmDevice checks dev and that it has VMM enabled.
func (d *Driver) vmmDevice(call string, dev int) (*device, error) {
	if err := d.checkDev(call, dev); err != nil {
		return nil, err
	}
	dv := d.devs[dev]
	if !dv.props.VMM {
		return nil, ownError(d.vendor, call, dev, vendorapi.ErrNotSupported, "device %d has no virtual memory management (or %s is set)", dev, switches.NoVMM.Name)
	}
	return dv, nil
}

// checkGranule checks that size is a positive multiple of dev's minimum granularity.
func (d *Driver) checkGranule(call string, dev int, dv *device, what string, v uint64) error {
	if v == 0 || v%dv.minGran != 0 {
		return d.invalid(call, dev, "%s %#x is not a positive multiple of the granularity %d", what, v, dv.minGran)
	}
	return nil
}

// VMMReserve reserves size bytes of address space on dev, aligned to the
// recommended granularity.
func (d *Driver) VMMReserve(dev int, size uint64) (vendorapi.VirtualRange, error) {
	dv, err := d.vmmDevice("VMMReserve", dev)
	if err != nil {
		return vendorapi.VirtualRange{}, err
	}
	if err := d.checkGranule("VMMReserve", dev, dv, "size", size); err != nil {
		return vendorapi.VirtualRange{}, err
	}
	var p C.uint64_t
	if err := d.fail(C.tn_vmm_reserve(C.int32_t(dev), C.uint64_t(size), C.uint64_t(dv.props.VMMGranularity), &p), dev); err != nil {
		return vendorapi.VirtualRange{}, err
	}
	if !d.mem.add(&d.mem.reserved, span{Lo: uint64(p), Hi: uint64(p) + size, Val: dev}) {
		_ = d.fail(C.tn_vmm_free(C.int32_t(dev), p, C.uint64_t(size)), dev)
		return vendorapi.VirtualRange{}, d.invalid("VMMReserve", dev, "the vendor returned %#x, inside a range the driver thinks is reserved", uint64(p))
	}
	return vendorapi.VirtualRange{Device: dev, Base: vendorapi.DevicePtr(p), Size: size}, nil
}

// VMMFree releases a reserved range with nothing mapped in it.
func (d *Driver) VMMFree(r vendorapi.VirtualRange) error {
	if err := d.checkDev("VMMFree", r.Device); err != nil {
		return err
	}
	base, end := uint64(r.Base), uint64(r.Base)+r.Size
	d.mem.mu.Lock()
	s, ok := d.mem.reserved.At(base)
	switch {
	case !ok || s.Hi != end || s.Val != r.Device:
		d.mem.mu.Unlock()
		return d.invalid("VMMFree", r.Device, "[%#x, +%d) is not a range reserved on device %d", base, r.Size, r.Device)
	case d.mem.mapped.Overlaps(base, end):
		d.mem.mu.Unlock()
		return d.invalid("VMMFree", r.Device, "[%#x, +%d) still has mappings: unmap them first", base, r.Size)
	}
	d.mem.reserved.Remove(base)
	d.mem.mu.Unlock()
	if err := d.fail(C.tn_vmm_free(C.int32_t(r.Device), C.uint64_t(base), C.uint64_t(r.Size)), r.Device); err != nil {
		d.mem.add(&d.mem.reserved, s)
		return err
	}
	return nil
}

// VMMCreate allocates a physical chunk of size bytes on dev.
func (d *Driver) VMMCreate(dev int, size uint64) (vendorapi.PhysicalChunk, error) {
	dv, err := d.vmmDevice("VMMCreate", dev)
	if err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	if err := d.checkGranule("VMMCreate", dev, dv, "size", size); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	var h C.uint64_t
	if err := d.fail(C.tn_vmm_create(C.int32_t(dev), C.uint64_t(size), &h), dev); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	id := d.h.add(handle{kind: kindChunk, dev: dev, raw: uint64(h), size: size})
	return vendorapi.PhysicalChunk{Device: dev, Handle: id, Size: size}, nil
}

// VMMRelease frees a physical chunk; mapped, its memory lives on until unmapped.
func (d *Driver) VMMRelease(c vendorapi.PhysicalChunk) error {
	h, err := d.release("VMMRelease", c.Handle, kindChunk, c.Device)
	if err != nil {
		return err
	}
	return d.fail(C.tn_vmm_release(C.int32_t(c.Device), C.uint64_t(h.raw)), c.Device)
}

// VMMMap maps chunk c at p, inside a reserved range and over nothing mapped.
func (d *Driver) VMMMap(p vendorapi.DevicePtr, c vendorapi.PhysicalChunk) error {
	h, err := d.lookup("VMMMap", c.Handle, kindChunk, c.Device)
	if err != nil {
		return err
	}
	dv := d.devs[h.dev]
	if err := d.checkGranule("VMMMap", h.dev, dv, "address", uint64(p)); err != nil {
		return err
	}
	lo, hi := uint64(p), uint64(p)+h.size
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	if !d.mem.reserved.Covers(lo, h.size, false) {
		return d.invalid("VMMMap", h.dev, "[%#x, +%d) is not inside a reserved range", lo, h.size)
	}
	if d.mem.mapped.Overlaps(lo, hi) {
		return d.invalid("VMMMap", h.dev, "[%#x, +%d) overlaps a mapping", lo, h.size)
	}
	if err := d.fail(C.tn_vmm_map(C.int32_t(h.dev), C.uint64_t(lo), C.uint64_t(h.size), C.uint64_t(h.raw)), h.dev); err != nil {
		return err
	}
	d.mem.mapped.Insert(span{Lo: lo, Hi: hi, Val: h.dev})
	return nil
}

// VMMSetAccess makes mapped [p, p+size) readable and writable from dev.
func (d *Driver) VMMSetAccess(dev int, p vendorapi.DevicePtr, size uint64) error {
	if _, err := d.vmmDevice("VMMSetAccess", dev); err != nil {
		return err
	}
	d.mem.mu.RLock()
	ok := size > 0 && d.mem.mapped.Covers(uint64(p), size, true)
	d.mem.mu.RUnlock()
	if !ok {
		return d.invalid("VMMSetAccess", dev, "[%#x, +%d) is not mapped", uint64(p), size)
	}
	if err := d.fail(C.tn_vmm_set_access(C.int32_t(dev), C.uint64_t(p), C.uint64_t(size)), dev); err != nil {
		return err
	}
	d.mem.mu.Lock()
	d.mem.grant(dev, uint64(p), size)
	d.mem.mu.Unlock()
	return nil
}

// VMMUnmap unmaps [p, p+size), which must consist of whole mappings: with one
// call, or on HIP with one call per mapping (the table here knows them).
func (d *Driver) VMMUnmap(dev int, p vendorapi.DevicePtr, size uint64) error {
	if _, err := d.vmmDevice("VMMUnmap", dev); err != nil {
		return err
	}
	lo := uint64(p)
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	pieces, ok := d.mem.mapped.Tiles(lo, lo+size)
	if !ok {
		return d.invalid("VMMUnmap", dev, "[%#x, +%d) is not a run of whole mappings", lo, size)
	}
	if !vendor.unmapEach {
		pieces = []span{{Lo: lo, Hi: lo + size, Val: dev}}
	}
	for _, m := range pieces {
		if err := d.fail(C.tn_vmm_unmap(C.int32_t(dev), C.uint64_t(m.Lo), C.uint64_t(m.Hi-m.Lo)), dev); err != nil {
			d.mem.revoke(lo, m.Lo-lo) // what was unmapped before the failure
			d.mem.mapped.RemoveWithin(lo, m.Lo)
			return err
		}
	}
	d.mem.revoke(lo, size)
	d.mem.mapped.RemoveWithin(lo, lo+size)
	return nil
}
