package backend

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/split"
	"github.com/ternion/ternion/internal/align"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// split.go is the split buffer type (the seed's ggml_backend_cuda_split_buffer):
// a weight matrix whose rows are spread over every device of the backend's
// driver by a tensor split (core/split), each device holding its rows (and
// the padding of its last row) in memory of its own. Only MUL_MAT reads a
// split tensor, as src0 (splitmm.go); the backend whose AllocSplit made the
// buffer is the main device, which holds src1 and dst and gathers the
// result.

// Split returns the tensor split the backend's split buffers use:
// Options.TensorSplit, else TERNION_TENSOR_SPLIT, else the split by each
// device's total memory. Proportions that name more devices than the driver
// has, are negative or non-finite, or do not sum to a positive value are an
// error (split.ErrBadSplit; a malformed variable is a switches.Error).
func (b *Backend) Split() (*split.Split, error) {
	props, src := b.opts.TensorSplit, split.ByOption
	if props == nil {
		v, set, err := switches.Get(b.opts.Env, switches.TensorSplit)
		if err != nil {
			return nil, fmt.Errorf("ternion: backend %s: %w", b.name, err)
		}
		if set {
			props, src = v, split.Source(switches.TensorSplit.Name)
		}
	}
	s, err := split.ForDriver(b.drv, props)
	if err != nil {
		return nil, fmt.Errorf("ternion: backend %s: tensor split (%s): %w", b.name, src, err)
	}
	if props != nil {
		s = s.WithSource(src)
	}
	return s, nil
}

// SplitBuffer holds tensors split by rows over the devices of a backend's
// driver (graph.Buffer). Its address space is virtual: Ptr is 0 and a split
// tensor's Data is never an address a kernel may use; Read and Write
// gather and scatter the rows between the devices. It stays valid until
// Free.
type SplitBuffer struct {
	be      *Backend
	split   *split.Split
	size    uint64
	tensors []*splitTensor
	bytes   []uint64 // per device

	mu    sync.Mutex
	freed bool
}

var _ graph.Buffer = (*SplitBuffer)(nil)

// splitTensor is one tensor of a split buffer: its rows per device and
// where each device holds them.
type splitTensor struct {
	t        *graph.Tensor
	off      uint64 // in the buffer's virtual address space
	bytes    uint64 // the tensor's bytes (all rows)
	rowBytes uint64
	rows     []split.Range
	ptrs     []vendorapi.DevicePtr // per device; 0 where it has no rows
}

// CanSplit returns "" when t can be placed in a split buffer, else why
// not: a split tensor is a contiguous matrix (ne[2] = ne[3] = 1, as the
// seed's row-split mul_mat asserts), a leaf (not computed, not a view),
// not placed yet.
func CanSplit(t *graph.Tensor) string {
	switch {
	case t == nil || t.Failed():
		return "a nil tensor or one from a failed op"
	case t.ViewSrc() != nil:
		return fmt.Sprintf("%s is a view: only whole tensors are split", t)
	case t.Op() != graph.OpNone:
		return fmt.Sprintf("%s is computed (%s): only leaves (weights) are split", t, t.Op())
	case !t.Layout().IsContiguous():
		return fmt.Sprintf("%s is not contiguous: split tensors are", t)
	case t.Dim(2) != 1 || t.Dim(3) != 1:
		return fmt.Sprintf("%s is a batch of matrices (ne[2]=%d, ne[3]=%d): only a matrix is split by rows", t, t.Dim(2), t.Dim(3))
	}
	if _, placed := t.Placement(); placed {
		return fmt.Sprintf("%s is already placed", t)
	}
	return ""
}

// AllocSplit places leaf tensors (weight matrices) in a new split buffer:
// each device of the backend's driver gets its rows of each tensor by the
// backend's Split, rounded as the seed rounds them, in memory of its own
// with the last row padded to a multiple of 512 elements and the padding
// zeroed; the tensors' host data (FromFloats, FromBytes) is uploaded. The
// memory every device needs is checked against its free memory before
// anything is allocated.
func (b *Backend) AllocSplit(ts ...*graph.Tensor) (*SplitBuffer, error) {
	fail := func(format string, args ...any) (*SplitBuffer, error) {
		return nil, fmt.Errorf("ternion: backend %s: AllocSplit: "+format, append([]any{b.name}, args...)...)
	}
	s, err := b.Split()
	if err != nil {
		return nil, err
	}
	n := s.Devices()
	splitEver.Store(true)
	m := &SplitBuffer{be: b, split: s, bytes: make([]uint64, n)}
	for i, t := range ts {
		if why := CanSplit(t); why != "" {
			return fail("tensor %d: %s", i, why)
		}
		st := &splitTensor{t: t, off: m.size, bytes: uint64(t.Layout().Bytes()), rowBytes: uint64(t.Layout().RowSize()),
			rows: s.Rows(t.Type(), t.Dim(1)), ptrs: make([]vendorapi.DevicePtr, n)}
		for dev, r := range st.rows {
			m.bytes[dev] += split.DeviceBytes(t.Type(), t.Dim(0), r.Rows())
		}
		m.tensors = append(m.tensors, st)
		m.size += align.Up(max(st.bytes, 1), Alignment)
	}
	for dev, need := range m.bytes {
		if need == 0 {
			continue
		}
		free, _, err := b.drv.MemInfo(dev)
		if err != nil {
			return fail("device %d: %w", dev, err)
		}
		if need > free {
			return fail("device %d holds %d bytes of the split (%s) and has %d free: %w", dev, need, s, free, vendorapi.ErrOutOfMemory)
		}
	}
	for _, st := range m.tensors {
		if err := m.allocTensor(st); err != nil {
			_ = m.release()
			return fail("%s: %w", st.t, err)
		}
	}
	for _, st := range m.tensors {
		if err := st.t.Place(m, st.off); err != nil {
			_ = m.release()
			return fail("%w", err)
		}
		if h := st.t.HostData(); h != nil {
			if err := m.Write(st.off, h); err != nil {
				_ = m.release()
				return fail("uploading %s: %w", st.t, err)
			}
		}
	}
	return m, nil
}

// allocTensor allocates each device's rows of st and zeroes their padding.
func (m *SplitBuffer) allocTensor(st *splitTensor) error {
	drv := m.be.drv
	for dev, r := range st.rows {
		size := split.DeviceBytes(st.t.Type(), st.t.Dim(0), r.Rows())
		if size == 0 {
			continue
		}
		p, err := drv.Malloc(dev, size)
		if err != nil {
			return fmt.Errorf("device %d: %d bytes: %w", dev, size, err)
		}
		st.ptrs[dev] = p
		if data := uint64(r.Rows()) * st.rowBytes; size > data {
			if err := drv.Memset(dev, p.Add(data), 0, size-data); err != nil {
				return fmt.Errorf("device %d: zeroing the row padding: %w", dev, err)
			}
		}
	}
	return nil
}

// Device returns the main device's index (the backend that made the buffer).
func (m *SplitBuffer) Device() int { return m.be.dev }

// Backend returns the backend that made the buffer (the main device).
func (m *SplitBuffer) Backend() *Backend { return m.be }

// Ptr returns 0: a split buffer has no address (the seed's dummy base).
func (m *SplitBuffer) Ptr() vendorapi.DevicePtr { return 0 }

// Size returns the size of the buffer's virtual address space: every
// tensor's bytes, each aligned to Alignment.
func (m *SplitBuffer) Size() uint64 { return m.size }

// Split returns the tensor split the buffer was made with.
func (m *SplitBuffer) Split() *split.Split { return m.split }

// DeviceBytes returns the device memory the buffer holds on each device of
// the driver (every tensor's rows there and their padding, one allocation
// each): its memory accounting.
func (m *SplitBuffer) DeviceBytes() []uint64 { return append([]uint64(nil), m.bytes...) }

// Rows returns each device's rows of t, a tensor of the buffer.
func (m *SplitBuffer) Rows(t *graph.Tensor) ([]split.Range, error) {
	st, err := m.tensorOf(t)
	if err != nil {
		return nil, err
	}
	return append([]split.Range(nil), st.rows...), nil
}

// Slice returns where device dev holds its rows of t, and which rows they
// are (a zero pointer when it holds none).
func (m *SplitBuffer) Slice(t *graph.Tensor, dev int) (vendorapi.DevicePtr, split.Range, error) {
	st, err := m.tensorOf(t)
	if err != nil {
		return 0, split.Range{}, err
	}
	if dev < 0 || dev >= len(st.ptrs) {
		return 0, split.Range{}, fmt.Errorf("ternion: backend %s: split buffer: device %d does not exist (have %d): %w",
			m.be.name, dev, len(st.ptrs), vendorapi.ErrInvalidValue)
	}
	return st.ptrs[dev], st.rows[dev], nil
}

// Freed reports whether Free was called.
func (m *SplitBuffer) Freed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freed
}

func (m *SplitBuffer) tensorOf(t *graph.Tensor) (*splitTensor, error) {
	for _, st := range m.tensors {
		if st.t == t {
			return st, nil
		}
	}
	return nil, fmt.Errorf("ternion: backend %s: %s is not in this split buffer", m.be.name, t)
}

// span returns the tensor whose bytes hold [off, off+n), or an error.
func (m *SplitBuffer) span(off, n uint64) (*splitTensor, error) {
	if m.Freed() {
		return nil, fmt.Errorf("ternion: backend %s: split buffer: %w", m.be.name, ErrFreed)
	}
	for _, st := range m.tensors {
		if off >= st.off && off+n <= st.off+st.bytes && off+n >= off {
			return st, nil
		}
	}
	return nil, fmt.Errorf("ternion: backend %s: split buffer: %d bytes at offset %d are not within one tensor: %w",
		m.be.name, n, off, vendorapi.ErrInvalidValue)
}

// copyRows calls f for each device's part of the tensor bytes [lo, hi):
// the device, the address there, and the part's range in [lo, hi).
func (st *splitTensor) copyRows(lo, hi uint64, f func(dev int, p vendorapi.DevicePtr, from, to uint64) error) error {
	for dev, r := range st.rows {
		a, z := max(lo, uint64(r.Lo)*st.rowBytes), min(hi, uint64(r.Hi)*st.rowBytes)
		if a >= z {
			continue
		}
		if err := f(dev, st.ptrs[dev].Add(a-uint64(r.Lo)*st.rowBytes), a-lo, z-lo); err != nil {
			return fmt.Errorf("device %d: %w", dev, err)
		}
	}
	return nil
}

// Read copies len(dst) bytes at offset off (within one tensor) into dst,
// from the devices holding those rows, after the work queued on them.
func (m *SplitBuffer) Read(off uint64, dst []byte) error {
	return m.transfer(off, uint64(len(dst)), func(dev int, p vendorapi.DevicePtr, from, to uint64) error {
		return m.be.drv.CopyDtoH(dev, dst[from:to], p)
	})
}

// Write copies src to offset off (within one tensor), to the devices
// holding those rows, after the work queued on them.
func (m *SplitBuffer) Write(off uint64, src []byte) error {
	return m.transfer(off, uint64(len(src)), func(dev int, p vendorapi.DevicePtr, from, to uint64) error {
		return m.be.drv.CopyHtoD(dev, p, src[from:to])
	})
}

// transfer runs copy over the device pieces of bytes [off, off+n) of one
// tensor, after the work queued on every device.
func (m *SplitBuffer) transfer(off, n uint64, copy func(dev int, p vendorapi.DevicePtr, from, to uint64) error) error {
	st, err := m.span(off, n)
	if err != nil {
		return err
	}
	if err := m.be.syncDevices(); err != nil {
		return err
	}
	lo := off - st.off
	return st.copyRows(lo, lo+n, copy)
}

// Free returns every device's memory after the work queued on the
// devices; freeing twice is an error matching ErrFreed.
func (m *SplitBuffer) Free() error {
	m.mu.Lock()
	if m.freed {
		m.mu.Unlock()
		return fmt.Errorf("ternion: backend %s: split buffer: %w", m.be.name, ErrFreed)
	}
	m.freed = true
	m.mu.Unlock()
	if err := m.be.syncDevices(); err != nil {
		return err
	}
	return m.release()
}

// release frees every device allocation made so far.
func (m *SplitBuffer) release() error {
	var errs []error
	for _, st := range m.tensors {
		for dev, p := range st.ptrs {
			if p != 0 {
				errs = append(errs, m.be.drv.Free(dev, p))
				st.ptrs[dev] = 0
			}
		}
	}
	return errors.Join(errs...)
}

// splitOf returns the split buffer t's memory is in and t's tensor there
// (nil when t is not in one). A view of a split tensor is in it too.
func splitOf(t *graph.Tensor) (*SplitBuffer, *splitTensor) {
	p, ok := t.Placement()
	if !ok {
		return nil, nil
	}
	m, ok := p.Buf.(*SplitBuffer)
	if !ok {
		return nil, nil
	}
	root := t
	if t.ViewSrc() != nil {
		root = t.ViewSrc()
	}
	for _, st := range m.tensors {
		if st.t == root {
			return m, st
		}
	}
	return m, nil
}

// splitEver is set once a split buffer has been made in this process: until
// then no tensor can be placed in one, and readsSplit answers at once (the
// capture policy asks it of every node of every Compute).
var splitEver atomic.Bool

// readsSplit reports whether node n reads a tensor in a split buffer (the
// capture policy's IsSplit).
func readsSplit(n *graph.Tensor) bool {
	if !splitEver.Load() {
		return false
	}
	for i := range graph.MaxSrc {
		if s := n.Src(i); s != nil {
			if m, _ := splitOf(s); m != nil {
				return true
			}
		}
	}
	return false
}

// multiDevice is what a main device keeps for split ops: a backend per
// other device (its stream, pool, BLAS handle and kernels, made on first
// use) and the events that order the devices' streams.
type multiDevice struct {
	mu     sync.Mutex
	others map[int]*Backend
	ready  vendorapi.Event         // on the main device: src1 is ready
	done   map[int]vendorapi.Event // per other device: its part is done
}

// deviceBackend returns the backend that runs split work on device dev:
// b itself for its own device.
func (b *Backend) deviceBackend(dev int) (*Backend, error) {
	if dev == b.dev {
		return b, nil
	}
	b.multi.mu.Lock()
	defer b.multi.mu.Unlock()
	if o, ok := b.multi.others[dev]; ok {
		return o, nil
	}
	o, err := New(b.drv, dev, Options{Logger: b.log, Env: b.opts.Env})
	if err != nil {
		return nil, fmt.Errorf("device %d for a split op: %w", dev, err)
	}
	if b.multi.others == nil {
		b.multi.others = map[int]*Backend{}
	}
	b.multi.others[dev] = o
	return o, nil
}

// syncDevices waits for the work queued on the backend and on the other
// devices' backends of its split ops.
func (b *Backend) syncDevices() error {
	errs := []error{b.Synchronize()}
	b.multi.mu.Lock()
	defer b.multi.mu.Unlock()
	for _, o := range b.multi.others {
		errs = append(errs, o.Synchronize())
	}
	return errors.Join(errs...)
}

// splitEvent returns the event of key dev (−1: the main device's ready
// event), made on first use.
func (b *Backend) splitEvent(dev int) (vendorapi.Event, error) {
	b.multi.mu.Lock()
	defer b.multi.mu.Unlock()
	if dev < 0 {
		if b.multi.ready == (vendorapi.Event{}) {
			e, err := b.drv.EventCreate(b.dev, false)
			if err != nil {
				return vendorapi.Event{}, err
			}
			b.multi.ready = e
		}
		return b.multi.ready, nil
	}
	if e, ok := b.multi.done[dev]; ok {
		return e, nil
	}
	e, err := b.drv.EventCreate(dev, false)
	if err != nil {
		return vendorapi.Event{}, err
	}
	if b.multi.done == nil {
		b.multi.done = map[int]vendorapi.Event{}
	}
	b.multi.done[dev] = e
	return e, nil
}

// closeMulti destroys the split events and closes the other devices' backends.
func (b *Backend) closeMulti() error {
	b.multi.mu.Lock()
	defer b.multi.mu.Unlock()
	var errs []error
	if b.multi.ready != (vendorapi.Event{}) {
		errs = append(errs, b.drv.EventDestroy(b.multi.ready))
	}
	for _, e := range b.multi.done {
		errs = append(errs, b.drv.EventDestroy(e))
	}
	for _, o := range b.multi.others {
		errs = append(errs, o.Close())
	}
	b.multi.ready, b.multi.done, b.multi.others = vendorapi.Event{}, nil, nil
	return errors.Join(errs...)
}
