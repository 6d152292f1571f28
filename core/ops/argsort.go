package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// argsort.go plans ARGSORT (kernels/argsort.cu).

func init() { register(graph.OpArgsort, impl{supports: argsortSupports, run: argsortRun}) }

// argsortMaxChunk is the longest chunk argsort_chunk sorts in shared memory
// (32 KiB of keys and indices); argsortTile is argsort_merge's output tile.
const (
	argsortMaxChunk = 4096
	argsortTile     = 2048
)

func argsortSupports(n *graph.Tensor, _ vendorapi.Props) string {
	if n.Src(0).Type() != tensor.F32 {
		return "ARGSORT sorts f32 rows (as ggml-cuda's)"
	}
	if !fits32(n.Src(0).Layout()) {
		return "more than 2^31 elements"
	}
	return ""
}

// argsortRun sorts rows that fit a chunk in one launch; longer rows are
// sorted in 4096-element chunks into pooled (key, index) buffers and merged
// a pass per doubling of the run width, the last pass writing dst.
func argsortRun(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	ncols, nrows := src.Ne[0], src.Ne[1]*src.Ne[2]*src.Ne[3]
	order := n.ParamI32(0)
	chunk := int64(2)
	for chunk < ncols && chunk < argsortMaxChunk {
		chunk *= 2
	}
	nchunks := (ncols + chunk - 1) / chunk
	sortChunks := func(keys, idx vendorapi.DevicePtr) error {
		args := d.Args().Ptr(keys).Ptr(idx).Tensor(src).FastDiv(fd(nchunks)).FastDiv(fd(src.Ne[1])).
			FastDiv(fd(src.Ne[2])).I32(int32(chunk)).I32(order)
		grid := vendorapi.Dim3{X: uint32(nrows * nchunks)}
		return launch(d, "argsort_chunk", grid, vendorapi.Dim3{X: uint32(min(chunk/2, 1024))}, uint32(8*chunk), args)
	}
	if nchunks == 1 {
		return sortChunks(0, dst.Data)
	}
	count := uint64(ncols * nrows)
	tmp, err := d.Pool().Alloc(16 * count)
	if err != nil {
		return err
	}
	defer tmp.Free()
	keys := [2]vendorapi.DevicePtr{tmp.Ptr, tmp.Ptr.Add(8 * count)}
	idx := [2]vendorapi.DevicePtr{tmp.Ptr.Add(4 * count), tmp.Ptr.Add(12 * count)}
	if err := sortChunks(keys[0], idx[0]); err != nil {
		return err
	}
	tiles := (ncols + argsortTile - 1) / argsortTile
	for width, in := chunk, 0; width < ncols; width, in = 2*width, 1-in {
		okeys, oidx := keys[1-in], idx[1-in]
		if 2*width >= ncols {
			okeys, oidx = 0, dst.Data
		}
		args := d.Args().Ptr(okeys).Ptr(oidx).Ptr(keys[in]).Ptr(idx[in]).I64(nrows).I64(ncols).I64(width).
			FastDiv(fd(tiles)).I32(order)
		if err := launch(d, "argsort_merge", vendorapi.Dim3{X: uint32(nrows * tiles)}, vendorapi.Dim3{X: 256}, 0, args); err != nil {
			return err
		}
	}
	return nil
}
