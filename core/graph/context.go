package graph

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ternion/ternion/core/tensor"
)

// ErrInvalidOp is matched (errors.Is) by every error of a graph under
// construction: a shape, type or broadcast mismatch, a tensor of another
// context, a nil tensor.
var ErrInvalidOp = errors.New("invalid op")

// OpError is the error of one op constructor: the op, what was wrong, and the
// operands as built.
type OpError struct {
	Op   Op
	Msg  string
	Srcs []string // the operands: op, name, type and shape
}

// Error reads "ternion: ADD: src1 f32 [3,1,1,1] does not repeat into src0 f32 [8,6,1,1]".
func (e *OpError) Error() string { return "ternion: " + e.Op.String() + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalidOp) true.
func (e *OpError) Unwrap() error { return ErrInvalidOp }

// Context is where a graph is built: it makes leaf tensors (inputs, weights)
// and owns every tensor the op constructors make from them. The first op
// that fails is its error (Err); tensors built after it carry the failure
// on, so a whole forward pass is checked once. A Context is safe for use by
// one goroutine at a time (the error is guarded for reading from others).
type Context struct {
	tensors []*Tensor
	mu      sync.Mutex
	err     error
}

// NewContext returns an empty context.
func NewContext() *Context { return &Context{} }

// Err returns the first op error in c, or nil.
func (c *Context) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Tensors returns every tensor made in c, in order.
func (c *Context) Tensors() []*Tensor { return c.tensors }

// fail records an error of op (the first one wins) and returns a tensor that
// carries the failure on.
func (c *Context) fail(op Op, srcs []*Tensor, format string, args ...any) *Tensor {
	e := &OpError{Op: op, Msg: fmt.Sprintf(format, args...)}
	for _, s := range srcs {
		e.Srcs = append(e.Srcs, s.describe())
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = e
	}
	c.mu.Unlock()
	return c.failed(op)
}

// failed returns a tensor of op that carries an earlier failure on.
func (c *Context) failed(op Op) *Tensor {
	t := &Tensor{ctx: c, op: op, failed: true, layout: tensor.Layout{Type: tensor.F32, Ne: [4]int64{1, 1, 1, 1}}}
	t.layout.Nb = tensor.RowMajorStrides(tensor.F32, t.layout.Ne)
	return t
}

// add records a new tensor of c.
func (c *Context) add(t *Tensor) *Tensor {
	t.ctx = c
	c.tensors = append(c.tensors, t)
	return t
}

// leaf makes a contiguous leaf tensor of type ty and shape ne.
func (c *Context) leaf(ty tensor.Type, ne []int64) *Tensor {
	l, err := tensor.Contiguous(ty, ne...)
	if err != nil {
		return c.fail(OpNone, nil, "%v", err)
	}
	return c.add(&Tensor{layout: l})
}

// Empty makes a leaf tensor of type ty and shape ne (1 to 4 dimensions):
// an input whose memory the graph allocator places and the caller fills
// (SetFloats after allocation), or a weight the caller places (Place).
func (c *Context) Empty(ty tensor.Type, ne ...int64) *Tensor { return c.leaf(ty, ne) }

// FromFloats makes a leaf of type F32 and shape ne holding v (row-major),
// uploaded to the device when its graph runs.
func (c *Context) FromFloats(v []float32, ne ...int64) *Tensor {
	return c.FromFloatsAs(tensor.F32, v, ne...)
}

// FromFloatsAs makes a leaf of type ty (F32, F16, BF16, I32) and shape ne
// holding v converted to ty, uploaded when its graph runs.
func (c *Context) FromFloatsAs(ty tensor.Type, v []float32, ne ...int64) *Tensor {
	t := c.leaf(ty, ne)
	if t.failed {
		return t
	}
	b, err := tensor.FromFloat32(t.layout, v)
	if err != nil {
		return c.fail(OpNone, nil, "%v", err)
	}
	t.host = b
	return t
}

// FromInts makes an I32 leaf of shape ne holding v, uploaded when its graph runs.
func (c *Context) FromInts(v []int32, ne ...int64) *Tensor {
	t := c.leaf(tensor.I32, ne)
	if t.failed {
		return t
	}
	if int64(len(v)) != t.layout.Elements() {
		return c.fail(OpNone, nil, "%d ints for shape %s, which holds %d", len(v), t.layout.Shape(), t.layout.Elements())
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	t.host = b
	return t
}

// FromBytes makes a leaf of type ty and shape ne whose memory image is b
// (for quantized weights: whole blocks, rows packed), uploaded when its graph runs.
func (c *Context) FromBytes(ty tensor.Type, b []byte, ne ...int64) *Tensor {
	t := c.leaf(ty, ne)
	if t.failed {
		return t
	}
	if int64(len(b)) != t.layout.Bytes() {
		return c.fail(OpNone, nil, "%d bytes for %s %s, which takes %d", len(b), ty, t.layout.Shape(), t.layout.Bytes())
	}
	t.host = append([]byte(nil), b...)
	return t
}

// Zeros makes a leaf of type ty and shape ne holding zeros.
func (c *Context) Zeros(ty tensor.Type, ne ...int64) *Tensor {
	t := c.leaf(ty, ne)
	if t.failed {
		return t
	}
	t.host = make([]byte, t.layout.Bytes())
	return t
}
