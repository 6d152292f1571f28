package host

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ternion/ternion/vendorapi"
)

// code is one host status code. The numbers follow the CUDA runtime's, so a
// log line from the host device reads like one from a GPU.
type code struct {
	num  int
	name string
	kind error
}

var (
	errInvalidValue         = code{1, "hostErrorInvalidValue", vendorapi.ErrInvalidValue}
	errMemoryAllocation     = code{2, "hostErrorMemoryAllocation", vendorapi.ErrOutOfMemory}
	errInvalidConfiguration = code{9, "hostErrorInvalidConfiguration", vendorapi.ErrInvalidValue}
	errInvalidDevice        = code{101, "hostErrorInvalidDevice", vendorapi.ErrInvalidValue}
	errNoKernelImage        = code{209, "hostErrorNoKernelImageForDevice", vendorapi.ErrNoKernel}
	errOperatingSystem      = code{304, "hostErrorOperatingSystem", vendorapi.ErrNotSupported}
	errInvalidHandle        = code{400, "hostErrorInvalidResourceHandle", vendorapi.ErrInvalidValue}
	errIllegalState         = code{401, "hostErrorIllegalState", vendorapi.ErrInvalidValue}
	errNotReady             = code{600, "hostErrorNotReady", vendorapi.ErrNotReady}
	errIllegalAddress       = code{700, "hostErrorIllegalAddress", vendorapi.ErrInvalidValue}
	errAlreadyRegistered    = code{712, "hostErrorHostMemoryAlreadyRegistered", vendorapi.ErrInvalidValue}
	errNotRegistered        = code{713, "hostErrorHostMemoryNotRegistered", vendorapi.ErrInvalidValue}
	errLaunchFailure        = code{719, "hostErrorLaunchFailure", vendorapi.ErrInvalidValue}
	errCaptureUnsupported   = code{900, "hostErrorStreamCaptureUnsupported", vendorapi.ErrNotSupported}
	errCaptureInvalidated   = code{901, "hostErrorStreamCaptureInvalidated", vendorapi.ErrNotSupported}
	errCapturedEvent        = code{907, "hostErrorCapturedEvent", vendorapi.ErrNotSupported}
	errGraphExecUpdate      = code{910, "hostErrorGraphExecUpdateFailure", vendorapi.ErrGraphUpdate}
	errCaptureCrossStream   = code{904, "hostErrorStreamCaptureIsolation", vendorapi.ErrNotSupported}
)

// newErr builds the *vendorapi.Error every host failure is.
func newErr(c code, call string, dev int, format string, args ...any) *vendorapi.Error {
	return &vendorapi.Error{
		Vendor:   Vendor,
		Call:     call,
		Code:     c.num,
		CodeName: c.name,
		Message:  fmt.Sprintf(format, args...),
		Device:   dev,
		Kind:     c.kind,
	}
}

// invalid reports a rejected argument.
func invalid(call string, dev int, format string, args ...any) *vendorapi.Error {
	return newErr(errInvalidValue, call, dev, format, args...)
}

// fromContract turns an error from a vendorapi helper (Gemm.Validate,
// CheckArgs) into a host error, keeping its message without the sentinel suffix.
func fromContract(call string, dev int, err error) *vendorapi.Error {
	return invalid(call, dev, "%s", contractMessage(err))
}

// contractMessage is the message of an error from a vendorapi helper without
// its sentinel suffix.
func contractMessage(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+vendorapi.ErrInvalidValue.Error())
}

// osErr turns an error from a system call into a host error: ENOMEM is out of
// memory, EINVAL an invalid value, anything else an operating-system failure.
func osErr(call string, dev int, what string, err error) *vendorapi.Error {
	switch {
	case errors.Is(err, unix.ENOMEM):
		return newErr(errMemoryAllocation, call, dev, "%s: %v", what, err)
	case errors.Is(err, unix.EINVAL):
		return newErr(errInvalidValue, call, dev, "%s: %v", what, err)
	}
	return newErr(errOperatingSystem, call, dev, "%s: %v", what, err)
}
