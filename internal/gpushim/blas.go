//go:build cuda || hip || musa

package gpushim

/*
#include "shim.h"
#cgo noescape tn_gemm_run
#cgo nocallback tn_gemm_run
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/vendorapi"
)

// blasState is the BLAS library, opened on first use: rocBLAS is loaded at
// run time, and its absence must fail BLAS calls only.
type blasState struct {
	mu      sync.Mutex
	opened  bool
	version string // e.g. "cuBLAS 12.8.4"
	err     error  // why BLAS is unusable
}

// blasOpen opens the BLAS library once and returns its version.
func (d *Driver) blasOpen() (string, error) {
	b := &d.blas
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opened {
		return b.version, b.err
	}
	b.opened = true
	var major, minor, patch, initialized C.int32_t
	var lib *C.char
	openMu.Lock() // the C side's library state is process-wide
	st := C.tn_blas_open(&major, &minor, &patch, &initialized, &lib)
	openMu.Unlock()
	if err := d.fail(st, -1); err != nil {
		var ve *vendorapi.Error
		if errors.As(err, &ve) && errors.Is(err, vendorapi.ErrNoDriver) {
			ve.Message = fmt.Sprintf("%s is loaded at run time and is not usable here: %s (everything but BLAS still works)",
				vendor.blasName, ve.Message)
		}
		b.err = err
		return "", err
	}
	b.version = fmt.Sprintf("%s %d.%d.%d", vendor.blasName, int(major), int(minor), int(patch))
	if lib != nil {
		d.log.Info(fmt.Sprintf("%s: %s from %s", d.vendor, b.version, C.GoString(lib)))
	}
	if initialized != 0 {
		d.log.Info(fmt.Sprintf("%s: called rocblas_initialize as a workaround for a rocBLAS bug (before rocBLAS 4)", d.vendor))
	}
	return b.version, nil
}

// BLASCreate creates a BLAS handle on s's device bound to s, with host
// pointer mode. (The 32 MiB cuBLAS workspace ggml sets on Hopper is not set
// yet.)
func (d *Driver) BLASCreate(s vendorapi.Stream) (vendorapi.BLASHandle, error) {
	hs, err := d.stream("BLASCreate", s)
	if err != nil {
		return vendorapi.BLASHandle{}, err
	}
	if _, err := d.blasOpen(); err != nil {
		return vendorapi.BLASHandle{}, err
	}
	var raw C.uint64_t
	if err := d.fail(C.tn_blas_create(C.int32_t(s.Device), C.uint64_t(hs.raw), &raw), s.Device); err != nil {
		return vendorapi.BLASHandle{}, err
	}
	id := d.h.add(handle{kind: kindBLAS, dev: s.Device, raw: uint64(raw)})
	return vendorapi.BLASHandle{Device: s.Device, Handle: id}, nil
}

// BLASDestroy destroys h.
func (d *Driver) BLASDestroy(h vendorapi.BLASHandle) error {
	hb, err := d.release("BLASDestroy", h.Handle, kindBLAS, h.Device)
	if err != nil {
		return err
	}
	return d.fail(C.tn_blas_destroy(C.int32_t(h.Device), C.uint64_t(hb.raw)), h.Device)
}

// BLASSetStream binds h to s, a stream of h's device.
func (d *Driver) BLASSetStream(h vendorapi.BLASHandle, s vendorapi.Stream) error {
	hb, err := d.lookup("BLASSetStream", h.Handle, kindBLAS, h.Device)
	if err != nil {
		return err
	}
	hs, err := d.stream("BLASSetStream", s)
	if err != nil {
		return err
	}
	if s.Device != h.Device {
		return d.invalid("BLASSetStream", h.Device, "handle of device %d, stream of device %d", h.Device, s.Device)
	}
	return d.fail(C.tn_blas_set_stream(C.int32_t(h.Device), C.uint64_t(hb.raw), C.uint64_t(hs.raw)), h.Device)
}

// BLASSetWorkspace makes [p, p+size) of h's device the library's workspace
// for h (vendorapi.BLASWorkspacer); the memory must outlive h's use.
func (d *Driver) BLASSetWorkspace(h vendorapi.BLASHandle, p vendorapi.DevicePtr, size uint64) error {
	hb, err := d.lookup("BLASSetWorkspace", h.Handle, kindBLAS, h.Device)
	if err != nil {
		return err
	}
	if err := d.checkDevice("BLASSetWorkspace", h.Device, p, size); err != nil {
		return err
	}
	return d.fail(C.tn_blas_set_workspace(C.int32_t(h.Device), C.uint64_t(hb.raw), C.uint64_t(p), C.uint64_t(size)), h.Device)
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C once.
func (d *Driver) Gemm(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.gemm("Gemm", h, g, C.TN_GEMM_ONE)
}

// GemmStridedBatched runs g.BatchCount gemms at g.Stride{A,B,C} element offsets.
func (d *Driver) GemmStridedBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.gemm("GemmStridedBatched", h, g, C.TN_GEMM_STRIDED)
}

// GemmBatched runs g.BatchCount gemms whose A, B and C are device arrays of pointers.
func (d *Driver) GemmBatched(h vendorapi.BLASHandle, g vendorapi.Gemm) error {
	return d.gemm("GemmBatched", h, g, C.TN_GEMM_BATCHED)
}

func (d *Driver) gemm(call string, h vendorapi.BLASHandle, g vendorapi.Gemm, mode C.int32_t) error {
	hb, err := d.lookup(call, h.Handle, kindBLAS, h.Device)
	if err != nil {
		return err
	}
	if err := g.Validate(); err != nil { // the BLAS library's int range included
		return contractError(d.vendor, call, h.Device, err)
	}
	batch := 1
	if mode != C.TN_GEMM_ONE {
		batch = g.BatchCount
	}
	if batch == 0 {
		return nil
	}
	if err := d.checkGemmMemory(call, h.Device, g, mode, batch); err != nil {
		return err
	}
	cg := C.tn_gemm{
		m: C.int32_t(g.M), n: C.int32_t(g.N), k: C.int32_t(g.K),
		atype: C.int32_t(g.AType), btype: C.int32_t(g.BType), ctype: C.int32_t(g.CType), compute: C.int32_t(g.Compute),
		lda: C.int32_t(g.LDA), ldb: C.int32_t(g.LDB), ldc: C.int32_t(g.LDC), batch: C.int32_t(batch),
		a: C.uint64_t(g.A), b: C.uint64_t(g.B), c: C.uint64_t(g.C),
		stride_a: C.int64_t(g.StrideA), stride_b: C.int64_t(g.StrideB), stride_c: C.int64_t(g.StrideC),
	}
	if g.TransA {
		cg.transa = 1
	}
	if g.TransB {
		cg.transb = 1
	}
	cg.alpha_bits, cg.beta_bits = scalarBits(g.Compute, g.Alpha), scalarBits(g.Compute, g.Beta)
	return d.fail(C.tn_gemm_run(C.int32_t(h.Device), C.uint64_t(hb.raw), &cg, mode), h.Device)
}

// checkGemmMemory checks that the matrices (or, batched, the pointer arrays)
// lie in live device memory, aligned to their elements (the pointer arrays
// to 8 bytes), so that a stale or misaligned pointer is an error rather than
// a fault inside the BLAS library. g passed Validate, so its extents fit.
func (d *Driver) checkGemmMemory(call string, dev int, g vendorapi.Gemm, mode C.int32_t, batch int) error {
	a, b, c := uint64(8*batch), uint64(8*batch), uint64(8*batch)
	aligns := [3]uint64{8, 8, 8}
	if mode != C.TN_GEMM_BATCHED {
		aligns = [3]uint64{uint64(g.AType.Size()), uint64(g.BType.Size()), uint64(g.CType.Size())}
		a, b, c = g.Extents(batch) // batch is 1 for TN_GEMM_ONE: the strides are unused
	}
	for i, m := range []struct {
		p vendorapi.DevicePtr
		n uint64
	}{{g.A, a}, {g.B, b}, {g.C, c}} {
		if uint64(m.p)%aligns[i] != 0 {
			return d.invalid(call, dev, "%c at %#x is not aligned to %d bytes", "ABC"[i], uint64(m.p), aligns[i])
		}
		if err := d.checkDevice(call, dev, m.p, m.n); err != nil {
			return err
		}
	}
	return nil
}

// scalarBits encodes alpha or beta in the compute type: half bits for
// Compute16F, float bits otherwise.
func scalarBits(c vendorapi.ComputeType, v float32) C.uint32_t {
	if c == vendorapi.Compute16F {
		return C.uint32_t(half.F16FromF32(v))
	}
	return C.uint32_t(math.Float32bits(v))
}

// BLASVersion returns the BLAS library's name and version, e.g. "cuBLAS 12.8.4".
func (d *Driver) BLASVersion() (string, error) { return d.blasOpen() }
