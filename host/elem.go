package host

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ternion/ternion/internal/half"
)

// elemType is how a kernel template's float storage type (vendor.h's
// ternion_load and ternion_store) reads and writes one element on host.
type elemType struct {
	size  uint64
	load  func(b []byte) float32
	store func(b []byte, v float32)
}

// elemTypes are the storage types of the float axes, by axis value, and of
// the BLAS types, by vendorapi.DataType's String (blasElem).
var elemTypes = map[string]elemType{
	"f32": {4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) },
		func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }},
	"f16": {2, func(b []byte) float32 { return half.F16ToF32(binary.LittleEndian.Uint16(b)) },
		func(b []byte, v float32) { binary.LittleEndian.PutUint16(b, half.F16FromF32(v)) }},
	"bf16": {2, func(b []byte) float32 { return half.BF16ToF32(binary.LittleEndian.Uint16(b)) },
		func(b []byte, v float32) { binary.LittleEndian.PutUint16(b, half.BF16FromF32(v)) }},
}

// elemTypeOf returns the storage type bound to axis name of kernel k.
func elemTypeOf(kernel string, bind map[string]string, axis string) (elemType, error) {
	e, ok := elemTypes[bind[axis]]
	if !ok {
		return elemType{}, fmt.Errorf("kernel %s: element type %q has no host implementation", kernel, bind[axis])
	}
	return e, nil
}

// blockRows calls f for every row < n the block's threads take in a
// rows-per-block loop (row = blockIdx.x*blockDim.y + threadIdx.y, stepping
// gridDim.x*blockDim.y): the block's threads along x share each row.
func (b block) blockRows(n int64, f func(row int64)) {
	step := int64(b.grid.X) * int64(b.dim.Y)
	for ty := range int64(b.dim.Y) {
		for row := int64(b.idx.X)*int64(b.dim.Y) + ty; row < n; row += step {
			f(row)
		}
	}
}
