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
	d.call("Vendor", -1, 0)
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
	if err := d.check("DeviceCount", -1, 0); err != nil {
		return 0, err
	}
	return d.inner.DeviceCount()
}

// Props forwards to the wrapped driver.
func (d *Driver) Props(dev int) (vendorapi.Props, error) {
	if err := d.check("Props", dev, 0); err != nil {
		return vendorapi.Props{}, err
	}
	return d.inner.Props(dev)
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
	if err := d.check("CanAccessPeer", dev, 0); err != nil {
		return false, err
	}
	return d.inner.CanAccessPeer(dev, peer)
}

// EnablePeerAccess forwards to the wrapped driver.
func (d *Driver) EnablePeerAccess(dev, peer int) error {
	if err := d.check("EnablePeerAccess", dev, 0); err != nil {
		return err
	}
	return d.inner.EnablePeerAccess(dev, peer)
}

// DisablePeerAccess forwards to the wrapped driver.
func (d *Driver) DisablePeerAccess(dev, peer int) error {
	if err := d.check("DisablePeerAccess", dev, 0); err != nil {
		return err
	}
	return d.inner.DisablePeerAccess(dev, peer)
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
	if err := d.check("Malloc", dev, size); err != nil {
		return 0, err
	}
	return d.inner.Malloc(dev, size)
}

// MallocManaged forwards to the wrapped driver where it allocates managed
// memory; elsewhere it fails with ErrNotSupported.
func (d *Driver) MallocManaged(dev int, size uint64) (vendorapi.DevicePtr, error) {
	if err := d.check("MallocManaged", dev, size); err != nil {
		return 0, err
	}
	m, ok := d.inner.(vendorapi.ManagedAllocator)
	if !ok {
		return 0, d.injected("MallocManaged", dev, vendorapi.ErrNotSupported, d.inner.Vendor()+" has no managed memory")
	}
	return m.MallocManaged(dev, size)
}

// Free forwards to the wrapped driver.
func (d *Driver) Free(dev int, p vendorapi.DevicePtr) error {
	if err := d.check("Free", dev, 0); err != nil {
		return err
	}
	return d.inner.Free(dev, p)
}

// HostAlloc forwards to the wrapped driver.
func (d *Driver) HostAlloc(size uint64) (vendorapi.HostBuffer, error) {
	if err := d.check("HostAlloc", -1, size); err != nil {
		return vendorapi.HostBuffer{}, err
	}
	return d.inner.HostAlloc(size)
}

// HostFree forwards to the wrapped driver.
func (d *Driver) HostFree(b vendorapi.HostBuffer) error {
	if err := d.check("HostFree", -1, 0); err != nil {
		return err
	}
	return d.inner.HostFree(b)
}

// HostRegister forwards to the wrapped driver.
func (d *Driver) HostRegister(ptr uintptr, size uint64) error {
	if err := d.check("HostRegister", -1, 0); err != nil {
		return err
	}
	return d.inner.HostRegister(ptr, size)
}

// HostUnregister forwards to the wrapped driver.
func (d *Driver) HostUnregister(ptr uintptr) error {
	if err := d.check("HostUnregister", -1, 0); err != nil {
		return err
	}
	return d.inner.HostUnregister(ptr)
}

// Memset forwards to the wrapped driver.
func (d *Driver) Memset(dev int, p vendorapi.DevicePtr, value byte, size uint64) error {
	if err := d.check("Memset", dev, 0); err != nil {
		return err
	}
	return d.inner.Memset(dev, p, value, size)
}

// MemsetAsync forwards to the wrapped driver.
func (d *Driver) MemsetAsync(s vendorapi.Stream, p vendorapi.DevicePtr, value byte, size uint64) error {
	if err := d.check("MemsetAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.MemsetAsync(s, p, value, size)
}

// CopyHtoD forwards to the wrapped driver.
func (d *Driver) CopyHtoD(dev int, dst vendorapi.DevicePtr, src []byte) error {
	if err := d.check("CopyHtoD", dev, 0); err != nil {
		return err
	}
	return d.inner.CopyHtoD(dev, dst, src)
}

// CopyDtoH forwards to the wrapped driver.
func (d *Driver) CopyDtoH(dev int, dst []byte, src vendorapi.DevicePtr) error {
	if err := d.check("CopyDtoH", dev, 0); err != nil {
		return err
	}
	return d.inner.CopyDtoH(dev, dst, src)
}

// CopyDtoD forwards to the wrapped driver.
func (d *Driver) CopyDtoD(dev int, dst, src vendorapi.DevicePtr, size uint64) error {
	if err := d.check("CopyDtoD", dev, 0); err != nil {
		return err
	}
	return d.inner.CopyDtoD(dev, dst, src, size)
}

// CopyPeer forwards to the wrapped driver.
func (d *Driver) CopyPeer(dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	if err := d.check("CopyPeer", dstDev, 0); err != nil {
		return err
	}
	return d.inner.CopyPeer(dstDev, dst, srcDev, src, size)
}

// CopyHtoDAsync forwards to the wrapped driver.
func (d *Driver) CopyHtoDAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, src vendorapi.HostBuffer) error {
	if err := d.check("CopyHtoDAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.CopyHtoDAsync(s, dst, src)
}

// CopyDtoHAsync forwards to the wrapped driver.
func (d *Driver) CopyDtoHAsync(s vendorapi.Stream, dst vendorapi.HostBuffer, src vendorapi.DevicePtr) error {
	if err := d.check("CopyDtoHAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.CopyDtoHAsync(s, dst, src)
}

// CopyDtoDAsync forwards to the wrapped driver.
func (d *Driver) CopyDtoDAsync(s vendorapi.Stream, dst, src vendorapi.DevicePtr, size uint64) error {
	if err := d.check("CopyDtoDAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.CopyDtoDAsync(s, dst, src, size)
}

// CopyPeerAsync forwards to the wrapped driver.
func (d *Driver) CopyPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	if err := d.check("CopyPeerAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.CopyPeerAsync(s, dstDev, dst, srcDev, src, size)
}

// Copy2DAsync forwards to the wrapped driver.
func (d *Driver) Copy2DAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, dpitch uint64, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	if err := d.check("Copy2DAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.Copy2DAsync(s, dst, dpitch, src, spitch, width, height)
}

// Copy2DPeerAsync forwards to the wrapped driver.
func (d *Driver) Copy2DPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, dpitch uint64, srcDev int, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	if err := d.check("Copy2DPeerAsync", s.Device, 0); err != nil {
		return err
	}
	return d.inner.Copy2DPeerAsync(s, dstDev, dst, dpitch, srcDev, src, spitch, width, height)
}

// VMMReserve forwards to the wrapped driver.
func (d *Driver) VMMReserve(dev int, size uint64) (vendorapi.VirtualRange, error) {
	if err := d.check("VMMReserve", dev, size); err != nil {
		return vendorapi.VirtualRange{}, err
	}
	return d.inner.VMMReserve(dev, size)
}

// VMMFree forwards to the wrapped driver.
func (d *Driver) VMMFree(r vendorapi.VirtualRange) error {
	if err := d.check("VMMFree", r.Device, 0); err != nil {
		return err
	}
	return d.inner.VMMFree(r)
}

// VMMCreate forwards to the wrapped driver.
func (d *Driver) VMMCreate(dev int, size uint64) (vendorapi.PhysicalChunk, error) {
	if err := d.check("VMMCreate", dev, size); err != nil {
		return vendorapi.PhysicalChunk{}, err
	}
	return d.inner.VMMCreate(dev, size)
}

// VMMRelease forwards to the wrapped driver.
func (d *Driver) VMMRelease(c vendorapi.PhysicalChunk) error {
	if err := d.check("VMMRelease", c.Device, 0); err != nil {
		return err
	}
	return d.inner.VMMRelease(c)
}

// VMMMap forwards to the wrapped driver.
func (d *Driver) VMMMap(p vendorapi.DevicePtr, c vendorapi.PhysicalChunk) error {
	if err := d.check("VMMMap", c.Device, 0); err != nil {
		return err
	}
	return d.inner.VMMMap(p, c)
}

// VMMSetAccess forwards to the wrapped driver.
func (d *Driver) VMMSetAccess(dev int, p vendorapi.DevicePtr, size uint64) error {
	if err := d.check("VMMSetAccess", dev, 0); err != nil {
		return err
	}
	return d.inner.VMMSetAccess(dev, p, size)
}

// VMMUnmap forwards to the wrapped driver.
func (d *Driver) VMMUnmap(dev int, p vendorapi.DevicePtr, size uint64) error {
	if err := d.check("VMMUnmap", dev, 0); err != nil {
		return err
	}
	return d.inner.VMMUnmap(dev, p, size)
}

// StreamCreate forwards to the wrapped driver.
func (d *Driver) StreamCreate(dev int) (vendorapi.Stream, error) {
	if err := d.check("StreamCreate", dev, 0); err != nil {
		return vendorapi.Stream{}, err
	}
	return d.inner.StreamCreate(dev)
}

// StreamDestroy forwards to the wrapped driver.
func (d *Driver) StreamDestroy(s vendorapi.Stream) error {
	if err := d.check("StreamDestroy", s.Device, 0); err != nil {
		return err
	}
	return d.inner.StreamDestroy(s)
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
	if err := d.check("StreamQuery", s.Device, 0); err != nil {
		return err
	}
	return d.inner.StreamQuery(s)
}

// StreamWaitEvent forwards to the wrapped driver.
func (d *Driver) StreamWaitEvent(s vendorapi.Stream, e vendorapi.Event) error {
	if err := d.check("StreamWaitEvent", s.Device, 0); err != nil {
		return err
	}
	return d.inner.StreamWaitEvent(s, e)
}

// EventCreate forwards to the wrapped driver.
func (d *Driver) EventCreate(dev int, timing bool) (vendorapi.Event, error) {
	if err := d.check("EventCreate", dev, 0); err != nil {
		return vendorapi.Event{}, err
	}
	return d.inner.EventCreate(dev, timing)
}

// EventDestroy forwards to the wrapped driver.
func (d *Driver) EventDestroy(e vendorapi.Event) error {
	if err := d.check("EventDestroy", e.Device, 0); err != nil {
		return err
	}
	return d.inner.EventDestroy(e)
}

// EventRecord forwards to the wrapped driver.
func (d *Driver) EventRecord(e vendorapi.Event, s vendorapi.Stream) error {
	if err := d.check("EventRecord", s.Device, 0); err != nil {
		return err
	}
	return d.inner.EventRecord(e, s)
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
	if err := d.check("EventQuery", e.Device, 0); err != nil {
		return err
	}
	return d.inner.EventQuery(e)
}

// EventElapsed forwards to the wrapped driver.
func (d *Driver) EventElapsed(start, end vendorapi.Event) (time.Duration, error) {
	if err := d.check("EventElapsed", end.Device, 0); err != nil {
		return 0, err
	}
	return d.inner.EventElapsed(start, end)
}

// BeginCapture forwards to the wrapped driver; an injected failure starts no capture.
func (d *Driver) BeginCapture(s vendorapi.Stream) error {
	if err := d.check("BeginCapture", s.Device, 0); err != nil {
		return err
	}
	return d.inner.BeginCapture(s)
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
	if err := d.check("CaptureStatus", s.Device, 0); err != nil {
		return vendorapi.CaptureNone, err
	}
	return d.inner.CaptureStatus(s)
}

// GraphInstantiate forwards to the wrapped driver.
func (d *Driver) GraphInstantiate(g vendorapi.Graph) (vendorapi.GraphExec, error) {
	if err := d.check("GraphInstantiate", g.Device, 0); err != nil {
		return vendorapi.GraphExec{}, err
	}
	return d.inner.GraphInstantiate(g)
}

// GraphExecUpdate forwards to the wrapped driver; an injected failure leaves
// e as it was.
func (d *Driver) GraphExecUpdate(e vendorapi.GraphExec, g vendorapi.Graph) error {
	if err := d.check("GraphExecUpdate", e.Device, 0); err != nil {
		return err
	}
	return d.inner.GraphExecUpdate(e, g)
}

// GraphLaunch forwards to the wrapped driver.
func (d *Driver) GraphLaunch(e vendorapi.GraphExec, s vendorapi.Stream) error {
	if err := d.check("GraphLaunch", s.Device, 0); err != nil {
		return err
	}
	return d.inner.GraphLaunch(e, s)
}

// GraphDestroy forwards to the wrapped driver.
func (d *Driver) GraphDestroy(g vendorapi.Graph) error {
	if err := d.check("GraphDestroy", g.Device, 0); err != nil {
		return err
	}
	return d.inner.GraphDestroy(g)
}

// GraphExecDestroy forwards to the wrapped driver.
func (d *Driver) GraphExecDestroy(e vendorapi.GraphExec) error {
	if err := d.check("GraphExecDestroy", e.Device, 0); err != nil {
		return err
	}
	return d.inner.GraphExecDestroy(e)
}

// Kernel forwards to the wrapped driver.
func (d *Driver) Kernel(dev int, name string) (vendorapi.Function, error) {
	if err := d.check("Kernel", dev, 0); err != nil {
		return vendorapi.Function{}, err
	}
	return d.inner.Kernel(dev, name)
}

// SetMaxDynamicSharedMemory forwards to the wrapped driver.
func (d *Driver) SetMaxDynamicSharedMemory(f vendorapi.Function, bytes int) error {
	if err := d.check("SetMaxDynamicSharedMemory", f.Device, 0); err != nil {
		return err
	}
	return d.inner.SetMaxDynamicSharedMemory(f, bytes)
}

// Launch forwards to the wrapped driver. A launch failed asynchronously
// queues nothing and returns nil; the next synchronize of s's device reports it.
func (d *Driver) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args *vendorapi.Args) error {
	r, n := d.call("Launch", s.Device, 0)
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
	if err := d.check("BLASCreate", s.Device, 0); err != nil {
		return vendorapi.BLASHandle{}, err
	}
	return d.inner.BLASCreate(s)
}

// BLASDestroy forwards to the wrapped driver.
func (d *Driver) BLASDestroy(h vendorapi.BLASHandle) error {
	if err := d.check("BLASDestroy", h.Device, 0); err != nil {
		return err
	}
	return d.inner.BLASDestroy(h)
}

// BLASSetStream forwards to the wrapped driver.
func (d *Driver) BLASSetStream(h vendorapi.BLASHandle, s vendorapi.Stream) error {
	if err := d.check("BLASSetStream", h.Device, 0); err != nil {
		return err
	}
	return d.inner.BLASSetStream(h, s)
}

// BLASSetWorkspace forwards to the wrapped driver when it is a
// vendorapi.BLASWorkspacer; otherwise it is ErrNotSupported.
func (d *Driver) BLASSetWorkspace(h vendorapi.BLASHandle, p vendorapi.DevicePtr, size uint64) error {
	if err := d.check("BLASSetWorkspace", h.Device, size); err != nil {
		return err
	}
	ws, ok := d.inner.(vendorapi.BLASWorkspacer)
	if !ok {
		return &vendorapi.Error{Vendor: d.inner.Vendor(), Call: "BLASSetWorkspace", CodeName: "not supported",
			Message: "the wrapped driver takes no BLAS workspace", Device: h.Device, Kind: vendorapi.ErrNotSupported}
	}
	return ws.BLASSetWorkspace(h, p, size)
}

// Gemm forwards to the wrapped driver.
func (d *Driver) Gemm(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	if err := d.check("Gemm", h.Device, 0); err != nil {
		return err
	}
	return d.inner.Gemm(h, g)
}

// GemmStridedBatched forwards to the wrapped driver.
func (d *Driver) GemmStridedBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	if err := d.check("GemmStridedBatched", h.Device, 0); err != nil {
		return err
	}
	return d.inner.GemmStridedBatched(h, g)
}

// GemmBatched forwards to the wrapped driver.
func (d *Driver) GemmBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	if err := d.check("GemmBatched", h.Device, 0); err != nil {
		return err
	}
	return d.inner.GemmBatched(h, g)
}

// BLASVersion forwards to the wrapped driver.
func (d *Driver) BLASVersion() (string, error) {
	if err := d.check("BLASVersion", -1, 0); err != nil {
		return "", err
	}
	return d.inner.BLASVersion()
}

// Features lists the wrapped driver's features, if it lists any.
func (d *Driver) Features() []vendorapi.Feature {
	d.call("Features", -1, 0)
	if fl, ok := d.inner.(vendorapi.FeatureLister); ok {
		return fl.Features()
	}
	return nil
}
