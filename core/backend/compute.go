package backend

import (
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/vendorapi"
)

// Compute runs g on the backend. Before anything is queued it checks that
// every node can run here (ops.Supports: an unsupported node is an error
// naming op, types and reason), that the indices it uploads are in range
// (ops.CheckIndices: a MUL_MAT_ID's ids, an error matching ErrBadIndex;
// indices computed on the device are checked by the kernels and reported by
// Synchronize) and that every tensor placed by hand (weights) is in a live
// buffer of this device. It then places the graph's other
// tensors in the backend's compute buffer (growing it when the graph needs
// more), uploads the inputs' host data through pinned staging, and queues
// every node on the backend's stream. It returns once the work is queued;
// reading an output (Tensor.Floats, Bytes) waits for it. Outputs stay valid
// until the next Compute. A failed Compute leaves the backend usable.
// Computing the graph computed last again, with nothing moved, skips the
// checks, the allocation and the uploads and replays its launches
// (prepared.go). The launches go through GPU graphs when the capture policy
// says so (graphs.go): Backend.GraphStats counts its decisions.
func (b *Backend) Compute(g *graph.Graph) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("ternion: backend %s: %w", b.name, ErrClosed)
	}
	if !b.last.ready(g, b.work) {
		if err := b.prepare(g); err != nil {
			return err
		}
	}
	return b.launchGraph(g)
}

// prepare checks g, places it in the compute buffer and uploads its inputs.
func (b *Backend) prepare(g *graph.Graph) error {
	b.last = nil
	if err := b.SupportsGraph(g); err != nil {
		return fmt.Errorf("ternion: backend %s: %w", b.name, err)
	}
	plan, err := g.Plan(graph.AllocOptions{Align: Alignment, Size: AllocSize, Scratch: b.isWork})
	if err != nil {
		return err
	}
	// Indices this call uploads are checked now (ops.CheckIndices); those
	// computed on the device or written there by hand, by the kernels
	// (the device error word, Synchronize).
	uploaded := func(t *graph.Tensor) []byte {
		if _, planned := plan.Offsets[t]; planned && t.Op() == graph.OpNone {
			return t.HostData()
		}
		return nil
	}
	for _, n := range g.Nodes() {
		if err := ops.CheckIndices(n, uploaded); err != nil {
			return fmt.Errorf("ternion: backend %s: %w", b.name, err)
		}
	}
	if err := b.growWork(plan.Size); err != nil {
		return err
	}
	if err := plan.Apply(b.work); err != nil {
		return err
	}
	for _, t := range append(append([]*graph.Tensor(nil), g.Leafs()...), g.Nodes()...) {
		if err := b.usable(t); err != nil {
			return fmt.Errorf("ternion: backend %s: %w", b.name, err)
		}
	}
	var dsts []vendorapi.DevicePtr
	var srcs [][]byte
	for _, l := range g.Leafs() {
		if _, planned := plan.Offsets[l]; planned && l.HostData() != nil {
			p, _ := l.Data()
			dsts, srcs = append(dsts, p), append(srcs, l.HostData())
		}
	}
	if err := b.staging.upload(dsts, srcs); err != nil {
		return fmt.Errorf("ternion: backend %s: uploading inputs: %w", b.name, err)
	}
	return nil
}

// runEager queues g's nodes on the stream one launch at a time: when g is
// the prepared graph with nothing moved (b.last) its recorded launches
// again, otherwise every node through its op, recording them for next time.
func (b *Backend) runEager(g *graph.Graph) error {
	if b.last.ready(g, b.work) {
		return b.replay(g)
	}
	b.last = nil
	p := newPrepared(g, b.work)
	b.cpy.next = 0
	defer func() { b.rec = nil }()
	for i, nodes := 0, g.Nodes(); i < len(nodes); {
		b.rec = &p.nodes[i] // a fused chain's launches are its first node's
		k, err := b.runNode(p.plan, i)
		if err != nil {
			return fmt.Errorf("ternion: backend %s: %w", b.name, err)
		}
		i += k
	}
	b.last = p
	return nil
}

// isWork reports whether buf is this backend's compute buffer (graph tensors
// placed there are placed again by each Compute).
func (b *Backend) isWork(buf graph.Buffer) bool {
	m, ok := buf.(*Buffer)
	return ok && m.be == b && m.work
}

// growWork makes the compute buffer at least size bytes.
func (b *Backend) growWork(size uint64) error {
	if b.work != nil && b.work.size >= size {
		return nil
	}
	if b.work != nil {
		if err := b.work.Free(); err != nil {
			return err
		}
		b.work = nil
	}
	buf, err := b.Alloc(size)
	if err != nil {
		return err
	}
	buf.work = true
	b.work = buf
	b.log.Debug(fmt.Sprintf("ternion: backend %s: compute buffer %d bytes", b.name, size))
	return nil
}
