package backend

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/internal/align"
	"github.com/ternion/ternion/vendorapi"
)

// Alignment is the alignment of every buffer and of every tensor placed in
// one (the seed's 128 bytes).
const Alignment = graph.DefaultAlign

// MatrixRowPadding is the seed's MATRIX_ROW_PADDING: a quantized tensor's
// memory extends to where a last row padded to a multiple of 512 elements
// would end, and the padding is zeroed, so kernels may read whole blocks of
// 512 elements past a row's end.
const MatrixRowPadding = 512

// ErrFreed is matched by the error of using a buffer after Free.
var ErrFreed = errors.New("buffer freed")

// Buffer is device memory of a backend's device (graph.Buffer): tensors are
// placed in it by a graph's allocation or by AllocTensors. Its Read and
// Write wait for the work queued on the backend first.
type Buffer struct {
	be   *Backend
	ptr  vendorapi.DevicePtr
	size uint64

	work bool // the backend's compute buffer

	mu    sync.Mutex
	freed bool
}

var _ graph.Buffer = (*Buffer)(nil)

// Alloc returns size bytes of device memory (at least one byte).
func (b *Backend) Alloc(size uint64) (*Buffer, error) {
	p, err := b.drv.Malloc(b.dev, max(size, 1))
	if err != nil {
		return nil, fmt.Errorf("ternion: backend %s: a %d-byte buffer: %w", b.name, size, err)
	}
	return &Buffer{be: b, ptr: p, size: size}, nil
}

// Device returns the device index within the backend's driver.
func (m *Buffer) Device() int { return m.be.dev }

// Backend returns the backend the buffer belongs to.
func (m *Buffer) Backend() *Backend { return m.be }

// Ptr returns the buffer's device address.
func (m *Buffer) Ptr() vendorapi.DevicePtr { return m.ptr }

// Size returns the buffer's size in bytes.
func (m *Buffer) Size() uint64 { return m.size }

// Freed reports whether Free was called.
func (m *Buffer) Freed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freed
}

// check returns an error unless [off, off+n) lies in the live buffer.
func (m *Buffer) check(off, n uint64) error {
	if m.Freed() {
		return fmt.Errorf("ternion: backend %s: %w", m.be.name, ErrFreed)
	}
	if off > m.size || n > m.size-off {
		return fmt.Errorf("ternion: backend %s: %d bytes at offset %d of a %d-byte buffer: %w", m.be.name, n, off, m.size,
			vendorapi.ErrInvalidValue)
	}
	return nil
}

// Read copies len(dst) bytes at offset off into dst, after the work queued
// on the backend. Like Synchronize, it returns the bad inputs kernels found
// on the device since the last Synchronize (an error matching ErrBadIndex)
// instead of reading results they made.
func (m *Buffer) Read(off uint64, dst []byte) error {
	if err := m.check(off, uint64(len(dst))); err != nil {
		return err
	}
	if err := m.be.Synchronize(); err != nil {
		return err
	}
	return m.be.drv.CopyDtoH(m.be.dev, dst, m.ptr.Add(off))
}

// Write copies src to offset off, after the work queued on the backend.
func (m *Buffer) Write(off uint64, src []byte) error {
	if err := m.check(off, uint64(len(src))); err != nil {
		return err
	}
	if err := m.be.sync(); err != nil {
		return err
	}
	return m.be.drv.CopyHtoD(m.be.dev, m.ptr.Add(off), src)
}

// Clear sets every byte of the buffer to v, queued on the backend's stream.
func (m *Buffer) Clear(v byte) error {
	if err := m.check(0, m.size); err != nil {
		return err
	}
	return m.be.drv.MemsetAsync(m.be.stream, m.ptr, v, m.size)
}

// Free returns the memory to the driver after the work queued on the
// backend; freeing twice is an error matching ErrFreed.
func (m *Buffer) Free() error {
	m.mu.Lock()
	if m.freed {
		m.mu.Unlock()
		return fmt.Errorf("ternion: backend %s: %w", m.be.name, ErrFreed)
	}
	m.freed = true
	m.mu.Unlock()
	if err := m.be.sync(); err != nil {
		return err
	}
	return m.be.drv.Free(m.be.dev, m.ptr)
}

// AllocSize is the memory tensor t needs in this backend's buffers: its
// bytes, plus for a quantized type the padding of its last row to a multiple
// of MatrixRowPadding elements (the seed's get_alloc_size).
func AllocSize(t *graph.Tensor) uint64 {
	l := t.Layout()
	size := uint64(l.Bytes())
	if l.Type.IsQuantized() && l.Ne[0]%MatrixRowPadding != 0 {
		size += uint64(l.Type.RowSize(MatrixRowPadding - l.Ne[0]%MatrixRowPadding))
	}
	return size
}

// AllocTensors places leaf tensors (weights, caches) in one new buffer of
// this backend, each at a multiple of Alignment, zeroes every quantized
// tensor's row padding and uploads the tensors' host data (FromFloats,
// FromBytes). The tensors stay there for every graph that reads them.
func (b *Backend) AllocTensors(ts ...*graph.Tensor) (*Buffer, error) {
	offs, sizes := make([]uint64, len(ts)), make([]uint64, len(ts))
	var total uint64
	for i, t := range ts {
		switch {
		case t == nil || t.Failed():
			return nil, fmt.Errorf("ternion: AllocTensors: tensor %d is nil or from a failed op", i)
		case t.ViewSrc() != nil:
			return nil, fmt.Errorf("ternion: AllocTensors: %s is a view: place its source", t)
		}
		if _, placed := t.Placement(); placed {
			return nil, fmt.Errorf("ternion: AllocTensors: %s is already placed", t)
		}
		offs[i], sizes[i] = total, AllocSize(t)
		total += align.Up(sizes[i], Alignment)
	}
	buf, err := b.Alloc(total)
	if err != nil {
		return nil, err
	}
	for i, t := range ts {
		if err := t.Place(buf, offs[i]); err != nil {
			_ = buf.Free()
			return nil, err
		}
		if pad := sizes[i] - uint64(t.Layout().Bytes()); pad > 0 {
			if err := b.drv.MemsetAsync(b.stream, buf.ptr.Add(offs[i]+uint64(t.Layout().Bytes())), 0, pad); err != nil {
				_ = buf.Free()
				return nil, err
			}
		}
		if h := t.HostData(); h != nil {
			if err := buf.Write(offs[i], h); err != nil {
				_ = buf.Free()
				return nil, err
			}
		}
	}
	return buf, b.sync()
}

// placed returns the backend buffer t is placed in and t's offset there, or
// why t is not in one.
func placed(t *graph.Tensor) (*Buffer, uint64, error) {
	p, ok := t.Placement()
	if !ok {
		return nil, 0, fmt.Errorf("%s is not allocated", t)
	}
	buf, ok := p.Buf.(*Buffer)
	if !ok {
		return nil, 0, fmt.Errorf("%s is in a %T, not a backend buffer", t, p.Buf)
	}
	return buf, p.Offset, nil
}

// usable returns nil when t's memory is a live buffer of this backend's
// device that holds all of t, else why not.
func (b *Backend) usable(t *graph.Tensor) error {
	if m, st := splitOf(t); m != nil {
		switch {
		case st == nil || t.ViewSrc() != nil:
			return fmt.Errorf("%s is a view of a split tensor", t)
		case t.Op() != graph.OpNone:
			return fmt.Errorf("%s is computed into a split buffer: only weights (leaves) are split", t)
		case m.Freed():
			return fmt.Errorf("%s is in a freed split buffer", t)
		}
		return nil // where it is read, Supports checks (supportsSplit)
	}
	buf, off, err := placed(t)
	if err != nil {
		return err
	}
	if buf.be.drv != b.drv || buf.be.dev != b.dev {
		return fmt.Errorf("%s is in a buffer of %s, not of %s", t, buf.be.name, b.name)
	}
	if buf.Freed() {
		return fmt.Errorf("%s is in a freed buffer", t)
	}
	if end := off + uint64(t.Layout().Bytes()); end > buf.size {
		return fmt.Errorf("%s ends at byte %d of a %d-byte buffer", t, end, buf.size)
	}
	return nil
}

// CopyTensor copies src's memory into dst's: two tensors of one type and
// shape, both contiguous, each in a buffer of any backend (devices may
// differ: the copy goes device to device, through the driver's peer copy).
// It waits for the work queued on both backends first and returns when the
// copy is done.
func CopyTensor(dst, src *graph.Tensor) error {
	if dst.Type() != src.Type() || dst.Ne() != src.Ne() {
		return fmt.Errorf("ternion: CopyTensor: %s into %s: type and shape must match", src, dst)
	}
	if !dst.Layout().IsContiguous() || !src.Layout().IsContiguous() {
		return fmt.Errorf("ternion: CopyTensor: %s into %s: both must be contiguous", src, dst)
	}
	buffer := func(t *graph.Tensor) (*Buffer, uint64, error) {
		m, off, err := placed(t)
		if err != nil {
			return nil, 0, fmt.Errorf("ternion: CopyTensor: %w", err)
		}
		return m, off, m.check(off, uint64(t.Layout().Bytes()))
	}
	dm, doff, err := buffer(dst)
	if err != nil {
		return err
	}
	sm, soff, err := buffer(src)
	if err != nil {
		return err
	}
	if dm.be.drv != sm.be.drv {
		return fmt.Errorf("ternion: CopyTensor: %s (%s) into %s (%s): devices of different vendors", src, sm.be.name, dst, dm.be.name)
	}
	if err := errors.Join(sm.be.sync(), dm.be.sync()); err != nil {
		return err
	}
	n := uint64(src.Layout().Bytes())
	if dm.be.dev == sm.be.dev {
		return dm.be.drv.CopyDtoD(dm.be.dev, dm.ptr.Add(doff), sm.ptr.Add(soff), n)
	}
	return dm.be.drv.CopyPeer(dm.be.dev, dm.ptr.Add(doff), sm.be.dev, sm.ptr.Add(soff), n)
}
