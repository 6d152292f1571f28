package vendorapi

import (
	"errors"
	"fmt"
)

// Sentinel conditions callers handle; match them with errors.Is.
var (
	// ErrOutOfMemory reports that a device or host allocation could not be satisfied.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrNotSupported reports an operation the device, vendor or build does not support.
	ErrNotSupported = errors.New("not supported")
	// ErrInvalidValue reports an argument the vendor or contract rejects (bad index, size, handle).
	ErrInvalidValue = errors.New("invalid value")
	// ErrGraphUpdate reports that an executable graph could not be updated in place
	// (for example because the topology changed); the caller re-instantiates.
	ErrGraphUpdate = errors.New("graph exec update failed")
	// ErrNotReady reports that queried work (stream, event) has not completed yet.
	ErrNotReady = errors.New("not ready")
	// ErrNoDriver reports that the vendor's driver or runtime library is absent.
	ErrNoDriver = errors.New("driver not found")
	// ErrNoKernel reports that no code object for a kernel matches the device and
	// none could be compiled at run time.
	ErrNoKernel = errors.New("no kernel image")
)

// Error is a failure of one vendor call. It names the vendor, the call, the
// vendor's numeric code and its name, the device and (once core fills it in)
// the op being run.
type Error struct {
	Vendor   string // "host", "cuda", "hip", "musa"
	Call     string // vendor call that failed, e.g. "cudaMalloc"
	Code     int    // vendor status code (0 when the failure is ternion's own check)
	CodeName string // e.g. "cudaErrorMemoryAllocation", "CUBLAS_STATUS_NOT_SUPPORTED"
	Message  string // vendor's description or ternion's explanation
	Device   int    // device index, -1 when no single device is involved
	Op       string // ternion op or operation in progress, may be empty
	Kind     error  // one of the sentinels above, or nil
}

// Error formats the failure with every field a user needs to act on it.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s failed: %s (code %d)", e.Vendor, e.Call, e.CodeName, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Device >= 0 {
		s += fmt.Sprintf(" [device %d]", e.Device)
	}
	if e.Op != "" {
		s += " [op " + e.Op + "]"
	}
	return s
}

// Is reports whether target is the sentinel this error is classified as.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the sentinel classification, so errors.Is also works through wrapping.
func (e *Error) Unwrap() error { return e.Kind }

// WithOp returns a copy of err with Op set when err is (or wraps) an *Error;
// other errors are wrapped with the op name.
func WithOp(err error, op string) error {
	if err == nil {
		return nil
	}
	var ve *Error
	if errors.As(err, &ve) {
		c := *ve
		c.Op = op
		return &c
	}
	return fmt.Errorf("op %s: %w", op, err)
}
