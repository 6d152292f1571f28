package backend

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/vendorapi"
)

// HostBuffer is host memory that tensor data moves to and from a backend's
// device through (ggml's host buffer type, cudaMallocHost): page-locked
// memory from the driver, so that the copies are asynchronous on the
// backend's stream and in order with its compute; or, when the driver has
// none to give or TERNION_NO_PINNED is set, ordinary Go memory, which the
// backend says once in its log and copies synchronously (after the stream is
// idle). Either way Bytes is the memory and the copies behave the same apart
// from when they are done: read data a GetTensor brought in after
// Synchronize.
type HostBuffer struct {
	be       *Backend
	pin      vendorapi.HostBuffer // the pinned memory; zero when pageable
	pageable []byte
	size     uint64
	freed    bool
}

// AllocHost allocates size bytes of host memory for tensor data, pinned
// where the backend uses pinned memory and the driver gives it.
func (b *Backend) AllocHost(size uint64) (*HostBuffer, error) {
	h := &HostBuffer{be: b, size: size}
	if b.staging.pinned && size > 0 {
		pin, err := b.drv.HostAlloc(size)
		if err == nil {
			h.pin = pin
			return h, nil
		}
		if !b.hostWarned {
			b.log.Warn(fmt.Sprintf("ternion: backend %s: no pinned host memory for a host buffer (%v); its copies are synchronous, from pageable memory", b.name, err))
			b.hostWarned = true
		}
	}
	h.pageable = make([]byte, size)
	return h, nil
}

// Bytes is the buffer's memory (nil after Free).
func (h *HostBuffer) Bytes() []byte {
	if h.freed {
		return nil
	}
	if h.pin.Ptr != 0 {
		return h.pin.Bytes()
	}
	return h.pageable
}

// Size is the buffer's size in bytes.
func (h *HostBuffer) Size() uint64 { return h.size }

// Pinned reports whether the buffer is page-locked memory (its copies are
// asynchronous).
func (h *HostBuffer) Pinned() bool { return h.pin.Ptr != 0 }

// Free releases the buffer once the copies queued on it are done; using it
// afterwards is an error.
func (h *HostBuffer) Free() error {
	if h.freed {
		return fmt.Errorf("ternion: backend %s: host buffer freed twice", h.be.name)
	}
	h.freed = true
	h.pageable = nil
	if h.pin.Ptr == 0 {
		return nil
	}
	pin := h.pin
	h.pin = vendorapi.HostBuffer{}
	return h.be.drv.HostFree(pin)
}

// span checks that t's memory can be copied as one byte range from or to
// bytes [off, off+t's size) of h, and returns t's device address and size.
func (h *HostBuffer) span(what string, t *graph.Tensor, off uint64) (vendorapi.DevicePtr, uint64, error) {
	b := h.be
	fail := func(format string, a ...any) (vendorapi.DevicePtr, uint64, error) {
		return 0, 0, fmt.Errorf("ternion: backend %s: %s %s: %s", b.name, what, t, fmt.Sprintf(format, a...))
	}
	if h.freed {
		return fail("the host buffer is freed")
	}
	if m, _ := splitOf(t); m != nil {
		return fail("a split tensor moves through its split buffer (SplitBuffer), not a host buffer")
	}
	if err := b.usable(t); err != nil {
		return fail("%v", err)
	}
	if !t.Layout().IsContiguous() {
		return fail("the tensor is not contiguous")
	}
	n := uint64(t.Layout().Bytes())
	if off > h.size || n > h.size-off {
		return fail("bytes [%d, %d) are outside the %d-byte host buffer", off, off+n, h.size)
	}
	buf, toff, _ := placed(t) // usable said it is placed
	return buf.ptr.Add(toff), n, nil
}

// SetTensor queues a copy of the host buffer's bytes [off, off+t's size)
// into tensor t's memory (contiguous, in a buffer of h's backend): on the
// backend's stream when h is pinned, so h must not change until the copy
// is done (Synchronize); at once otherwise.
func (h *HostBuffer) SetTensor(t *graph.Tensor, off uint64) error {
	dst, n, err := h.span("SetTensor", t, off)
	if err != nil || n == 0 {
		return err
	}
	b := h.be
	if h.pin.Ptr != 0 {
		return b.drv.CopyHtoDAsync(b.stream, dst, h.pin.Slice(off, n))
	}
	if err := b.sync(); err != nil {
		return err
	}
	return b.drv.CopyHtoD(b.dev, dst, h.pageable[off:off+n])
}

// GetTensor queues a copy of tensor t's memory (contiguous, in a buffer of
// h's backend) into the host buffer's bytes [off, off+t's size), after the
// work queued before it: read them after Synchronize when h is pinned (the
// copy is asynchronous); a pageable buffer's copy is done when it returns.
func (h *HostBuffer) GetTensor(t *graph.Tensor, off uint64) error {
	src, n, err := h.span("GetTensor", t, off)
	if err != nil || n == 0 {
		return err
	}
	b := h.be
	if h.pin.Ptr != 0 {
		return b.drv.CopyDtoHAsync(b.stream, h.pin.Slice(off, n), src)
	}
	if err := b.sync(); err != nil {
		return err
	}
	return b.drv.CopyDtoH(b.dev, h.pageable[off:off+n], src)
}
