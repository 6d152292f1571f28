package ops

import (
	"fmt"

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

// runCopy copies the node's source into the node's memory.
func runCopy(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	return copyTensor(d, ds[0], n.Type(), ds[1], n.Src(0).Type())
}

// copyTensor queues dst = src (element i of src, row-major in its shape, to
// element i of dst) converted from type st to dt. It picks: a driver copy of
// contiguous same-type bytes; rows (16-byte copies of 4-byte elements where
// aligned) when rows are packed on both sides and as long; a transposing
// tile when the shapes match and the packed dimensions differ; element by
// element otherwise.
func copyTensor(d Device, dst vendorapi.TensorDesc, dt tensor.Type, s vendorapi.TensorDesc, st tensor.Type) error {
	dl := tensor.Layout{Type: dt, Ne: dst.Ne, Nb: dst.Nb}
	sl := tensor.Layout{Type: st, Ne: s.Ne, Nb: s.Nb}
	count := dl.Elements()
	if count == 0 {
		return nil
	}
	if st == dt && sl.IsContiguous() && dl.IsContiguous() {
		return d.Driver().CopyDtoDAsync(d.Stream(), dst.Data, s.Data, uint64(dl.Bytes()))
	}
	if st != dt && (st.IsQuantized() || dt.IsQuantized()) {
		return quantCopy(d, dst, dt, s, st)
	}
	ts, fs := floatType(st)
	td, fdst := floatType(dt)
	args := d.Args()
	if !fs || !fdst { // one non-float type, not contiguous: raw element copies
		name, _ := rawName(st.BlockBytes())
		grid, block := flatGeometry(count)
		args.Tensor(dst).Tensor(s).FastDiv(fd(s.Ne[0])).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).
			FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(count)
		return launch(d, name, grid, block, 0, args)
	}
	es, ed := st.BlockBytes(), dt.BlockBytes()
	warp := d.Props().WarpSize
	switch {
	case s.Ne[0] == dst.Ne[0] && s.Nb[0] == es && dst.Nb[0] == ed:
		nrows := count / dst.Ne[0]
		args.Tensor(dst).Tensor(s).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(nrows)
		if ts == td && es == 4 && dst.Ne[0]%4 == 0 && aligned(s, 16) && aligned(dst, 16) {
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
		args.Tensor(dst).Tensor(s).I32(int32(c)).FastDiv(fd(dst.Ne[a])).I64(nbatch)
		return launch(d, "cvt_tile_"+ts+"_"+td, grid, vendorapi.Dim3{X: 32, Y: 8}, 0, args)
	}
	grid, block := flatGeometry(count)
	args.Tensor(dst).Tensor(s).FastDiv(fd(s.Ne[0])).FastDiv(fd(s.Ne[1])).FastDiv(fd(s.Ne[2])).
		FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(count)
	return launch(d, "cvt_"+ts+"_"+td, grid, block, 0, args)
}
