// Package pool holds the device memory pools a backend keeps per (device,
// stream) for scratch memory that lives for one op or one graph: the seed's
// legacy best-fit pool (ggml_cuda_pool_leg) and its virtual-memory pool
// (ggml_cuda_pool_vmm), behind one small interface, Pool. A scoped allocation
// reads
//
//	buf, err := p.Alloc(n)
//	if err != nil {
//		return err
//	}
//	defer buf.Free()
//
// Both pools are plain logic over a few driver calls (an Allocator for the
// legacy pool, vendorapi.VirtualMemory for the VMM pool), so they are tested on
// the host device without a GPU. Unlike the seed they never abort: running out
// of device memory returns the pool's cached memory to the driver, retries
// once and then returns an error matching vendorapi.ErrOutOfMemory, after which
// the pool is still usable; misuse (a double free, an out-of-order free in the
// VMM pool, closing with buffers still out) is an error and leaves the pool
// consistent.
//
// Memory a buffer returns to its pool may be handed out again by the very next
// Alloc, while work queued earlier may still be using it on the device. That
// is correct only when all work using a pool's memory is queued on one stream,
// which is why a backend keeps one pool per (device, stream), as the seed does.
package pool
