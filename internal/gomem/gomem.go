// Package gomem recognizes memory that belongs to the Go runtime: heap
// objects (a []byte from make) and goroutine stacks, which the garbage
// collector may free or move, so that HostRegister can refuse them as the
// driver contract says.
//
// Go offers no call that answers "is this address Go memory?", and none that
// could be used for it is sound: /proc/self/maps shows the heap as anonymous
// mappings like any other (named "[anon: Go: heap]" only on kernels built with
// CONFIG_ANON_VMA_NAME); the heap is reserved at hint addresses (0xc000000000
// and up) only when they are free, which they need not be; go:linkname into
// the runtime is refused since Go 1.23; runtime.SetFinalizer and
// runtime.AddCleanup crash the process (a fatal error, not a panic) for some
// pointers into the heap. Check therefore combines two tests that never claim
// foreign memory is Go's, and says what it cannot see:
//
//  1. Arenas. The runtime reserves the heap, which also holds goroutine
//     stacks, in whole arenas of arenaBytes aligned to arenaBytes, and never
//     gives an arena back. An address in the arena of a Go object or a stack
//     is Go memory. Check learns arenas from the calling goroutine's stack,
//     from fresh probe allocations, and from every address test 2 finds in
//     the heap. (Under GODEBUG sbrk=1 or efence=1 the runtime takes heap or
//     stacks from the OS outside arenas: then only test 2's finds count.)
//  2. Pinning. runtime.Pinner.Pin pins heap objects and does nothing for
//     other pointers; whether it pinned is read back from the Pinner (its
//     unexported refs, through reflect). A self-test at first use reads it
//     back for a known heap object and a known non-heap address; if that
//     fails (a future runtime), this test is off and only test 1 runs.
//     Pinning passes the address as a pointer, which the collector checks
//     while the call runs; an address in a freed part of the heap could
//     trip that check, so test 2 runs only where test 1 found nothing.
//
// What Check cannot see: the start and end of the range are probed, so a
// range that begins and ends outside Go memory but covers some in between is
// seen only when its arenas are known; stacks of other goroutines and free
// heap pages are seen only in known arenas (a large heap has many).
package gomem

import (
	"fmt"
	"github.com/ternion/ternion/switches"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// arenaBytes is the runtime's heap arena size (runtime.heapArenaBytes): 64 MiB
// on 64-bit platforms other than Windows, iOS and WebAssembly, 4 MiB there and
// on 32-bit ones. Using 4 MiB where arenas are 64 MiB would only see less;
// the reverse would be wrong, so every platform not known to use 64 MiB uses 4.
var arenaBytes = func() uintptr {
	if unsafe.Sizeof(uintptr(0)) == 8 && runtime.GOOS != "windows" && runtime.GOOS != "ios" && runtime.GOARCH != "wasm" {
		return 64 << 20
	}
	return 4 << 20
}()

// seedable reports whether stacks and heap objects live in arenas, so that
// probes show arenas: not under GODEBUG sbrk or efence (read by the runtime
// from the environment only; //go:debug cannot set them).
var seedable = func() bool {
	godebug, _, _ := switches.Get(os.LookupEnv, switches.GoDebug)
	for _, kv := range strings.Split(godebug, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if (k == "sbrk" || k == "efence") && v != "" && v != "0" {
			return false
		}
	}
	return true
}()

// maxArenas bounds the arenas remembered (64 TiB of heap at 64 MiB each).
const maxArenas = 1 << 20

var known struct {
	sync.Mutex
	arenas map[uintptr]bool // arena base → holds Go memory
}

// arenaOf returns the base of the arena holding p.
func arenaOf(p uintptr) uintptr { return p &^ (arenaBytes - 1) }

// learn remembers that the arena of p holds Go memory.
func learn(p uintptr) {
	known.Lock()
	defer known.Unlock()
	if known.arenas == nil {
		known.arenas = map[uintptr]bool{}
	}
	if len(known.arenas) < maxArenas {
		known.arenas[arenaOf(p)] = true
	}
}

// knownArena returns the base of a known Go arena that [lo, hi] touches.
func knownArena(lo, hi uintptr) (uintptr, bool) {
	known.Lock()
	defer known.Unlock()
	if n := (hi-lo)/arenaBytes + 1; n <= uintptr(len(known.arenas)) {
		for a := arenaOf(lo); a <= arenaOf(hi) && a >= arenaOf(lo); a += arenaBytes {
			if known.arenas[a] {
				return a, true
			}
		}
		return 0, false
	}
	for a := range known.arenas {
		if a <= hi && lo <= a+arenaBytes-1 {
			return a, true
		}
	}
	return 0, false
}

// probe is a fresh heap allocation of n bytes whose address Check learns.
//
//go:noinline
func probe(n int) uintptr {
	b := heapBytes(n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	runtime.KeepAlive(b)
	return p
}

// heapBytes returns a fresh heap allocation of n bytes (returning it makes
// it escape, so it is not on the stack).
//
//go:noinline
func heapBytes(n int) []byte { return make([]byte, n) }

// stackAddress returns an address on the calling goroutine's stack (Go code
// outside the runtime always runs on a goroutine stack, which the runtime
// allocates from the heap's arenas).
//
//go:noinline
func stackAddress() uintptr {
	var x [8]byte
	p := uintptr(unsafe.Pointer(&x[0]))
	runtime.KeepAlive(&x)
	return p
}

// pinProbe is test 2: Pin and read back whether it pinned.
var pinProbe struct {
	once sync.Once
	ok   bool // the self-test passed
}

// pinned reports whether runtime.Pinner pins p, i.e. p is inside a heap
// object (or a free slot of a span in use); ok is false when that cannot be
// read from this runtime.
func pinned(p uintptr) (heap, ok bool) {
	defer func() {
		if recover() != nil { // Pin refuses objects of user arenas (GOEXPERIMENT=arenas): Go memory too
			heap, ok = true, true
		}
	}()
	var pn runtime.Pinner
	defer pn.Unpin()
	// Reinterpret rather than convert: p may be any address, and the
	// checkptr instrumentation (-race) rejects converting such an integer.
	pn.Pin(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
	v := reflect.ValueOf(&pn).Elem()
	if v.Kind() != reflect.Struct || v.NumField() != 1 || v.Field(0).Kind() != reflect.Pointer || v.Field(0).IsNil() {
		return false, false
	}
	v = v.Field(0).Elem()
	if v.Kind() != reflect.Struct {
		return false, false
	}
	refs := v.FieldByName("refs")
	if refs.Kind() != reflect.Slice {
		return false, false
	}
	switch refs.Len() {
	case 0:
		return false, true
	case 1:
		return true, true
	}
	return false, false
}

// outside is a non-heap address for the self-test: package data.
var outside [16]byte

// pinWorks runs the self-test of pinned once.
func pinWorks() bool {
	pinProbe.once.Do(func() {
		obj := heapBytes(64)
		heap, ok1 := pinned(uintptr(unsafe.Pointer(&obj[10])))
		runtime.KeepAlive(obj)
		data, ok2 := pinned(uintptr(unsafe.Pointer(&outside[0])))
		pinProbe.ok = ok1 && ok2 && heap && !data
	})
	return pinProbe.ok
}

// Check returns an error saying why when it recognizes Go memory in
// [p, p+n), and nil otherwise (which does not prove the range is not Go's;
// see the package comment). n must be positive and p+n must not wrap.
func Check(p uintptr, n uint64) error {
	if n == 0 || uint64(p)+n < uint64(p) {
		return fmt.Errorf("bad range [%#x, +%d)", p, n)
	}
	lo, hi := p, p+uintptr(n-1)
	if seedable {
		learn(stackAddress())
		learn(probe(64))
		learn(probe(64 << 10))
	}
	if a, ok := knownArena(lo, hi); ok {
		return fmt.Errorf("[%#x, +%d) reaches into the Go runtime's heap arena [%#x, +%d), which holds heap objects and goroutine stacks",
			p, n, a, arenaBytes)
	}
	if pinWorks() {
		for _, a := range []uintptr{lo, hi} {
			if heap, _ := pinned(a); heap {
				learn(a)
				return fmt.Errorf("address %#x is inside a Go heap object", a)
			}
		}
	}
	return nil
}
