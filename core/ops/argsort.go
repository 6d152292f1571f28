package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// argsort.go plans ARGSORT (kernels/argsort.cu).

func init() { register(graph.OpArgsort, impl{supports: argsortSupports, run: argsortRun}) }

// argsortMaxChunk is the longest chunk argsort_chunk sorts in shared memory
// (32 KiB of keys and indices); argsortTile is argsort_merge's output tile;
// argsortRadixTile is a radix pass block's share of a row
// (ARGSORT_RADIX_TILE).
//
// argsortRadixMin is the fewest elements (rows × row length) sorted by the
// radix passes rather than chunks and merges, when rows are longer than a
// chunk. Measured on the H200 (bench/experiments/reduce.cu, ascending f32):
// [200000, 16] radix 249 µs, merge 565; [65000, 16] (1.04 M elements) radix
// 88 µs, merge 159; [200000, 1] merge 92 µs (2048-element chunks; 108 with
// 4096), radix 106 (49 tiles: 49 blocks a launch, 12 launches). The
// crossover lies between 0.2 M and 1 M elements; 512 Ki splits it.
const (
	argsortMaxChunk  = 4096
	argsortTile      = 2048
	argsortRadixTile = 4096
	argsortRadixMin  = 1 << 19
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

// argsortChunk is the chunk length argsortRun sorts nrows rows of ncols
// elements in on a device of sms multiprocessors, 0 for the radix passes:
// rows that fit a chunk take the smallest power of two that holds them;
// longer rows are radix sorted from argsortRadixMin elements in all, else
// chunked by argsortMaxChunk, or half that when that leaves fewer chunks
// than multiprocessors ([200000, 1] on the H200: 92 µs against 108).
func argsortChunk(ncols, nrows int64, sms int) int64 {
	if ncols <= argsortMaxChunk {
		chunk := int64(2)
		for chunk < ncols {
			chunk *= 2
		}
		return chunk
	}
	if nrows*ncols >= argsortRadixMin {
		return 0
	}
	if nrows*((ncols+argsortMaxChunk-1)/argsortMaxChunk) < int64(sms) {
		return argsortMaxChunk / 2
	}
	return argsortMaxChunk
}

// argsortRun sorts rows that fit a chunk in one launch; longer rows are
// radix sorted when there are argsortRadixMin elements or more, else
// sorted in 4096-element chunks (2048 when that gives too few blocks to
// fill the device) into pooled (key, index) buffers and merged a pass per
// doubling of the run width, the last pass writing dst.
func argsortRun(d Device, n *graph.Tensor) error {
	ds, err := descs(n, n.Src(0))
	if err != nil {
		return err
	}
	dst, src := ds[0], ds[1]
	ncols, nrows := src.Ne[0], src.Ne[1]*src.Ne[2]*src.Ne[3]
	order := n.ParamI32(0)
	chunk := argsortChunk(ncols, nrows, d.Props().SMs)
	if chunk == 0 {
		return argsortRadix(d, dst, src, order)
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

// argsortRadix sorts src's rows into dst by four stable 8-bit radix passes
// (argsort_radix_up, _scan, _down each), keys and indices between passes in
// pooled buffers; the first pass reads src, the last writes dst.
func argsortRadix(d Device, dst, src vendorapi.TensorDesc, order int32) error {
	ncols, nrows := src.Ne[0], src.Ne[1]*src.Ne[2]*src.Ne[3]
	tiles := (ncols + argsortRadixTile - 1) / argsortRadixTile
	count := uint64(ncols * nrows)
	nhist := uint64(nrows * 256 * tiles)
	tmp, err := d.Pool().Alloc(16*count + 4*nhist)
	if err != nil {
		return err
	}
	defer tmp.Free()
	keys := [2]vendorapi.DevicePtr{tmp.Ptr, tmp.Ptr.Add(8 * count)}
	idx := [2]vendorapi.DevicePtr{tmp.Ptr.Add(4 * count), tmp.Ptr.Add(12 * count)}
	hist := tmp.Ptr.Add(16 * count)
	grid := vendorapi.Dim3{X: uint32(nrows * tiles)}
	block := vendorapi.Dim3{X: 256}
	var kin, iin vendorapi.DevicePtr // the first pass reads src
	for pass, in := 0, 0; pass < 4; pass++ {
		shift := int32(8 * pass)
		up := d.Args().Ptr(hist).Tensor(src).Ptr(kin).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).I32(int32(ncols)).
			FastDiv(fd(tiles)).I32(shift).I32(order)
		if err := launch(d, "argsort_radix_up", grid, block, 0, up); err != nil {
			return err
		}
		scan := d.Args().Ptr(hist).I32(int32(nrows)).I32(int32(tiles))
		if err := launch(d, "argsort_radix_scan", vendorapi.Dim3{X: uint32(nrows)}, vendorapi.Dim3{X: 1024}, 0, scan); err != nil {
			return err
		}
		kout, iout := keys[1-in], idx[1-in]
		if pass == 3 {
			kout, iout = 0, dst.Data
		}
		down := d.Args().Ptr(kout).Ptr(iout).Tensor(src).Ptr(kin).Ptr(iin).Ptr(hist).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).
			I32(int32(ncols)).FastDiv(fd(tiles)).I32(shift).I32(order)
		if err := launch(d, "argsort_radix_down", grid, block, 0, down); err != nil {
			return err
		}
		kin, iin, in = kout, iout, 1-in
	}
	return nil
}
