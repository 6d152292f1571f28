// Package backend runs graphs on a device: it holds one device's stream,
// memory pool, BLAS handle, loaded kernels and buffers, places a graph's
// tensors in device memory (core/graph's allocator), uploads its inputs and
// runs its nodes through core/ops, checking every node before anything is
// launched. It is ggml's backend for one device (ggml_backend_cuda_context).
package backend

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/capture"
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/core/pool"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// Options configures a backend.
type Options struct {
	// Logger receives the backend's messages; nil means slog.Default().
	Logger *slog.Logger
	// Env reads the TERNION_ switches; nil means os.LookupEnv (as switches
	// treats a nil Lookup).
	Env switches.Lookup
	// TensorSplit is each device's proportion of a split tensor's rows
	// (ggml's --tensor-split, e.g. {0.7, 0.3}); nil means
	// TERNION_TENSOR_SPLIT, and when that is unset the split by each
	// device's total memory. Checked when a split buffer is first made
	// (Backend.Split).
	TensorSplit []float64
}

// Backend is one device of a driver with the state ggml keeps per device:
// a stream (every op is queued on it), a memory pool for temporaries, a
// BLAS handle (made on first use), the kernels loaded so far and the buffer
// graphs are computed in. A Backend is safe for concurrent use; Compute
// calls run one at a time.
type Backend struct {
	drv   vendorapi.Driver
	dev   int
	props vendorapi.Props
	name  string
	log   *slog.Logger
	// hostWarned: the fall-back to pageable host buffers was logged.
	hostWarned bool
	opts       Options
	stream     vendorapi.Stream
	pool       pool.Pool

	mu      sync.Mutex // serializes Compute and guards the fields below
	funcs   map[string]vendorapi.Function
	args    vendorapi.Args
	blas    vendorapi.BLASHandle
	hasBLAS bool
	blasWS  vendorapi.DevicePtr // the BLAS library's workspace (0 when none)
	work    *Buffer             // graphs are computed here (grown as needed)
	staging *staging
	closed  bool

	last   *prepared                  // the graph computed last, ready to run again
	rec    *preparedNode              // the node whose launches are being recorded (nil: none)
	graphs *capture.Cache[*execGraph] // GPU-graph capture policy and the executable graphs
	cpy    cpyPtrs                    // the CPY pointer array (cpyptrs.go)
	flag   errFlag                    // the device error word (errflag.go)
	tiles  vendorapi.DevicePtr        // the tile counters, 0 until a graph needs them (tilecount.go)

	multi multiDevice // the other devices' backends and events of split ops (split.go)
}

// Open opens vendor's driver (vendorapi.Open) and returns a backend on its
// device dev.
func Open(vendor string, dev int, o Options) (*Backend, error) {
	d, err := vendorapi.Open(vendor)
	if err != nil {
		return nil, err
	}
	return New(d, dev, o)
}

// New returns a backend on device dev of driver d and logs it as the seed
// logs a device.
func New(d vendorapi.Driver, dev int, o Options) (*Backend, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	p, err := d.Props(dev)
	if err != nil {
		return nil, err
	}
	co, err := capture.OptionsFromEnv(o.Env)
	if err != nil {
		return nil, err
	}
	b := &Backend{drv: d, dev: dev, props: p, name: fmt.Sprintf("%s:%d", d.Vendor(), dev), log: o.Logger, opts: o,
		funcs: map[string]vendorapi.Function{}}
	if b.stream, err = d.StreamCreate(dev); err != nil {
		return nil, err
	}
	noVMM := switches.On(o.Env, switches.NoVMM)
	if b.pool, err = pool.New(d, dev, pool.Options{NoVMM: noVMM, Logger: o.Logger}); err != nil {
		_ = d.StreamDestroy(b.stream)
		return nil, err
	}
	co.IsSplit = readsSplit
	b.graphs = newGraphCache(p, co)
	// CPY destinations go through the pointer array where graphs may be
	// captured (as the seed: only with use_cuda_graph).
	gopts := b.graphs.Options()
	b.cpy.on = gopts.CopyIndirection && gopts.ArchOK && !gopts.Disabled
	pinned := !switches.On(o.Env, switches.NoPinned)
	b.staging = &staging{be: b, pinned: pinned}
	b.log.Info(fmt.Sprintf("ternion: backend %s: %s (%s), %d SMs, warp %d, VMM pool %v, pinned staging %v", b.name,
		p.Name, p.ArchName, p.SMs, p.WarpSize, p.VMM && !noVMM, pinned))
	return b, nil
}

// Name identifies the backend: "cuda:0", "host:1".
func (b *Backend) Name() string { return b.name }

// Driver returns the vendor driver (ops.Device). A node that uses it
// directly (copies, gemms) is run through its op again on every Compute.
func (b *Backend) Driver() vendorapi.Driver {
	b.unrecordable()
	return b.drv
}

// Launch queues f on the backend's stream (ops.Device), recording it when
// the current node's launches are being recorded.
func (b *Backend) Launch(f vendorapi.Function, grid, block vendorapi.Dim3, shared uint32, a *vendorapi.Args) error {
	if err := b.drv.Launch(f, grid, block, shared, b.stream, a); err != nil {
		return err
	}
	if b.rec != nil && b.rec.recordable {
		b.rec.launches = append(b.rec.launches, launchRecord{f: f, grid: grid, block: block, shared: shared, args: a.Clone()})
	}
	return nil
}

// Device returns the device index within the driver.
func (b *Backend) Device() int { return b.dev }

// Props returns the device's properties (ops.Device).
func (b *Backend) Props() vendorapi.Props { return b.props }

// Stream returns the stream the backend queues work on (ops.Device).
func (b *Backend) Stream() vendorapi.Stream { return b.stream }

// Pool returns the pool of temporaries (ops.Device).
func (b *Backend) Pool() pool.Pool {
	b.unrecordable()
	return b.pool
}

// Args returns the backend's argument buffer, reset (ops.Device; used
// under the Compute lock).
func (b *Backend) Args() *vendorapi.Args { return b.args.Reset() }

// Kernel returns catalog kernel name on the device, loaded once (ops.Device).
func (b *Backend) Kernel(name string) (vendorapi.Function, error) {
	if f, ok := b.funcs[name]; ok {
		return f, nil
	}
	f, err := b.drv.Kernel(b.dev, name)
	if err != nil {
		return vendorapi.Function{}, err
	}
	b.funcs[name] = f
	return f, nil
}

// LoadedKernels lists the catalog kernels the backend has loaded so far
// (the kernels its ops have launched), in no order.
func (b *Backend) LoadedKernels() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.funcs))
	for name := range b.funcs {
		out = append(out, name)
	}
	return out
}

// BLAS returns the backend's BLAS handle, made on first use (ops.Device).
func (b *Backend) BLAS() (vendorapi.BLASHandle, error) {
	b.unrecordable()
	if b.hasBLAS {
		return b.blas, nil
	}
	h, err := b.drv.BLASCreate(b.stream)
	if err != nil {
		return vendorapi.BLASHandle{}, err
	}
	if ws, ok := b.drv.(vendorapi.BLASWorkspacer); ok && b.props.CC.IsNVIDIA() && b.props.CC != 0 {
		size := uint64(BLASWorkspace(b.props.CC))
		p, err := b.drv.Malloc(b.dev, size)
		if err == nil {
			if err = ws.BLASSetWorkspace(h, p, size); err != nil {
				_ = b.drv.Free(b.dev, p)
			}
		}
		switch {
		case errors.Is(err, vendorapi.ErrNotSupported): // the library keeps its own workspace (p is freed above)
			b.log.Info(fmt.Sprintf("ternion: backend %s: the BLAS library takes no workspace (%v)", b.name, err))
		case err != nil:
			_ = b.drv.BLASDestroy(h)
			return vendorapi.BLASHandle{}, fmt.Errorf("ternion: backend %s: the BLAS workspace: %w", b.name, err)
		default:
			b.blasWS = p
		}
	}
	b.blas, b.hasBLAS = h, true
	return h, nil
}

// BLASWorkspace is the workspace the seed gives cuBLAS on a device of
// compute capability cc: 32 MiB on Hopper and newer, 4 MiB below.
func BLASWorkspace(cc arch.CC) int {
	if cc >= arch.Hopper {
		return 32 << 20
	}
	return 4 << 20
}

// Event records a new event at the current end of the backend's stream:
// Wait on it (or on another backend, WaitFor) orders later work after it.
func (b *Backend) Event() (vendorapi.Event, error) {
	e, err := b.drv.EventCreate(b.dev, false)
	if err != nil {
		return vendorapi.Event{}, err
	}
	if err := b.drv.EventRecord(e, b.stream); err != nil {
		_ = b.drv.EventDestroy(e)
		return vendorapi.Event{}, err
	}
	return e, nil
}

// WaitFor makes work queued on the backend after this call wait for e (an
// event of this device: Event of this or another backend on it).
func (b *Backend) WaitFor(e vendorapi.Event) error { return b.drv.StreamWaitEvent(b.stream, e) }

// OffloadMinBatch is the seed's minimum batch for offloading an op whose
// weights live elsewhere to this device.
const OffloadMinBatch = 32

// OffloadOp reports whether an op whose weights are in host memory is worth
// running here (ggml's offload_op): its batch, ne[1] (ne[2] for
// MUL_MAT_ID), is at least OffloadMinBatch.
func (b *Backend) OffloadOp(n *graph.Tensor) bool {
	batch := n.Dim(1)
	if n.Op() == graph.OpMulMatID {
		batch = n.Dim(2)
	}
	return batch >= OffloadMinBatch
}

// Synchronize waits for the work queued on the backend and returns the
// first error of that work: a vendor's error, or the bad inputs kernels
// found on the device since the last Synchronize (the device error word,
// errflag.go: an expert index out of range in a MUL_MAT_ID's computed ids
// is an error matching ErrBadIndex that names the op and the backend),
// reported once.
func (b *Backend) Synchronize() error {
	if err := b.sync(); err != nil {
		return err
	}
	return b.checkErrorFlag()
}

// sync waits for the work queued on the backend, leaving the device error
// word to Synchronize (the backend's own waits before copies and frees).
func (b *Backend) sync() error { return b.drv.StreamSynchronize(b.stream) }

// Supports returns nil when node n can run here, else an error matching
// ops.ErrNotSupported that names the op, its types and the reason. A node
// that reads a split tensor (AllocSplit) runs only as the row-split
// MUL_MAT's src0 (supportsSplit).
func (b *Backend) Supports(n *graph.Tensor) error {
	if err := ops.Supports(n, b.props); err != nil {
		return err
	}
	return b.supportsSplit(n)
}

// SupportsGraph returns nil when every node of g can run here, else the
// error Supports returns for the first node that cannot.
func (b *Backend) SupportsGraph(g *graph.Graph) error {
	for _, n := range g.Nodes() {
		if err := b.Supports(n); err != nil {
			return err
		}
	}
	return nil
}

// ErrClosed is returned by a closed backend.
var ErrClosed = errors.New("backend closed")

// Close waits for queued work and releases the stream, the pool, the BLAS
// handle and the compute buffer. Buffers from Alloc stay valid until freed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	errs := []error{b.drv.StreamSynchronize(b.stream)}
	if b.work != nil {
		errs = append(errs, b.work.Free())
		b.work = nil
	}
	errs = append(errs, b.staging.close(), b.closeGraphs(), b.closeCopyPtrs(), b.closeErrorFlag(), b.closeTileCounters(), b.closeMulti())
	if b.hasBLAS {
		// Not while another backend of the device captures (graphs.go).
		gate := captureGate(b.drv, b.dev)
		gate.Lock()
		errs = append(errs, b.drv.BLASDestroy(b.blas))
		gate.Unlock()
		if b.blasWS != 0 {
			errs = append(errs, b.drv.Free(b.dev, b.blasWS))
		}
	}
	errs = append(errs, b.pool.Close(), b.drv.StreamDestroy(b.stream))
	return errors.Join(errs...)
}
