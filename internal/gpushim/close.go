//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
*/
import "C"

// Close releases everything the driver handed out (vendorapi.Driver.Close):
// it waits for every stream's queued work (ending a capture in progress) and
// destroys the streams, then the graph execs, graphs, BLAS handles and
// events; unloads every kernel family's module; unmaps, releases and frees
// VMM memory; frees device and pinned memory, unregisters host memory and
// disables peer access. Handles are never reused, so every old one is
// invalid afterwards. The driver stays usable: kernels load again on first
// use. It returns the first failure and goes on releasing the rest.
func (d *Driver) Close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	byKind := map[handleKind][]handle{}
	for _, h := range d.h.drain() {
		byKind[h.kind] = append(byKind[h.kind], h)
	}
	for _, h := range byKind[kindStream] {
		dev, raw := C.int32_t(h.dev), C.uint64_t(h.raw)
		var status C.int32_t
		if d.fail(C.tn_capture_status(dev, raw, &status), h.dev) == nil && status != 0 {
			var g C.uint64_t
			if d.fail(C.tn_capture_end(dev, raw, &g), h.dev) == nil && g != 0 {
				keep(d.fail(C.tn_graph_destroy(dev, g), h.dev))
			}
		}
		keep(d.fail(C.tn_stream_sync(dev, raw), h.dev))
		keep(d.fail(C.tn_stream_destroy(dev, raw), h.dev))
	}
	for _, h := range byKind[kindExec] {
		keep(d.fail(C.tn_graph_exec_destroy(C.int32_t(h.dev), C.uint64_t(h.raw)), h.dev))
	}
	for _, h := range byKind[kindGraph] {
		keep(d.fail(C.tn_graph_destroy(C.int32_t(h.dev), C.uint64_t(h.raw)), h.dev))
	}
	for _, h := range byKind[kindBLAS] {
		keep(d.fail(C.tn_blas_destroy(C.int32_t(h.dev), C.uint64_t(h.raw)), h.dev))
	}
	for _, h := range byKind[kindEvent] {
		keep(d.fail(C.tn_event_destroy(C.int32_t(h.dev), C.uint64_t(h.raw)), h.dev))
	}
	for dev, dv := range d.devs {
		keep(d.unloadModules(dev, dv))
	}

	m := d.mem.drain()
	for _, s := range m.mapped {
		keep(d.fail(C.tn_vmm_unmap(C.int32_t(s.Val), C.uint64_t(s.Lo), C.uint64_t(s.Hi-s.Lo)), s.Val))
	}
	for _, h := range byKind[kindChunk] {
		keep(d.fail(C.tn_vmm_release(C.int32_t(h.dev), C.uint64_t(h.raw)), h.dev))
	}
	for _, s := range m.reserved {
		keep(d.fail(C.tn_vmm_free(C.int32_t(s.Val), C.uint64_t(s.Lo), C.uint64_t(s.Hi-s.Lo)), s.Val))
	}
	for _, s := range m.allocs {
		keep(d.fail(C.tn_free(C.int32_t(s.Val), C.uint64_t(s.Lo)), s.Val))
	}
	for _, s := range m.pinned {
		keep(d.fail(C.tn_host_free(C.uintptr_t(s.Lo)), -1))
	}
	for _, s := range m.registered {
		keep(d.fail(C.tn_host_unregister(C.uintptr_t(s.Lo)), -1))
	}
	for _, pair := range m.peers {
		keep(d.fail(C.tn_peer_disable(C.int32_t(pair[0]), C.int32_t(pair[1])), pair[0]))
	}
	return first
}

// unloadModules unloads every kernel family module of dev and forgets its
// families and functions, so the next Kernel call loads them again.
func (d *Driver) unloadModules(dev int, dv *device) error {
	dv.mu.Lock()
	defer dv.mu.Unlock()
	var first error
	for _, fam := range dv.families {
		if fam.module == 0 {
			continue
		}
		if err := d.fail(C.tn_module_unload(C.int32_t(dev), C.uint64_t(fam.module)), dev); err != nil && first == nil {
			first = err
		}
	}
	dv.families = map[string]*family{}
	clear(dv.funcs)
	return first
}
