// Package le encodes and decodes device data as the little-endian bytes every
// device ternion supports stores, for tests and references that move typed
// values through byte-level copies.
package le

import (
	"encoding/binary"
	"math"
)

// FromF32 encodes v as little-endian float32s.
func FromF32(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// ToF32 decodes little-endian float32s; a trailing partial element is ignored.
func ToF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// FromU64 encodes v as little-endian uint64s (for example device pointer arrays).
func FromU64(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}
