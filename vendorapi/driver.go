package vendorapi

import (
	"time"
	"unsafe"
)

// Driver is the whole contract a vendor implements. It is split into small
// interfaces, one per driver concept; optional capabilities are separate
// interfaces checked with a type assertion (ManagedAllocator, FeatureLister,
// FaultInjector, LaunchChecker).
//
// Rules every method keeps (the package doc says why): arguments are checked
// before anything is queued, and a refused call has no effect; a handle is
// live only from the call that made it to the call that destroyed it (or
// Close), only with the Device it was returned with, and never zero: any
// other is ErrInvalidValue; every failure is a *Error.
type Driver interface {
	// Vendor names the vendor: "host", "cuda", "hip" or "musa".
	Vendor() string
	// Close releases everything the driver handed out: every stream (after
	// its queued work completes), event, graph, graph exec, BLAS handle,
	// loaded code object and kernel Function, device allocation, pinned and
	// registered host memory, physical chunk and reserved range. Handles and
	// pointers from before Close are invalid afterwards (ErrInvalidValue).
	// Peer access is disabled again. The driver stays usable and empty, as
	// just opened; closing twice is not an error. Close must not run while
	// other calls use the driver.
	Close() error
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
	// DeviceCount returns how many devices the vendor sees (0 is not an
	// error); it does not change while the driver is open.
	DeviceCount() (int, error)
	// Props returns the properties of device dev, the same on every call; a
	// dev outside [0, DeviceCount) is ErrInvalidValue, here and everywhere.
	Props(dev int) (Props, error)
	// MemInfo returns free and total device memory in bytes, free ≤ total.
	// Free reflects allocations: it falls by at least an allocation's size
	// while the allocation lives (Malloc, VMMCreate) and rises again when it
	// is freed (other users of the device aside).
	MemInfo(dev int) (free, total uint64, err error)
	// CanAccessPeer reports whether dev can read and write peer's memory
	// directly; false when dev == peer.
	CanAccessPeer(dev, peer int) (bool, error)
	// EnablePeerAccess lets dev access peer's memory; enabling twice is not an
	// error, dev == peer is ErrInvalidValue. Until it is enabled, peer's
	// memory is not dev's: a copy or memset on dev (or on a stream of dev)
	// that touches it is refused with ErrInvalidValue. CopyPeer,
	// CopyPeerAsync and Copy2DPeerAsync name both devices and need no peer access.
	EnablePeerAccess(dev, peer int) error
	// DisablePeerAccess revokes access enabled by EnablePeerAccess; disabling when not enabled is not an error.
	DisablePeerAccess(dev, peer int) error
	// DeviceSynchronize waits for all work queued on dev's streams before the
	// call and returns an unreported failure of it (see Streams). It fails
	// while a stream of dev is capturing (the capture is then invalidated).
	DeviceSynchronize(dev int) error
}

// HostBuffer is page-locked (pinned) host memory from HostAlloc: the only host
// memory asynchronous copies accept, because C may use it after a call returns.
type HostBuffer struct {
	Ptr  uintptr
	Size uint64
}

// Bytes views the buffer's memory as a byte slice (nil when empty). The
// pointer is read through the field's address so that the uintptr never
// round-trips through a variable (vet's unsafeptr rule); the memory is not
// Go's, so the garbage collector ignores it.
func (b HostBuffer) Bytes() []byte {
	if b.Ptr == 0 || b.Size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&b.Ptr))), b.Size)
}

// Slice returns the part [off, off+size) of b (unchecked).
func (b HostBuffer) Slice(off, size uint64) HostBuffer {
	return HostBuffer{Ptr: b.Ptr + uintptr(off), Size: size}
}

// Memory allocates device and pinned host memory and copies between them.
// Synchronous copies take Go slices; asynchronous ones take HostBuffers.
//
// Every call checks the ranges it touches when it is made, queued or not: a
// device range must lie inside one live allocation (or in mapped VMM chunks
// that follow each other) that the device doing the work may use (its own,
// a peer's with peer access enabled, a VMM mapping it was given access to);
// a host range of an asynchronous copy must lie inside pinned (HostAlloc) or
// registered (HostRegister) memory. Anything else, one byte past the end
// included, is ErrInvalidValue and nothing is written. A zero size touches
// nothing and is not an error.
type Memory interface {
	// Malloc allocates size bytes on dev and returns a non-zero pointer that
	// no other live allocation overlaps (size 0 included);
	// errors.Is(err, ErrOutOfMemory) when it cannot.
	Malloc(dev int, size uint64) (DevicePtr, error)
	// Free releases memory from Malloc on dev once the work queued before the
	// call that may use it has completed. Freeing 0 is a no-op; p not the
	// start of a live allocation of dev (inside one, freed, another device's)
	// is ErrInvalidValue and frees nothing.
	Free(dev int, p DevicePtr) error
	// HostAlloc allocates pinned host memory of at least size bytes, which Go
	// code may read and write and every device's asynchronous copies accept.
	HostAlloc(size uint64) (HostBuffer, error)
	// HostFree releases memory from HostAlloc once the work queued before the
	// call is done with it; a zero buffer is a no-op, anything not from a
	// live HostAlloc is ErrInvalidValue.
	HostFree(b HostBuffer) error
	// HostRegister page-locks existing non-Go memory (for example an mmap'd
	// file) for asynchronous copies. A zero pointer or size, a range
	// overlapping pinned or registered memory, or Go heap memory and goroutine
	// stacks (the garbage collector may free or move them; refused where
	// recognized) is ErrInvalidValue.
	HostRegister(ptr uintptr, size uint64) error
	// HostUnregister undoes HostRegister; ptr must be the start of a registered range.
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
	// Copy2DAsync queues a strided copy of height rows of width bytes within
	// s's device. width must not exceed dpitch or spitch, whatever the
	// height (ErrInvalidValue); bytes between rows are left alone.
	Copy2DAsync(s Stream, dst DevicePtr, dpitch uint64, src DevicePtr, spitch uint64, width, height uint64) error
	// Copy2DPeerAsync queues on s (a stream of dstDev or srcDev) a strided copy of height rows of
	// width bytes from srcDev to dstDev, as Copy2DAsync; the two may be the same device.
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
	// VMMReserve reserves size bytes of address space on dev (size a
	// multiple of the granularity), aligned to the granularity.
	VMMReserve(dev int, size uint64) (VirtualRange, error)
	// VMMFree releases a reserved range; every mapping in it must be unmapped
	// first (ErrInvalidValue otherwise).
	VMMFree(r VirtualRange) error
	// VMMCreate allocates a physical chunk of size bytes (a multiple of the
	// granularity) on dev; ErrOutOfMemory when the device has not that much.
	VMMCreate(dev int, size uint64) (PhysicalChunk, error)
	// VMMRelease frees a physical chunk; its memory lives on while it is still mapped.
	VMMRelease(c PhysicalChunk) error
	// VMMMap maps chunk c at address p (a multiple of the granularity) inside
	// a reserved range, over nothing mapped.
	VMMMap(p DevicePtr, c PhysicalChunk) error
	// VMMSetAccess makes the mapped [p, p+size) readable and writable from
	// dev. Until then no device may use the mapping: a call that touches it
	// is ErrInvalidValue, as for memory that is not the device's.
	VMMSetAccess(dev int, p DevicePtr, size uint64) error
	// VMMUnmap unmaps [p, p+size), which must be a run of whole mappings.
	VMMUnmap(dev int, p DevicePtr, size uint64) error
}

// Streams creates and orders work queues.
//
// Queued work that fails when it runs is reported, never lost: by the next
// StreamSynchronize of its stream, EventSynchronize of an event recorded
// after it, or DeviceSynchronize of its device. Where the vendor can fail
// queued work without damaging the device (FaultInjector) the failure is
// reported once and later work runs; on CUDA a device fault is sticky and
// every later call reports it.
type Streams interface {
	// StreamCreate creates a non-blocking stream on dev.
	StreamCreate(dev int) (Stream, error)
	// StreamDestroy destroys s after its queued work completes.
	StreamDestroy(s Stream) error
	// StreamSynchronize waits for all work queued on s before the call and
	// returns a failure of that work not reported yet. While s is capturing
	// it fails and invalidates the capture (CUDA's
	// cudaErrorStreamCaptureUnsupported, ErrNotSupported).
	StreamSynchronize(s Stream) error
	// StreamQuery returns nil when all work queued on s has completed and an
	// error matching ErrNotReady while any of it has not. While s is
	// capturing it fails and invalidates the capture, as StreamSynchronize.
	StreamQuery(s Stream) error
	// StreamWaitEvent makes work queued on s after the call wait for e's most
	// recent EventRecord as of the call (an event never recorded is no
	// wait); e may belong to another device.
	StreamWaitEvent(s Stream, e Event) error
}

// Events marks and times points in streams.
//
// An event recorded on a capturing stream becomes part of the capture, not a
// point in any stream's work, until it is recorded again outside a capture:
// EventQuery and EventSynchronize of it fail, while the capture lasts (CUDA's
// cudaErrorCapturedEvent, which even relaxed capture mode forbids) and after
// it ended, whether or not the graph ran (CUDA returns cudaErrorInvalidValue:
// ErrInvalidValue).
type Events interface {
	// EventCreate creates an event on dev; timing enables EventElapsed.
	EventCreate(dev int, timing bool) (Event, error)
	// EventDestroy destroys e.
	EventDestroy(e Event) error
	// EventRecord records e at the current end of s, a stream of e's device
	// (ErrInvalidValue otherwise).
	EventRecord(e Event, s Stream) error
	// EventSynchronize waits until the work before e's most recent record has
	// completed (an event never recorded is complete) and returns a failure
	// of that work not reported yet.
	EventSynchronize(e Event) error
	// EventQuery returns nil when e has completed (or was never recorded) and
	// an error matching ErrNotReady otherwise.
	EventQuery(e Event) error
	// EventElapsed returns the time between two completed timing events of
	// one device; ErrNotReady when either has not completed, an error when
	// either was created without timing or never recorded.
	EventElapsed(start, end Event) (time.Duration, error)
}

// Graphs captures stream work into graphs and replays it.
type Graphs interface {
	// BeginCapture starts capturing s in relaxed mode: queued work is
	// recorded, not run. A stream already capturing is an error.
	BeginCapture(s Stream) error
	// EndCapture ends capture on s and returns the captured graph. It fails
	// when s is not capturing, or when the capture was invalidated, which
	// ends the capture all the same.
	EndCapture(s Stream) (Graph, error)
	// CaptureStatus reports whether s is capturing, and CaptureInvalid from a
	// call that invalidated the capture until EndCapture.
	CaptureStatus(s Stream) (CaptureStatus, error)
	// GraphInstantiate makes an executable graph; it outlives g.
	GraphInstantiate(g Graph) (GraphExec, error)
	// GraphExecUpdate updates e in place to g's parameters (pointers, sizes,
	// values, kernel arguments). When the topology differs (another number of
	// nodes, a node of another kind: kernel, memset, copy, gemm) it returns an
	// error matching ErrGraphUpdate and e stays usable as it was. A kernel
	// node whose kernel changed is updated by CUDA 12 and refused by host:
	// either outcome is allowed, and e then runs exactly the kernels its
	// nodes have. A graph of another device than e's is ErrInvalidValue.
	GraphExecUpdate(e GraphExec, g Graph) error
	// GraphLaunch queues e on s, a stream of e's device (ErrInvalidValue otherwise).
	GraphLaunch(e GraphExec, s Stream) error
	// GraphDestroy destroys a captured graph.
	GraphDestroy(g Graph) error
	// GraphExecDestroy destroys an executable graph.
	GraphExecDestroy(e GraphExec) error
}

// Kernels loads catalog kernels and launches them.
type Kernels interface {
	// Kernel returns catalog kernel name on dev, loading the vendor's code object
	// (or compiling it at run time) on first use; asking again returns the
	// same Function. A name not in the catalog is ErrInvalidValue or ErrNoKernel.
	Kernel(dev int, name string) (Function, error)
	// SetMaxDynamicSharedMemory allows f launches with up to bytes of dynamic
	// shared memory, at most Props.SharedMemPerBlockOptin (ErrInvalidValue
	// beyond it). Until it is called the limit is Props.SharedMemPerBlock.
	SetMaxDynamicSharedMemory(f Function, bytes int) error
	// Launch queues f on s, a stream of f's device. args must match the
	// catalog's parameter list for f (kinds in order; nil for a kernel
	// without parameters); the driver refuses other arguments with
	// ErrInvalidValue before anything runs, and likewise a block of more than
	// 1024 threads (x, y ≤ 1024, z ≤ 64), a grid beyond (2³¹−1, 65535,
	// 65535), or sharedMem beyond f's limit. Zero grid and block components
	// count as 1. The memory the kernel touches is checked at launch only by
	// vendors that implement LaunchChecker.
	// Launch does not keep args: the caller may reuse them at once.
	Launch(f Function, grid, block Dim3, sharedMem uint32, s Stream, args *Args) error
}

// BLAS runs the vendor BLAS library (cuBLAS, rocBLAS, muBLAS; gonum on host).
type BLAS interface {
	// BLASCreate creates a handle on s's device bound to s.
	BLASCreate(s Stream) (BLASHandle, error)
	// BLASDestroy destroys h.
	BLASDestroy(h BLASHandle) error
	// BLASSetStream binds h to s, a stream of h's device (ErrInvalidValue otherwise).
	BLASSetStream(h BLASHandle, s Stream) error
	// Gemm queues on h's stream C = alpha*op(A)*op(B) + beta*C, column-major,
	// once. g must pass Validate, and A, B and C lie in memory of h's device
	// aligned to their element size (ErrInvalidValue otherwise); with M or N
	// zero nothing is written, with K zero C becomes beta*C.
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
