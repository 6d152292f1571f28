package host

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// hostKernel is the Go implementation of one catalog kernel. Each lives in
// the file named like its .cu source (fill.go implements fill.cu).
type hostKernel struct {
	// buffers lists the device ranges a launch with args touches.
	buffers func(args []vendorapi.Arg) []buffer
	// run executes the whole launch on the resolved buffers, in buffers' order.
	run func(mem [][]byte, args []vendorapi.Arg)
}

// buffer is one device range a kernel touches.
type buffer struct {
	param string
	ptr   vendorapi.DevicePtr
	size  uint64 // bytes; 0 touches nothing
	align uint64
}

// hostKernels holds the implementations by catalog name.
var hostKernels = map[string]*hostKernel{}

// register adds the implementation of catalog kernel name.
func register(name string, k *hostKernel) { hostKernels[name] = k }

// elems is the buffer of n elements of size bytes at pointer argument a.
func elems(param string, a vendorapi.Arg, n int64, size uint64) buffer {
	b := buffer{param: param, ptr: a.Ptr(), align: size}
	switch {
	case n <= 0:
	case uint64(n) > math.MaxUint64/size:
		b.size = math.MaxUint64
	default:
		b.size = uint64(n) * size
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

// parallelGrain is the fewest elements worth a goroutine of their own.
const parallelGrain = 1 << 15

// parallel runs body over [0, n) in chunks on up to GOMAXPROCS goroutines,
// returning when all are done: the grid-stride loop of a .cu kernel.
func parallel(n int, body func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+parallelGrain-1)/parallelGrain)
	if workers <= 1 {
		body(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { body(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// function is a Kernel handle.
type function struct {
	id     uintptr
	dev    int
	name   string
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
	if _, err := kernels.Lookup(name); err != nil {
		return vendorapi.Function{}, fromContract(call, dev, err)
	}
	if hostKernels[name] == nil {
		return vendorapi.Function{}, newErr(errNoKernelImage, call, dev,
			"kernel %q is in the catalog but the host device has no Go implementation of it", name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := funcKey{dev, name}
	id, ok := d.funcIDs[key]
	if !ok {
		id = d.id()
		d.funcIDs[key] = id
		d.funcs[id] = &function{id: id, dev: dev, name: name, maxDyn: sharedMemPerBlock}
	}
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

// Launch checks f's arguments against the catalog and every buffer they
// address, then queues the kernel on s (a stream of f's device).
func (d *Driver) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, sharedMem uint32, s vendorapi.Stream, args []vendorapi.Arg) error {
	const call = "hostLaunchKernel"
	if f.Device != s.Device {
		return invalid(call, s.Device, "function of device %d launched on a stream of device %d", f.Device, s.Device)
	}
	k, err := kernels.Lookup(f.Name)
	if err != nil {
		return fromContract(call, f.Device, err)
	}
	if err := vendorapi.CheckArgs(f.Name, k.Kinds(), args); err != nil {
		return fromContract(call, f.Device, err)
	}
	return d.submit(call, s, &node{kind: nodeKernel, call: call, dev: f.Device, fn: f,
		grid: grid, block: block, shared: sharedMem, args: slices.Clone(args)})
}

// checkLaunch checks a launch configuration against CUDA's limits.
func checkLaunch(grid, block vendorapi.Dim3, shared uint32, maxDyn int) string {
	b, g := block.Norm(), grid.Norm()
	if b.X > 1024 || b.Y > 1024 || b.Z > 64 || block.Count() > 1024 {
		return fmt.Sprintf("block %v exceeds 1024 threads (x, y ≤ 1024, z ≤ 64)", block)
	}
	if g.X > math.MaxInt32 || g.Y > 65535 || g.Z > 65535 {
		return fmt.Sprintf("grid %v exceeds (2³¹−1, 65535, 65535)", grid)
	}
	if int64(shared) > int64(maxDyn) {
		return fmt.Sprintf("%d bytes of dynamic shared memory exceed the function's limit of %d (SetMaxDynamicSharedMemory)", shared, maxDyn)
	}
	return ""
}

// prepareKernel resolves a kernel node's buffers. The caller holds memMu.
func (d *Driver) prepareKernel(n *node, dspan func(string, int, vendorapi.DevicePtr, uint64, uint64) ([]byte, *vendorapi.Error)) (func() error, *vendorapi.Error) {
	k := hostKernels[n.fn.Name]
	if k == nil {
		return nil, newErr(errNoKernelImage, n.call, n.dev, "no host implementation of kernel %q", n.fn.Name)
	}
	bufs := k.buffers(n.args)
	mem := make([][]byte, len(bufs))
	for i, b := range bufs {
		m, err := dspan("kernel "+n.fn.Name+" argument "+b.param, n.dev, b.ptr, b.size, b.align)
		if err != nil {
			return nil, err
		}
		mem[i] = m
	}
	return func() error { k.run(mem, n.args); return nil }, nil
}
