package faulty

import (
	"time"

	"github.com/ternion/ternion/vendorapi"
)

// Every method counts its call, fails it where a rule says so, and forwards
// it to the wrapped driver otherwise. The device of an injected error is the
// call's (the stream's, the handle's; -1 for host memory and driver-wide calls).

// Vendor names the wrapped driver's vendor.
func (d *Driver) Vendor() string {
	d.call("Vendor", 0)
	return d.inner.Vendor()
}

// Close forgets failures not reported yet and closes the wrapped driver.
func (d *Driver) Close() error {
	if err := d.check("Close", -1, 0); err != nil {
		return err
	}
	d.mu.Lock()
	d.pending = map[int][]error{}
	d.mu.Unlock()
	return d.inner.Close()
}

// DeviceCount forwards to the wrapped driver.
func (d *Driver) DeviceCount() (int, error) {
	return forward(d, "DeviceCount", -1, 0, d.inner.DeviceCount)
}

// Props forwards to the wrapped driver.
func (d *Driver) Props(dev int) (vendorapi.Props, error) {
	return forward(d, "Props", dev, 0, func() (vendorapi.Props, error) { return d.inner.Props(dev) })
}

// MemInfo forwards to the wrapped driver.
func (d *Driver) MemInfo(dev int) (free, total uint64, err error) {
	if err := d.check("MemInfo", dev, 0); err != nil {
		return 0, 0, err
	}
	return d.inner.MemInfo(dev)
}

// CanAccessPeer forwards to the wrapped driver.
func (d *Driver) CanAccessPeer(dev, peer int) (bool, error) {
	return forward(d, "CanAccessPeer", dev, 0, func() (bool, error) { return d.inner.CanAccessPeer(dev, peer) })
}

// EnablePeerAccess forwards to the wrapped driver.
func (d *Driver) EnablePeerAccess(dev, peer int) error {
	return d.forwardErr("EnablePeerAccess", dev, 0, func() error { return d.inner.EnablePeerAccess(dev, peer) })
}

// DisablePeerAccess forwards to the wrapped driver.
func (d *Driver) DisablePeerAccess(dev, peer int) error {
	return d.forwardErr("DisablePeerAccess", dev, 0, func() error { return d.inner.DisablePeerAccess(dev, peer) })
}

// DeviceSynchronize waits for dev, then reports a failure of its work: the
// wrapped driver's, or else one injected asynchronously.
func (d *Driver) DeviceSynchronize(dev int) error {
	if err := d.check("DeviceSynchronize", dev, 0); err != nil {
		return err
	}
	return d.report(dev, d.inner.DeviceSynchronize(dev))
}

// Malloc forwards to the wrapped driver.
func (d *Driver) Malloc(dev int, size uint64) (vendorapi.DevicePtr, error) {
	return forward(d, "Malloc", dev, size, func() (vendorapi.DevicePtr, error) { return d.inner.Malloc(dev, size) })
}

// MallocManaged forwards to the wrapped driver where it allocates managed
// memory; elsewhere it fails with ErrNotSupported.
func (d *Driver) MallocManaged(dev int, size uint64) (vendorapi.DevicePtr, error) {
	if err := d.check("MallocManaged", dev, size); err != nil {
		return 0, err
	}
	m, ok := d.inner.(vendorapi.ManagedAllocator)
	if !ok {
		return 0, d.unsupported("MallocManaged", dev, "has no managed memory")
	}
	return m.MallocManaged(dev, size)
}

// Free forwards to the wrapped driver.
func (d *Driver) Free(dev int, p vendorapi.DevicePtr) error {
	return d.forwardErr("Free", dev, 0, func() error { return d.inner.Free(dev, p) })
}

// HostAlloc forwards to the wrapped driver.
func (d *Driver) HostAlloc(size uint64) (vendorapi.HostBuffer, error) {
	return forward(d, "HostAlloc", -1, size, func() (vendorapi.HostBuffer, error) { return d.inner.HostAlloc(size) })
}

// HostFree forwards to the wrapped driver.
func (d *Driver) HostFree(b vendorapi.HostBuffer) error {
	return d.forwardErr("HostFree", -1, 0, func() error { return d.inner.HostFree(b) })
}

// HostRegister forwards to the wrapped driver.
func (d *Driver) HostRegister(ptr uintptr, size uint64) error {
	return d.forwardErr("HostRegister", -1, 0, func() error { return d.inner.HostRegister(ptr, size) })
}

// HostUnregister forwards to the wrapped driver.
func (d *Driver) HostUnregister(ptr uintptr) error {
	return d.forwardErr("HostUnregister", -1, 0, func() error { return d.inner.HostUnregister(ptr) })
}

// Memset forwards to the wrapped driver.
func (d *Driver) Memset(dev int, p vendorapi.DevicePtr, value byte, size uint64) error {
	return d.forwardErr("Memset", dev, 0, func() error { return d.inner.Memset(dev, p, value, size) })
}

// MemsetAsync forwards to the wrapped driver.
func (d *Driver) MemsetAsync(s vendorapi.Stream, p vendorapi.DevicePtr, value byte, size uint64) error {
	return d.forwardErr("MemsetAsync", s.Device, 0, func() error { return d.inner.MemsetAsync(s, p, value, size) })
}

// CopyHtoD forwards to the wrapped driver.
func (d *Driver) CopyHtoD(dev int, dst vendorapi.DevicePtr, src []byte) error {
	return d.forwardErr("CopyHtoD", dev, 0, func() error { return d.inner.CopyHtoD(dev, dst, src) })
}

// CopyDtoH forwards to the wrapped driver.
func (d *Driver) CopyDtoH(dev int, dst []byte, src vendorapi.DevicePtr) error {
	return d.forwardErr("CopyDtoH", dev, 0, func() error { return d.inner.CopyDtoH(dev, dst, src) })
}

// CopyDtoD forwards to the wrapped driver.
func (d *Driver) CopyDtoD(dev int, dst, src vendorapi.DevicePtr, size uint64) error {
	return d.forwardErr("CopyDtoD", dev, 0, func() error { return d.inner.CopyDtoD(dev, dst, src, size) })
}

// CopyPeer forwards to the wrapped driver.
func (d *Driver) CopyPeer(dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	return d.forwardErr("CopyPeer", dstDev, 0, func() error { return d.inner.CopyPeer(dstDev, dst, srcDev, src, size) })
}

// CopyHtoDAsync forwards to the wrapped driver.
func (d *Driver) CopyHtoDAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, src vendorapi.HostBuffer) error {
	return d.forwardErr("CopyHtoDAsync", s.Device, 0, func() error { return d.inner.CopyHtoDAsync(s, dst, src) })
}

// CopyDtoHAsync forwards to the wrapped driver.
func (d *Driver) CopyDtoHAsync(s vendorapi.Stream, dst vendorapi.HostBuffer, src vendorapi.DevicePtr) error {
	return d.forwardErr("CopyDtoHAsync", s.Device, 0, func() error { return d.inner.CopyDtoHAsync(s, dst, src) })
}

// CopyDtoDAsync forwards to the wrapped driver.
func (d *Driver) CopyDtoDAsync(s vendorapi.Stream, dst, src vendorapi.DevicePtr, size uint64) error {
	return d.forwardErr("CopyDtoDAsync", s.Device, 0, func() error { return d.inner.CopyDtoDAsync(s, dst, src, size) })
}

// CopyPeerAsync forwards to the wrapped driver.
func (d *Driver) CopyPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	return d.forwardErr("CopyPeerAsync", s.Device, 0, func() error { return d.inner.CopyPeerAsync(s, dstDev, dst, srcDev, src, size) })
}

// Copy2DAsync forwards to the wrapped driver.
func (d *Driver) Copy2DAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, dpitch uint64, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	return d.forwardErr("Copy2DAsync", s.Device, 0, func() error { return d.inner.Copy2DAsync(s, dst, dpitch, src, spitch, width, height) })
}

// Copy2DPeerAsync forwards to the wrapped driver.
func (d *Driver) Copy2DPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, dpitch uint64, srcDev int, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	return d.forwardErr("Copy2DPeerAsync", s.Device, 0, func() error {
		return d.inner.Copy2DPeerAsync(s, dstDev, dst, dpitch, srcDev, src, spitch, width, height)
	})
}

// VMMReserve forwards to the wrapped driver.
func (d *Driver) VMMReserve(dev int, size uint64) (vendorapi.VirtualRange, error) {
	return forward(d, "VMMReserve", dev, size, func() (vendorapi.VirtualRange, error) { return d.inner.VMMReserve(dev, size) })
}

// VMMFree forwards to the wrapped driver.
func (d *Driver) VMMFree(r vendorapi.VirtualRange) error {
	return d.forwardErr("VMMFree", r.Device, 0, func() error { return d.inner.VMMFree(r) })
}

// VMMCreate forwards to the wrapped driver.
func (d *Driver) VMMCreate(dev int, size uint64) (vendorapi.PhysicalChunk, error) {
	return forward(d, "VMMCreate", dev, size, func() (vendorapi.PhysicalChunk, error) { return d.inner.VMMCreate(dev, size) })
}

// VMMRelease forwards to the wrapped driver.
func (d *Driver) VMMRelease(c vendorapi.PhysicalChunk) error {
	return d.forwardErr("VMMRelease", c.Device, 0, func() error { return d.inner.VMMRelease(c) })
}

// VMMMap forwards to the wrapped driver.
func (d *Driver) VMMMap(p vendorapi.DevicePtr, c vendorapi.PhysicalChunk) error {
	return d.forwardErr("VMMMap", c.Device, 0, func() error { return d.inner.VMMMap(p, c) })
}

// VMMSetAccess forwards to the wrapped driver.
func (d *Driver) VMMSetAccess(dev int, p vendorapi.DevicePtr, size uint64) error {
	return d.forwardErr("VMMSetAccess", dev, 0, func() error { return d.inner.VMMSetAccess(dev, p, size) })
}

// VMMUnmap forwards to the wrapped driver.
func (d *Driver) VMMUnmap(dev int, p vendorapi.DevicePtr, size uint64) error {
	return d.forwardErr("VMMUnmap", dev, 0, func() error { return d.inner.VMMUnmap(dev, p, size) })
}

// StreamCreate forwards to the wrapped driver.
func (d *Driver) StreamCreate(dev int) (vendorapi.Stream, error) {
	return forward(d, "StreamCreate", dev, 0, func() (vendorapi.Stream, error) { return d.inner.StreamCreate(dev) })
}

// StreamDestroy forwards to the wrapped driver.
func (d *Driver) StreamDestroy(s vendorapi.Stream) error {
	return d.forwardErr("StreamDestroy", s.Device, 0, func() error { return d.inner.StreamDestroy(s) })
}

// StreamSynchronize waits for s, then reports a failure of its work: the
// wrapped driver's, or else one injected asynchronously on s's device.
func (d *Driver) StreamSynchronize(s vendorapi.Stream) error {
	if err := d.check("StreamSynchronize", s.Device, 0); err != nil {
		return err
	}
	return d.report(s.Device, d.inner.StreamSynchronize(s))
}

// StreamQuery forwards to the wrapped driver.
func (d *Driver) StreamQuery(s vendorapi.Stream) error {
	return d.forwardErr("StreamQuery", s.Device, 0, func() error { return d.inner.StreamQuery(s) })
}

// StreamWaitEvent forwards to the wrapped driver.
func (d *Driver) StreamWaitEvent(s vendorapi.Stream, e vendorapi.Event) error {
	return d.forwardErr("StreamWaitEvent", s.Device, 0, func() error { return d.inner.StreamWaitEvent(s, e) })
}

// EventCreate forwards to the wrapped driver.
func (d *Driver) EventCreate(dev int, timing bool) (vendorapi.Event, error) {
	return forward(d, "EventCreate", dev, 0, func() (vendorapi.Event, error) { return d.inner.EventCreate(dev, timing) })
}

// EventDestroy forwards to the wrapped driver.
func (d *Driver) EventDestroy(e vendorapi.Event) error {
	return d.forwardErr("EventDestroy", e.Device, 0, func() error { return d.inner.EventDestroy(e) })
}

// EventRecord forwards to the wrapped driver.
func (d *Driver) EventRecord(e vendorapi.Event, s vendorapi.Stream) error {
	return d.forwardErr("EventRecord", s.Device, 0, func() error { return d.inner.EventRecord(e, s) })
}

// EventSynchronize waits for e, then reports a failure of the work before it:
// the wrapped driver's, or else one injected asynchronously on e's device.
func (d *Driver) EventSynchronize(e vendorapi.Event) error {
	if err := d.check("EventSynchronize", e.Device, 0); err != nil {
		return err
	}
	return d.report(e.Device, d.inner.EventSynchronize(e))
}

// EventQuery forwards to the wrapped driver.
func (d *Driver) EventQuery(e vendorapi.Event) error {
	return d.forwardErr("EventQuery", e.Device, 0, func() error { return d.inner.EventQuery(e) })
}

// EventElapsed forwards to the wrapped driver.
func (d *Driver) EventElapsed(start, end vendorapi.Event) (time.Duration, error) {
	return forward(d, "EventElapsed", end.Device, 0, func() (time.Duration, error) { return d.inner.EventElapsed(start, end) })
}

// BeginCapture forwards to the wrapped driver; an injected failure starts no capture.
func (d *Driver) BeginCapture(s vendorapi.Stream) error {
	return d.forwardErr("BeginCapture", s.Device, 0, func() error { return d.inner.BeginCapture(s) })
}

// EndCapture forwards to the wrapped driver. An injected failure still ends
// the capture and discards its graph, as an invalidated capture ends.
func (d *Driver) EndCapture(s vendorapi.Stream) (vendorapi.Graph, error) {
	err := d.check("EndCapture", s.Device, 0)
	g, ierr := d.inner.EndCapture(s)
	if err == nil || ierr != nil {
		return g, ierr
	}
	if derr := d.inner.GraphDestroy(g); derr != nil {
		return vendorapi.Graph{}, derr
	}
	return vendorapi.Graph{}, err
}

// CaptureStatus forwards to the wrapped driver.
func (d *Driver) CaptureStatus(s vendorapi.Stream) (vendorapi.CaptureStatus, error) {
	return forward(d, "CaptureStatus", s.Device, 0, func() (vendorapi.CaptureStatus, error) { return d.inner.CaptureStatus(s) })
}

// GraphInstantiate forwards to the wrapped driver.
func (d *Driver) GraphInstantiate(g vendorapi.Graph) (vendorapi.GraphExec, error) {
	return forward(d, "GraphInstantiate", g.Device, 0, func() (vendorapi.GraphExec, error) { return d.inner.GraphInstantiate(g) })
}

// GraphExecUpdate forwards to the wrapped driver; an injected failure leaves
// e as it was.
func (d *Driver) GraphExecUpdate(e vendorapi.GraphExec, g vendorapi.Graph) error {
	return d.forwardErr("GraphExecUpdate", e.Device, 0, func() error { return d.inner.GraphExecUpdate(e, g) })
}

// GraphLaunch forwards to the wrapped driver.
func (d *Driver) GraphLaunch(e vendorapi.GraphExec, s vendorapi.Stream) error {
	return d.forwardErr("GraphLaunch", s.Device, 0, func() error { return d.inner.GraphLaunch(e, s) })
}

// GraphDestroy forwards to the wrapped driver.
func (d *Driver) GraphDestroy(g vendorapi.Graph) error {
	return d.forwardErr("GraphDestroy", g.Device, 0, func() error { return d.inner.GraphDestroy(g) })
}

// GraphExecDestroy forwards to the wrapped driver.
func (d *Driver) GraphExecDestroy(e vendorapi.GraphExec) error {
	return d.forwardErr("GraphExecDestroy", e.Device, 0, func() error { return d.inner.GraphExecDestroy(e) })
}

// Kernel forwards to the wrapped driver.
func (d *Driver) Kernel(dev int, name string) (vendorapi.Function, error) {
	return forward(d, "Kernel", dev, 0, func() (vendorapi.Function, error) { return d.inner.Kernel(dev, name) })
}

// SetMaxDynamicSharedMemory forwards to the wrapped driver.
func (d *Driver) SetMaxDynamicSharedMemory(f vendorapi.Function, bytes int) error {
	return d.forwardErr("SetMaxDynamicSharedMemory", f.Device, 0, func() error { return d.inner.SetMaxDynamicSharedMemory(f, bytes) })
}

// Launch forwards to the wrapped driver. A launch failed asynchronously
// queues nothing and returns nil; the next synchronize of s's device reports it.
func (d *Driver) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args *vendorapi.Args) error {
	r, n := d.call("Launch", 0)
	switch {
	case r == nil:
		return d.inner.Launch(f, grid, block, sharedMem, s, args)
	case !r.Async:
		return d.injected("Launch", s.Device, r.Kind, callName(n))
	}
	err := d.injected("Launch", s.Device, r.Kind, callName(n)+" ("+f.Name+"), failed asynchronously")
	d.mu.Lock()
	d.pending[s.Device] = append(d.pending[s.Device], err)
	d.mu.Unlock()
	return nil
}

// BLASCreate forwards to the wrapped driver.
func (d *Driver) BLASCreate(s vendorapi.Stream) (vendorapi.BLASHandle, error) {
	return forward(d, "BLASCreate", s.Device, 0, func() (vendorapi.BLASHandle, error) { return d.inner.BLASCreate(s) })
}

// BLASDestroy forwards to the wrapped driver.
func (d *Driver) BLASDestroy(h vendorapi.BLASHandle) error {
	return d.forwardErr("BLASDestroy", h.Device, 0, func() error { return d.inner.BLASDestroy(h) })
}

// BLASSetStream forwards to the wrapped driver.
func (d *Driver) BLASSetStream(h vendorapi.BLASHandle, s vendorapi.Stream) error {
	return d.forwardErr("BLASSetStream", h.Device, 0, func() error { return d.inner.BLASSetStream(h, s) })
}

// BLASSetWorkspace forwards to the wrapped driver when it is a
// vendorapi.BLASWorkspacer; otherwise it is ErrNotSupported.
func (d *Driver) BLASSetWorkspace(h vendorapi.BLASHandle, p vendorapi.DevicePtr, size uint64) error {
	if err := d.check("BLASSetWorkspace", h.Device, size); err != nil {
		return err
	}
	ws, ok := d.inner.(vendorapi.BLASWorkspacer)
	if !ok {
		return d.unsupported("BLASSetWorkspace", h.Device, "takes no BLAS workspace")
	}
	return ws.BLASSetWorkspace(h, p, size)
}

// Gemm forwards to the wrapped driver.
func (d *Driver) Gemm(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.forwardErr("Gemm", h.Device, 0, func() error { return d.inner.Gemm(h, g) })
}

// GemmStridedBatched forwards to the wrapped driver.
func (d *Driver) GemmStridedBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.forwardErr("GemmStridedBatched", h.Device, 0, func() error { return d.inner.GemmStridedBatched(h, g) })
}

// GemmBatched forwards to the wrapped driver.
func (d *Driver) GemmBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.forwardErr("GemmBatched", h.Device, 0, func() error { return d.inner.GemmBatched(h, g) })
}

// BLASVersion forwards to the wrapped driver.
func (d *Driver) BLASVersion() (string, error) {
	return forward(d, "BLASVersion", -1, 0, d.inner.BLASVersion)
}

// Features lists the wrapped driver's features, if it lists any.
func (d *Driver) Features() []vendorapi.Feature {
	d.call("Features", 0)
	if fl, ok := d.inner.(vendorapi.FeatureLister); ok {
		return fl.Features()
	}
	return nil
}
