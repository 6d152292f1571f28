package gomem

import (
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// global is package data: Go memory that is never moved or freed.
var global [4096]byte

// sink makes values escape to the heap.
var sink []any

func TestSelfTest(t *testing.T) {
	assert.True(t, pinWorks(), "reading back runtime.Pinner works on this runtime")
	assert.True(t, seedable)
}

func TestCheck(t *testing.T) {
	small := make([]byte, 100)
	large := make([]byte, 8<<20)
	type object struct{ a, b uint64 }
	obj := new(object)
	sink = append(sink, small, large, obj) // on the heap, not the stack
	t.Cleanup(func() { sink = nil })
	anon := func(size int) []byte {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		require.NoError(t, err)
		t.Cleanup(func() { _ = syscall.Munmap(b) })
		return b
	}
	page, mib, huge := anon(4096), anon(1<<20), anon(int(arenaBytes)+4096)
	at := func(b []byte, off int) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(off) }

	for _, c := range []struct {
		name string
		p    uintptr
		n    uint64
		goes bool // recognized as Go memory
	}{
		{"make([]byte, 100)", at(small, 0), 100, true},
		{"the end of a small slice", at(small, 99), 1, true},
		{"make([]byte, 8 MiB)", at(large, 0), 8 << 20, true},
		{"the middle of a large slice", at(large, 1<<20), 4096, true},
		{"new(object)", uintptr(unsafe.Pointer(obj)), 16, true},
		{"an anonymous page", at(page, 0), 4096, false},
		{"an anonymous MiB", at(mib, 0), 1 << 20, false},
		{"a mapping larger than an arena", at(huge, 0), uint64(len(huge)), false},
		{"package data (never moved or freed)", uintptr(unsafe.Pointer(&global[0])), 4096, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.p, c.n)
			if c.goes {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(large)
	runtime.KeepAlive(obj)
	onStack(func(p uintptr) { assert.Error(t, Check(p, 256), "a goroutine stack") })

	for _, c := range []struct {
		name string
		p    uintptr
		n    uint64
	}{
		{"empty", 0x1000, 0},
		{"wraps", ^uintptr(0) - 10, 100},
	} {
		assert.Error(t, Check(c.p, c.n), c.name)
	}
}

// onStack calls f with the address of 256 bytes on the calling goroutine's
// stack, which must not move meanwhile (a stack grows and shrinks by moving,
// and a moved stack's old address is no longer Go memory in use): the stack
// is grown first, well past what f needs, and the collector, which shrinks
// stacks, is off while f runs.
func onStack(f func(p uintptr)) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	grow(256)
	var local [256]byte
	f(uintptr(unsafe.Pointer(&local[0])))
	runtime.KeepAlive(&local)
}

// grow uses about n KiB of stack.
//
//go:noinline
func grow(n int) byte {
	var frame [1024]byte
	frame[n%1024] = byte(n)
	if n > 0 {
		frame[0] += grow(n - 1)
	}
	return frame[0]
}

// TestKnownArena checks the arena arithmetic on a made-up set.
func TestKnownArena(t *testing.T) {
	known.Lock()
	saved := known.arenas
	known.arenas = map[uintptr]bool{10 * arenaBytes: true}
	known.Unlock()
	t.Cleanup(func() {
		known.Lock()
		known.arenas = saved
		known.Unlock()
	})
	for _, c := range []struct {
		name   string
		lo, hi uintptr
		want   bool
	}{
		{"inside", 10*arenaBytes + 5, 10*arenaBytes + 9, true},
		{"first byte", 10 * arenaBytes, 10 * arenaBytes, true},
		{"last byte", 11*arenaBytes - 1, 11*arenaBytes - 1, true},
		{"just below", 9 * arenaBytes, 10*arenaBytes - 1, false},
		{"just above", 11 * arenaBytes, 12 * arenaBytes, false},
		{"across", 9 * arenaBytes, 11 * arenaBytes, true},
		{"across many arenas", 0, 1000 * arenaBytes, true},
		{"many arenas below", 0, 9 * arenaBytes, false},
		{"up to the top", 11 * arenaBytes, ^uintptr(0), false},
	} {
		_, got := knownArena(c.lo, c.hi)
		assert.Equal(t, c.want, got, c.name)
	}
}

// TestPinningAlone checks test 2 without test 1: with no arena known (as
// under GODEBUG efence=1), heap objects are still recognized by pinning, and
// a stack no longer is (a documented limit).
func TestPinningAlone(t *testing.T) {
	known.Lock()
	saved := known.arenas
	known.arenas = nil
	known.Unlock()
	seedable = false
	t.Cleanup(func() {
		seedable = true
		known.Lock()
		known.arenas = saved
		known.Unlock()
	})
	obj := make([]byte, 1000)
	sink = append(sink, obj)
	t.Cleanup(func() { sink = nil })
	heap := uintptr(unsafe.Pointer(&obj[0]))
	onStack(func(stack uintptr) {
		assert.NoError(t, Check(stack, 256), "a stack is not pinnable")
		assert.Error(t, Check(heap, 1000), "a heap object is")
		known.Lock()
		n := len(known.arenas)
		known.Unlock()
		assert.Equal(t, 1, n, "the object's arena was learned")
		if arenaOf(stack) == arenaOf(heap) {
			assert.Error(t, Check(stack, 256), "now the stack is seen: it is in the arena learned")
		}
	})
}
