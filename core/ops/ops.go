// Package ops plans and launches ggml's ops on a device: for each op, which
// kernel variant runs, with which grid, block and arguments, or which BLAS
// call (the seed's per-op .cu host code). core/backend's compute loop calls
// Supports for every node before anything runs, then Run node by node.
//
// Each op lives in the file named like its kernel family (binbcast.go ↔
// kernels/binbcast.cu ↔ host/binbcast.go).
package ops

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/pool"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// Device is what ops launch on: one device and one stream of a driver, with
// its kernels, a BLAS handle, a memory pool for temporaries and an argument
// buffer (core/backend's Backend implements it).
type Device interface {
	// Driver is the vendor driver (for what ops do other than launching
	// kernels: copies, gemms).
	Driver() vendorapi.Driver
	// Launch queues function f on the device's stream.
	Launch(f vendorapi.Function, grid, block vendorapi.Dim3, shared uint32, a *vendorapi.Args) error
	// Props are the device's properties.
	Props() vendorapi.Props
	// Stream is the stream every op is queued on.
	Stream() vendorapi.Stream
	// Kernel returns catalog kernel name, loaded on the device.
	Kernel(name string) (vendorapi.Function, error)
	// Args returns the device's argument buffer, reset.
	Args() *vendorapi.Args
	// BLAS returns the device's BLAS handle, bound to Stream.
	BLAS() (vendorapi.BLASHandle, error)
	// Pool hands out temporary device memory ordered on Stream.
	Pool() pool.Pool
}

// ErrNotSupported is matched (errors.Is) by the error of an op the device
// cannot run (with the reason, the op, its types and shapes).
var ErrNotSupported = errors.New("op not supported")

// impl is one op's host code: whether a node can run and how.
type impl struct {
	// supports returns "" when the node can run on a device with props p,
	// else the reason it cannot.
	supports func(n *graph.Tensor, p vendorapi.Props) string
	// run queues the node's work on d.
	run func(d Device, n *graph.Tensor) error
	// runEarly, for an op whose kernels can read inputs before they wait
	// for the kernels before them, replaces run: early (nil: none) reports
	// whether an input may be read so (readEarly).
	runEarly func(d Device, n *graph.Tensor, early func(t *graph.Tensor) bool) error
}

// table holds the ops that launch work; view ops and leaves launch nothing.
var table = map[graph.Op]impl{}

// register adds op's implementation (from each op file's init).
func register(op graph.Op, i impl) { table[op] = i }

// Supports returns nil when node n can run on a device with props p, else an
// error matching ErrNotSupported naming the op, the node's and its sources'
// types and shapes, and the reason.
func Supports(n *graph.Tensor, p vendorapi.Props) error {
	if n.Op() == graph.OpNone || n.Op().IsView() {
		return nil
	}
	i, ok := table[n.Op()]
	why := "ternion has no implementation of this op yet"
	if ok {
		why = i.supports(n, p)
	}
	if why == "" {
		return nil
	}
	return &UnsupportedError{Node: describe(n), Reason: why}
}

// UnsupportedError says why a node cannot run.
type UnsupportedError struct {
	Node   string // op, types and shapes of the node and its sources
	Reason string
}

// Error reads "ternion: MUL_MAT (src0 q4_0 [...], src1 f32 [...] → f32 [...]) not supported: reason".
func (e *UnsupportedError) Error() string {
	return "ternion: " + e.Node + " not supported: " + e.Reason
}

// Unwrap makes errors.Is(err, ErrNotSupported) true.
func (e *UnsupportedError) Unwrap() error { return ErrNotSupported }

// Run queues node n's work on d (a view, a leaf or an empty node queues
// nothing), every input read after the kernels before it are done. Call
// Supports first.
func Run(d Device, n *graph.Tensor) error { return runNode(d, n, nil) }

// runNode is Run where early, when not nil, reports whether an input of n
// may be read before its kernel waits for the kernels before it (asked only
// by ops with runEarly).
func runNode(d Device, n *graph.Tensor, early func(t *graph.Tensor) bool) error {
	if n.Op() == graph.OpNone || n.Op().IsView() || n.Layout().Empty() {
		return nil // nothing to compute (ggml-cuda skips empty nodes too)
	}
	i, ok := table[n.Op()]
	if !ok {
		return fmt.Errorf("ternion: %s: %w", describe(n), ErrNotSupported)
	}
	var err error
	if i.runEarly != nil {
		err = i.runEarly(d, n, early)
	} else {
		err = i.run(d, n)
	}
	if err != nil {
		return fmt.Errorf("ternion: %s: %w", describe(n), err)
	}
	return nil
}

// describe names a node for errors: "ADD (src0 f32 [8,6,1,1], src1 f32
// [8,1,1,1] → f32 [8,6,1,1])".
func describe(n *graph.Tensor) string {
	s := n.Op().String() + " ("
	for i := range graph.MaxSrc {
		src := n.Src(i)
		if src == nil {
			continue
		}
		s += fmt.Sprintf("src%d %s %s, ", i, src.Type(), src.Layout().Shape())
	}
	s += fmt.Sprintf("→ %s %s)", n.Type(), n.Layout().Shape())
	if n.Name() != "" {
		s = fmt.Sprintf("%s %q", s, n.Name())
	}
	return s
}

// desc is the kernel descriptor of t's memory: its address, ne and nb.
func desc(t *graph.Tensor) (vendorapi.TensorDesc, error) {
	p, ok := t.Data()
	if !ok {
		return vendorapi.TensorDesc{}, fmt.Errorf("%s is not allocated", t)
	}
	return vendorapi.TensorDesc{Data: p, Ne: t.Ne(), Nb: t.Nb()}, nil
}

// descs returns the descriptors of ts.
func descs(ts ...*graph.Tensor) ([]vendorapi.TensorDesc, error) {
	out := make([]vendorapi.TensorDesc, len(ts))
	for i, t := range ts {
		var err error
		if out[i], err = desc(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// launch loads and launches kernel name on d's stream.
func launch(d Device, name string, grid, block vendorapi.Dim3, shared uint32, a *vendorapi.Args) error {
	f, err := d.Kernel(name)
	if err != nil {
		return err
	}
	return d.Launch(f, grid, block, shared, a)
}

// launchShared is launch for a kernel of shared bytes of dynamic shared
// memory: past the device's default limit it raises the kernel's limit
// first, up to the opt-in limit, whenever this launch needs more than the
// limit it set before for that driver and function (mmvq8w's memory grows
// with k); more than the opt-in limit is an error naming the kernel.
func launchShared(d Device, name string, grid, block vendorapi.Dim3, shared uint32, a *vendorapi.Args) error {
	f, err := d.Kernel(name)
	if err != nil {
		return err
	}
	if p := d.Props(); int(shared) > p.SharedMemPerBlock {
		if int(shared) > p.SharedMemPerBlockOptin {
			return fmt.Errorf("%s needs %d bytes of shared memory, the device has %d", name, shared, p.SharedMemPerBlockOptin)
		}
		if err := raiseSharedLimit(d.Driver(), f, int(shared)); err != nil {
			return err
		}
	}
	return d.Launch(f, grid, block, shared, a)
}

// sharedLimits holds the dynamic shared memory limit launchShared last set
// for each (driver, function) pair; sharedLimitsMu guards it.
var (
	sharedLimits   = map[sharedLimitKey]int{}
	sharedLimitsMu sync.Mutex
)

// raiseSharedLimit sets f's dynamic shared memory limit on drv to shared
// bytes unless an earlier call set it to at least that.
func raiseSharedLimit(drv vendorapi.Driver, f vendorapi.Function, shared int) error {
	key := sharedLimitKey{drv, f}
	sharedLimitsMu.Lock()
	defer sharedLimitsMu.Unlock()
	if sharedLimits[key] >= shared {
		return nil
	}
	if err := drv.SetMaxDynamicSharedMemory(f, shared); err != nil {
		return err
	}
	sharedLimits[key] = shared
	return nil
}

// sharedLimitKey keys sharedLimits.
type sharedLimitKey struct {
	drv vendorapi.Driver
	f   vendorapi.Function
}

// fd is the fast division by n (n ≥ 1; a zero dimension divides by 1).
func fd(n int64) vendorapi.FastDiv { return vendorapi.NewFastDiv(uint32(max(n, 1))) }

// fits32 reports whether every count of l fits the kernels' 32-bit fast
// division (elements and rows below 2^31).
func fits32(l tensor.Layout) bool { return l.Elements() < math.MaxInt32 }

// floatType reports whether t is F32, F16 or BF16 and names its kernel
// storage type ("f32", "f16", "bf16").
func floatType(t tensor.Type) (string, bool) {
	if t == tensor.F32 || t == tensor.F16 || t == tensor.BF16 {
		return t.String(), true
	}
	return "", false
}

// rowsGeometry is the block and grid of a kernel whose threads (x) share a
// row of ne0 elements (vec elements per thread step) and whose blocks (x)
// and threads (y) walk rows: about 256 threads a block (fewer rows than
// that block would hold: one row of threads each, so that a tiny op launches
// no idle warps), at most maxBlocks blocks.
func rowsGeometry(ne0, nrows int64, vec int64, warp int) (grid, block vendorapi.Dim3) {
	per := (ne0 + vec - 1) / vec
	bx := int64(warp)
	for bx < per && bx < 256 {
		bx *= 2
	}
	by := max(min(int64(256)/bx, nrows), 1)
	blocks := min((nrows+by-1)/by, maxBlocks)
	return vendorapi.Dim3{X: uint32(max(blocks, 1))}, vendorapi.Dim3{X: uint32(bx), Y: uint32(by)}
}

// flatGeometry is the block and grid of a 1D grid-stride kernel over n
// elements: 256 threads, at most maxBlocks blocks.
func flatGeometry(n int64) (grid, block vendorapi.Dim3) {
	blocks := min((n+255)/256, maxBlocks)
	return vendorapi.Dim3{X: uint32(max(blocks, 1))}, vendorapi.Dim3{X: 256}
}

// tinyFlatGeometry is flatGeometry with a block of fewer threads (whole
// warps) for n below 256: a one-element op launches one warp, not eight.
func tinyFlatGeometry(n int64, warp int) (grid, block vendorapi.Dim3) {
	grid, block = flatGeometry(n)
	if w := int64(max(warp, 1)); n < int64(block.X) {
		block.X = uint32(max((n+w-1)/w*w, w))
	}
	return grid, block
}

// spreadFlat is flatGeometry over n threads, with blocks of fewer threads
// (whole warps) when the 256-thread blocks would leave multiprocessors of the
// sms idle: a tiny op's warps then issue on as many multiprocessors as there
// are warps, not eight to a multiprocessor on a few (an H100, `ops perf`:
// SWIGLU f32 [128,2,2,2] 1.27-1.29 -> 1.04-1.08 µs, SILU 1.30-1.31 ->
// 1.19-1.21; bench/README.md, session 33).
func spreadFlat(n int64, sms, warp int) (grid, block vendorapi.Dim3) {
	grid, block = flatGeometry(n)
	if sms <= 0 || int64(grid.X) >= int64(sms) {
		return grid, block
	}
	w := int64(max(warp, 1))
	per := ((n+int64(sms)-1)/int64(sms) + w - 1) / w * w // threads a block, whole warps
	per = max(min(per, 256), w)
	return vendorapi.Dim3{X: uint32(max((n+per-1)/per, 1))}, vendorapi.Dim3{X: uint32(per)}
}

// spreadOne is spreadFlat, and for n threads that fill more than sms
// 256-thread blocks but fit sms blocks of up to 1024, the fewest whole-warp
// threads a block that keep the grid to sms blocks: a grid of at most one
// block a multiprocessor launches with programmatic dependent launch (it
// starts while the kernel before it ends), a larger one waits for it. For
// the one-unit-a-thread kernels of tiny tensors.
func spreadOne(n int64, sms, warp int) (grid, block vendorapi.Dim3) {
	grid, block = spreadFlat(n, sms, warp)
	if sms <= 0 || int64(grid.X) <= int64(sms) || n > int64(sms)*1024 {
		return grid, block
	}
	w := int64(max(warp, 1))
	per := min(((n+int64(sms)-1)/int64(sms)+w-1)/w*w, 1024)
	return vendorapi.Dim3{X: uint32((n + per - 1) / per)}, vendorapi.Dim3{X: uint32(per)}
}

// spreadRows is a rowsGeometry grid over nrows rows with fewer rows a block
// when its blocks would leave multiprocessors of the sms idle.
func spreadRows(grid, block vendorapi.Dim3, nrows int64, sms int) (vendorapi.Dim3, vendorapi.Dim3) {
	if sms <= 0 || int64(grid.X) >= int64(sms) || block.Y <= 1 {
		return grid, block
	}
	by := max((nrows+int64(sms)-1)/int64(sms), 1)
	block.Y = uint32(by)
	grid.X = uint32(max((nrows+by-1)/by, 1))
	return grid, block
}

// maxBlocks bounds the grids of grid-stride kernels: enough blocks to fill
// any GPU many times over.
const maxBlocks = 1 << 16

// aligned reports whether p and every stride of dims 1..3 with more than one
// element are multiples of n bytes.
func aligned(d vendorapi.TensorDesc, n int64) bool {
	if int64(d.Data)%n != 0 {
		return false
	}
	for i := 1; i < 4; i++ {
		if d.Ne[i] > 1 && d.Nb[i]%n != 0 {
			return false
		}
	}
	return true
}
