package capture

import (
	"github.com/ternion/ternion/core/graph"
	"testing"
	"time"
)

// BenchmarkDecide1000 is the policy's cost on the replay path for a
// 1000-node chain of ADD/MUL/SCALE nodes: Decide (gates, key, property
// matching) and Evict, as Compute calls them (goal: at most 20 µs, no
// allocation).
func BenchmarkDecide1000(b *testing.B) {
	nodes := chain(b, 1000, base1)
	c := NewCache[int](DefaultOptions())
	o := c.Options()
	o.ArchOK, o.Warmup = true, 0
	c = NewCache[int](o)
	now := time.Now()
	v := c.Decide(nodes, now)
	if v.Decision != Capture {
		b.Fatal(v)
	}
	c.Captured(v.Key, 1)
	b.ReportAllocs()
	for b.Loop() {
		if v := c.Decide(nodes, now); v.Decision != Replay {
			b.Fatal(v)
		}
		c.Evict(now)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/node")
}

// BenchmarkDecide1000Update is the same with every call's pointers moved
// (the update path: a reason is formatted, the properties rewritten).
func BenchmarkDecide1000Update(b *testing.B) {
	a, z := chain(b, 1000, base1), chain(b, 1000, base2)
	o := DefaultOptions()
	o.ArchOK, o.Warmup, o.MaxUpdates = true, 0, 0
	c := NewCache[int](o)
	now := time.Now()
	v := c.Decide(a, now)
	c.Captured(v.Key, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		nodes := a
		if i++; i%2 == 1 {
			nodes = z
		}
		if v := c.Decide(nodes, now); v.Decision != Update {
			b.Fatal(v)
		}
		c.Updated(v.Key)
	}
}

// BenchmarkKeyOf1000 and BenchmarkSnapshot1000 are Decide's two passes alone.
func BenchmarkKeyOf1000(b *testing.B) {
	nodes := chain(b, 1000, base1)
	for b.Loop() {
		KeyOf(nodes)
	}
}

func BenchmarkSnapshot1000(b *testing.B) {
	nodes := chain(b, 1000, base1)
	buf := Snapshot(nil, nodes, true)
	b.ReportAllocs()
	for b.Loop() {
		buf = Snapshot(buf[:0], nodes, true)
	}
}

// BenchmarkDecide1000Rebuilt is the replay path for a graph built anew for
// each call (other node objects, the same properties): every property is
// compared, not only the pointers.
func BenchmarkDecide1000Rebuilt(b *testing.B) {
	graphs := [][]*graph.Tensor{chain(b, 1000, base1), chain(b, 1000, base1)}
	o := DefaultOptions()
	o.ArchOK, o.Warmup = true, 0
	c := NewCache[int](o)
	now := time.Now()
	v := c.Decide(graphs[0], now)
	c.Captured(v.Key, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if v := c.Decide(graphs[i%2], now); v.Decision != Replay {
			b.Fatal(v)
		}
		c.Evict(now)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/node")
}
