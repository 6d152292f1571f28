package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// hostKernel is the Go implementation of one catalog kernel. Each lives in
// the file named like its family's .cu source (fill.go implements fill.cu).
// It runs as a GPU runs the kernel: block by block over the launch's grid,
// each block doing the work of its threads, so a launch with too small a
// grid leaves elements unwritten on host as it would on a GPU.
type hostKernel struct {
	// buffers lists the device ranges a launch with args touches.
	buffers func(a *vendorapi.Args) []buffer
	// block runs one thread block on the resolved buffers, in buffers'
	// order. Blocks of one launch run concurrently.
	block func(mem [][]byte, a *vendorapi.Args, b block)
}

// block is one thread block of a launch: blockIdx, blockDim and gridDim.
type block struct {
	idx, dim, grid vendorapi.Dim3
}

// gridStride calls f(i) for every i < n that b's threads reach in a 1D
// grid-stride loop (TERNION_TID, TERNION_NTHREADS): thread t starts at
// blockIdx.x*blockDim.x + t and steps gridDim.x*blockDim.x.
func (b block) gridStride(n int64, f func(i int64)) {
	stride := int64(b.grid.X) * int64(b.dim.X)
	first := int64(b.idx.X) * int64(b.dim.X)
	for t := range int64(b.dim.X) {
		for i := first + t; i < n; i += stride {
			f(i)
		}
	}
}

// first reports whether b is block (0,0,0), for kernels whose one thread
// does all the work.
func (b block) first() bool { return b.idx == vendorapi.Dim3{} }

// buffer is one device range a kernel touches.
type buffer struct {
	param string
	ptr   vendorapi.DevicePtr
	size  uint64 // bytes; 0 touches nothing
	align uint64
	bad   string // why the argument describes no valid range ("" when it does)
	// slot, when not 0, is the address of an 8-byte device word holding the
	// range's start (pointer indirection: a copy kernel's dslot): ptr is
	// ignored and the word is read when the kernel runs, as a GPU reads it.
	slot vendorapi.DevicePtr
}

// indirect returns b with its start read from the device word at slot when
// the kernel runs (b as it is when slot is 0).
func indirect(b buffer, slot vendorapi.DevicePtr) buffer {
	b.slot = slot
	return b
}

// direct holds the implementations of entry points a .cu file writes, by
// name; templates those of template bodies, by body name, as a function of
// the instantiation (whose Bind holds the template arguments).
var (
	direct    = map[string]*hostKernel{}
	templates = map[string]func(k kernels.Kernel) (*hostKernel, error){}
)

// register adds the implementation of catalog kernel name.
func register(name string, k *hostKernel) { direct[name] = k }

// registerTemplate adds the implementation of the instantiations of the
// template body named body.
func registerTemplate(body string, make func(k kernels.Kernel) (*hostKernel, error)) {
	templates[body] = make
}

// templateBody is the name of k's template body ("binary_f32"), "" for an
// entry point its source writes.
func templateBody(k kernels.Kernel) string {
	name, _, _ := strings.Cut(k.Body, "<")
	return name
}

// implementation returns the host implementation of catalog kernel k.
func implementation(k kernels.Kernel) (*hostKernel, error) {
	if k.Body == "" {
		if hk := direct[k.Name]; hk != nil {
			return hk, nil
		}
		return nil, fmt.Errorf("kernel %q is in the catalog but the host device has no Go implementation of it", k.Name)
	}
	make := templates[templateBody(k)]
	if make == nil {
		return nil, fmt.Errorf("kernel %q is in the catalog but the host device has no Go implementation of its template %s",
			k.Name, templateBody(k))
	}
	return make(k)
}

// elems is the buffer of n elements of size bytes at p.
func elems(param string, p vendorapi.DevicePtr, n int64, size uint64) buffer {
	b := buffer{param: param, ptr: p, align: size}
	switch {
	case n <= 0:
	case uint64(n) > math.MaxUint64/size:
		b.size = math.MaxUint64
	default:
		b.size = uint64(n) * size
	}
	return b
}

// tensorBuf is the buffer a tensor descriptor spans with elements of size
// bytes: from its data pointer to the end of its last element. Strides must
// be non-negative multiples of the element size, as a GPU's aligned loads need.
func tensorBuf(param string, t vendorapi.TensorDesc, size uint64) buffer {
	b := buffer{param: param, ptr: t.Data, align: size}
	last := uint64(0)
	for i := range 4 {
		ne, nb := t.Ne[i], t.Nb[i]
		switch {
		case ne < 0:
			b.bad = fmt.Sprintf("ne[%d] = %d is negative", i, ne)
			return b
		case ne == 0:
			return b // an empty tensor touches nothing
		case nb < 0 || uint64(nb)%size != 0:
			b.bad = fmt.Sprintf("nb[%d] = %d is not a non-negative multiple of the %d-byte element", i, nb, size)
			return b
		}
		hi, lo := bits.Mul64(uint64(ne-1), uint64(nb))
		sum, carry := bits.Add64(last, lo, 0)
		if hi != 0 || carry != 0 {
			b.bad = "the tensor's extent overflows"
			return b
		}
		last = sum
	}
	if last > math.MaxUint64-size {
		b.bad = "the tensor's extent overflows"
		return b
	}
	b.size = last + size
	return b
}

// vecRows is the buffer of a tensor a kernel reads or writes in vectors of
// vec bytes along its rows: elements of size bytes packed in rows a multiple
// of vec bytes long, rows starting vec-byte aligned.
func vecRows(param string, t vendorapi.TensorDesc, size, vec uint64) buffer {
	b := tensorBuf(param, t, size)
	if b.bad != "" {
		return b
	}
	b.align = vec
	if uint64(t.Nb[0]) != size || uint64(t.Ne[0])*size%vec != 0 {
		b.bad = fmt.Sprintf("rows must be packed %d-byte elements, a multiple of %d bytes long", size, vec)
	}
	for i := 1; i < 4; i++ {
		if uint64(t.Nb[i])%vec != 0 && t.Ne[i] > 1 {
			b.bad = fmt.Sprintf("nb[%d] = %d is not a multiple of %d", i, t.Nb[i], vec)
		}
	}
	return b
}

// f32s views b as float32s; b's address is 4-byte aligned (checked by span).
func f32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// u32s views b as uint32s; b's address is 4-byte aligned (checked by span).
func u32s(b []byte) []uint32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// i64s views b as int64s; b's address is 8-byte aligned (checked by span).
func i64s(b []byte) []int64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// blockChunk is how many blocks a worker takes at a time.
const blockChunk = 16

// runBlocks runs body for every block of a launch of grid × dim, on up to
// GOMAXPROCS goroutines, and returns when all are done. A panic in a block
// (a kernel bug) becomes the returned error instead of ending the process.
func runBlocks(grid, dim vendorapi.Dim3, body func(b block)) error {
	grid, dim = grid.Norm(), dim.Norm()
	n := grid.Count()
	gx, gy := uint64(grid.X), uint64(grid.Y)
	var next atomic.Uint64
	var failed atomic.Pointer[string]
	work := func() {
		defer func() {
			if p := recover(); p != nil {
				msg := fmt.Sprint(p)
				failed.CompareAndSwap(nil, &msg)
			}
		}()
		for failed.Load() == nil {
			lo := next.Add(blockChunk) - blockChunk
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+blockChunk, n); i++ {
				body(block{idx: vendorapi.Dim3{X: uint32(i % gx), Y: uint32(i / gx % gy), Z: uint32(i / (gx * gy))},
					dim: dim, grid: grid})
			}
		}
	}
	workers := min(uint64(runtime.GOMAXPROCS(0)), (n+blockChunk-1)/blockChunk)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if msg := failed.Load(); msg != nil {
		return errors.New(*msg)
	}
	return nil
}

// function is a Kernel handle: its catalog kinds and host implementation,
// resolved once so a launch looks nothing up by name.
type function struct {
	id     uintptr
	dev    int
	name   string
	kinds  []vendorapi.ParamKind
	impl   *hostKernel
	maxDyn int
}

type funcKey struct {
	dev  int
	name string
}

// Kernel returns catalog kernel name on dev; asking twice returns the same handle.
func (d *Driver) Kernel(dev int, name string) (vendorapi.Function, error) {
	const call = "hostModuleGetFunction"
	if err := d.checkDev(call, dev); err != nil {
		return vendorapi.Function{}, err
	}
	k, err := kernels.Lookup(name)
	if err != nil {
		return vendorapi.Function{}, fromContract(call, dev, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := funcKey{dev, name}
	if id, ok := d.funcIDs[key]; ok {
		return vendorapi.Function{Device: dev, Name: name, Handle: id}, nil
	}
	impl, err := implementation(k)
	if err != nil {
		return vendorapi.Function{}, newErr(errNoKernelImage, call, dev, "%v", err)
	}
	id := d.id()
	d.funcIDs[key] = id
	d.funcs[id] = &function{id: id, dev: dev, name: name, kinds: k.Kinds(), impl: impl, maxDyn: sharedMemPerBlock}
	return vendorapi.Function{Device: dev, Name: name, Handle: id}, nil
}

// SetMaxDynamicSharedMemory lets f launch with up to bytes of dynamic shared
// memory (at most the opt-in maximum).
func (d *Driver) SetMaxDynamicSharedMemory(f vendorapi.Function, bytes int) error {
	const call = "hostFuncSetAttribute"
	d.mu.Lock()
	defer d.mu.Unlock()
	fn := d.funcs[f.Handle]
	if fn == nil || fn.dev != f.Device || fn.name != f.Name {
		return newErr(errInvalidHandle, call, f.Device, "unknown function %q (handle %d)", f.Name, f.Handle)
	}
	if bytes < 0 || bytes > sharedMemPerBlockOptin {
		return invalid(call, f.Device, "%d bytes of dynamic shared memory: the limit is %d", bytes, sharedMemPerBlockOptin)
	}
	fn.maxDyn = bytes
	return nil
}

// Launch queues f on s (a stream of f's device) after checking its
// arguments against the catalog, its launch configuration and every buffer
// the arguments address. It keeps a copy of args.
func (d *Driver) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args *vendorapi.Args) error {
	n, err := launchNode(f, grid, block, sharedMem, s, args.Clone())
	if err != nil {
		return err
	}
	return d.submit(n.call, s, n)
}

// launchNode is the node of a launch of f on s, which must be of f's device.
func launchNode(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args *vendorapi.Args) (*node, error) {
	const call = "hostLaunchKernel"
	if f.Device != s.Device {
		return nil, invalid(call, s.Device, "function of device %d launched on a stream of device %d", f.Device, s.Device)
	}
	return &node{kind: nodeKernel, call: call, dev: f.Device, fn: f, grid: grid, block: block, shared: sharedMem, args: args}, nil
}

// checkKernel resolves n's function and checks its arguments and launch
// configuration. The caller holds d.mu.
func (d *Driver) checkKernel(n *node) *vendorapi.Error {
	fn := d.funcs[n.fn.Handle]
	if fn == nil || fn.dev != n.fn.Device || fn.name != n.fn.Name {
		return newErr(errInvalidHandle, n.call, n.dev, "unknown function %q (handle %d)", n.fn.Name, n.fn.Handle)
	}
	if err := vendorapi.CheckArgs(fn.name, fn.kinds, n.args); err != nil {
		return fromContract(n.call, n.dev, err)
	}
	if err := vendorapi.CheckGeometry(n.grid, n.block); err != nil {
		return newErr(errInvalidConfiguration, n.call, n.dev, "kernel %s: %s", n.fn.Name, contractMessage(err))
	}
	if int64(n.shared) > int64(fn.maxDyn) {
		return newErr(errInvalidConfiguration, n.call, n.dev, "kernel %s: %d bytes of dynamic shared memory exceed the function's limit of %d (SetMaxDynamicSharedMemory)",
			n.fn.Name, n.shared, fn.maxDyn)
	}
	if n.impl == nil {
		// Set once, when n is first queued or captured: a graph's nodes are
		// checked again at every launch, while earlier launches read them.
		n.impl = fn.impl
	}
	return nil
}

// prepareKernel resolves a kernel node's buffers. A buffer whose start is
// in a device word (buffer.slot) has the word checked, and is resolved only
// when exec says the kernel runs now: the word may be written by work queued
// before it. The caller holds memMu.
func (d *Driver) prepareKernel(n *node, exec bool, dspan spanFunc) (func() error, *vendorapi.Error) {
	k := n.impl
	bufs := k.buffers(n.args)
	mem := make([][]byte, len(bufs))
	deferred := false
	for i, b := range bufs {
		what := "kernel " + n.fn.Name + " argument " + b.param
		if b.bad != "" {
			return nil, invalid(n.call, n.dev, "%s: %s", what, b.bad)
		}
		if b.slot != 0 {
			w, err := dspan(what+" (its pointer slot)", n.dev, b.slot, 8, 8)
			if err != nil {
				return nil, err
			}
			if !exec {
				deferred = true
				continue
			}
			b.ptr = vendorapi.DevicePtr(binary.LittleEndian.Uint64(w))
			what += " (through its pointer slot)"
		}
		m, err := dspan(what, n.dev, b.ptr, b.size, b.align)
		if err != nil {
			return nil, err
		}
		mem[i] = m
	}
	if deferred {
		return nil, nil
	}
	return func() error {
		if err := runBlocks(n.grid, n.block, func(b block) { k.block(mem, n.args, b) }); err != nil {
			return newErr(errLaunchFailure, n.call, n.dev, "kernel %s: %v", n.fn.Name, err)
		}
		return nil
	}, nil
}
