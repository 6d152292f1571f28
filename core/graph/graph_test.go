package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/tensor"
)

func TestBinaryBroadcast(t *testing.T) {
	for _, c := range []struct {
		a, b []int64
		ok   bool
	}{
		{[]int64{8, 6, 4, 2}, []int64{8, 6, 4, 2}, true},
		{[]int64{8, 6, 4, 2}, []int64{8, 1, 1, 1}, true},
		{[]int64{8, 6, 4, 2}, []int64{4, 3, 2, 1}, true}, // tiles along ne0 too
		{[]int64{8, 6, 4, 2}, []int64{1, 6, 1, 2}, true},
		{[]int64{8, 6}, []int64{3}, false},
		{[]int64{8, 6}, []int64{8, 4}, false},
		{[]int64{8}, []int64{16}, false},
	} {
		ctx := NewContext()
		a, b := ctx.Empty(tensor.F32, c.a...), ctx.Empty(tensor.F32, c.b...)
		for _, op := range []func(*Tensor) *Tensor{a.Add, a.Sub, a.Mul, a.Div} {
			r := op(b)
			if c.ok {
				require.NoError(t, ctx.Err())
				assert.Equal(t, a.Ne(), r.Ne())
				assert.True(t, r.Layout().IsContiguous())
				assert.Equal(t, []*Tensor{a, b}, []*Tensor{r.Src(0), r.Src(1)})
			} else {
				assert.True(t, r.Failed())
				err := ctx.Err()
				require.ErrorIs(t, err, ErrInvalidOp)
				assert.Contains(t, err.Error(), "does not repeat")
				assert.Contains(t, err.Error(), "f32 [")
			}
		}
	}
}

func TestMulMatShapes(t *testing.T) {
	ctx := NewContext()
	w := ctx.Empty(tensor.Q4_0, 4096, 14336).SetName("ffn_up")
	x := ctx.Empty(tensor.F32, 4096, 7, 8, 2)
	y := w.MulMat(x)
	require.NoError(t, ctx.Err())
	assert.Equal(t, [4]int64{14336, 7, 8, 2}, y.Ne())
	assert.Equal(t, tensor.F32, y.Type())
	// GQA: a's dims 2/3 divide b's.
	k := ctx.Empty(tensor.F16, 128, 64, 2)
	q := ctx.Empty(tensor.F32, 128, 5, 8)
	assert.Equal(t, [4]int64{64, 5, 8, 1}, k.MulMat(q).Ne())
	require.NoError(t, ctx.Err())
	for _, c := range []struct {
		name string
		a, b *Tensor
		msg  string
	}{
		{"k differs", ctx.Empty(tensor.F32, 64, 3), ctx.Empty(tensor.F32, 32, 3), "ne[0]"},
		{"no broadcast", ctx.Empty(tensor.F32, 64, 3, 3), ctx.Empty(tensor.F32, 64, 3, 4), "broadcast"},
		{"transposed a", ctx.Empty(tensor.F32, 64, 3).Transpose(), ctx.Empty(tensor.F32, 3, 2), "transposed"},
		{"quantized b", ctx.Empty(tensor.F32, 64, 3), ctx.Empty(tensor.Q8_0, 64, 3), "quantized"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.a.Context()
			ctx.err = nil
			r := c.a.MulMat(c.b)
			assert.True(t, r.Failed())
			require.ErrorIs(t, ctx.Err(), ErrInvalidOp)
			assert.Contains(t, ctx.Err().Error(), "MUL_MAT")
			assert.Contains(t, ctx.Err().Error(), c.msg)
		})
	}
}

func TestViews(t *testing.T) {
	ctx := NewContext()
	a := ctx.Empty(tensor.F32, 8, 6, 4, 2)
	r := a.Reshape(48, 8)
	assert.Equal(t, [4]int64{48, 8, 1, 1}, r.Ne())
	assert.Same(t, a, r.ViewSrc())
	p := r.Reshape(8, 48).Permute(1, 0, 2, 3)
	assert.Same(t, a, p.ViewSrc(), "a view of a view reads the first tensor")
	assert.Equal(t, [4]int64{48, 8, 1, 1}, p.Ne())
	assert.Equal(t, [4]int64{32, 4, 1536, 1536}, p.Nb())
	v := a.View(64, []int64{4, 3}, []int64{32})
	require.NoError(t, ctx.Err())
	assert.Equal(t, int64(64), v.ViewOffset())
	vv := v.View(32, []int64{2}, nil)
	assert.Equal(t, int64(96), vv.ViewOffset())
	assert.Same(t, a, vv.ViewSrc())
	tr := a.Transpose()
	assert.Equal(t, [4]int64{6, 8, 4, 2}, tr.Ne())
	assert.True(t, tr.Layout().IsTransposed())

	for name, f := range map[string]func() *Tensor{
		"reshape of transposed": func() *Tensor { return tr.Reshape(48, 8) },
		"reshape count":         func() *Tensor { return a.Reshape(47) },
		"view past the end":     func() *Tensor { return a.View(1530, []int64{2}, nil) },
		"view strides count":    func() *Tensor { return a.View(0, []int64{2, 2}, nil) },
		"permute axes":          func() *Tensor { return a.Permute(0, 1, 1, 2) },
		"permute count":         func() *Tensor { return a.Permute(0, 1) },
	} {
		ctx.err = nil
		assert.True(t, f().Failed(), name)
		assert.ErrorIs(t, ctx.Err(), ErrInvalidOp, name)
	}
}

func TestCpyCastCont(t *testing.T) {
	ctx := NewContext()
	a := ctx.Empty(tensor.F32, 8, 6)
	dst := ctx.Empty(tensor.F16, 48)
	c := a.Cpy(dst)
	require.NoError(t, ctx.Err())
	assert.Same(t, dst, c.ViewSrc(), "CPY's result is a view of its destination")
	assert.Equal(t, tensor.F16, c.Type())
	assert.Same(t, a, c.Src(0))
	assert.Same(t, dst, c.Src(1))
	assert.Equal(t, tensor.BF16, a.Cast(tensor.BF16).Type())
	cont := a.Transpose().Cont()
	assert.True(t, cont.Layout().IsContiguous())
	assert.Equal(t, [4]int64{6, 8, 1, 1}, cont.Ne())
	assert.Equal(t, [4]int64{12, 4, 1, 1}, a.ContShape(12, 4).Ne())
	require.NoError(t, ctx.Err())
	a.Cpy(ctx.Empty(tensor.F32, 47))
	assert.ErrorContains(t, ctx.Err(), "elements")
	ctx.err = nil
	a.ContShape(47)
	assert.ErrorContains(t, ctx.Err(), "elements")
}

func TestErrorsCarryOn(t *testing.T) {
	ctx := NewContext()
	a := ctx.Empty(tensor.F32, 8, 6)
	bad := a.Add(ctx.Empty(tensor.F32, 3)) // first error
	out := bad.Mul(a).Scale(2).Cont().Reshape(48)
	assert.True(t, out.Failed())
	assert.Contains(t, ctx.Err().Error(), "ADD", "the first error stands")
	_, err := ctx.Build(out)
	assert.ErrorIs(t, err, ErrInvalidOp)

	// Tensors of other contexts (weights) combine.
	weights := NewContext().Empty(tensor.F32, 8, 6)
	ctx2 := NewContext()
	b := ctx2.Empty(tensor.F32, 8, 6)
	sum := weights.Add(b)
	require.False(t, sum.Failed())
	assert.Same(t, ctx2, sum.Context(), "the node joins the forward pass's context")
	o := NewContext().Empty(tensor.F32, 8, 6).Scale(2)
	require.False(t, sum.Add(o).Failed())
	require.NoError(t, ctx2.Err())
	// A failure in another context is Build's error too.
	badCtx := NewContext()
	bad2 := badCtx.Empty(tensor.F32, 8).Add(badCtx.Empty(tensor.F32, 3))
	_, err = ctx2.Build(bad2)
	assert.ErrorContains(t, err, "does not repeat")
	ctx3 := NewContext()
	c := ctx3.Empty(tensor.F32, 8, 6)
	assert.True(t, c.Add(nil).Failed())
	assert.ErrorContains(t, ctx3.Err(), "src1 is nil")
	var nilT *Tensor
	assert.True(t, nilT.Scale(2).Failed(), "a nil receiver is an error, not a panic")

	var oe *OpError
	require.True(t, errors.As(ctx3.Err(), &oe))
	assert.Equal(t, OpAdd, oe.Op)
	assert.Len(t, oe.Srcs, 2)
}

func TestBuildOrder(t *testing.T) {
	ctx := NewContext()
	x := ctx.FromFloats(make([]float32, 48), 8, 6)
	w := ctx.Empty(tensor.F16, 8, 4)
	h := w.MulMat(x) // [4, 6]
	y := h.Add(ctx.Empty(tensor.F32, 4)).Scale(0.5)
	z := h.Mul(y).Transpose().Cont()
	g, err := ctx.Build(z, y)
	require.NoError(t, err)
	pos := map[*Tensor]int{}
	for i, n := range g.Nodes() {
		pos[n] = i
		assert.NotEqual(t, OpNone, n.Op())
	}
	for _, n := range g.Nodes() {
		for _, s := range n.src {
			if s != nil && s.Op() != OpNone {
				assert.Less(t, pos[s], pos[n], "%s before %s", s, n)
			}
		}
	}
	assert.Len(t, g.Leafs(), 3)
	assert.True(t, z.IsOutput())
	assert.True(t, y.IsOutput())
	assert.False(t, h.IsOutput())
	_, err = ctx.Build()
	assert.Error(t, err)
	g2, err := ctx.Build(NewContext().Empty(tensor.F32, 1).Scale(2))
	require.NoError(t, err, "outputs of another context build")
	assert.Len(t, g2.Nodes(), 1)
}

// checkPlan verifies a plan never lets a tensor's memory be written while
// another tensor sharing it is still to be read: for every two tensors the
// plan placed in overlapping ranges, their live intervals (from the step
// that writes one to the last step reading it or a view of it; leaves and
// outputs live throughout) do not intersect, except that a node computed in
// place may start at the step its source is last read.
func checkPlan(t *testing.T, g *Graph, p *Plan) {
	t.Helper()
	root := func(x *Tensor) *Tensor {
		if x.viewSrc != nil {
			return x.viewSrc
		}
		return x
	}
	const forever = 1 << 30
	def, last := map[*Tensor]int{}, map[*Tensor]int{}
	for x := range p.Offsets {
		def[x], last[x] = -1, -1
		if x.op == OpNone || x.output {
			last[x] = forever
		}
	}
	for i, n := range g.nodes {
		if _, ok := p.Offsets[n]; ok {
			def[n] = i
		}
		if n.output {
			last[root(n)] = forever
		}
		for _, s := range n.src {
			if s == nil {
				continue
			}
			if r := root(s); last[r] < i {
				last[r] = i
			}
		}
	}
	inplace := map[*Tensor]bool{}
	for _, n := range p.Inplace {
		inplace[n] = true
	}
	size := func(x *Tensor) uint64 { return max(uint64(x.layout.Bytes()), 1) }
	var xs []*Tensor
	for x := range p.Offsets {
		xs = append(xs, x)
	}
	for i, a := range xs {
		require.LessOrEqual(t, p.Offsets[a]+size(a), p.Size, "%s fits the buffer", a)
		for _, b := range xs[i+1:] {
			oa, ob := p.Offsets[a], p.Offsets[b]
			if oa+size(a) <= ob || ob+size(b) <= oa {
				continue // no shared bytes
			}
			if def[b] < def[a] {
				a, b = b, a
			}
			if def[b] > last[a] {
				continue // a is dead before b is written
			}
			if def[b] == last[a] && inplace[b] {
				continue // b computed in place over its last reader's source
			}
			t.Fatalf("%s (steps %d..%d) and %s (steps %d..%d) share memory while both are live", a, def[a], last[a], b, def[b], last[b])
		}
	}
}

func TestPlanReusesMemory(t *testing.T) {
	ctx := NewContext()
	const n = 100
	x := ctx.FromFloats(make([]float32, 1024*64), 1024, 64)
	w := ctx.Empty(tensor.F32, 1024, 1024)
	h := x
	for i := range n {
		switch i % 4 {
		case 0:
			h = w.MulMat(h) // no in-place: a new tensor
		case 1:
			h = h.Add(x)
		case 2:
			h = h.Transpose().Cont().Transpose().Cont() // two copies
		default:
			h = h.Scale(0.5)
		}
	}
	g, err := ctx.Build(h)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(g.Nodes()), n)
	p, err := g.Plan(AllocOptions{})
	require.NoError(t, err)
	checkPlan(t, g, p)
	layer := uint64(1024 * 64 * 4)
	t.Logf("%d nodes: plan %d bytes, %d without reuse, %d in place", len(g.Nodes()), p.Size, p.Sum, len(p.Inplace))
	weights := uint64(1024 * 1024 * 4) // w is an unplaced leaf: an input the plan places
	assert.LessOrEqual(t, p.Size, weights+3*layer, "the chain needs w, x and two live activations, not one per node")
	assert.Greater(t, p.Sum, 50*layer)
	assert.NotEmpty(t, p.Inplace, "ADD and SCALE run in place")
	_, hasW := p.Offsets[w]
	assert.True(t, hasW, "an unplaced leaf is an input the plan places")
}

// TestPlanRandomGraphs plans random graphs of [16,8] f32 tensors mixing
// in-place ops, copies, views and matrix products, and checks every plan.
func TestPlanRandomGraphs(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			ctx := NewContext()
			pool := []*Tensor{ctx.Empty(tensor.F32, 16, 8), ctx.FromFloats(make([]float32, 128), 16, 8)}
			half := func(x *Tensor) *Tensor { // a view of x's first or second half of rows
				return x.View(int64(r.IntN(2))*256, []int64{16, 4}, []int64{64})
			}
			for range 5 + r.IntN(60) {
				a, b := pool[r.IntN(len(pool))], pool[r.IntN(len(pool))]
				var n *Tensor
				switch r.IntN(8) {
				case 0:
					n = a.Add(b)
				case 1:
					n = a.Mul(b.Scale(2))
				case 2:
					n = a.Reshape(8, 16).Cont().Reshape(16, 8)
				case 3:
					n = a.Transpose().Cont().Transpose().Cont()
				case 4:
					n = a.Scale(3).Sub(b)
				case 5: // views of halves, added and copied into a fresh leaf, broadcast back
					n = a.Add(half(a).Add(half(b)).Cpy(ctx.Empty(tensor.F32, 64)).Reshape(16, 4))
				case 6:
					n = b.Mul(half(a).Cont().Scale(2))
				default:
					n = a.Add(a.MulMat(b.Transpose().Cont().Transpose().Cont())) // [8,8] broadcast into [16,8]
				}
				pool = append(pool, n)
			}
			require.NoError(t, ctx.Err())
			outs := []*Tensor{pool[len(pool)-1]}
			for _, x := range pool[2:] {
				if r.IntN(8) == 0 {
					outs = append(outs, x)
				}
			}
			g, err := ctx.Build(outs...)
			require.NoError(t, err)
			p, err := g.Plan(AllocOptions{})
			require.NoError(t, err)
			checkPlan(t, g, p)
			assert.LessOrEqual(t, p.Size, p.Sum)
		})
	}
}

// BenchmarkPlan1000 plans a 1000-node graph (goal: at most 1 ms).
func BenchmarkPlan1000(b *testing.B) {
	ctx := NewContext()
	x := ctx.FromFloats(make([]float32, 4096), 64, 64)
	w := ctx.Empty(tensor.F16, 64, 64)
	h := x
	for i := range 1000 {
		switch i % 4 {
		case 0:
			h = w.MulMat(h)
		case 1:
			h = h.Add(x)
		case 2:
			h = h.Scale(0.5)
		default:
			h = h.Transpose().Cont()
		}
	}
	g, err := ctx.Build(h)
	require.NoError(b, err)
	require.Len(b, g.Nodes(), 1250)
	for b.Loop() {
		if _, err := g.Plan(AllocOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
