// Package ref evaluates graphs on the host in float64, op by op as ggml's
// CPU reference does, independently of the kernels: it is what the host
// device's results are checked against in CI (the host device is in turn
// what GPU results are checked against).
package ref

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/quant"
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
	l      tensor.Layout
	mem    []byte // from the tensor's first byte
	decode func([]byte) float64
	encode func([]byte, float64)
	rows   *quantRows // quantized types: rows decoded whole, the last one kept
}

// quantRows decodes the rows of a quantized view, keeping the last one (a
// reference walks a row's elements in order, so each row decodes once).
type quantRows struct {
	f   *quant.Format
	off int64 // the kept row's byte offset, -1 for none
	row []float32
	err error // the first decoding failure
}

// get returns element i0 of the row at byte offset off.
func (q *quantRows) get(mem []byte, off, i0 int64) float64 {
	if off != q.off {
		q.off = off
		if err := q.f.Dequantize(q.row, mem[off:]); err != nil {
			q.err, q.off = err, -1
			return math.NaN()
		}
	}
	return float64(q.row[i0])
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
	if t.Type().IsQuantized() {
		f, err := tensor.Format(t.Type())
		if err != nil {
			return view{}, err
		}
		rows := &quantRows{f: f, off: -1, row: make([]float32, t.Layout().Ne[0])}
		return view{l: t.Layout(), mem: m[off:], rows: rows, encode: func([]byte, float64) {}}, nil
	}
	// A type without a codec reads as NaN, which fails any comparison, and
	// is never written.
	dec, err := tensor.Decoder(t.Type())
	if err != nil {
		dec = func([]byte) float64 { return math.NaN() }
	}
	enc, err := tensor.Encoder(t.Type())
	if err != nil {
		enc = func([]byte, float64) {}
	}
	return view{l: t.Layout(), mem: m[off:], decode: dec, encode: enc}, nil
}

func (v view) get(i [4]int64) float64 {
	if v.rows != nil {
		return v.rows.get(v.mem, v.l.Offset([4]int64{0, i[1], i[2], i[3]}), i[0])
	}
	return v.decode(v.mem[v.l.Offset(i):])
}

func (v view) set(i [4]int64, x float64) { v.encode(v.mem[v.l.Offset(i):], x) }

// quantizeFrom writes a's elements (row-major) into quantized view v row by
// row with ggml's reference quantizer of v's format; iq4_nl with the
// one-pass quantizer the seed's CPY uses (ggml's CPU one searches scales).
func (v view) quantizeFrom(a view) error {
	put := v.rows.f.Quantize
	if v.rows.f.Name == "iq4_nl" {
		put = quant.QuantizeIQ4NLOnePass
	}
	n := v.l.Ne[0]
	vals := make([]float32, n)
	k := int64(0)
	var err error
	tensor.Each([4]int64{1, v.l.Ne[1], v.l.Ne[2], v.l.Ne[3]}, func(i [4]int64) {
		for i0 := range n {
			vals[i0] = float32(a.get(unflat(k, a.l.Ne)))
			k++
		}
		off := v.l.Offset(i)
		if e := put(v.mem[off:off+int64(v.rows.f.RowBytes(int(n)))], vals); e != nil && err == nil {
			err = e
		}
	})
	return err
}

// unflat is the index of row-major element k in shape ne.
func unflat(k int64, ne [4]int64) [4]int64 {
	return [4]int64{k % ne[0], k / ne[0] % ne[1], k / (ne[0] * ne[1]) % ne[2], k / (ne[0] * ne[1] * ne[2])}
}

// binaryOps are ADD, SUB, MUL and DIV on one pair of elements.
var binaryOps = map[graph.Op]func(x, y float64) float64{
	graph.OpAdd: func(x, y float64) float64 { return x + y },
	graph.OpSub: func(x, y float64) float64 { return x - y },
	graph.OpMul: func(x, y float64) float64 { return x * y },
	graph.OpDiv: func(x, y float64) float64 { return x / y },
}

// evalFunc computes node n into dst from its sources' views (src(i)).
type evalFunc func(n *graph.Tensor, dst view, src func(i int) (view, error)) error

// evals holds each op's reference, registered by the op files' init.
var evals = map[graph.Op]evalFunc{}

// register adds the reference of ops.
func register(f evalFunc, ops ...graph.Op) {
	for _, op := range ops {
		evals[op] = f
	}
}

// srcViews returns the views of n's sources 0..k-1.
func srcViews(src func(i int) (view, error), k int) ([]view, error) {
	out := make([]view, k)
	for i := range out {
		var err error
		if out[i], err = src(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *Result) eval(n *graph.Tensor) error {
	if n.Op().IsView() {
		return nil
	}
	f, ok := evals[n.Op()]
	if !ok {
		return fmt.Errorf("no reference for %s", n.Op())
	}
	dst, err := r.view(n)
	if err != nil {
		return err
	}
	return f(n, dst, func(i int) (view, error) {
		if n.Src(i) == nil {
			return view{}, fmt.Errorf("src%d is nil", i)
		}
		return r.view(n.Src(i))
	})
}

func init() {
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		s, err := srcViews(src, 2)
		if err != nil {
			return err
		}
		a, b := s[0], s[1]
		op := binaryOps[n.Op()]
		bn := b.l.Ne
		tensor.Each(dst.l.Ne, func(i [4]int64) {
			j := [4]int64{i[0] % bn[0], i[1] % bn[1], i[2] % bn[2], i[3] % bn[3]}
			dst.set(i, op(a.get(i), b.get(j)))
		})
		return nil
	}, graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv)
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		a, err := src(0)
		if err != nil {
			return err
		}
		s, c := float64(n.ParamF32(0)), float64(n.ParamF32(1))
		tensor.Each(dst.l.Ne, func(i [4]int64) { dst.set(i, a.get(i)*s+c) })
		return nil
	}, graph.OpScale)
	register(func(n *graph.Tensor, dst view, src func(int) (view, error)) error {
		a, err := src(0)
		if err != nil {
			return err
		}
		if dst.rows != nil {
			return dst.quantizeFrom(a)
		}
		for k := range dst.l.Elements() {
			dst.set(unflat(k, dst.l.Ne), a.get(unflat(k, a.l.Ne)))
		}
		return nil
	}, graph.OpCpy, graph.OpCont, graph.OpDup)
}

// Floats returns t's values in row-major element order.
func (r *Result) Floats(t *graph.Tensor) ([]float64, error) {
	v, err := r.view(t)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, v.l.Elements())
	tensor.Each(v.l.Ne, func(i [4]int64) { out = append(out, v.get(i)) })
	return out, nil
}
