package ops

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/vendorapi"
)

// errflags.go is the device-side check of bad inputs: a kernel that finds
// an input it cannot use (an expert index out of range in MUL_MAT_ID's
// ids) where checking it on the host would need a sync sets a bit of the
// backend's device error word; the backend reads the word after the graph
// (Synchronize) and reports the bits set as an error matching ErrBadIndex.
// Inputs known on the host before launch are checked there (CheckIndices).

// ErrBadIndex is matched (errors.Is) by the error of an op whose index
// input is out of range (an expert index in MUL_MAT_ID's ids outside
// [0, n_expert)), whether found on the host before launch or by the kernel;
// such errors also match vendorapi.ErrInvalidValue.
var ErrBadIndex = errors.New("index out of range")

// ErrorFlags is implemented by a Device that keeps a device error word: a
// 4-byte word, zero while nothing went wrong, that kernels set bits of
// (FlagMulMatIDExpert, ...) when they find a bad input; the device reads it
// after the work (core/backend reads it in Synchronize and zeroes it).
type ErrorFlags interface {
	// ErrorFlag returns the address of the device error word, or 0 when the
	// device has none (kernels then report nothing but their NaN rows).
	ErrorFlag() vendorapi.DevicePtr
}

// The error-word bits: mmvq_id's for an expert index of ids out of range
// [0, n_expert), add_id_f32's for a row index of ids out of range [0,
// src1's rows).
const (
	FlagMulMatIDExpert uint32 = 1
	FlagAddIDRow       uint32 = 2
)

// indexRange is the range [0, n) the ids (src2) of node n must lie in, and
// whether n reads ids at all (MUL_MAT_ID: src0's experts; ADD_ID: src1's
// rows).
func indexRange(n *graph.Tensor) (int64, bool) {
	switch n.Op() {
	case graph.OpMulMatID:
		return n.Src(0).Ne()[2], true
	case graph.OpAddID:
		return n.Src(1).Ne()[1], true
	}
	return 0, false
}

// errorFlag is d's device error word, 0 when it has none.
func errorFlag(d Device) vendorapi.DevicePtr {
	if ef, ok := d.(ErrorFlags); ok {
		return ef.ErrorFlag()
	}
	return 0
}

// UsesErrorFlag reports whether node n's kernels set the device error word
// (a device allocates it before the first such node runs).
func UsesErrorFlag(n *graph.Tensor) bool {
	_, ok := indexRange(n)
	return ok
}

// DescribeErrorFlags says what the bits of a device error word read back
// report: one sentence per bit set, unknown bits by number.
func DescribeErrorFlags(word uint32) []string {
	var out []string
	if word&FlagMulMatIDExpert != 0 {
		out = append(out, "MUL_MAT_ID: an expert index in ids is out of range [0, n_expert)")
		word &^= FlagMulMatIDExpert
	}
	if word&FlagAddIDRow != 0 {
		out = append(out, "ADD_ID: a row index in ids is out of range [0, src1's rows)")
		word &^= FlagAddIDRow
	}
	for bit := range 32 {
		if word&(1<<bit) != 0 {
			out = append(out, fmt.Sprintf("unknown error flag bit %#x", uint32(1)<<bit))
		}
	}
	return out
}

// CheckIndices returns an error matching ErrBadIndex when node n reads
// indices known on the host before launch that are out of range: a
// MUL_MAT_ID whose ids (src2) data(ids) returns, with an expert outside
// [0, n_expert). data returns the bytes a tensor will hold when n runs, or
// nil when the caller does not know them (computed tensors, tensors written
// on the device): those are checked by the kernel (ErrorFlags).
func CheckIndices(n *graph.Tensor, data func(t *graph.Tensor) []byte) error {
	nExpert, ok := indexRange(n)
	if !ok {
		return nil
	}
	ids := n.Src(2)
	b := data(ids)
	if b == nil {
		return nil
	}
	ne, nb := ids.Ne(), ids.Nb()
	for t := range ne[1] {
		for e := range ne[0] {
			off := e*nb[0] + t*nb[1]
			if off < 0 || off+4 > int64(len(b)) {
				return nil // not the memory image the layout describes: left to the kernel
			}
			if x := int32(binary.LittleEndian.Uint32(b[off:])); x < 0 || int64(x) >= nExpert {
				return fmt.Errorf("ternion: %s: ids[%d, %d] = %d: an index in ids is out of range [0, %d): %w (%w)",
					describe(n), e, t, x, nExpert, ErrBadIndex, vendorapi.ErrInvalidValue)
			}
		}
	}
	return nil
}
