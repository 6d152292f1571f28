package vendorapi

import (
	"fmt"

	"github.com/ternion/ternion/arch"
)

// DevicePtr is an address in a device's memory (or, for unified devices, in
// the shared address space). Zero is never a valid allocation.
type DevicePtr uintptr

// Add returns p advanced by off bytes.
func (p DevicePtr) Add(off uint64) DevicePtr { return p + DevicePtr(off) }

// Dim3 is a launch grid or block size.
type Dim3 struct{ X, Y, Z uint32 }

// Count returns X*Y*Z with zero components counted as 1.
func (d Dim3) Count() uint64 {
	n := uint64(1)
	for _, v := range []uint32{d.X, d.Y, d.Z} {
		if v > 0 {
			n *= uint64(v)
		}
	}
	return n
}

// Norm returns d with zero components replaced by 1.
func (d Dim3) Norm() Dim3 {
	if d.X == 0 {
		d.X = 1
	}
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// String formats d as (x,y,z).
func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Launch geometry limits every vendor enforces (CUDA's; HIP's are wider, so
// its shim refuses what CUDA would): threads per block and per block
// dimension, blocks per grid dimension.
const (
	MaxBlockThreads = 1024
	MaxBlockX       = 1024
	MaxBlockY       = 1024
	MaxBlockZ       = 64
	MaxGridX        = 1<<31 - 1
	MaxGridY        = 65535
	MaxGridZ        = 65535
)

// CheckGeometry returns an error matching ErrInvalidValue when a launch of
// grid × block exceeds the limits above (zero components count as 1).
func CheckGeometry(grid, block Dim3) error {
	b, g := block.Norm(), grid.Norm()
	if b.X > MaxBlockX || b.Y > MaxBlockY || b.Z > MaxBlockZ || b.Count() > MaxBlockThreads {
		return fmt.Errorf("block %v exceeds %d threads (x, y ≤ %d, z ≤ %d): %w", block, MaxBlockThreads, MaxBlockX, MaxBlockZ, ErrInvalidValue)
	}
	if g.X > MaxGridX || g.Y > MaxGridY || g.Z > MaxGridZ {
		return fmt.Errorf("grid %v exceeds (%d, %d, %d): %w", grid, MaxGridX, MaxGridY, MaxGridZ, ErrInvalidValue)
	}
	return nil
}

// Stream is an in-order work queue on one device. The zero Handle is never a
// created stream.
type Stream struct {
	Device int
	Handle uintptr
}

// Event marks a point in a stream's work.
type Event struct {
	Device int
	Handle uintptr
}

// Graph is captured stream work, not yet executable.
type Graph struct {
	Device int
	Handle uintptr
}

// GraphExec is an instantiated graph that can be launched and updated.
type GraphExec struct {
	Device int
	Handle uintptr
}

// Function is a loaded kernel entry point on one device.
type Function struct {
	Device int
	Name   string
	Handle uintptr
}

// BLASHandle is a BLAS library handle bound to one (device, stream).
type BLASHandle struct {
	Device int
	Handle uintptr
}

// VirtualRange is a reserved range of device virtual address space.
type VirtualRange struct {
	Device int
	Base   DevicePtr
	Size   uint64
}

// PhysicalChunk is device physical memory that can be mapped into a VirtualRange.
type PhysicalChunk struct {
	Device int
	Handle uintptr
	Size   uint64
}

// CaptureStatus is a stream's graph-capture state.
type CaptureStatus int

// Capture states.
const (
	CaptureNone    CaptureStatus = iota // not capturing
	CaptureActive                       // capturing
	CaptureInvalid                      // capture was invalidated and must be ended
)

// String names the capture state.
func (c CaptureStatus) String() string {
	switch c {
	case CaptureNone:
		return "none"
	case CaptureActive:
		return "active"
	case CaptureInvalid:
		return "invalidated"
	}
	return fmt.Sprintf("CaptureStatus(%d)", int(c))
}

// Props describes one device as the vendor reports it.
type Props struct {
	Index                  int       // device index within its vendor
	Name                   string    // marketing name, e.g. "NVIDIA H200"
	ArchName               string    // vendor arch name: "sm_90", "gfx90a:sramecc+:xnack-", "mp_22", "host"
	Major, Minor           int       // compute capability as the vendor reports it
	SMs                    int       // multiprocessors / compute units
	SharedMemPerBlock      int       // bytes
	SharedMemPerBlockOptin int       // bytes, opt-in maximum (equals SharedMemPerBlock where there is none)
	WarpSize               int       // threads per warp / wavefront
	TotalMemory            uint64    // bytes
	Integrated             bool      // shares memory with the host
	VMM                    bool      // virtual memory management supported and enabled
	VMMGranularity         uint64    // bytes, recommended mapping granularity (0 without VMM)
	PCIBusID               string    // may be empty
	CC                     arch.CC   // ggml-encoded compute capability (0 for the host device)
	CompiledArchs          []arch.CC // NVIDIA: archs this build's kernels carry (nil where the device's own arch is used)
	ArchOverride           string    // set when an override is in effect, e.g. "HSA_OVERRIDE_GFX_VERSION=10.3.0"
	// ArchSpecific lists the arch-specific targets (kernels.Family's
	// ArchSpecific, e.g. "sm_90a") whose kernel families the driver can
	// build for this device: NVIDIA, the device of that arch, and a run-time
	// compiler new enough (NVRTC 12.0 or later). Empty elsewhere, and on
	// the host device, which runs every kernel.
	ArchSpecific []string
}
