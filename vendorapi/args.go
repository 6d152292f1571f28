package vendorapi

import (
	"fmt"
	"math"
)

// ParamKind is the type of one kernel parameter in the catalog.
type ParamKind uint8

// Kernel parameter kinds. Pointers and 64-bit integers take 8 bytes, the rest 4.
const (
	ParamPtr ParamKind = iota + 1 // device pointer
	ParamI32                      // int32
	ParamU32                      // uint32
	ParamI64                      // int64
	ParamF32                      // float32
)

// Size returns the parameter's size in bytes in the kernel's argument buffer.
func (k ParamKind) Size() int {
	switch k {
	case ParamPtr, ParamI64:
		return 8
	case ParamI32, ParamU32, ParamF32:
		return 4
	}
	return 0
}

// String names the kind as a C type.
func (k ParamKind) String() string {
	switch k {
	case ParamPtr:
		return "ptr"
	case ParamI32:
		return "int32"
	case ParamU32:
		return "uint32"
	case ParamI64:
		return "int64"
	case ParamF32:
		return "float32"
	}
	return fmt.Sprintf("ParamKind(%d)", uint8(k))
}

// Arg is one kernel argument: its kind and its raw bits.
type Arg struct {
	Kind ParamKind
	Bits uint64
}

// PtrArg passes a device pointer.
func PtrArg(p DevicePtr) Arg { return Arg{ParamPtr, uint64(p)} }

// I32Arg passes an int32.
func I32Arg(v int32) Arg { return Arg{ParamI32, uint64(uint32(v))} }

// U32Arg passes a uint32.
func U32Arg(v uint32) Arg { return Arg{ParamU32, uint64(v)} }

// I64Arg passes an int64.
func I64Arg(v int64) Arg { return Arg{ParamI64, uint64(v)} }

// F32Arg passes a float32.
func F32Arg(v float32) Arg { return Arg{ParamF32, uint64(math.Float32bits(v))} }

// Ptr returns the argument as a device pointer.
func (a Arg) Ptr() DevicePtr { return DevicePtr(a.Bits) }

// I32 returns the argument as an int32.
func (a Arg) I32() int32 { return int32(uint32(a.Bits)) }

// U32 returns the argument as a uint32.
func (a Arg) U32() uint32 { return uint32(a.Bits) }

// I64 returns the argument as an int64.
func (a Arg) I64() int64 { return int64(a.Bits) }

// F32 returns the argument as a float32.
func (a Arg) F32() float32 { return math.Float32frombits(uint32(a.Bits)) }

// CheckArgs reports whether args match the parameter kinds params of kernel name.
func CheckArgs(name string, params []ParamKind, args []Arg) error {
	if len(args) != len(params) {
		return fmt.Errorf("kernel %s takes %d arguments, got %d: %w", name, len(params), len(args), ErrInvalidValue)
	}
	for i, p := range params {
		if args[i].Kind != p {
			return fmt.Errorf("kernel %s argument %d is %s, got %s: %w", name, i, p, args[i].Kind, ErrInvalidValue)
		}
	}
	return nil
}
