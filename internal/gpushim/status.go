package gpushim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ternion/ternion/vendorapi"
)

// Status sources, as TN_SRC_* in shim.h.
const (
	srcOK      = 0
	srcRuntime = 1
	srcDriver  = 2
	srcBLAS    = 3
	srcRTC     = 4
	srcShim    = 5
)

// Classification hints from the C side, as TN_HINT_* in shim.h.
const (
	hintNone         = 0
	hintNoDriver     = 1
	hintGraphUpdate  = 2
	hintNotSupported = 3
	hintInvalidValue = 4
)

// status is a failed tn_status copied into Go memory.
type status struct {
	src, code, aux, hint int
	call, name, msg      string
}

// toError turns st into the *vendorapi.Error the driver returns: the status
// name (from the vendor, or for BLAS from blasStatuses), its message, and the
// sentinel it is classified as, by hint first and by name otherwise.
func (st status) toError(vendor string, dev int) *vendorapi.Error {
	e := &vendorapi.Error{Vendor: vendor, Call: st.call, Code: st.code, CodeName: st.name, Message: st.msg, Device: dev}
	if st.src == srcBLAS {
		info := blasStatus(vendor, st.code)
		e.CodeName, e.Message = info.Name, info.Message
	}
	if e.CodeName == "" {
		e.CodeName = fmt.Sprintf("%s status %d", sourceName(st.src), st.code)
	}
	e.Kind = kindByName[e.CodeName]
	switch st.hint {
	case hintNoDriver:
		e.Kind = vendorapi.ErrNoDriver
	case hintNotSupported:
		e.Kind = vendorapi.ErrNotSupported
	case hintInvalidValue:
		e.Kind = vendorapi.ErrInvalidValue
	case hintGraphUpdate:
		e.Kind = vendorapi.ErrGraphUpdate
		e.Message = joinMessage(e.Message, fmt.Sprintf("update result %d (%s)", st.aux, graphUpdateResult(vendor, st.aux)))
	}
	return e
}

func joinMessage(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func sourceName(src int) string {
	switch src {
	case srcRuntime:
		return "runtime"
	case srcDriver:
		return "driver"
	case srcBLAS:
		return "blas"
	case srcRTC:
		return "rtc"
	}
	return "shim"
}

// Code names of ternion's own checks (Code 0), one per sentinel.
var ownCodeNames = map[error]string{
	vendorapi.ErrInvalidValue: "TERNION_INVALID_VALUE",
	vendorapi.ErrNotSupported: "TERNION_NOT_SUPPORTED",
	vendorapi.ErrNoKernel:     "TERNION_NO_KERNEL",
	vendorapi.ErrNoDriver:     "TERNION_NO_DRIVER",
	vendorapi.ErrOutOfMemory:  "TERNION_OUT_OF_MEMORY",
}

// ownError is a failure found by ternion's own checks before any vendor call.
func ownError(vendor, call string, dev int, kind error, format string, args ...any) *vendorapi.Error {
	name := ownCodeNames[kind]
	if name == "" {
		name = "TERNION_ERROR"
	}
	return &vendorapi.Error{Vendor: vendor, Call: call, CodeName: name, Message: fmt.Sprintf(format, args...),
		Device: dev, Kind: kind}
}

// contractError turns an error from a vendorapi helper (CheckArgs,
// Gemm.Validate, kernels.Lookup) into an own ErrInvalidValue error, keeping
// its message without the sentinel's suffix.
func contractError(vendor, call string, dev int, err error) *vendorapi.Error {
	kind := vendorapi.ErrInvalidValue
	if !errors.Is(err, kind) {
		kind = nil
	}
	msg := strings.TrimSuffix(err.Error(), ": "+vendorapi.ErrInvalidValue.Error())
	return ownError(vendor, call, dev, kind, "%s", msg)
}
