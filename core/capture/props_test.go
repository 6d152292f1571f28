package capture

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

func TestPropsOf(t *testing.T) {
	nodes := build(t, base)
	ops := make([]graph.Op, len(nodes))
	for i, n := range nodes {
		ops[i] = n.Op()
	}
	require.Equal(t, []graph.Op{graph.OpAdd, graph.OpMul, graph.OpScale, graph.OpView, graph.OpCpy, graph.OpView,
		graph.OpMulMat, graph.OpSoftMax}, ops, "the graph the tests expect")

	add := PropsOf(nodes[0], false)
	data, _ := nodes[0].Data()
	x, _ := nodes[0].Src(0).Data()
	bias, _ := nodes[0].Src(1).Data()
	assert.Equal(t, graph.OpAdd, add.Op)
	assert.Equal(t, data, add.Data)
	assert.Equal(t, [graph.MaxSrc]vendorapi.DevicePtr{x, bias}, add.Src)
	assert.Equal(t, nodes[0].Ne(), add.Ne)
	assert.Equal(t, nodes[0].Nb(), add.Nb)
	assert.NotZero(t, add.Leaves, "x and bias are leaves")

	scale := PropsOf(nodes[2], false)
	assert.Equal(t, nodes[2].Params(), scale.Params)
	assert.Zero(t, scale.Leaves, "SCALE reads a node")

	view := PropsOf(nodes[3], false)
	assert.Zero(t, view.Data, "a view's pointers are exempt")
	assert.Zero(t, view.Src)
	assert.Zero(t, view.Params, "VIEW's parameters are its offset")
	assert.Equal(t, nodes[3].Ne(), view.Ne)

	cpy := PropsOf(nodes[4], false)
	src0, _ := nodes[4].Src(0).Data()
	dst, _ := nodes[4].Data()
	src1, _ := nodes[4].Src(1).Data()
	assert.Equal(t, dst, cpy.Data, "without pointer indirection a CPY's destination is compared")
	assert.Equal(t, [graph.MaxSrc]vendorapi.DevicePtr{src0, src1}, cpy.Src, "src0 and src1 (the destination) are compared")

	cpy = PropsOf(nodes[4], true)
	assert.Zero(t, cpy.Data, "with pointer indirection the destination is not compared")
	assert.Equal(t, [graph.MaxSrc]vendorapi.DevicePtr{src0}, cpy.Src, "src0 is compared, src1 (the destination) is not")
	assert.Equal(t, PropsOf(nodes[0], false), PropsOf(nodes[0], true), "indirection changes only CPY nodes")
	for _, s := range []spec{{pos: 3}, {pos: 3, skew: 1}} {
		assert.Equal(t, cpy, PropsOf(build(t, s)[4], true), "a destination moved to %+v matches", s)
	}
}

func TestPropsDiff(t *testing.T) {
	p := PropsOf(build(t, base)[0], false)
	for _, tc := range []struct {
		name string
		mod  func(q *Props)
		want string
	}{
		{"same", func(*Props) {}, ""},
		{"op", func(q *Props) { q.Op = graph.OpSub }, "op"},
		{"type", func(q *Props) { q.Type++ }, "type"},
		{"ne", func(q *Props) { q.Ne[3] = 2 }, "ne"},
		{"nb", func(q *Props) { q.Nb[3] *= 2 }, "nb"},
		{"data", func(q *Props) { q.Data += 128 }, "data pointer"},
		{"params", func(q *Props) { q.Params[15] = 1 }, "op params"},
		{"leaves", func(q *Props) { q.Leaves ^= 1 }, "leaf source layout"},
		{"src1", func(q *Props) { q.Src[1] += 128 }, "src1 data pointer"},
		{"src9", func(q *Props) { q.Src[9] = 1 }, "src9 data pointer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := p
			tc.mod(&q)
			assert.Equal(t, tc.want, p.Diff(&q))
			assert.Equal(t, tc.want, q.Diff(&p))
		})
	}
}

// TestLeafLayout checks the property beyond the seed: a leaf source that
// changes type or shape under the same address changes its reader's Props.
func TestLeafLayout(t *testing.T) {
	ctx := graph.NewContext()
	a := ctx.Empty(tensor.F32, 64, 4)
	b1 := ctx.Empty(tensor.F32, 64, 4)
	b2 := ctx.Empty(tensor.F32, 64, 1) // broadcast: the same output shape
	for _, l := range []*graph.Tensor{a, b1, b2} {
		require.NoError(t, l.Place(weights, 0))
	}
	out := newBuf(base1)
	m1, m2 := a.Mul(b1), a.Mul(b2)
	require.NoError(t, m1.Place(out, 0))
	require.NoError(t, m2.Place(out, 0))
	p1, p2 := PropsOf(m1, false), PropsOf(m2, false)
	assert.Equal(t, p1.Src, p2.Src)
	assert.Equal(t, p1.Ne, p2.Ne)
	assert.Equal(t, "leaf source layout", p1.Diff(&p2))
}

func TestSnapshotAllocatesNothing(t *testing.T) {
	nodes := chain(t, 100, base1)
	buf := Snapshot(nil, nodes, true)
	require.Len(t, buf, 100)
	for i, n := range nodes {
		assert.Equal(t, PropsOf(n, true), buf[i])
	}
	allocs := testing.AllocsPerRun(10, func() { buf = Snapshot(buf[:0], nodes, true) })
	assert.Zero(t, allocs)
}

func TestKeyOfAllocatesNothing(t *testing.T) {
	nodes := chain(t, 100, base1)
	assert.Zero(t, testing.AllocsPerRun(10, func() { KeyOf(nodes) }))
}

// TestMatchesAgreesWithPropsOf checks the replay path's comparison against
// the definition: matches(n) is PropsOf(n) == p, for every node of graphs
// that differ in each way the policy tests.
func TestMatchesAgreesWithPropsOf(t *testing.T) {
	specs := []spec{base, moved2, scaled3, {pos: 5}, {pos: 5, skew: 1}, {pos: 6, skew: 1}, {rows: 7}, {kv: 32},
		{f16: true}, {split: true}}
	for _, ci := range []bool{false, true} {
		for _, a := range specs {
			na := build(t, a)
			pa := Snapshot(nil, na, ci)
			for _, b := range specs {
				nb := build(t, b)
				if len(nb) != len(na) {
					continue
				}
				for i, n := range nb {
					want := PropsOf(n, ci) == pa[i]
					assert.Equal(t, want, pa[i].matches(n, false, ci), "indirection %v: %+v node %d against %+v", ci, b, i, a)
				}
			}
			for i, n := range na {
				assert.True(t, pa[i].matches(n, true, ci), "indirection %v: %+v node %d against itself", ci, a, i)
			}
		}
	}
}

// TestSameNodesPlacedAgain checks the path for a graph computed again as
// the same node objects: placed elsewhere, its pointers no longer match.
func TestSameNodesPlacedAgain(t *testing.T) {
	ctx := graph.NewContext()
	x := ctx.Empty(tensor.F32, 64, 1)
	w := ctx.Empty(tensor.F32, 64, 1)
	require.NoError(t, w.Place(weights, 0))
	g, err := ctx.Build(x.Add(w).Scale(2).Mul(w))
	require.NoError(t, err)
	p, err := g.Plan(graph.AllocOptions{})
	require.NoError(t, err)
	require.NoError(t, p.Apply(newBuf(base1)))

	c := NewCache[int](seed())
	now := time.Now()
	v := c.Decide(g.Nodes(), now)
	require.Equal(t, Capture, v.Decision)
	c.Captured(v.Key, 1)
	assert.Equal(t, Replay, c.Decide(g.Nodes(), now).Decision)

	require.NoError(t, p.Apply(newBuf(base2)))
	v = c.Decide(g.Nodes(), now)
	assert.Equal(t, Update, v.Decision)
	assert.Contains(t, v.Reason, "node 0 (ADD): data pointer changed")
	c.Updated(v.Key)
	assert.Equal(t, Replay, c.Decide(g.Nodes(), now).Decision)

	require.NoError(t, w.Place(weights, 4096)) // a weight moves: nodes 0 and 2 read it
	v = c.Decide(g.Nodes(), now)
	assert.Equal(t, Update, v.Decision)
	assert.Contains(t, v.Reason, "node 0 (ADD): src1 data pointer changed")
	c.Updated(v.Key)
	assert.Equal(t, Replay, c.Decide(g.Nodes(), now).Decision)

	out := g.Nodes()[2] // the output moves, nothing reads it
	require.NoError(t, out.Place(newBuf(base3), 0))
	v = c.Decide(g.Nodes(), now)
	assert.Equal(t, Update, v.Decision)
	assert.Contains(t, v.Reason, "node 2 (MUL): data pointer changed")
}

// TestMatchesEachField checks changes that only one property shows, on
// nodes whose sources are nodes (no leaf fingerprint to tell them apart).
func TestMatchesEachField(t *testing.T) {
	ctx := graph.NewContext()
	out := newBuf(base1)
	node := func(l *graph.Tensor) *graph.Tensor { // l scaled, placed at 0
		n := l.Scale(1)
		require.NoError(t, n.Place(out, 0))
		return n
	}
	y1, y2 := node(ctx.Empty(tensor.F32, 64, 1, 1, 1)), node(ctx.Empty(tensor.F32, 64, 1, 1, 2))
	z1, z2 := y1.Scale(2), y2.Scale(2) // only ne[3] differs: same strides
	c1, c2 := y1.Cast(tensor.F16), y1.Cast(tensor.BF16)
	v1 := y2.View(0, []int64{8, 2}, []int64{32}) // only nb differs
	v2 := y2.View(0, []int64{8, 2}, []int64{64})
	for _, n := range []*graph.Tensor{z1, z2, c1, c2} {
		require.NoError(t, n.Place(out, 4096))
	}
	for _, tc := range []struct {
		name string
		a, b *graph.Tensor
		want string
	}{
		{"ne", z1, z2, "ne"},
		{"type", c1, c2, "type"},
		{"nb", v1, v2, "nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pa, pb := PropsOf(tc.a, false), PropsOf(tc.b, false)
			assert.Equal(t, tc.want, pa.Diff(&pb))
			assert.False(t, pa.matches(tc.b, false, false))
			assert.True(t, pa.matches(tc.a, false, false))
		})
	}
}
