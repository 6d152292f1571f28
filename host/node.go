package host

import (
	"math"

	"github.com/ternion/ternion/vendorapi"
)

// nodeKind is the kind of one piece of stream work (and of one graph node).
type nodeKind uint8

const (
	nodeMemset nodeKind = iota + 1
	nodeHtoD
	nodeDtoH
	nodeDtoD
	nodePeer
	node2D
	nodeKernel
	nodeGemm
	nodeGemmStrided
	nodeGemmBatched
	nodeRecord
	nodeWait
	nodeFault // InjectFault: fails when it runs
)

// node is one piece of asynchronous work, queued on a stream or captured
// into a graph. Nodes are never modified after they are built, so queues,
// graphs and executable graphs share them.
type node struct {
	kind nodeKind
	call string // the API call that made it, for errors
	dev  int    // device whose memory dst (and src, except for peer copies) addresses

	dst, src vendorapi.DevicePtr
	srcDev   int
	host     vendorapi.HostBuffer
	size     uint64
	value    byte

	dpitch, spitch, width, height uint64

	fn          vendorapi.Function
	grid, block vendorapi.Dim3
	shared      uint32
	args        *vendorapi.Args
	impl        *hostKernel // resolved by check

	gemm vendorapi.Gemm

	event vendorapi.Event
}

// updatable reports whether m may replace n's parameters in GraphExecUpdate:
// the same kind of work on the same devices (and the same kernel).
func (n *node) updatable(m *node) bool {
	if n.kind != m.kind || n.dev != m.dev {
		return false
	}
	switch n.kind {
	case nodeKernel:
		return n.fn.Name == m.fn.Name && n.fn.Device == m.fn.Device
	case nodePeer, node2D:
		return n.srcDev == m.srcDev
	}
	return true
}

// check validates n for stream st: handles, launch configuration and every
// memory range it touches. The caller holds d.mu and memMu.
func (d *Driver) check(st *stream, n *node, recorded map[uintptr]bool) *vendorapi.Error {
	switch n.kind {
	case nodeRecord, nodeWait:
		ev := d.events[n.event.Handle]
		if ev == nil || ev.dev != n.event.Device {
			return newErr(errInvalidHandle, n.call, n.dev, "unknown or destroyed event %d", n.event.Handle)
		}
		if n.kind == nodeRecord && ev.dev != st.dev {
			return invalid(n.call, n.dev, "event of device %d recorded on a stream of device %d", ev.dev, st.dev)
		}
		if n.kind == nodeWait && ev.captured.active() && ev.captured != st.capture && !recorded[n.event.Handle] {
			ev.captured.invalidate("another stream waited on an event recorded in the capture")
			return newErr(errCaptureCrossStream, n.call, n.dev,
				"event %d was recorded in the capture of stream %d; cross-stream capture is not supported and the capture is invalidated",
				ev.id, ev.captured.st.id)
		}
		return nil
	case nodeKernel:
		if err := d.checkKernel(n); err != nil {
			return err
		}
	}
	_, err := d.prepare(n, false)
	return err
}

// execNode runs n on the calling stream goroutine, validating it again first:
// memory may have been freed since it was queued.
func (d *Driver) execNode(n *node) error {
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	run, err := d.prepare(n, true)
	if err != nil {
		return err
	}
	if run == nil {
		return nil
	}
	return run()
}

// prepare resolves every range n touches and returns the work to do (nil for
// none). exec says the work runs now, so operands in device memory (pointer
// arrays) can be read. The caller holds memMu.
func (d *Driver) prepare(n *node, exec bool) (func() error, *vendorapi.Error) {
	c := errInvalidValue
	if exec {
		c = errIllegalAddress
	}
	fail := func(format string, args ...any) *vendorapi.Error { return newErr(c, n.call, n.dev, format, args...) }
	dspan := func(what string, dev int, p vendorapi.DevicePtr, size, align uint64) ([]byte, *vendorapi.Error) {
		b, why := d.span(dev, p, size, align)
		if why != "" {
			return nil, fail("%s: %s", what, why)
		}
		return b, nil
	}
	hspan := func(what string, h vendorapi.HostBuffer, write bool) ([]byte, *vendorapi.Error) {
		b, why := d.hostSpan(h, write)
		if why != "" {
			return nil, fail("%s: %s", what, why)
		}
		return b, nil
	}
	switch n.kind {
	case nodeMemset:
		b, err := dspan("dst", n.dev, n.dst, n.size, 1)
		if err != nil {
			return nil, err
		}
		return func() error { memset(b, n.value); return nil }, nil
	case nodeHtoD, nodeDtoH, nodeDtoD, nodePeer:
		var dst, src []byte
		var err *vendorapi.Error
		switch n.kind {
		case nodeHtoD:
			if src, err = hspan("src", n.host, false); err == nil {
				dst, err = dspan("dst", n.dev, n.dst, n.host.Size, 1)
			}
		case nodeDtoH:
			if dst, err = hspan("dst", n.host, true); err == nil {
				src, err = dspan("src", n.dev, n.src, n.host.Size, 1)
			}
		case nodeDtoD:
			if dst, err = dspan("dst", n.dev, n.dst, n.size, 1); err == nil {
				src, err = dspan("src", n.dev, n.src, n.size, 1)
			}
		case nodePeer:
			if dst, err = dspan("dst", n.dev, n.dst, n.size, 1); err == nil {
				src, err = dspan("src", n.srcDev, n.src, n.size, 1)
			}
		}
		if err != nil {
			return nil, err
		}
		return func() error { copy(dst, src); return nil }, nil
	case node2D:
		if n.width == 0 || n.height == 0 {
			return nil, nil
		}
		dst, err := dspan("dst", n.dev, n.dst, pitched(n.dpitch, n.width, n.height), 1)
		if err != nil {
			return nil, err
		}
		src, err := dspan("src", n.srcDev, n.src, pitched(n.spitch, n.width, n.height), 1)
		if err != nil {
			return nil, err
		}
		return func() error {
			for r := range n.height {
				copy(dst[r*n.dpitch:r*n.dpitch+n.width], src[r*n.spitch:r*n.spitch+n.width])
			}
			return nil
		}, nil
	case nodeKernel:
		return d.prepareKernel(n, exec, dspan)
	case nodeGemm, nodeGemmStrided, nodeGemmBatched:
		return d.prepareGemm(n, exec, dspan)
	case nodeFault:
		return func() error { return newErr(errLaunchFailure, n.call, n.dev, "injected fault") }, nil
	}
	return nil, nil
}

// pitched is the extent of height rows of width bytes, pitch bytes apart;
// math.MaxUint64 when it overflows.
func pitched(pitch, width, height uint64) uint64 {
	if n, ok := vendorapi.Extent2D(pitch, width, height); ok {
		return n
	}
	return math.MaxUint64
}

// memset sets every byte of b to v.
func memset(b []byte, v byte) {
	if v == 0 || len(b) == 0 {
		clear(b)
		return
	}
	b[0] = v
	for i := 1; i < len(b); i *= 2 {
		copy(b[i:], b[:i])
	}
}
