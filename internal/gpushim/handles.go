package gpushim

import (
	"sync"

	"github.com/ternion/ternion/vendorapi"
)

// handleKind is what a handle the driver gave out refers to.
type handleKind uint8

const (
	kindStream handleKind = iota + 1
	kindEvent
	kindGraph
	kindExec
	kindBLAS
	kindFunction
	kindChunk
)

func (k handleKind) String() string {
	switch k {
	case kindStream:
		return "stream"
	case kindEvent:
		return "event"
	case kindGraph:
		return "graph"
	case kindExec:
		return "graph exec"
	case kindBLAS:
		return "BLAS handle"
	case kindFunction:
		return "function"
	case kindChunk:
		return "physical chunk"
	}
	return "handle"
}

// handle is what a handle id stands for: the vendor's object and its device.
type handle struct {
	kind    handleKind
	dev     int
	raw     uint64                // the vendor's handle (cudaStream_t, CUfunction, ...)
	timing  bool                  // events: created with timing
	size    uint64                // chunks: bytes
	params  []vendorapi.ParamKind // functions: the catalog's parameter kinds
	offsets []uint32              // functions: each parameter's offset in the packed arguments
	pdl     bool                  // functions: launched with programmatic dependent launch
}

// handles maps the ids the driver hands out (Stream.Handle, Event.Handle, ...)
// to vendor objects. Ids are never reused, so a destroyed or forged handle is
// an error instead of a use-after-free in the vendor library, even when the
// library reuses the address of a destroyed object for a new one.
type handles struct {
	mu   sync.RWMutex
	next uint64
	m    map[uint64]handle
}

// add records h and returns its id (never 0).
func (t *handles) add(h handle) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[uint64]handle{}
	}
	t.next++
	t.m[t.next] = h
	return uintptr(t.next)
}

// get returns the live handle id of kind k on device dev.
func (t *handles) get(id uintptr, k handleKind, dev int) (handle, bool) {
	t.mu.RLock()
	h, ok := t.m[uint64(id)]
	t.mu.RUnlock()
	return h, ok && h.kind == k && h.dev == dev
}

// get2 looks up two handles under one lock (a launch's function and stream).
func (t *handles) get2(id1 uintptr, k1 handleKind, dev1 int, id2 uintptr, k2 handleKind, dev2 int) (h1, h2 handle, ok1, ok2 bool) {
	t.mu.RLock()
	h1, ok1 = t.m[uint64(id1)]
	h2, ok2 = t.m[uint64(id2)]
	t.mu.RUnlock()
	return h1, h2, ok1 && h1.kind == k1 && h1.dev == dev1, ok2 && h2.kind == k2 && h2.dev == dev2
}

// remove forgets the live handle id of kind k on device dev and returns it.
func (t *handles) remove(id uintptr, k handleKind, dev int) (handle, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.m[uint64(id)]
	if !ok || h.kind != k || h.dev != dev {
		return handle{}, false
	}
	delete(t.m, uint64(id))
	return h, true
}
