package backend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/vendorapi"
)

// cpyptrs.go is the seed's CPY pointer indirection (cpy_dest_ptrs): each
// call, before any of its launches, the backend writes the destination
// address of every CPY node of the graph (those ops.CopyIndirect accepts,
// in node order) into a device array with one asynchronous copy on its
// stream, outside any capture. The copy kernels of those nodes read their
// destination from their word of the array (ops.CopySlots) when they run,
// so an executable graph replayed after the destinations moved (a KV-cache
// write one row further each token) writes where they are now: the capture
// policy leaves CPY destinations out of the properties it compares
// (capture.Options.CopyIndirection) and the graph replays without an update.

// cpyRing is how many copies of the pointer array the pinned staging
// holds: the upload of a call writes the copy the upload cpyRing calls
// before read, which has long completed unless the host runs that far ahead
// of the device (then it waits for it).
const cpyRing = 4

// cpyMin is the device array's smallest capacity, in pointers.
const cpyMin = 64

// cpyPtrs is a backend's CPY pointer array and its staging.
type cpyPtrs struct {
	on bool // CPY destinations go through the array (graphs can be captured and indirection is on)

	arr   vendorapi.DevicePtr // the device array; 0 until a graph has a CPY
	cap   int                 // the pointers arr and each staging copy hold
	nodes []*graph.Tensor     // this call's CPY nodes: node i's destination is in word i of arr
	next  int                 // the index CopySlot expects to be asked next

	host    vendorapi.HostBuffer // pinned staging: cpyRing copies of cap pointers
	done    [cpyRing]vendorapi.Event
	pending [cpyRing]bool // done[k] was recorded after an upload from copy k
	turn    int           // the copy the next upload writes
	words   []byte        // pageable staging, without pinned memory
	warned  bool
}

// CopySlot returns the address of the word of the backend's CPY pointer
// array holding CPY node n's destination for the graph being computed, or 0
// when n takes its destination directly (ops.CopySlots). Ops call it under
// the Compute lock.
func (b *Backend) CopySlot(n *graph.Tensor) vendorapi.DevicePtr {
	c := &b.cpy
	i := c.next
	if i >= len(c.nodes) || c.nodes[i] != n {
		if i = slices.Index(c.nodes, n); i < 0 {
			return 0
		}
	}
	c.next = i + 1
	return c.arr.Add(uint64(8 * i))
}

// usesCopyPtrs returns the array the current call's launches read (0 when
// none do), which an executable graph made now reads at every replay.
func (c *cpyPtrs) usesCopyPtrs() vendorapi.DevicePtr {
	if len(c.nodes) == 0 {
		return 0
	}
	return c.arr
}

// refreshCopyPtrs collects the CPY nodes of nodes and queues the upload of
// their destination addresses to the array, growing it when they do not
// fit. Call it before the call's first launch and outside any capture.
func (b *Backend) refreshCopyPtrs(nodes []*graph.Tensor) error {
	c := &b.cpy
	clear(c.nodes)
	c.nodes, c.next = c.nodes[:0], 0
	if !c.on {
		return nil
	}
	for _, n := range nodes {
		if n.Op() == graph.OpCpy && ops.CopyIndirect(n) {
			c.nodes = append(c.nodes, n)
		}
	}
	if len(c.nodes) == 0 {
		return nil
	}
	if err := b.growCopyPtrs(len(c.nodes)); err != nil {
		c.nodes = c.nodes[:0]
		return fmt.Errorf("ternion: backend %s: the CPY pointer array: %w", b.name, err)
	}
	if err := b.uploadCopyPtrs(); err != nil {
		c.nodes = c.nodes[:0]
		return fmt.Errorf("ternion: backend %s: uploading the CPY pointer array: %w", b.name, err)
	}
	return nil
}

// growCopyPtrs makes the array and its staging hold at least n pointers.
// A new array has other addresses: the recorded launches of the prepared
// graph are dropped, and executable graphs made with the old one are
// captured again before they replay (launchGraph compares execGraph.ptrs).
func (b *Backend) growCopyPtrs(n int) error {
	c := &b.cpy
	if n <= c.cap {
		return nil
	}
	size := max(n, 2*c.cap, cpyMin)
	if err := c.waitAll(b.drv); err != nil {
		return err
	}
	var errs []error
	if c.host.Ptr != 0 {
		errs = append(errs, b.drv.HostFree(c.host))
		c.host = vendorapi.HostBuffer{}
	}
	if c.arr != 0 {
		errs = append(errs, b.drv.Free(b.dev, c.arr)) // after the work queued that reads it
		c.arr, c.cap = 0, 0
	}
	b.last = nil
	if err := errors.Join(errs...); err != nil {
		return err
	}
	arr, err := b.drv.Malloc(b.dev, uint64(8*size))
	if err != nil {
		return err
	}
	c.arr, c.cap = arr, size
	if !b.staging.pinned {
		return nil
	}
	for k := range c.done {
		if c.done[k].Handle == 0 {
			if c.done[k], err = b.drv.EventCreate(b.dev, false); err != nil {
				c.done[k] = vendorapi.Event{}
				return err // uploads are synchronous until the array grows again
			}
		}
	}
	if c.host, err = b.drv.HostAlloc(uint64(8 * size * cpyRing)); err != nil {
		c.host = vendorapi.HostBuffer{}
		if !c.warned {
			b.log.Warn(fmt.Sprintf("ternion: backend %s: no pinned staging for the CPY pointer array (%v); it is uploaded synchronously", b.name, err))
			c.warned = true
		}
	}
	return nil
}

// uploadCopyPtrs queues the copy of the nodes' destination addresses to the
// array on the backend's stream: from the next copy of the pinned staging,
// or, without one, synchronously once the stream is idle.
func (b *Backend) uploadCopyPtrs() error {
	c := &b.cpy
	n := 8 * len(c.nodes)
	if c.host.Ptr == 0 {
		if err := b.sync(); err != nil { // the launches queued before read the array
			return err
		}
		c.words = slices.Grow(c.words[:0], n)[:n]
		c.fill(c.words)
		return b.drv.CopyHtoD(b.dev, c.arr, c.words)
	}
	k := c.turn
	c.turn = (k + 1) % cpyRing
	if c.pending[k] {
		c.pending[k] = false
		if err := b.drv.EventSynchronize(c.done[k]); err != nil {
			return err
		}
	}
	off := 8 * c.cap * k
	c.fill(c.host.Bytes()[off : off+n])
	if err := b.drv.CopyHtoDAsync(b.stream, c.arr, vendorapi.HostBuffer{Ptr: c.host.Ptr + uintptr(off), Size: uint64(n)}); err != nil {
		return err
	}
	if err := b.drv.EventRecord(c.done[k], b.stream); err != nil {
		return err
	}
	c.pending[k] = true
	return nil
}

// fill writes the nodes' destination addresses to dst, 8 bytes each (dst
// holds 8*len(c.nodes) bytes).
func (c *cpyPtrs) fill(dst []byte) {
	for i, n := range c.nodes {
		p, _ := n.Data()
		binary.LittleEndian.PutUint64(dst[8*i:], uint64(p))
	}
}

// waitAll waits for every upload from the pinned staging.
func (c *cpyPtrs) waitAll(d vendorapi.Driver) error {
	var errs []error
	for k := range c.pending {
		if c.pending[k] {
			c.pending[k] = false
			errs = append(errs, d.EventSynchronize(c.done[k]))
		}
	}
	return errors.Join(errs...)
}

// closeCopyPtrs releases the array, its staging and events (Close).
func (b *Backend) closeCopyPtrs() error {
	c := &b.cpy
	errs := []error{c.waitAll(b.drv)}
	if c.host.Ptr != 0 {
		errs = append(errs, b.drv.HostFree(c.host))
		c.host = vendorapi.HostBuffer{}
	}
	for k := range c.done {
		if c.done[k].Handle != 0 {
			errs = append(errs, b.drv.EventDestroy(c.done[k]))
			c.done[k] = vendorapi.Event{}
		}
	}
	if c.arr != 0 {
		errs = append(errs, b.drv.Free(b.dev, c.arr))
		c.arr, c.cap = 0, 0
	}
	c.nodes = nil
	return errors.Join(errs...)
}
