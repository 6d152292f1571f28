package host

import (
	"fmt"
	"runtime/debug"

	"github.com/ternion/ternion/vendorapi"
)

// gonumModule and gonumVersion name the Go BLAS the host device runs; the
// version is read from the build information when it is available.
const (
	gonumModule  = "gonum.org/v1/gonum"
	gonumVersion = "v0.17.0"
)

// blasVersion returns "gonum <module version>".
func blasVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path != gonumModule {
				continue
			}
			if m.Replace != nil && m.Replace.Version != "" {
				return "gonum " + m.Replace.Version
			}
			if m.Version != "" && m.Version != "(devel)" {
				return "gonum " + m.Version
			}
		}
	}
	return "gonum " + gonumVersion
}

// blasHandle is a BLASCreate handle: the stream its calls are queued on.
type blasHandle struct {
	dev    int
	stream uintptr
}

// BLASCreate creates a handle bound to s.
func (d *Driver) BLASCreate(s vendorapi.Stream) (vendorapi.BLASHandle, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.lookupStream("hostBlasCreate", s); err != nil {
		return vendorapi.BLASHandle{}, err
	}
	id := d.id()
	d.blas[id] = &blasHandle{dev: s.Device, stream: s.Handle}
	return vendorapi.BLASHandle{Device: s.Device, Handle: id}, nil
}

func (d *Driver) lookupBLAS(call string, h vendorapi.BLASHandle) (*blasHandle, error) {
	bh := d.blas[h.Handle]
	if bh == nil || bh.dev != h.Device {
		return nil, newErr(errInvalidHandle, call, h.Device, "unknown or destroyed BLAS handle %d", h.Handle)
	}
	return bh, nil
}

// BLASDestroy destroys h; calls already queued still run.
func (d *Driver) BLASDestroy(h vendorapi.BLASHandle) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.lookupBLAS("hostBlasDestroy", h); err != nil {
		return err
	}
	delete(d.blas, h.Handle)
	return nil
}

// BLASSetStream binds h to s, a stream of h's device.
func (d *Driver) BLASSetStream(h vendorapi.BLASHandle, s vendorapi.Stream) error {
	const call = "hostBlasSetStream"
	d.mu.Lock()
	defer d.mu.Unlock()
	bh, err := d.lookupBLAS(call, h)
	if err != nil {
		return err
	}
	if _, err := d.lookupStream(call, s); err != nil {
		return err
	}
	if s.Device != bh.dev {
		return invalid(call, h.Device, "stream of device %d for a handle of device %d", s.Device, bh.dev)
	}
	bh.stream = s.Handle
	return nil
}

// Gemm queues C = alpha*op(A)*op(B) + beta*C (column-major, as cuBLAS) on h's
// stream. Products accumulate in float32; with Compute16F alpha and beta are
// first rounded to half and the result is rounded to half when stored, but
// the accumulation itself stays float32 (more accurate than a GPU's).
func (d *Driver) Gemm(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.gemm("hostGemmEx", nodeGemm, h, g)
}

// GemmStridedBatched queues g.BatchCount gemms, matrix i at i*Stride{A,B,C}
// elements from A, B and C.
func (d *Driver) GemmStridedBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.gemm("hostGemmStridedBatchedEx", nodeGemmStrided, h, g)
}

// GemmBatched queues g.BatchCount gemms whose A, B and C are device arrays of
// device pointers; the arrays are read when the work runs.
func (d *Driver) GemmBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.gemm("hostGemmBatchedEx", nodeGemmBatched, h, g)
}

func (d *Driver) gemm(call string, kind nodeKind, h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	if err := g.Validate(); err != nil {
		return fromContract(call, h.Device, err)
	}
	d.mu.Lock()
	bh, err := d.lookupBLAS(call, h)
	var s vendorapi.Stream
	if err == nil {
		s = vendorapi.Stream{Device: bh.dev, Handle: bh.stream}
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	return d.submit(call, s, &node{kind: kind, call: call, dev: s.Device, gemm: g})
}

// BLASVersion returns "gonum" and its module version.
func (d *Driver) BLASVersion() (string, error) { return blasVersion(), nil }

// BLASSetWorkspace checks that [p, p+size) is live memory of h's device
// (vendorapi.BLASWorkspacer); gonum needs no workspace, so nothing else
// happens.
func (d *Driver) BLASSetWorkspace(h vendorapi.BLASHandle, p vendorapi.DevicePtr, size uint64) error {
	const call = "hostBlasSetWorkspace"
	d.mu.Lock()
	defer d.mu.Unlock()
	bh, err := d.lookupBLAS(call, h)
	if err != nil {
		return err
	}
	d.memMu.RLock()
	defer d.memMu.RUnlock()
	_, err = d.syncSpan(call, fmt.Sprintf("workspace [%#x, +%d)", uintptr(p), size), bh.dev, p, size)
	return err
}
