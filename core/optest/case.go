// Package optest is ternion's test-backend-ops: op cases named as ggml names
// them, checked on a device against a reference (the host device, or for the
// host device core/ref's float64 evaluation) with ggml's NMSE thresholds and
// sentinels around every output, and timed in perf mode. `ternion ops
// test|perf` and core's Go tests run them.
package optest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/internal/half"
)

// Case is one op case: a graph computing one output from random inputs.
type Case struct {
	// Name reads as in ggml's test-backend-ops:
	// "ADD(type=f32,ne=[16,10,10,10],nr=[2,1,1,1])".
	Name string
	// Op is the op under test.
	Op graph.Op
	// MaxNMSE is the largest normalized mean squared error that passes
	// (ggml's: 1e-7 by default, 5e-4 for MUL_MAT, 0 for same-type copies).
	MaxNMSE float64
	// Build makes the case's graph in ctx with inputs drawn from r (uniform in
	// [-1, 1]) and returns its output.
	Build func(ctx *graph.Context, r *rand.Rand) *graph.Tensor
	// FLOPs is the work of one run for perf's TFLOP/s (0: report GB/s).
	FLOPs float64
}

// sets are the case sets of the op files (cases*.go), each registered from
// its file's init, in file name order.
var sets []struct{ tests, perfs func() []Case }

// register adds an op file's correctness cases (small shapes: CI runs them
// on the host) and perf cases (test-backend-ops' own perf cases for its ops,
// with its names, so the figures line up with ggml's); either may be nil.
func register(tests, perfs func() []Case) {
	sets = append(sets, struct{ tests, perfs func() []Case }{tests, perfs})
}

// Tests are the correctness cases of every op.
func Tests() []Case {
	var out []Case
	for _, s := range sets {
		if s.tests != nil {
			out = append(out, s.tests()...)
		}
	}
	return out
}

// Perfs are the perf cases of every op.
func Perfs() []Case {
	var out []Case
	for _, s := range sets {
		if s.perfs != nil {
			out = append(out, s.perfs()...)
		}
	}
	return out
}

// name formats a case name: op(k=v,k=v).
func name(op string, kv ...any) string {
	var b strings.Builder
	b.WriteString(op + "(")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%v=%s", kv[i], value(kv[i+1]))
	}
	b.WriteByte(')')
	return b.String()
}

// value formats a case variable as ggml's var_to_str does: arrays as [a,b].
func value(v any) string {
	switch x := v.(type) {
	case [4]int64:
		return fmt.Sprintf("[%d,%d,%d,%d]", x[0], x[1], x[2], x[3])
	case [2]int64:
		return fmt.Sprintf("[%d,%d]", x[0], x[1])
	case [4]int:
		return fmt.Sprintf("[%d,%d,%d,%d]", x[0], x[1], x[2], x[3])
	case float32:
		return fmt.Sprintf("%f", x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}

// input makes a leaf of type t and shape ne holding values uniform in [-1, 1].
func input(ctx *graph.Context, r *rand.Rand, t tensor.Type, ne [4]int64) *graph.Tensor {
	return inputRange(ctx, r, t, ne, -1, 1)
}

// inputRange makes a leaf of type t and shape ne holding values uniform in
// [lo, hi]; for the grid i-quants, which ggml quantizes only with an
// importance matrix, random blocks instead (randomIQBlocks).
func inputRange(ctx *graph.Context, r *rand.Rand, t tensor.Type, ne [4]int64, lo, hi float32) *graph.Tensor {
	n := ne[0] * ne[1] * ne[2] * ne[3]
	if iqPutD(t, nil, 0) {
		return ctx.FromBytes(t, randomIQBlocks(r, t, n, max(-lo, hi)), ne[:]...)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	return ctx.FromFloatsAs(t, v, ne[:]...)
}

// Default NMSE thresholds (ggml's test-backend-ops).
const (
	nmseDefault = 1e-7
	nmseMulMat  = 5e-4
)

// Match returns the cases whose op is op (when set: the graph op, "UNARY",
// or the op a case's name starts with, "SILU", as test-backend-ops' -o
// matches ggml_op_desc) and whose name match accepts (when set).
func Match(cases []Case, op string, match func(name string) bool) []Case {
	var out []Case
	for _, c := range cases {
		desc, _, _ := strings.Cut(c.Name, "(")
		if op != "" && c.Op.String() != op && desc != op {
			continue
		}
		if match != nil && !match(c.Name) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// iqPutD stores d as the f16 scale of block blk of t, for the grid
// i-quants (at the block's start; iq1_m keeps its four nibbles at the top
// of its four scale words), and reports whether t is one (blk nil: only
// reports).
func iqPutD(t tensor.Type, blk []byte, d float32) bool {
	switch t {
	case tensor.IQ2_XXS, tensor.IQ2_XS, tensor.IQ2_S, tensor.IQ3_XXS, tensor.IQ3_S, tensor.IQ1_S:
		if blk != nil {
			binary.LittleEndian.PutUint16(blk, half.F16FromF32(d))
		}
	case tensor.IQ1_M:
		if blk != nil {
			bits := half.F16FromF32(d)
			for w := range 4 {
				blk[49+2*w] = blk[49+2*w]&0x0f | byte(bits>>(4*w)&15)<<4
			}
		}
	default:
		return false
	}
	return true
}

// randomIQBlocks returns n values of grid i-quant t (a multiple of its
// block): every byte random but each block's d, chosen so that the block's
// largest value has a magnitude between m/2 and m.
func randomIQBlocks(r *rand.Rand, t tensor.Type, n int64, m float32) []byte {
	f, err := tensor.Format(t)
	if err != nil {
		panic(err)
	}
	b := make([]byte, n/int64(f.BlockElems)*int64(f.BlockBytes))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	v := make([]float32, f.BlockElems)
	for off := 0; off < len(b); off += f.BlockBytes {
		blk := b[off : off+f.BlockBytes]
		iqPutD(t, blk, 1)
		if err := f.Dequantize(v, blk); err != nil {
			panic(err)
		}
		amax := float32(0)
		for _, x := range v {
			amax = max(amax, float32(math.Abs(float64(x))))
		}
		iqPutD(t, blk, m*(0.5+0.5*r.Float32())/amax) // every grid value is nonzero: amax > 0
	}
	return b
}
