package vendorapi

import "time"

// Driver is the whole contract a vendor implements. It is split into small
// interfaces, one per driver concept; optional capabilities are separate
// interfaces checked with a type assertion (ManagedAllocator, FeatureLister).
type Driver interface {
	// Vendor names the vendor: "host", "cuda", "hip" or "musa".
	Vendor() string
	Devices
	Memory
	VirtualMemory
	Streams
	Events
	Graphs
	Kernels
	BLAS
}

// Devices enumerates devices and peer access.
type Devices interface {
	// DeviceCount returns how many devices the vendor sees (0 is not an error).
	DeviceCount() (int, error)
	// Props returns the properties of device dev.
	Props(dev int) (Props, error)
	// MemInfo returns free and total device memory in bytes.
	MemInfo(dev int) (free, total uint64, err error)
	// CanAccessPeer reports whether dev can read and write peer's memory directly.
	CanAccessPeer(dev, peer int) (bool, error)
	// EnablePeerAccess lets dev access peer's memory; enabling twice is not an error.
	EnablePeerAccess(dev, peer int) error
	// DisablePeerAccess revokes access enabled by EnablePeerAccess; disabling when not enabled is not an error.
	DisablePeerAccess(dev, peer int) error
	// DeviceSynchronize waits for all work on dev.
	DeviceSynchronize(dev int) error
}

// HostBuffer is page-locked (pinned) host memory from HostAlloc: the only host
// memory asynchronous copies accept, because C may use it after a call returns.
type HostBuffer struct {
	Ptr  uintptr
	Size uint64
}

// Memory allocates device and pinned host memory and copies between them.
// Synchronous copies take Go slices; asynchronous ones take HostBuffers.
type Memory interface {
	// Malloc allocates size bytes on dev; errors.Is(err, ErrOutOfMemory) when it cannot.
	Malloc(dev int, size uint64) (DevicePtr, error)
	// Free releases memory from Malloc.
	Free(dev int, p DevicePtr) error
	// HostAlloc allocates pinned host memory.
	HostAlloc(size uint64) (HostBuffer, error)
	// HostFree releases memory from HostAlloc.
	HostFree(b HostBuffer) error
	// HostRegister page-locks existing non-Go memory (for example an mmap'd
	// file). Go heap memory and goroutine stacks (the garbage collector may
	// free or move them) are refused with ErrInvalidValue where recognized.
	HostRegister(ptr uintptr, size uint64) error
	// HostUnregister undoes HostRegister.
	HostUnregister(ptr uintptr) error
	// Memset sets size bytes at p to value.
	Memset(dev int, p DevicePtr, value byte, size uint64) error
	// MemsetAsync queues a memset on s.
	MemsetAsync(s Stream, p DevicePtr, value byte, size uint64) error
	// CopyHtoD copies src to dst on dev and returns when done.
	CopyHtoD(dev int, dst DevicePtr, src []byte) error
	// CopyDtoH copies len(dst) bytes from src on dev and returns when done.
	CopyDtoH(dev int, dst []byte, src DevicePtr) error
	// CopyDtoD copies size bytes within dev and returns when done.
	CopyDtoD(dev int, dst, src DevicePtr, size uint64) error
	// CopyPeer copies size bytes from srcDev to dstDev and returns when done.
	CopyPeer(dstDev int, dst DevicePtr, srcDev int, src DevicePtr, size uint64) error
	// CopyHtoDAsync queues a copy from pinned memory to s's device.
	CopyHtoDAsync(s Stream, dst DevicePtr, src HostBuffer) error
	// CopyDtoHAsync queues a copy from s's device to pinned memory.
	CopyDtoHAsync(s Stream, dst HostBuffer, src DevicePtr) error
	// CopyDtoDAsync queues a copy within s's device.
	CopyDtoDAsync(s Stream, dst, src DevicePtr, size uint64) error
	// CopyPeerAsync queues on s (a stream of dstDev or srcDev) a copy between devices.
	CopyPeerAsync(s Stream, dstDev int, dst DevicePtr, srcDev int, src DevicePtr, size uint64) error
	// Copy2DAsync queues a strided copy of height rows of width bytes within s's device.
	Copy2DAsync(s Stream, dst DevicePtr, dpitch uint64, src DevicePtr, spitch uint64, width, height uint64) error
	// Copy2DPeerAsync queues on s (a stream of dstDev or srcDev) a strided copy of height rows of
	// width bytes from srcDev to dstDev; the two may be the same device.
	Copy2DPeerAsync(s Stream, dstDev int, dst DevicePtr, dpitch uint64, srcDev int, src DevicePtr, spitch uint64, width, height uint64) error
}

// ManagedAllocator is implemented by vendors with unified (managed) memory.
type ManagedAllocator interface {
	// MallocManaged allocates memory addressable from the host and dev.
	MallocManaged(dev int, size uint64) (DevicePtr, error)
}

// VirtualMemory is the VMM interface: reserve address space once, back it with
// physical chunks as needed. Vendors without VMM return ErrNotSupported and
// report Props.VMM false.
type VirtualMemory interface {
	// VMMReserve reserves size bytes of address space on dev (size a multiple of the granularity).
	VMMReserve(dev int, size uint64) (VirtualRange, error)
	// VMMFree releases a reserved range; every mapping in it must be unmapped first.
	VMMFree(r VirtualRange) error
	// VMMCreate allocates a physical chunk of size bytes (a multiple of the granularity) on dev.
	VMMCreate(dev int, size uint64) (PhysicalChunk, error)
	// VMMRelease frees a physical chunk; its memory lives on while it is still mapped.
	VMMRelease(c PhysicalChunk) error
	// VMMMap maps chunk c at address p inside a reserved range.
	VMMMap(p DevicePtr, c PhysicalChunk) error
	// VMMSetAccess makes [p, p+size) readable and writable from dev.
	VMMSetAccess(dev int, p DevicePtr, size uint64) error
	// VMMUnmap unmaps [p, p+size).
	VMMUnmap(dev int, p DevicePtr, size uint64) error
}

// Streams creates and orders work queues.
type Streams interface {
	// StreamCreate creates a non-blocking stream on dev.
	StreamCreate(dev int) (Stream, error)
	// StreamDestroy destroys s after its queued work completes.
	StreamDestroy(s Stream) error
	// StreamSynchronize waits for all work queued on s.
	StreamSynchronize(s Stream) error
	// StreamQuery returns nil when s is idle and ErrNotReady otherwise.
	StreamQuery(s Stream) error
	// StreamWaitEvent makes later work on s wait for e.
	StreamWaitEvent(s Stream, e Event) error
}

// Events marks and times points in streams.
type Events interface {
	// EventCreate creates an event on dev; timing enables EventElapsed.
	EventCreate(dev int, timing bool) (Event, error)
	// EventDestroy destroys e.
	EventDestroy(e Event) error
	// EventRecord records e at the current end of s.
	EventRecord(e Event, s Stream) error
	// EventSynchronize waits until e has completed.
	EventSynchronize(e Event) error
	// EventQuery returns nil when e has completed and ErrNotReady otherwise.
	EventQuery(e Event) error
	// EventElapsed returns the time between two completed timing events.
	EventElapsed(start, end Event) (time.Duration, error)
}

// Graphs captures stream work into graphs and replays it.
type Graphs interface {
	// BeginCapture starts capturing s in relaxed mode: queued work is recorded, not run.
	BeginCapture(s Stream) error
	// EndCapture ends capture on s and returns the captured graph.
	EndCapture(s Stream) (Graph, error)
	// CaptureStatus reports whether s is capturing.
	CaptureStatus(s Stream) (CaptureStatus, error)
	// GraphInstantiate makes an executable graph.
	GraphInstantiate(g Graph) (GraphExec, error)
	// GraphExecUpdate updates e in place to g's parameters; when the topology
	// differs it returns an error matching ErrGraphUpdate and e stays usable as it was.
	GraphExecUpdate(e GraphExec, g Graph) error
	// GraphLaunch queues e on s.
	GraphLaunch(e GraphExec, s Stream) error
	// GraphDestroy destroys a captured graph.
	GraphDestroy(g Graph) error
	// GraphExecDestroy destroys an executable graph.
	GraphExecDestroy(e GraphExec) error
}

// Kernels loads catalog kernels and launches them.
type Kernels interface {
	// Kernel returns catalog kernel name on dev, loading the vendor's code object
	// (or compiling it at run time) on first use.
	Kernel(dev int, name string) (Function, error)
	// SetMaxDynamicSharedMemory allows f launches with up to bytes of dynamic shared memory.
	SetMaxDynamicSharedMemory(f Function, bytes int) error
	// Launch queues f on s. args must match the catalog's parameter list for
	// f (kinds in order; nil for a kernel without parameters); the driver
	// refuses other arguments with ErrInvalidValue before anything runs.
	// Launch does not keep args: the caller may reuse them at once.
	Launch(f Function, grid, block Dim3, sharedMem uint32, s Stream, args *Args) error
}

// BLAS runs the vendor BLAS library (cuBLAS, rocBLAS, muBLAS; gonum on host).
type BLAS interface {
	// BLASCreate creates a handle on s's device bound to s.
	BLASCreate(s Stream) (BLASHandle, error)
	// BLASDestroy destroys h.
	BLASDestroy(h BLASHandle) error
	// BLASSetStream binds h to s (a stream of h's device).
	BLASSetStream(h BLASHandle, s Stream) error
	// Gemm computes C = alpha*op(A)*op(B) + beta*C, column-major, once.
	Gemm(h BLASHandle, g Gemm) error
	// GemmStridedBatched runs g.BatchCount gemms at g.Stride{A,B,C} element offsets.
	GemmStridedBatched(h BLASHandle, g Gemm) error
	// GemmBatched runs g.BatchCount gemms whose A, B and C are device arrays of pointers.
	GemmBatched(h BLASHandle, g Gemm) error
	// BLASVersion returns the library's version string.
	BLASVersion() (string, error)
}

// BLASWorkspacer is implemented by vendors whose BLAS library takes a
// caller-provided workspace (cublasSetWorkspace, rocblas_set_workspace): the
// seed gives cuBLAS 32 MiB on Hopper and newer, 4 MiB below.
type BLASWorkspacer interface {
	// BLASSetWorkspace makes [p, p+size) of h's device h's workspace; the
	// memory must stay allocated while h is used.
	BLASSetWorkspace(h BLASHandle, p DevicePtr, size uint64) error
}

// Feature is one build or run-time switch a vendor reports, as ggml's
// backend features are (for example ARCHS, NO_VMM, USE_GRAPHS).
type Feature struct {
	Name  string
	Value string
}

// FeatureLister is implemented by vendors that report build switches.
type FeatureLister interface {
	// Features lists the vendor's build and run-time switches.
	Features() []Feature
}
