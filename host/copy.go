package host

import (
	"github.com/ternion/ternion/vendorapi"
)

// syncSpan resolves a device range for a synchronous call. The caller holds memMu.
func (d *Driver) syncSpan(call, what string, dev int, p vendorapi.DevicePtr, size uint64) ([]byte, error) {
	b, why := d.span(dev, p, size, 1)
	if why != "" {
		return nil, invalid(call, dev, "%s: %s", what, why)
	}
	return b, nil
}

// Memset sets size bytes at p on dev to value and returns when done.
func (d *Driver) Memset(dev int, p vendorapi.DevicePtr, value byte, size uint64) error {
	const call = "hostMemset"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	b, err := d.syncSpan(call, "dst", dev, p, size)
	if err != nil {
		return err
	}
	memset(b, value)
	return nil
}

// MemsetAsync queues a memset on s.
func (d *Driver) MemsetAsync(s vendorapi.Stream, p vendorapi.DevicePtr, value byte, size uint64) error {
	const call = "hostMemsetAsync"
	return d.submit(call, s, &node{kind: nodeMemset, call: call, dev: s.Device, dst: p, value: value, size: size})
}

// CopyHtoD copies src to dst on dev and returns when done.
func (d *Driver) CopyHtoD(dev int, dst vendorapi.DevicePtr, src []byte) error {
	const call = "hostMemcpyHtoD"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	b, err := d.syncSpan(call, "dst", dev, dst, uint64(len(src)))
	if err != nil {
		return err
	}
	copy(b, src)
	return nil
}

// CopyDtoH copies len(dst) bytes from src on dev and returns when done.
func (d *Driver) CopyDtoH(dev int, dst []byte, src vendorapi.DevicePtr) error {
	const call = "hostMemcpyDtoH"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	b, err := d.syncSpan(call, "src", dev, src, uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// CopyDtoD copies size bytes within dev (overlapping ranges like memmove).
func (d *Driver) CopyDtoD(dev int, dst, src vendorapi.DevicePtr, size uint64) error {
	const call = "hostMemcpyDtoD"
	if err := d.checkDev(call, dev); err != nil {
		return err
	}
	return d.copySync(call, dev, dst, dev, src, size)
}

// CopyPeer copies size bytes from srcDev's memory to dstDev's.
func (d *Driver) CopyPeer(dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	const call = "hostMemcpyPeer"
	if err := d.checkDev(call, dstDev); err != nil {
		return err
	}
	if err := d.checkDev(call, srcDev); err != nil {
		return err
	}
	return d.copySync(call, dstDev, dst, srcDev, src, size)
}

func (d *Driver) copySync(call string, dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	db, err := d.syncSpan(call, "dst", dstDev, dst, size)
	if err != nil {
		return err
	}
	sb, err := d.syncSpan(call, "src", srcDev, src, size)
	if err != nil {
		return err
	}
	copy(db, sb)
	return nil
}

// CopyHtoDAsync queues on s a copy of the pinned buffer src to dst.
func (d *Driver) CopyHtoDAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, src vendorapi.HostBuffer) error {
	const call = "hostMemcpyHtoDAsync"
	return d.submit(call, s, &node{kind: nodeHtoD, call: call, dev: s.Device, dst: dst, host: src})
}

// CopyDtoHAsync queues on s a copy of dst.Size bytes at src into the pinned buffer dst.
func (d *Driver) CopyDtoHAsync(s vendorapi.Stream, dst vendorapi.HostBuffer, src vendorapi.DevicePtr) error {
	const call = "hostMemcpyDtoHAsync"
	return d.submit(call, s, &node{kind: nodeDtoH, call: call, dev: s.Device, src: src, host: dst})
}

// CopyDtoDAsync queues on s a copy within s's device.
func (d *Driver) CopyDtoDAsync(s vendorapi.Stream, dst, src vendorapi.DevicePtr, size uint64) error {
	const call = "hostMemcpyDtoDAsync"
	return d.submit(call, s, &node{kind: nodeDtoD, call: call, dev: s.Device, dst: dst, src: src, size: size})
}

// CopyPeerAsync queues on s, a stream of dstDev or srcDev, a copy between devices.
func (d *Driver) CopyPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, srcDev int, src vendorapi.DevicePtr, size uint64) error {
	const call = "hostMemcpyPeerAsync"
	if err := d.checkEnds(call, s, dstDev, srcDev); err != nil {
		return err
	}
	return d.submit(call, s, &node{kind: nodePeer, call: call, dev: dstDev, dst: dst, srcDev: srcDev, src: src, size: size})
}

// Copy2DAsync queues on s a copy of height rows of width bytes, rows spitch
// bytes apart at src and dpitch bytes apart at dst.
func (d *Driver) Copy2DAsync(s vendorapi.Stream, dst vendorapi.DevicePtr, dpitch uint64, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	const call = "hostMemcpy2DAsync"
	if width > dpitch || width > spitch {
		return invalid(call, s.Device, "width %d exceeds a pitch (dpitch %d, spitch %d)", width, dpitch, spitch)
	}
	return d.submit(call, s, &node{kind: node2D, call: call, dev: s.Device, dst: dst, dpitch: dpitch,
		srcDev: s.Device, src: src, spitch: spitch, width: width, height: height})
}

// Copy2DPeerAsync queues on s (a stream of dstDev or srcDev) a copy of height
// rows of width bytes from srcDev to dstDev, rows spitch bytes apart at src
// and dpitch bytes apart at dst.
func (d *Driver) Copy2DPeerAsync(s vendorapi.Stream, dstDev int, dst vendorapi.DevicePtr, dpitch uint64, srcDev int, src vendorapi.DevicePtr, spitch uint64, width, height uint64) error {
	const call = "hostMemcpy2DPeerAsync"
	if err := d.checkEnds(call, s, dstDev, srcDev); err != nil {
		return err
	}
	if width > dpitch || width > spitch {
		return invalid(call, s.Device, "width %d exceeds a pitch (dpitch %d, spitch %d)", width, dpitch, spitch)
	}
	return d.submit(call, s, &node{kind: node2D, call: call, dev: dstDev, dst: dst, dpitch: dpitch,
		srcDev: srcDev, src: src, spitch: spitch, width: width, height: height})
}

// checkEnds checks both devices of a copy between devices and that s belongs
// to one of them.
func (d *Driver) checkEnds(call string, s vendorapi.Stream, dstDev, srcDev int) error {
	if err := d.checkDev(call, dstDev); err != nil {
		return err
	}
	if err := d.checkDev(call, srcDev); err != nil {
		return err
	}
	if s.Device != dstDev && s.Device != srcDev {
		return invalid(call, s.Device, "stream of device %d copies from device %d to device %d", s.Device, srcDev, dstDev)
	}
	return nil
}
