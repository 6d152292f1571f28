package vendorapi

// FaultInjector is implemented by vendors whose queued work can fail without
// damaging the device, so that the suite can check that asynchronous
// failures are reported (once, by the next synchronizing call) and that the
// device keeps working. GPU vendors do not implement it: the only way to fail
// queued work on a GPU is a device fault, which on CUDA is sticky and
// destroys the context for the rest of the process.
type FaultInjector interface {
	// InjectFault queues on s work that fails when it runs, as a kernel that
	// faults would: the failure is reported once, by the next
	// StreamSynchronize of s, EventSynchronize of an event recorded on s
	// after it, or DeviceSynchronize of s's device, and work queued after it
	// still runs.
	InjectFault(s Stream) error
}

// LaunchChecker is implemented by vendors that know which device memory
// every catalog kernel touches and check it when Launch is called: each
// buffer inside live memory the launching device may use (its own, a peer's
// with peer access, a VMM mapping it has access to), aligned to its element
// size. Such a Launch refuses a bad buffer with ErrInvalidValue before
// anything runs. GPU vendors do not implement it: the arguments are opaque
// to the vendor library, and a kernel that touches memory it should not
// faults on the device, which on CUDA is sticky and destroys the context.
type LaunchChecker interface {
	// CheckLaunch returns the error Launch would return for these arguments,
	// memory checks included, without queueing anything.
	CheckLaunch(f Function, grid, block Dim3, sharedMem uint32, s Stream, args *Args) error
}
