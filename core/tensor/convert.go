package tensor

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ternion/ternion/internal/half"
)

// ToFloat32 decodes a tensor's memory image b (Bytes() bytes laid out as l
// says) into float32s in row-major element order. F32, F16, BF16, I32 and I8
// tensors of any layout are supported.
func ToFloat32(l Layout, b []byte) ([]float32, error) {
	read, err := reader(l.Type)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) < l.Bytes() {
		return nil, fmt.Errorf("tensor: %d bytes for %s, which spans %d", len(b), l, l.Bytes())
	}
	out := make([]float32, 0, l.Elements())
	for i3 := range l.Ne[3] {
		for i2 := range l.Ne[2] {
			for i1 := range l.Ne[1] {
				for i0 := range l.Ne[0] {
					off := i0*l.Nb[0] + i1*l.Nb[1] + i2*l.Nb[2] + i3*l.Nb[3]
					out = append(out, read(b[off:]))
				}
			}
		}
	}
	return out, nil
}

// FromFloat32 encodes v (row-major) as the memory image of a contiguous
// tensor of layout l, rounding to l's type (F16, BF16: to nearest even; I32
// and I8: truncating toward zero).
func FromFloat32(l Layout, v []float32) ([]byte, error) {
	if !l.IsContiguous() {
		return nil, fmt.Errorf("tensor: encoding into a non-contiguous %s", l)
	}
	if int64(len(v)) != l.Elements() {
		return nil, fmt.Errorf("tensor: %d values for %s, which holds %d", len(v), l, l.Elements())
	}
	size := l.Type.BlockBytes()
	write, err := writer(l.Type)
	if err != nil {
		return nil, err
	}
	b := make([]byte, int64(len(v))*size)
	for i, x := range v {
		write(b[int64(i)*size:], x)
	}
	return b, nil
}

// reader decodes one element of type t.
func reader(t Type) (func([]byte) float32, error) {
	switch t {
	case F32:
		return func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }, nil
	case F16:
		return func(b []byte) float32 { return half.F16ToF32(binary.LittleEndian.Uint16(b)) }, nil
	case BF16:
		return func(b []byte) float32 { return half.BF16ToF32(binary.LittleEndian.Uint16(b)) }, nil
	case I32:
		return func(b []byte) float32 { return float32(int32(binary.LittleEndian.Uint32(b))) }, nil
	case I8:
		return func(b []byte) float32 { return float32(int8(b[0])) }, nil
	}
	return nil, fmt.Errorf("tensor: cannot decode %s as floats", t)
}

// writer encodes one element of type t.
func writer(t Type) (func([]byte, float32), error) {
	switch t {
	case F32:
		return func(b []byte, x float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(x)) }, nil
	case F16:
		return func(b []byte, x float32) { binary.LittleEndian.PutUint16(b, half.F16FromF32(x)) }, nil
	case BF16:
		return func(b []byte, x float32) { binary.LittleEndian.PutUint16(b, half.BF16FromF32(x)) }, nil
	case I32:
		return func(b []byte, x float32) { binary.LittleEndian.PutUint32(b, uint32(int32(x))) }, nil
	case I8:
		return func(b []byte, x float32) { b[0] = byte(int8(x)) }, nil
	}
	return nil, fmt.Errorf("tensor: cannot encode floats as %s", t)
}
