package backend

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/pool"
	"github.com/ternion/ternion/core/split"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// splitmm.go is the row-split MUL_MAT, the seed's ggml_cuda_op_mul_mat with
// a split src0: every device with rows multiplies its rows of src0 by src1
// on its own stream, in chunks of MulMatSrc1ColStride columns of src1 when
// more than one device takes part, and the main device (the backend that
// made the split buffer) gathers the rows of dst:
//
//  1. the main device records the ready event once src1 is there; every
//     other device's stream waits for it;
//  2. per chunk, each other device copies the chunk of src1 from the main
//     device (a peer copy), runs the row step (ops.MulMatRows: the
//     single-device mul_mat on a row range) into a temporary of its own, and
//     copies the result into its rows of dst with a 2D peer copy; the main
//     device computes its rows straight into dst;
//  3. each other device records its done event; the main stream waits for
//     them all, so later nodes see the whole dst.
//
// With TERNION_NO_PEER_COPY, or when the main device and the other cannot
// access each other, src1 and the result go through pinned host memory
// instead (device to host on one stream, an event, host to device on the
// other), and the result is placed in dst with a 2D copy on the main device.
// The seed spreads a device's chunks over 8 streams; ternion queues them in
// order on the device's one stream, which orders them without events (the
// host device runs a stream in order anyway).

// MulMatSrc1ColStride is the seed's MUL_MAT_SRC1_COL_STRIDE: with a split
// src0 over several devices, src1's columns go 128 at a time.
const MulMatSrc1ColStride = 128

// supportsSplit returns nil unless node n reads a split tensor in a way the
// row-split path cannot run: only MUL_MAT reads one, as src0, with src1 f32
// and contiguous, dst contiguous and the split made by this backend.
func (b *Backend) supportsSplit(n *graph.Tensor) error {
	if n.Op() == graph.OpNone || n.Op().IsView() {
		return nil // launches nothing; the nodes that read the view are checked
	}
	for i := range graph.MaxSrc {
		s := n.Src(i)
		if s == nil {
			continue
		}
		m, st := splitOf(s)
		if m == nil {
			continue
		}
		if why := b.splitReason(n, i, s, m, st); why != "" {
			return ops.Unsupported(n, why)
		}
	}
	return nil
}

func (b *Backend) splitReason(n *graph.Tensor, i int, s *graph.Tensor, m *SplitBuffer, st *splitTensor) string {
	switch {
	case n.Op() != graph.OpMulMat || i != 0:
		return fmt.Sprintf("src%d is a split tensor: only MUL_MAT reads one, as src0 (the seed's row split)", i)
	case st == nil || s.ViewSrc() != nil:
		return "src0 is a view of a split tensor: the row split takes whole tensors"
	case m.Freed():
		return "src0's split buffer was freed"
	case m.be != b:
		return fmt.Sprintf("src0 is split by backend %s, the main device of its split; this is %s", m.be.name, b.name)
	}
	if _, why := ops.MulMatRows(s.Type(), n.Src(1).Type()); why != "" {
		return why
	}
	switch {
	case !n.Src(1).Layout().IsContiguous():
		return "src1 is not contiguous: the row-split path copies it to the devices as it is (the seed's)"
	case n.Type() != tensor.F32 || !n.Layout().IsContiguous():
		return "dst must be contiguous f32 for the row-split path"
	}
	return ""
}

// runNode runs node i of plan (and the nodes fused with it): a MUL_MAT
// with a split src0 through the row-split path, any other through
// core/ops.
func (b *Backend) runNode(plan *ops.Plan, i int) (int, error) {
	if n := plan.Nodes()[i]; n.Op() == graph.OpMulMat {
		if m, st := splitOf(n.Src(0)); m != nil {
			b.unrecordable()
			if err := b.runSplitMulMat(n, m, st); err != nil {
				return 0, fmt.Errorf("ternion: %s with src0 split over %d devices: %w", n.Op(), m.split.Devices(), err)
			}
			return 1, nil
		}
	}
	return ops.RunFused(b, plan, i)
}

// splitDev is one device's part of a row-split MUL_MAT.
type splitDev struct {
	id    int
	be    *Backend
	rows  split.Range
	src0  vendorapi.DevicePtr
	peer  bool                // copies to and from the main device are peer copies
	src1  vendorapi.DevicePtr // src1 on the device (the main device: src1 itself)
	dst   vendorapi.DevicePtr // the device's rows of dst (other devices: a temporary)
	ldDst int64               // dst's leading dimension in elements
	host  vendorapi.HostBuffer
	bufs  []pool.Buffer // the device's temporaries, freed in reverse order
}

// runSplitMulMat queues node n (MUL_MAT, src0 the split tensor st of m).
func (b *Backend) runSplitMulMat(n *graph.Tensor, m *SplitBuffer, st *splitTensor) error {
	src1 := n.Src(1)
	rowsFn, why := ops.MulMatRows(st.t.Type(), src1.Type())
	if rowsFn == nil {
		return errors.New(why)
	}
	if err := b.setPeerAccess(src1.Dim(1)); err != nil {
		return err
	}
	src1Ptr, ok1 := src1.Data()
	dstPtr, ok2 := n.Data()
	if !ok1 || !ok2 {
		return errors.New("src1 or dst is not allocated")
	}
	ne0, ne1, ne10 := n.Dim(0), n.Dim(1), src1.Dim(0)
	batch := src1.Dim(2) * src1.Dim(3)
	noPeer := switches.On(b.opts.Env, switches.NoPeerCopy)

	var devs []*splitDev
	defer func() {
		for _, d := range devs {
			for i := len(d.bufs) - 1; i >= 0; i-- {
				_ = d.bufs[i].Free()
			}
			if d.host.Ptr != 0 {
				_ = b.drv.HostFree(d.host)
			}
		}
	}()
	var hostSrc1 vendorapi.HostBuffer
	defer func() {
		if hostSrc1.Ptr != 0 {
			_ = b.drv.HostFree(hostSrc1)
		}
	}()
	src1Bytes := uint64(src1.Layout().Bytes())
	for id, r := range st.rows {
		if r.Rows() == 0 {
			continue
		}
		d := &splitDev{id: id, rows: r, src0: st.ptrs[id], src1: src1Ptr, dst: dstPtr.Add(uint64(r.Lo) * 4), ldDst: ne0}
		devs = append(devs, d)
		var err error
		if d.be, err = b.deviceBackend(id); err != nil {
			return err
		}
		if id == b.dev {
			continue
		}
		d.peer = !noPeer && b.canAccess(id)
		p := d.be.pool
		s1, err := p.Alloc(src1Bytes)
		if err != nil {
			return fmt.Errorf("device %d: src1: %w", id, err)
		}
		d.bufs = append(d.bufs, s1)
		d.src1 = s1.Ptr
		d.ldDst = r.Rows()
		dstBytes := uint64(r.Rows() * ne1 * batch * 4)
		dt, err := p.Alloc(dstBytes)
		if err != nil {
			return fmt.Errorf("device %d: its rows of dst: %w", id, err)
		}
		d.bufs = append(d.bufs, dt)
		d.dst = dt.Ptr
		if !d.peer {
			if d.host, err = b.drv.HostAlloc(dstBytes); err != nil {
				return fmt.Errorf("device %d: staging its rows of dst: %w", id, err)
			}
			if hostSrc1.Ptr == 0 {
				if hostSrc1, err = b.drv.HostAlloc(src1Bytes); err != nil {
					return fmt.Errorf("staging src1: %w", err)
				}
			}
		}
	}
	multi, cross := len(devs) > 1, false
	for _, d := range devs {
		cross = cross || d.id != b.dev
	}
	if cross {
		if hostSrc1.Ptr != 0 {
			if err := b.drv.CopyDtoHAsync(b.stream, hostSrc1, src1Ptr); err != nil {
				return fmt.Errorf("src1 to the host: %w", err)
			}
		}
		ready, err := b.splitEvent(-1)
		if err != nil {
			return err
		}
		if err := b.drv.EventRecord(ready, b.stream); err != nil {
			return err
		}
		for _, d := range devs {
			if d.id == b.dev {
				continue
			}
			if err := b.drv.StreamWaitEvent(d.be.stream, ready); err != nil {
				return fmt.Errorf("device %d: %w", d.id, err)
			}
			if !d.peer {
				if err := b.drv.CopyHtoDAsync(d.be.stream, d.src1, hostSrc1); err != nil {
					return fmt.Errorf("device %d: src1 from the host: %w", d.id, err)
				}
			}
		}
	}
	stride := ne1
	if multi {
		stride = MulMatSrc1ColStride
	}
	at := st.t.Type()
	aNb := tensor.RowMajorStrides(at, [4]int64{st.t.Dim(0), 1, 1, 1})
	for col0 := int64(0); col0 < ne1; col0 += stride {
		cols := min(stride, ne1-col0)
		for _, d := range devs {
			rows := d.rows.Rows()
			for i0 := range batch {
				off1 := uint64((i0*ne1 + col0) * ne10 * 4)
				if d.id != b.dev && d.peer {
					if err := b.drv.CopyPeerAsync(d.be.stream, d.id, d.src1.Add(off1), b.dev, src1Ptr.Add(off1), uint64(cols*ne10*4)); err != nil {
						return fmt.Errorf("device %d: src1 columns %d..%d: %w", d.id, col0, col0+cols, err)
					}
				}
				dstOff := uint64((i0*ne1 + col0) * d.ldDst * 4)
				a := vendorapi.TensorDesc{Data: d.src0, Ne: [4]int64{st.t.Dim(0), rows, 1, 1},
					Nb: [4]int64{aNb[0], aNb[1], aNb[1] * rows, aNb[1] * rows}}
				bd := vendorapi.TensorDesc{Data: d.src1.Add(off1), Ne: [4]int64{ne10, cols, 1, 1},
					Nb: [4]int64{4, ne10 * 4, ne10 * 4 * cols, ne10 * 4 * cols}}
				dd := vendorapi.TensorDesc{Data: d.dst.Add(dstOff), Ne: [4]int64{rows, cols, 1, 1},
					Nb: [4]int64{4, d.ldDst * 4, d.ldDst * 4 * cols, d.ldDst * 4 * cols}}
				if err := rowsFn(d.be, at, dd, a, bd); err != nil {
					return fmt.Errorf("device %d: rows %d..%d, columns %d..%d: %w", d.id, d.rows.Lo, d.rows.Hi, col0, col0+cols, err)
				}
				if d.id != b.dev && d.peer {
					to := dstPtr.Add(uint64((i0*ne1+col0)*ne0+d.rows.Lo) * 4)
					if err := b.drv.Copy2DPeerAsync(d.be.stream, b.dev, to, uint64(ne0*4), d.id, d.dst.Add(dstOff),
						uint64(rows*4), uint64(rows*4), uint64(cols)); err != nil {
						return fmt.Errorf("device %d: gathering its rows of dst: %w", d.id, err)
					}
				}
			}
		}
	}
	for _, d := range devs {
		if d.id == b.dev {
			continue
		}
		if !d.peer {
			if err := b.drv.CopyDtoHAsync(d.be.stream, d.host, d.dst); err != nil {
				return fmt.Errorf("device %d: its rows of dst to the host: %w", d.id, err)
			}
		}
		done, err := b.splitEvent(d.id)
		if err != nil {
			return err
		}
		if err := b.drv.EventRecord(done, d.be.stream); err != nil {
			return fmt.Errorf("device %d: %w", d.id, err)
		}
		if err := b.drv.StreamWaitEvent(b.stream, done); err != nil {
			return fmt.Errorf("device %d: %w", d.id, err)
		}
		if !d.peer {
			if err := b.gatherThroughHost(d, dstPtr, ne0, ne1*batch); err != nil {
				return fmt.Errorf("device %d: its rows of dst from the host: %w", d.id, err)
			}
		}
	}
	return nil
}

// gatherThroughHost places device d's rows of dst, staged in d.host, into
// dst on the main device: up to a temporary, then a 2D copy to the rows.
func (b *Backend) gatherThroughHost(d *splitDev, dst vendorapi.DevicePtr, ne0, cols int64) error {
	rows := d.rows.Rows()
	tmp, err := b.pool.Alloc(d.host.Size)
	if err != nil {
		return err
	}
	defer tmp.Free()
	if err := b.drv.CopyHtoDAsync(b.stream, tmp.Ptr, d.host); err != nil {
		return err
	}
	return b.drv.Copy2DAsync(b.stream, dst.Add(uint64(d.rows.Lo*4)), uint64(ne0*4), tmp.Ptr, uint64(rows*4), uint64(rows*4), uint64(cols))
}

// canAccess reports whether the main device and device id can access each
// other's memory (the seed's cudaDeviceCanAccessPeer, both ways).
func (b *Backend) canAccess(id int) bool {
	ab, err1 := b.drv.CanAccessPeer(b.dev, id)
	ba, err2 := b.drv.CanAccessPeer(id, b.dev)
	return err1 == nil && err2 == nil && ab && ba
}

// peerState is whether peer access between a driver's main device and the
// others is on (the seed keeps one static flag for the process).
type peerState struct {
	mu    sync.Mutex
	known bool
	on    bool
}

var peerStates sync.Map // vendorapi.Driver → *peerState

// PeerMaxBatchSize returns the largest src1 batch (ne11) for which a
// row-split MUL_MAT turns peer access on (TERNION_PEER_MAX_BATCH_SIZE, the
// seed's GGML_CUDA_PEER_MAX_BATCH_SIZE, default 128).
func (b *Backend) PeerMaxBatchSize() (int, error) {
	return switches.Int(b.opts.Env, switches.PeerMaxBatchSize)
}

// setPeerAccess turns peer access between the main device and every other
// device of the driver on when a row-split MUL_MAT's batch nTokens is at
// most PeerMaxBatchSize and off above it, as the seed's
// ggml_cuda_set_peer_access: only on a change, after every device's work
// is done, both ways, for the pairs that can access each other.
func (b *Backend) setPeerAccess(nTokens int64) error {
	limit, err := b.PeerMaxBatchSize()
	if err != nil {
		return err
	}
	enable := nTokens <= int64(limit)
	v, _ := peerStates.LoadOrStore(b.drv, &peerState{})
	ps := v.(*peerState)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.known && ps.on == enable {
		return nil
	}
	n, err := b.drv.DeviceCount()
	if err != nil {
		return err
	}
	for id := range n {
		if err := b.drv.DeviceSynchronize(id); err != nil {
			return fmt.Errorf("device %d: synchronizing before peer access changes: %w", id, err)
		}
	}
	for id := range n {
		for other := range n {
			if id == other || (id != b.dev && other != b.dev) {
				continue
			}
			can, err := b.drv.CanAccessPeer(id, other)
			if err != nil {
				return err
			}
			if !can {
				continue
			}
			if enable {
				err = b.drv.EnablePeerAccess(id, other)
			} else {
				err = b.drv.DisablePeerAccess(id, other)
			}
			if err != nil {
				return fmt.Errorf("peer access %d → %d: %w", id, other, err)
			}
		}
	}
	ps.known, ps.on = true, enable
	b.log.Debug(fmt.Sprintf("ternion: backend %s: peer access %v (batch %d, limit %d)", b.name, enable, nTokens, limit))
	return nil
}
