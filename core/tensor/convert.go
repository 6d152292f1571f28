package tensor

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ternion/ternion/internal/half"
	"github.com/ternion/ternion/quant"
)

// ToFloat32 decodes a tensor's memory image b (Bytes() bytes laid out as l
// says) into float32s in row-major element order. Tensors of any plain type
// and any layout are supported, and quantized tensors whose rows are whole
// blocks (package quant's formats, bit-exact with ggml's dequantizers).
func ToFloat32(l Layout, b []byte) ([]float32, error) {
	if l.Type.IsQuantized() {
		return quantizedToFloat32(l, b)
	}
	read, err := Decoder(l.Type)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) < l.Bytes() {
		return nil, fmt.Errorf("tensor: %d bytes for %s, which spans %d", len(b), l, l.Bytes())
	}
	out := make([]float32, 0, l.Elements())
	Each(l.Ne, func(i [MaxDims]int64) { out = append(out, float32(read(b[l.Offset(i):]))) })
	return out, nil
}

// FromFloat32 encodes v (row-major) as the memory image of a contiguous
// tensor of layout l, rounding to l's type (F16, BF16: to nearest even;
// integers: truncating toward zero; quantized types: ggml's reference
// quantizer of the format, where it has one without an importance matrix).
func FromFloat32(l Layout, v []float32) ([]byte, error) {
	if !l.IsContiguous() {
		return nil, fmt.Errorf("tensor: encoding into a non-contiguous %s", l)
	}
	if int64(len(v)) != l.Elements() {
		return nil, fmt.Errorf("tensor: %d values for %s, which holds %d", len(v), l, l.Elements())
	}
	if l.Type.IsQuantized() {
		f, err := Format(l.Type)
		if err != nil {
			return nil, err
		}
		b := make([]byte, l.Bytes())
		if err := f.Quantize(b, v); err != nil {
			return nil, fmt.Errorf("tensor: %s: %w", l, err)
		}
		return b, nil
	}
	write, err := Encoder(l.Type)
	if err != nil {
		return nil, err
	}
	size := l.Type.BlockBytes()
	b := make([]byte, int64(len(v))*size)
	for i, x := range v {
		write(b[int64(i)*size:], float64(x))
	}
	return b, nil
}

// Each calls f with every index of shape ne in row-major order (dimension
// 0 fastest).
func Each(ne [MaxDims]int64, f func(i [MaxDims]int64)) {
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					f([MaxDims]int64{i0, i1, i2, i3})
				}
			}
		}
	}
}

// Offset is the byte offset of element i (of a plain type) in l.
func (l Layout) Offset(i [MaxDims]int64) int64 {
	return i[0]*l.Nb[0] + i[1]*l.Nb[1] + i[2]*l.Nb[2] + i[3]*l.Nb[3]
}

// Decoder returns the function that decodes one element of plain type t
// (F32, F16, BF16, F64, I8, I16, I32, I64) from the front of a byte slice.
func Decoder(t Type) (func([]byte) float64, error) {
	switch t {
	case F32:
		return func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }, nil
	case F16:
		return func(b []byte) float64 { return float64(half.F16ToF32(binary.LittleEndian.Uint16(b))) }, nil
	case BF16:
		return func(b []byte) float64 { return float64(half.BF16ToF32(binary.LittleEndian.Uint16(b))) }, nil
	case F64:
		return func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }, nil
	case I8:
		return func(b []byte) float64 { return float64(int8(b[0])) }, nil
	case I16:
		return func(b []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(b))) }, nil
	case I32:
		return func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) }, nil
	case I64:
		return func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) }, nil
	}
	return nil, fmt.Errorf("tensor: cannot decode %s as floats", t)
}

// Encoder returns the function that encodes x as one element of plain type
// t at the front of a byte slice: F32, F16 and BF16 through float32 (as a
// kernel computing in float32 rounds), F64 exactly, integers truncated
// toward zero.
func Encoder(t Type) (func([]byte, float64), error) {
	switch t {
	case F32:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(x))) }, nil
	case F16:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint16(b, half.F16FromF32(float32(x))) }, nil
	case BF16:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint16(b, half.BF16FromF32(float32(x))) }, nil
	case F64:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(x)) }, nil
	case I8:
		return func(b []byte, x float64) { b[0] = byte(int8(x)) }, nil
	case I16:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint16(b, uint16(int16(x))) }, nil
	case I32:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint32(b, uint32(int32(x))) }, nil
	case I64:
		return func(b []byte, x float64) { binary.LittleEndian.PutUint64(b, uint64(int64(x))) }, nil
	}
	return nil, fmt.Errorf("tensor: cannot encode floats as %s", t)
}

// Format is quantized type t's block format (package quant).
func Format(t Type) (*quant.Format, error) {
	f, ok := quant.Lookup(int(t))
	if !ok || !t.IsQuantized() {
		return nil, fmt.Errorf("tensor: no block format for %s", t)
	}
	return f, nil
}

// quantizedToFloat32 decodes a quantized tensor row by row.
func quantizedToFloat32(l Layout, b []byte) ([]float32, error) {
	f, err := Format(l.Type)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) < l.Bytes() {
		return nil, fmt.Errorf("tensor: %d bytes for %s, which spans %d", len(b), l, l.Bytes())
	}
	out := make([]float32, l.Elements())
	n, rb := l.Ne[0], l.RowSize()
	k := int64(0)
	for i3 := range l.Ne[3] {
		for i2 := range l.Ne[2] {
			for i1 := range l.Ne[1] {
				off := l.Offset([MaxDims]int64{0, i1, i2, i3})
				if err := f.Dequantize(out[k:k+n], b[off:off+rb]); err != nil {
					return nil, fmt.Errorf("tensor: %s: %w", l, err)
				}
				k += n
			}
		}
	}
	return out, nil
}
