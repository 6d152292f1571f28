package pool

import "testing"

// BenchmarkAllocFree measures the Go-side cost of one Alloc and one Free of a
// size the pool already holds: a cache hit (legacy) or memory already mapped
// (VMM), so no driver call is made inside the loop.
func BenchmarkAllocFree(b *testing.B) {
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			d := newHost(b, 64<<20)
			p, err := k.make(d, Options{VMMReserve: 64 << 20})
			if err != nil {
				b.Fatal(err)
			}
			// Warm: one buffer in use below, one size cached or mapped.
			keep, err := p.Alloc(4096)
			if err != nil {
				b.Fatal(err)
			}
			warm, err := p.Alloc(1 << 20)
			if err != nil {
				b.Fatal(err)
			}
			if err := warm.Free(); err != nil {
				b.Fatal(err)
			}
			allocs := p.Stats().DriverAllocs
			b.ReportAllocs()
			for b.Loop() {
				buf, err := p.Alloc(1 << 20)
				if err != nil {
					b.Fatal(err)
				}
				if err := buf.Free(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if got := p.Stats().DriverAllocs; got != allocs {
				b.Fatalf("%d driver allocations inside the loop", got-allocs)
			}
			if err := keep.Free(); err != nil {
				b.Fatal(err)
			}
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
