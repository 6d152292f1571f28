package ops

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// convert.go plans CPY, CONT and DUP (kernels/convert.cu and cpy.cu): the
// node's memory (for CPY, a view of the destination) receives src0's
// elements in row-major order, converted to the node's type.

func init() {
	for _, op := range []graph.Op{graph.OpCpy, graph.OpCont, graph.OpDup} {
		register(op, impl{supports: supportsCopy, run: runCopy})
	}
}

func supportsCopy(n *graph.Tensor, _ vendorapi.Props) string {
	if reason, ok := quantCopySupports(n); ok {
		return reason
	}
	src := n.Src(0)
	_, fs := floatType(src.Type())
	_, fd := floatType(n.Type())
	switch {
	case fs && fd:
		if !fits32(n.Layout()) {
			return "more than 2^31 elements"
		}
		return ""
	case src.Type() == n.Type():
		if src.Layout().IsContiguous() && n.Layout().IsContiguous() {
			return ""
		}
		if _, ok := rawName(src.Type().BlockBytes()); !ok || !fits32(n.Layout()) {
			return fmt.Sprintf("a non-contiguous copy of %s", src.Type())
		}
		return ""
	}
	return fmt.Sprintf("no conversion from %s to %s", src.Type(), n.Type())
}

// rawName is the cpy_b* kernel copying elements of size bytes.
func rawName(size int64) (string, bool) {
	switch size {
	case 1, 2, 4, 8:
		return fmt.Sprintf("cpy_b%d", 8*size), true
	}
	return "", false
}

// packedDim returns the dimension c in 1..3 along which t's elements of size
// bytes are packed (nb[c] == size, ne[c] > 1), or 0.
func packedDim(t vendorapi.TensorDesc, size int64) int {
	for c := 1; c < 4; c++ {
		if t.Nb[c] == size && t.Ne[c] > 1 {
			return c
		}
	}
	return 0
}

// CopySlots is implemented by a Device that keeps a CPY pointer array (the
// seed's cpy_dest_ptrs): one device word per CPY node of the graph being
// run, holding the node's destination address, written on the stream before
// the graph's launches. A CPY whose copy can take its destination that way
// (CopyIndirect) passes the word's address to its kernel, which reads its
// destination from it when it runs: a captured graph then writes where the
// destination is at each replay, and a KV-cache write whose destination
// moves every token needs no graph update.
type CopySlots interface {
	// CopySlot returns the address of the device word holding CPY node n's
	// destination for this run, or 0 when n takes its destination directly.
	CopySlot(n *graph.Tensor) vendorapi.DevicePtr
}

// CopyIndirect reports whether CPY node n's copy takes its destination
// through a CopySlots word: true for copies between f32, f16 and bf16 and
// for copies within one type (contiguous ones by a kernel instead of the
// driver's copy, when the bytes or elements number below 2^31), and for
// conversions to or from the quantized types (kernels/quant.cu's dq and qz
// take the word too; the seed cannot redirect those and keeps such a graph
// eager). The kernel a redirected copy
// runs never depends on its destination's address (core/capture does not
// compare it): 16-byte row copies (rows4_b32) are left to direct copies.
func CopyIndirect(n *graph.Tensor) bool {
	s := n.Src(0)
	if n.Op() != graph.OpCpy || s == nil {
		return false
	}
	st, dt := s.Type(), n.Type()
	if st == dt && s.Layout().IsContiguous() && n.Layout().IsContiguous() {
		_, n32 := flatCopy(n.Layout())
		return n32
	}
	return true
}

// runCopy copies the node's source into the node's memory; a CPY takes its
// destination through its CopySlots word when d has one for it.
func runCopy(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	var slot vendorapi.DevicePtr
	if cs, ok := d.(CopySlots); ok && n.Op() == graph.OpCpy && CopyIndirect(n) {
		slot = cs.CopySlot(n)
	}
	return copyVia(d, ds[0], n.Type(), ds[1], n.Src(0).Type(), slot)
}

// copyTensor queues dst = src (element i of src, row-major in its shape, to
// element i of dst) converted from type st to dt. It picks: a driver copy of
// contiguous same-type bytes; rows (16-byte copies of 4-byte elements where
// aligned) when rows are packed on both sides and as long; a transposing
// tile when the shapes match and the packed dimensions differ; element by
// element otherwise.
func copyTensor(d Device, dst vendorapi.TensorDesc, dt tensor.Type, s vendorapi.TensorDesc, st tensor.Type) error {
	return copyVia(d, dst, dt, s, st, 0)
}

// flatCopy returns the cpy_b* element size that copies the bytes of a
// contiguous tensor of layout l as one row (its type's size, bytes for a
// quantized type) and whether their count fits the kernel (below 2^31).
func flatCopy(l tensor.Layout) (size int64, ok bool) {
	size = l.Type.BlockBytes()
	if _, raw := rawName(size); !raw || l.Type.IsQuantized() {
		size = 1
	}
	return size, l.Bytes()/size < math.MaxInt32
}

// copyVia is copyTensor with dst's address read from the device word at
// dslot when it is not 0 (CopySlots): contiguous same-type bytes are then
// copied by cpy_b* as one row instead of the driver's copy, whose
// destination a captured graph would keep, and no kernel is chosen by dst's
// address (its alignment may change while a graph replays).
func copyVia(d Device, dst vendorapi.TensorDesc, dt tensor.Type, s vendorapi.TensorDesc, st tensor.Type, dslot vendorapi.DevicePtr) error {
	dl := tensor.Layout{Type: dt, Ne: dst.Ne, Nb: dst.Nb}
	sl := tensor.Layout{Type: st, Ne: s.Ne, Nb: s.Nb}
	count := dl.Elements()
	if count == 0 {
		return nil
	}
	if st == dt && sl.IsContiguous() && dl.IsContiguous() {
		size, n32 := flatCopy(dl)
		if dslot == 0 || !n32 {
			return d.Driver().CopyDtoDAsync(d.Stream(), dst.Data, s.Data, uint64(dl.Bytes()))
		}
		n := dl.Bytes() / size
		row := func(t vendorapi.TensorDesc) vendorapi.TensorDesc {
			return vendorapi.TensorDesc{Data: t.Data, Ne: [4]int64{n, 1, 1, 1}, Nb: [4]int64{size, n * size, n * size, n * size}}
		}
		name, _ := rawName(size)
		grid, block := flatGeometry(n)
		one := fd(1)
		args := d.Args()
		args.Tensor(row(dst)).Tensor(row(s)).FastDiv(fd(n)).FastDiv(one).FastDiv(one).
			FastDiv(fd(n)).FastDiv(one).FastDiv(one).I64(n).Ptr(dslot)
		return launch(d, name, grid, block, 0, args)
	}
	if st != dt && (st.IsQuantized() || dt.IsQuantized()) {
		return quantCopy(d, dst, dt, s, st, dslot)
	}
	ts, fs := floatType(st)
	td, fdst := floatType(dt)
	args := d.Args()
	if !fs || !fdst { // one non-float type, not contiguous: raw element copies
		name, _ := rawName(st.BlockBytes())
		grid, block := flatGeometry(count)
		args.Tensor(dst).Tensor(s).FastDiv(fd(s.Ne[0])).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).
			FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(count).Ptr(dslot)
		return launch(d, name, grid, block, 0, args)
	}
	es, ed := st.BlockBytes(), dt.BlockBytes()
	warp := d.Props().WarpSize
	switch {
	case s.Ne[0] == dst.Ne[0] && s.Nb[0] == es && dst.Nb[0] == ed:
		nrows := count / dst.Ne[0]
		args.Tensor(dst).Tensor(s).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(nrows).
			Ptr(dslot)
		if ts == td && es == 4 && dst.Ne[0]%4 == 0 && aligned(s, 16) && aligned(dst, 16) && dslot == 0 {
			grid, block := rowsGeometry(dst.Ne[0], nrows, 4, warp)
			return launch(d, "rows4_b32", grid, block, 0, args)
		}
		grid, block := rowsGeometry(dst.Ne[0], nrows, 1, warp)
		return launch(d, "cvt_rows_"+ts+"_"+td, grid, block, 0, args)
	case s.Ne == dst.Ne && dst.Nb[0] == ed && s.Nb[0] != es && packedDim(s, es) != 0 && dst.Ne[0] <= 32*65535:
		c := packedDim(s, es)
		a, b := 1, 3
		if c == 1 {
			a = 2
		}
		if c == 3 {
			b = 2
		}
		nbatch := dst.Ne[a] * dst.Ne[b]
		grid := vendorapi.Dim3{X: uint32((dst.Ne[c] + 31) / 32), Y: uint32((dst.Ne[0] + 31) / 32), Z: uint32(min((nbatch+3)/4, 65535))}
		args.Tensor(dst).Tensor(s).I32(int32(c)).FastDiv(fd(dst.Ne[a])).I64(nbatch).Ptr(dslot)
		return launch(d, "cvt_tile_"+ts+"_"+td, grid, vendorapi.Dim3{X: 32, Y: 8}, 0, args)
	}
	grid, block := flatGeometry(count)
	args.Tensor(dst).Tensor(s).FastDiv(fd(s.Ne[0])).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).
		FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(count).Ptr(dslot)
	return launch(d, "cvt_"+ts+"_"+td, grid, block, 0, args)
}
