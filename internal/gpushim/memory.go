//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
#cgo noescape tn_copy_htod
#cgo nocallback tn_copy_htod
#cgo noescape tn_copy_dtoh
#cgo nocallback tn_copy_dtoh
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/ternion/ternion/internal/gomem"
	"github.com/ternion/ternion/vendorapi"
)

// Malloc allocates size bytes on dev (at least one byte, so the pointer is
// never zero).
func (d *Driver) Malloc(dev int, size uint64) (vendorapi.DevicePtr, error) {
	return d.malloc("Malloc", dev, size, false)
}

// MallocManaged allocates memory addressable from the host and dev.
func (d *Driver) MallocManaged(dev int, size uint64) (vendorapi.DevicePtr, error) {
	return d.malloc("MallocManaged", dev, size, true)
}

func (d *Driver) malloc(call string, dev int, size uint64, managed bool) (vendorapi.DevicePtr, error) {
	if err := d.checkDev(call, dev); err != nil {
		return 0, err
	}
	n := max(size, 1)
	p, err := d.alloc(dev, n, managed)
	if err != nil {
		return 0, err
	}
	if !d.mem.add(&d.mem.allocs, span{Lo: uint64(p), Hi: uint64(p) + n, Val: dev}) {
		_ = d.fail(C.tn_free(C.int32_t(dev), p), dev)
		return 0, d.invalid(call, dev, "the vendor returned %#x, inside memory the driver thinks is live", uint64(p))
	}
	return vendorapi.DevicePtr(p), nil
}

// alloc allocates n bytes on dev through the vendor. Where the vendor has no
// managed memory (HIP on some devices and systems) managed allocations are
// device memory, with a warning once, as the seed does.
func (d *Driver) alloc(dev int, n uint64, managed bool) (C.uint64_t, error) {
	var p C.uint64_t
	if !managed {
		return p, d.fail(C.tn_malloc(C.int32_t(dev), C.uint64_t(n), &p), dev)
	}
	var fallback C.int32_t
	err := d.fail(C.tn_malloc_managed(C.int32_t(dev), C.uint64_t(n), &p, &fallback), dev)
	if err == nil && fallback != 0 {
		d.managedWarn.Do(func() {
			d.log.Warn(fmt.Sprintf("%s: managed memory is not supported here; MallocManaged falls back to device memory", d.vendor))
		})
	}
	return p, err
}

// Free releases memory from Malloc; it waits for the device as the vendor's
// free does. Freeing 0 is a no-op.
func (d *Driver) Free(dev int, p vendorapi.DevicePtr) error {
	if err := d.checkDev("Free", dev); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	s, ok := d.mem.take(&d.mem.allocs, uint64(p), dev)
	if !ok {
		return d.invalid("Free", dev, "%#x is not the start of a live allocation of device %d", uint64(p), dev)
	}
	if err := d.fail(C.tn_free(C.int32_t(dev), C.uint64_t(p)), dev); err != nil {
		d.mem.add(&d.mem.allocs, s)
		return err
	}
	return nil
}

// HostAlloc allocates pinned host memory, usable by every device.
func (d *Driver) HostAlloc(size uint64) (vendorapi.HostBuffer, error) {
	n := max(size, 1)
	var p C.uintptr_t
	if err := d.fail(C.tn_host_alloc(C.uint64_t(n), &p), -1); err != nil {
		return vendorapi.HostBuffer{}, err
	}
	if !d.mem.add(&d.mem.pinned, span{Lo: uint64(p), Hi: uint64(p) + n, Val: -1}) {
		_ = d.fail(C.tn_host_free(p), -1)
		return vendorapi.HostBuffer{}, d.invalid("HostAlloc", -1, "the vendor returned %#x, inside memory the driver thinks is live", uint64(p))
	}
	return vendorapi.HostBuffer{Ptr: uintptr(p), Size: size}, nil
}

// HostFree releases memory from HostAlloc. Freeing a zero buffer is a no-op.
func (d *Driver) HostFree(b vendorapi.HostBuffer) error {
	if b.Ptr == 0 {
		return nil
	}
	s, ok := d.mem.take(&d.mem.pinned, uint64(b.Ptr), -1)
	if !ok {
		return d.invalid("HostFree", -1, "%#x is not the start of a live pinned allocation", b.Ptr)
	}
	if err := d.fail(C.tn_host_free(C.uintptr_t(b.Ptr)), -1); err != nil {
		d.mem.add(&d.mem.pinned, s)
		return err
	}
	return nil
}

// HostRegister page-locks [ptr, ptr+size), memory that is not Go's. Go memory
// is refused where internal/gomem recognizes it (see there for the limits).
func (d *Driver) HostRegister(ptr uintptr, size uint64) error {
	if ptr == 0 || size == 0 || uint64(ptr)+size < uint64(ptr) {
		return d.invalid("HostRegister", -1, "bad range [%#x, +%d)", ptr, size)
	}
	if err := gomem.Check(ptr, size); err != nil {
		return d.invalid("HostRegister", -1, "[%#x, +%d) is Go memory, which the garbage collector may free or move (%v); register memory from mmap or C",
			ptr, size, err)
	}
	s := span{Lo: uint64(ptr), Hi: uint64(ptr) + size, Val: -1}
	if !d.mem.addApart(&d.mem.registered, &d.mem.pinned, s) {
		return d.invalid("HostRegister", -1, "[%#x, +%d) overlaps pinned or registered memory", ptr, size)
	}
	if err := d.fail(C.tn_host_register(C.uintptr_t(ptr), C.uint64_t(size)), -1); err != nil {
		d.mem.take(&d.mem.registered, s.Lo, -1)
		return err
	}
	return nil
}

// HostUnregister undoes HostRegister.
func (d *Driver) HostUnregister(ptr uintptr) error {
	s, ok := d.mem.take(&d.mem.registered, uint64(ptr), -1)
	if !ok {
		return d.invalid("HostUnregister", -1, "%#x is not the start of a registered range", ptr)
	}
	if err := d.fail(C.tn_host_unregister(C.uintptr_t(ptr)), -1); err != nil {
		d.mem.add(&d.mem.registered, s)
		return err
	}
	return nil
}

// checkDevice checks that [p, p+n) is live device memory.
func (d *Driver) checkDevice(call string, dev int, p vendorapi.DevicePtr, n uint64) error {
	if !d.mem.device(dev, uint64(p), n) {
		if owner, ok := d.mem.owner(uint64(p)); ok && owner != dev {
			return d.invalid(call, dev, "[%#x, +%d) is memory of device %d, and device %d has no peer access to it (EnablePeerAccess)", uint64(p), n, owner, dev)
		}
		return d.invalid(call, dev, "[%#x, +%d) is not inside live device memory", uint64(p), n)
	}
	return nil
}

// checkHost checks that b is inside pinned or registered host memory.
func (d *Driver) checkHost(call string, dev int, b vendorapi.HostBuffer) error {
	if b.Size > 0 && (b.Ptr == 0 || !d.mem.host(uint64(b.Ptr), b.Size)) {
		return d.invalid(call, dev, "host buffer [%#x, +%d) is not pinned or registered memory", b.Ptr, b.Size)
	}
	return nil
}

// Memset sets size bytes at p and returns when done.
func (d *Driver) Memset(dev int, p vendorapi.DevicePtr, value byte, size uint64) error {
	if err := d.checkDev("Memset", dev); err != nil {
		return err
	}
	if err := d.checkDevice("Memset", dev, p, size); err != nil || size == 0 {
		return err
	}
	return d.fail(C.tn_memset(C.int32_t(dev), 0, C.uint64_t(p), C.int32_t(value), C.uint64_t(size)), dev)
}

// MemsetAsync queues a memset on s.
func (d *Driver) MemsetAsync(s vendorapi.Stream, p vendorapi.DevicePtr, value byte, size uint64) error {
	h, err := d.stream("MemsetAsync", s)
	if err != nil {
		return err
	}
	if err := d.checkDevice("MemsetAsync", s.Device, p, size); err != nil || size == 0 {
		return err
	}
	return d.fail(C.tn_memset(C.int32_t(s.Device), C.uint64_t(h.raw), C.uint64_t(p), C.int32_t(value), C.uint64_t(size)), s.Device)
}

// CopyHtoD copies src to dst and returns when done.
func (d *Driver) CopyHtoD(dev int, dst vendorapi.DevicePtr, src []byte) error {
	if err := d.checkDev("CopyHtoD", dev); err != nil {
		return err
	}
	n := uint64(len(src))
	if err := d.checkDevice("CopyHtoD", dev, dst, n); err != nil || n == 0 {
		return err
	}
	return d.fail(C.tn_copy_htod(C.int32_t(dev), C.uint64_t(dst), unsafe.Pointer(&src[0]), C.uint64_t(n)), dev)
}

// CopyDtoH copies len(dst) bytes from src and returns when done.
func (d *Driver) CopyDtoH(dev int, dst []byte, src vendorapi.DevicePtr) error {
	if err := d.checkDev("CopyDtoH", dev); err != nil {
		return err
	}
	n := uint64(len(dst))
	if err := d.checkDevice("CopyDtoH", dev, src, n); err != nil || n == 0 {
		return err
	}
	return d.fail(C.tn_copy_dtoh(C.int32_t(dev), unsafe.Pointer(&dst[0]), C.uint64_t(src), C.uint64_t(n)), dev)
}

// CopyDtoD copies size bytes within dev and returns when done.
func (d *Driver) CopyDtoD(dev int, dst, src vendorapi.DevicePtr, size uint64) error {
	if err := d.checkDev("CopyDtoD", dev); err != nil {
		return err
	}
	return d.copyAsync("CopyDtoD", dev, 0, uint64(dst), uint64(src), size, C.TN_D2D)
}

// copyAsync checks the device side(s) of a copy and queues it on stream raw
// (0: synchronously).
func (d *Driver) copyAsync(call string, dev int, raw, dst, src, size uint64, dir C.int32_t) error {
	if dir != C.TN_D2H {
		if err := d.checkDevice(call, dev, vendorapi.DevicePtr(dst), size); err != nil {
			return err
		}
	}
	if dir != C.TN_H2D {
		if err := d.checkDevice(call, dev, vendorapi.DevicePtr(src), size); err != nil {
			return err
		}
	}
	if size == 0 {
		return nil
	}
	return d.fail(C.tn_copy_async(C.int32_t(dev), C.uint64_t(raw), C.uint64_t(dst), C.uint64_t(src), C.uint64_t(size), dir), dev)
}

// CopyPeer copies size bytes from srcDev to dstDev and returns when done.
func (d *Driver) CopyPeer(dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	if err := d.checkPeer("CopyPeer", dstDev, srcDev); err != nil {
		return err
	}
	return d.copyPeer("CopyPeer", 0, dstDev, dstDev, dst, srcDev, src, size)
}

func (d *Driver) copyPeer(call string, raw uint64, on, dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	if err := d.checkDevice(call, dstDev, dst, size); err != nil {
		return err
	}
	if err := d.checkDevice(call, srcDev, src, size); err != nil || size == 0 {
		return err
	}
	return d.fail(C.tn_copy_peer(C.uint64_t(raw), C.int32_t(on), C.int32_t(dstDev), C.uint64_t(dst), C.int32_t(srcDev),
		C.uint64_t(src), C.uint64_t(size)), on)
}

// CopyHtoDAsync queues a copy from pinned memory to s's device.
func (d *Driver) CopyHtoDAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, src vendorapi.HostBuffer) error {
	h, err := d.stream("CopyHtoDAsync", s)
	if err != nil {
		return err
	}
	if err := d.checkHost("CopyHtoDAsync", s.Device, src); err != nil {
		return err
	}
	return d.copyAsync("CopyHtoDAsync", s.Device, h.raw, uint64(dst), uint64(src.Ptr), src.Size, C.TN_H2D)
}

// CopyDtoHAsync queues a copy from s's device to pinned memory.
func (d *Driver) CopyDtoHAsync(s vendorapi.Stream, dst vendorapi.HostBuffer, src vendorapi.DevicePtr) error {
	h, err := d.stream("CopyDtoHAsync", s)
	if err != nil {
		return err
	}
	if err := d.checkHost("CopyDtoHAsync", s.Device, dst); err != nil {
		return err
	}
	return d.copyAsync("CopyDtoHAsync", s.Device, h.raw, uint64(dst.Ptr), uint64(src), dst.Size, C.TN_D2H)
}

// CopyDtoDAsync queues a copy within s's device.
func (d *Driver) CopyDtoDAsync(s vendorapi.Stream, dst, src vendorapi.DevicePtr, size uint64) error {
	h, err := d.stream("CopyDtoDAsync", s)
	if err != nil {
		return err
	}
	return d.copyAsync("CopyDtoDAsync", s.Device, h.raw, uint64(dst), uint64(src), size, C.TN_D2D)
}

// CopyPeerAsync queues on s (a stream of dstDev or srcDev) a copy between devices.
func (d *Driver) CopyPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	h, err := d.stream("CopyPeerAsync", s)
	if err != nil {
		return err
	}
	if err := d.checkPeer("CopyPeerAsync", dstDev, srcDev); err != nil {
		return err
	}
	if s.Device != dstDev && s.Device != srcDev {
		return d.invalid("CopyPeerAsync", s.Device, "the stream's device %d is neither end of the copy (%d to %d)", s.Device, srcDev, dstDev)
	}
	return d.copyPeer("CopyPeerAsync", h.raw, s.Device, dstDev, dst, srcDev, src, size)
}

// Copy2DAsync queues a strided copy of height rows of width bytes within s's device.
func (d *Driver) Copy2DAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, dpitch uint64, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	h, err := d.stream("Copy2DAsync", s)
	if err != nil {
		return err
	}
	if skip, err := d.check2D("Copy2DAsync", s.Device, s.Device, dst, dpitch, s.Device, src, spitch, width, height); err != nil || skip {
		return err
	}
	return d.fail(C.tn_copy_2d_async(C.int32_t(s.Device), C.uint64_t(h.raw), C.uint64_t(dst), C.uint64_t(dpitch),
		C.uint64_t(src), C.uint64_t(spitch), C.uint64_t(width), C.uint64_t(height)), s.Device)
}

// Copy2DPeerAsync queues on s (a stream of dstDev or srcDev) a strided copy
// of height rows of width bytes from srcDev to dstDev: a 3D peer copy on CUDA,
// a 2D copy over unified addresses on HIP and MUSA (as the seed does).
func (d *Driver) Copy2DPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, dpitch uint64, srcDev int, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	const call = "Copy2DPeerAsync"
	h, err := d.stream(call, s)
	if err != nil {
		return err
	}
	if err := d.checkPeer(call, dstDev, srcDev); err != nil {
		return err
	}
	if s.Device != dstDev && s.Device != srcDev {
		return d.invalid(call, s.Device, "the stream's device %d is neither end of the copy (%d to %d)", s.Device, srcDev, dstDev)
	}
	if skip, err := d.check2D(call, s.Device, dstDev, dst, dpitch, srcDev, src, spitch, width, height); err != nil || skip {
		return err
	}
	return d.fail(C.tn_copy_2d_peer(C.uint64_t(h.raw), C.int32_t(s.Device), C.int32_t(dstDev), C.uint64_t(dst),
		C.uint64_t(dpitch), C.int32_t(srcDev), C.uint64_t(src), C.uint64_t(spitch), C.uint64_t(width), C.uint64_t(height)), s.Device)
}

// check2D validates a strided copy: pitches, overflow and both ranges against
// their devices. skip is true when there is nothing to copy.
func (d *Driver) check2D(call string, on, dstDev int, dst vendorapi.DevicePtr, dpitch uint64, srcDev int, src vendorapi.DevicePtr, spitch, width, height uint64) (skip bool, err error) {
	if width > dpitch || width > spitch {
		return false, d.invalid(call, on, "width %d exceeds a pitch (dst %d, src %d)", width, dpitch, spitch)
	}
	if width == 0 || height == 0 {
		return true, nil
	}
	dn, okd := vendorapi.Extent2D(dpitch, width, height)
	sn, oks := vendorapi.Extent2D(spitch, width, height)
	if !okd || !oks {
		return false, d.invalid(call, on, "%d rows at pitches %d and %d overflow the address space", height, dpitch, spitch)
	}
	if err := d.checkDevice(call, dstDev, dst, dn); err != nil {
		return false, err
	}
	return false, d.checkDevice(call, srcDev, src, sn)
}
