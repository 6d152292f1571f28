// Package ref evaluates graphs on the host in float64, op by op as ggml's
// CPU reference does, independently of the kernels: it is what the host
// device's results are checked against in CI (the host device is in turn
// what GPU results are checked against).
package ref

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/internal/half"
)

// Result holds the memory of every tensor of an evaluated graph.
type Result struct {
	mem map[*graph.Tensor][]byte // by memory-owning tensor (a view reads its ViewSrc's)
}

// Eval computes g's nodes from its leaves' host data (FromFloats,
// FromBytes, Zeros; a leaf without data is zeros).
func Eval(g *graph.Graph) (*Result, error) {
	r := &Result{mem: map[*graph.Tensor][]byte{}}
	for _, l := range g.Leafs() {
		b := make([]byte, l.Layout().Bytes())
		copy(b, l.HostData())
		r.mem[l] = b
	}
	for _, n := range g.Nodes() {
		if n.ViewSrc() == nil {
			if _, ok := r.mem[n]; !ok {
				r.mem[n] = make([]byte, n.Layout().Bytes())
			}
		}
		if err := r.eval(n); err != nil {
			return nil, fmt.Errorf("ref: %s: %w", n, err)
		}
	}
	return r, nil
}

// view is a tensor's memory as its layout sees it.
type view struct {
	l   tensor.Layout
	mem []byte // from the tensor's first byte
}

func (r *Result) view(t *graph.Tensor) (view, error) {
	root, off := t, int64(0)
	if t.ViewSrc() != nil {
		root, off = t.ViewSrc(), t.ViewOffset()
	}
	m, ok := r.mem[root]
	if !ok {
		return view{}, fmt.Errorf("%s has no memory", t)
	}
	return view{l: t.Layout(), mem: m[off:]}, nil
}

// at returns the byte offset of element (i0, i1, i2, i3).
func (v view) at(i [4]int64) int64 {
	return i[0]*v.l.Nb[0] + i[1]*v.l.Nb[1] + i[2]*v.l.Nb[2] + i[3]*v.l.Nb[3]
}

func (v view) get(i [4]int64) float64    { return load(v.l.Type, v.mem[v.at(i):]) }
func (v view) set(i [4]int64, x float64) { store(v.l.Type, v.mem[v.at(i):], x) }

// each calls f with every index of ne in row-major order.
func each(ne [4]int64, f func(i [4]int64)) {
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					f([4]int64{i0, i1, i2, i3})
				}
			}
		}
	}
}

// unflat is the index of row-major element k in shape ne.
func unflat(k int64, ne [4]int64) [4]int64 {
	return [4]int64{k % ne[0], k / ne[0] % ne[1], k / (ne[0] * ne[1]) % ne[2], k / (ne[0] * ne[1] * ne[2])}
}

func (r *Result) eval(n *graph.Tensor) error {
	if n.Op().IsView() {
		return nil
	}
	dst, err := r.view(n)
	if err != nil {
		return err
	}
	src := func(i int) (view, error) { return r.view(n.Src(i)) }
	switch n.Op() {
	case graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv:
		a, err := src(0)
		if err != nil {
			return err
		}
		b, err := src(1)
		if err != nil {
			return err
		}
		op := map[graph.Op]func(x, y float64) float64{
			graph.OpAdd: func(x, y float64) float64 { return x + y },
			graph.OpSub: func(x, y float64) float64 { return x - y },
			graph.OpMul: func(x, y float64) float64 { return x * y },
			graph.OpDiv: func(x, y float64) float64 { return x / y },
		}[n.Op()]
		bn := b.l.Ne
		each(dst.l.Ne, func(i [4]int64) {
			j := [4]int64{i[0] % bn[0], i[1] % bn[1], i[2] % bn[2], i[3] % bn[3]}
			dst.set(i, op(a.get(i), b.get(j)))
		})
	case graph.OpScale:
		a, err := src(0)
		if err != nil {
			return err
		}
		s, c := float64(n.ParamF32(0)), float64(n.ParamF32(1))
		each(dst.l.Ne, func(i [4]int64) { dst.set(i, a.get(i)*s+c) })
	case graph.OpCpy, graph.OpCont, graph.OpDup:
		a, err := src(0)
		if err != nil {
			return err
		}
		for k := range dst.l.Elements() {
			dst.set(unflat(k, dst.l.Ne), a.get(unflat(k, a.l.Ne)))
		}
	case graph.OpMulMat:
		a, err := src(0)
		if err != nil {
			return err
		}
		b, err := src(1)
		if err != nil {
			return err
		}
		r2, r3 := b.l.Ne[2]/a.l.Ne[2], b.l.Ne[3]/a.l.Ne[3]
		each(dst.l.Ne, func(i [4]int64) { // i = (m, n, i12, i13)
			var sum float64
			for k := range a.l.Ne[0] {
				sum += a.get([4]int64{k, i[0], i[2] / r2, i[3] / r3}) * b.get([4]int64{k, i[1], i[2], i[3]})
			}
			dst.set(i, sum)
		})
	default:
		return fmt.Errorf("no reference for %s", n.Op())
	}
	return nil
}

// Floats returns t's values in row-major element order.
func (r *Result) Floats(t *graph.Tensor) ([]float64, error) {
	v, err := r.view(t)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, v.l.Elements())
	each(v.l.Ne, func(i [4]int64) { out = append(out, v.get(i)) })
	return out, nil
}

// load decodes one element of type t.
func load(t tensor.Type, b []byte) float64 {
	switch t {
	case tensor.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case tensor.F16:
		return float64(half.F16ToF32(binary.LittleEndian.Uint16(b)))
	case tensor.BF16:
		return float64(half.BF16ToF32(binary.LittleEndian.Uint16(b)))
	case tensor.I32:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case tensor.I16:
		return float64(int16(binary.LittleEndian.Uint16(b)))
	case tensor.I8:
		return float64(int8(b[0]))
	case tensor.F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case tensor.I64:
		return float64(int64(binary.LittleEndian.Uint64(b)))
	}
	return math.NaN()
}

// store encodes x as type t, rounding through float32 as a GPU kernel
// computing in float32 does.
func store(t tensor.Type, b []byte, x float64) {
	f := float32(x)
	switch t {
	case tensor.F32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(f))
	case tensor.F16:
		binary.LittleEndian.PutUint16(b, half.F16FromF32(f))
	case tensor.BF16:
		binary.LittleEndian.PutUint16(b, half.BF16FromF32(f))
	case tensor.I32:
		binary.LittleEndian.PutUint32(b, uint32(int32(x)))
	case tensor.I16:
		binary.LittleEndian.PutUint16(b, uint16(int16(x)))
	case tensor.I8:
		b[0] = byte(int8(x))
	case tensor.F64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(x))
	case tensor.I64:
		binary.LittleEndian.PutUint64(b, uint64(int64(x)))
	}
}
