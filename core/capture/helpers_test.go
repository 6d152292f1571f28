package capture

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// fakeBuf is device memory at a made-up address: enough to place tensors
// and read their pointers, never to hold data.
type fakeBuf struct {
	base vendorapi.DevicePtr
	size uint64
}

func (b *fakeBuf) Device() int                 { return 0 }
func (b *fakeBuf) Ptr() vendorapi.DevicePtr    { return b.base }
func (b *fakeBuf) Size() uint64                { return b.size }
func (b *fakeBuf) Read(uint64, []byte) error   { return errors.New("fake buffer") }
func (b *fakeBuf) Write(uint64, []byte) error  { return errors.New("fake buffer") }
func newBuf(base vendorapi.DevicePtr) *fakeBuf { return &fakeBuf{base: base, size: 1 << 30} }

// The weights buffer every spec's leaves are placed in, at fixed offsets.
var weights = newBuf(0x1000_0000)

// Compute buffers at different addresses.
const (
	base1 vendorapi.DevicePtr = 0x8000_0000
	base2 vendorapi.DevicePtr = 0x9000_0000
	base3 vendorapi.DevicePtr = 0xa000_0000
	base4 vendorapi.DevicePtr = 0xb000_0000
	base5 vendorapi.DevicePtr = 0xc000_0000
	base6 vendorapi.DevicePtr = 0xd000_0000
	base7 vendorapi.DevicePtr = 0xe000_0000
	base8 vendorapi.DevicePtr = 0xf000_0000
)

// spec describes a small decode-shaped graph; its zero value is the base
// case (one row, KV length 16, write position 0, scale 2, compute buffer at
// base1):
//
//	0 ADD(x, bias)  1 MUL(·, w)  2 SCALE(·)  3 VIEW(kcache row pos)
//	4 CPY(scaled → kcache row)  5 VIEW(kcache rows 0..kv)  6 MUL_MAT
//	7 SOFT_MAX  [8 SQR when extra]
type spec struct {
	rows  int64               // x's ne[1], the batch (ADD's src1 too)
	kv    int64               // the KV length the attention reads
	pos   int64               // the KV-cache row the CPY writes
	skew  int64               // elements the CPY's destination is shifted by within the row
	scale float32             // SCALE's factor
	base  vendorapi.DevicePtr // the compute buffer's address
	extra bool                // a ninth node
	split bool                // the bias is named "split" (see splitOpts)
	f16   bool                // the K cache is F16 (see noF16Copy)
}

// build makes s's graph, places it and returns its nodes.
func build(t testing.TB, s spec) []*graph.Tensor {
	t.Helper()
	rows, kv, scale, base := s.rows, s.kv, s.scale, s.base
	if rows == 0 {
		rows = 1
	}
	if kv == 0 {
		kv = 16
	}
	if scale == 0 {
		scale = 2
	}
	if base == 0 {
		base = base1
	}
	kt := tensor.F32
	if s.f16 {
		kt = tensor.F16
	}
	ctx := graph.NewContext()
	x := ctx.Empty(tensor.F32, 8, rows).SetName("x")
	bias := ctx.Empty(tensor.F32, 8, rows).SetName("bias")
	if s.split {
		bias.SetName("split")
	}
	w := ctx.Empty(tensor.F32, 8, 1).SetName("w")
	kcache := ctx.Empty(kt, 8, 256).SetName("kcache")
	for i, l := range []*graph.Tensor{bias, w, kcache} {
		require.NoError(t, l.Place(weights, uint64(i)<<20))
	}
	nb1 := kcache.Nb()[1]
	y := x.Add(bias).Mul(w).Scale(scale)
	cpy := y.Cpy(kcache.View(s.pos*nb1+s.skew*kcache.Nb()[0], []int64{8, rows}, []int64{nb1}))
	out := kcache.View(0, []int64{8, kv}, []int64{nb1}).MulMat(y).Softmax()
	if s.extra {
		out = out.Sqr()
	}
	g, err := ctx.Build(cpy, out)
	require.NoError(t, err)
	p, err := g.Plan(graph.AllocOptions{})
	require.NoError(t, err)
	require.NoError(t, p.Apply(newBuf(base)))
	return g.Nodes()
}

// chain builds a graph of n small ADD/MUL/SCALE nodes over one [64,1]
// input, placed at base.
func chain(t testing.TB, n int, base vendorapi.DevicePtr) []*graph.Tensor {
	t.Helper()
	ctx := graph.NewContext()
	x := ctx.Empty(tensor.F32, 64, 1)
	b := ctx.Empty(tensor.F32, 64, 1)
	require.NoError(t, b.Place(weights, 0))
	y := x
	for i := range n {
		switch i % 3 {
		case 0:
			y = y.Add(b)
		case 1:
			y = y.Mul(b)
		default:
			y = y.Scale(1.5)
		}
	}
	g, err := ctx.Build(y)
	require.NoError(t, err)
	p, err := g.Plan(graph.AllocOptions{})
	require.NoError(t, err)
	require.NoError(t, p.Apply(newBuf(base)))
	require.Len(t, g.Nodes(), n)
	return g.Nodes()
}

// errDriver is the failure the tests report for captures and updates.
var errDriver = errors.New("fake driver error")

// splitOpts marks as split any node that reads a tensor named "split".
func splitOpts(o *Options) {
	o.IsSplit = func(n *graph.Tensor) bool {
		for i := range graph.MaxSrc {
			if s := n.Src(i); s != nil && s.Name() == "split" {
				return true
			}
		}
		return false
	}
}

// noF16Copy refuses pointer indirection for copies into F16.
func noF16Copy(o *Options) {
	o.CopyIndirect = func(n *graph.Tensor) bool { return n.Type() != tensor.F16 }
}

// noIndirection turns CPY pointer indirection off.
func noIndirection(o *Options) { o.CopyIndirection = false }
