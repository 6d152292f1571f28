package graph

import (
	"fmt"
	"math"

	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// MaxSrc is the most sources a node has (ggml's GGML_MAX_SRC).
const MaxSrc = 10

// MaxParams is the number of 4-byte op parameter slots of a node (ggml's
// GGML_MAX_OP_PARAMS of 64 bytes).
const MaxParams = 16

// Tensor is a node of a graph under construction: a leaf (weights, inputs)
// or the result of an op on other tensors, with ggml's layout (type, ne, nb),
// op parameters and views. The op constructors are its methods (a.Add(b),
// w.MulMat(x)); they check shapes and types when called and record the first
// failure in the tensor's Context, returning a tensor that carries the
// failure on, so model code chains ops and checks Context.Err (or the error
// of Build or Compute) once.
type Tensor struct {
	layout  tensor.Layout
	op      Op
	src     [MaxSrc]*Tensor
	params  [MaxParams]uint32
	name    string
	viewSrc *Tensor // the tensor whose memory a view reads
	viewOff int64   // byte offset into viewSrc
	ctx     *Context
	failed  bool // built from a failed op: carries the Context's error on
	output  bool // kept alive after the graph ran (set by Build for its outputs)

	host  []byte    // leaf data to upload before the graph runs (FromFloats, FromBytes)
	place Placement // where the tensor's memory is, once allocated
}

// Placement is where a tensor's memory is: a buffer and a byte offset in it.
type Placement struct {
	Buf    Buffer
	Offset uint64
}

// Buffer is device memory tensors are placed in; core/backend's buffers
// implement it.
type Buffer interface {
	// Device is the global index of the device the memory is on.
	Device() int
	// Ptr is the address of the buffer's first byte.
	Ptr() vendorapi.DevicePtr
	// Size is the buffer's size in bytes.
	Size() uint64
	// Read copies len(dst) bytes at offset off into dst.
	Read(off uint64, dst []byte) error
	// Write copies src to offset off.
	Write(off uint64, src []byte) error
}

// Layout returns the tensor's type, shape and strides.
func (t *Tensor) Layout() tensor.Layout { return t.layout }

// Type returns the element type.
func (t *Tensor) Type() tensor.Type { return t.layout.Type }

// Ne returns the elements along each dimension.
func (t *Tensor) Ne() [tensor.MaxDims]int64 { return t.layout.Ne }

// Nb returns the byte strides of each dimension.
func (t *Tensor) Nb() [tensor.MaxDims]int64 { return t.layout.Nb }

// Dim returns Ne[i].
func (t *Tensor) Dim(i int) int64 { return t.layout.Ne[i] }

// Op returns what computes the tensor (OpNone for a leaf).
func (t *Tensor) Op() Op { return t.op }

// Src returns source i (nil when unused).
func (t *Tensor) Src(i int) *Tensor { return t.src[i] }

// Name returns the tensor's name ("" when unnamed).
func (t *Tensor) Name() string { return t.name }

// SetName names the tensor (for errors, logs and op test cases) and returns it.
func (t *Tensor) SetName(name string) *Tensor { t.name = name; return t }

// ViewSrc returns the tensor whose memory a view reads (nil when t is not a view).
func (t *Tensor) ViewSrc() *Tensor { return t.viewSrc }

// ViewOffset returns the byte offset of a view into ViewSrc.
func (t *Tensor) ViewOffset() int64 { return t.viewOff }

// Failed reports whether t comes from an op that failed (see Context.Err).
func (t *Tensor) Failed() bool { return t.failed }

// Context returns the context t was built in.
func (t *Tensor) Context() *Context { return t.ctx }

// IsOutput reports whether t's memory is kept after its graph runs.
func (t *Tensor) IsOutput() bool { return t.output }

// ParamI32 returns op parameter slot i as an int32.
func (t *Tensor) ParamI32(i int) int32 { return int32(t.params[i]) }

// ParamF32 returns op parameter slot i as a float32.
func (t *Tensor) ParamF32(i int) float32 { return math.Float32frombits(t.params[i]) }

// Params returns the op parameter slots.
func (t *Tensor) Params() [MaxParams]uint32 { return t.params }

func (t *Tensor) setI32(i int, v int32)   { t.params[i] = uint32(v) }
func (t *Tensor) setF32(i int, v float32) { t.params[i] = math.Float32bits(v) }

// Placement returns where t's memory is (for a view, its source's memory at
// its offset); ok is false until t is allocated.
func (t *Tensor) Placement() (p Placement, ok bool) {
	base, off := t.viewBase()
	p = base.place
	p.Offset += off
	return p, p.Buf != nil
}

// viewBase returns the tensor whose memory t is (t itself unless t is a
// view) and t's byte offset in it: a loop, not a recursion, so that Data,
// on the graph-capture policy's hot path, inlines it.
func (t *Tensor) viewBase() (*Tensor, uint64) {
	var off uint64
	for t.viewSrc != nil {
		off += uint64(t.viewOff)
		t = t.viewSrc
	}
	return t, off
}

// Data returns the device address of t's first element; ok is false until t
// is allocated.
func (t *Tensor) Data() (vendorapi.DevicePtr, bool) {
	base, off := t.viewBase()
	if base.place.Buf == nil {
		return 0, false
	}
	return base.place.Buf.Ptr().Add(base.place.Offset + off), true
}

// Place puts t at offset off of buf (for weights and other tensors placed by
// hand; graph allocation places the others). A view cannot be placed.
func (t *Tensor) Place(buf Buffer, off uint64) error {
	switch {
	case t.viewSrc != nil:
		return fmt.Errorf("graph: %s is a view of %s: place its source", t.describe(), t.viewSrc.describe())
	case buf == nil:
		return fmt.Errorf("graph: placing %s in a nil buffer", t.describe())
	case off+uint64(t.layout.Bytes()) > buf.Size() || off+uint64(t.layout.Bytes()) < off:
		return fmt.Errorf("graph: %s (%d bytes) at offset %d does not fit a %d-byte buffer", t.describe(),
			t.layout.Bytes(), off, buf.Size())
	}
	t.place = Placement{Buf: buf, Offset: off}
	return nil
}

// HostData returns the bytes FromFloats or FromBytes gave a leaf, uploaded
// when the graph runs (nil for other tensors).
func (t *Tensor) HostData() []byte { return t.host }

// Bytes reads the tensor's memory (its elements in memory order, with any
// gaps of a non-contiguous layout) from the device.
func (t *Tensor) Bytes() ([]byte, error) {
	p, ok := t.Placement()
	if !ok {
		return nil, fmt.Errorf("graph: %s is not allocated", t.describe())
	}
	b := make([]byte, t.layout.Bytes())
	if err := p.Buf.Read(p.Offset, b); err != nil {
		return nil, fmt.Errorf("graph: reading %s: %w", t.describe(), err)
	}
	return b, nil
}

// Floats reads the tensor from the device as float32s in row-major element
// order (F32, F16, BF16 and I32 tensors of any layout).
func (t *Tensor) Floats() ([]float32, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	return tensor.ToFloat32(t.layout, b)
}

// SetFloats writes v (row-major, converted to t's type) into t's memory on
// the device; t must be allocated and contiguous.
func (t *Tensor) SetFloats(v []float32) error {
	b, err := tensor.FromFloat32(t.layout, v)
	if err != nil {
		return fmt.Errorf("graph: %s: %w", t.describe(), err)
	}
	return t.SetBytes(b)
}

// SetBytes writes b, t's memory image, into t's memory on the device.
func (t *Tensor) SetBytes(b []byte) error {
	p, ok := t.Placement()
	if !ok {
		return fmt.Errorf("graph: %s is not allocated", t.describe())
	}
	if int64(len(b)) != t.layout.Bytes() {
		return fmt.Errorf("graph: %d bytes for %s, which takes %d", len(b), t.describe(), t.layout.Bytes())
	}
	return p.Buf.Write(p.Offset, b)
}

// describe names t for errors: its name (if any), type and shape.
func (t *Tensor) describe() string {
	if t == nil {
		return "<nil tensor>"
	}
	s := t.layout.Type.String() + " " + t.layout.Shape()
	if t.name != "" {
		s = fmt.Sprintf("%q (%s)", t.name, s)
	}
	if t.op != OpNone {
		s = t.op.String() + " " + s
	}
	return s
}

// String describes the tensor: op, name, type, shape and strides.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	return t.describe() + fmt.Sprintf(" nb=[%d,%d,%d,%d]", t.layout.Nb[0], t.layout.Nb[1], t.layout.Nb[2], t.layout.Nb[3])
}
