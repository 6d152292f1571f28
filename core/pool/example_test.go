package pool_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/ternion/ternion/core/pool"
	"github.com/ternion/ternion/host"
)

// A scoped allocation from the pool of device 0 of the host device: freed
// buffers are cached and the next allocation of a size that fits reuses one.
func Example() {
	d, err := host.New(host.Options{MemoryLimit: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	// NoVMM picks the legacy pool, as TERNION_NO_VMM does; without it the
	// host device, which supports VMM, gets the VMM pool.
	p, err := pool.New(d, 0, pool.Options{NoVMM: true})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	step := func(n uint64) error {
		buf, err := p.Alloc(n)
		if err != nil {
			return err
		}
		defer buf.Free()
		fmt.Printf("asked %d, got %d bytes\n", n, buf.Size)
		return d.Memset(0, buf.Ptr, 0, buf.Size)
	}
	for _, n := range []uint64{1000, 1200, 2000} {
		if err := step(n); err != nil {
			log.Fatal(err)
		}
	}
	st := p.Stats()
	fmt.Printf("%d driver allocations, %d bytes cached, %d in use\n", st.DriverAllocs, st.Cached, st.InUse)
	// Output:
	// asked 1000, got 1280 bytes
	// asked 1200, got 1280 bytes
	// asked 2000, got 2304 bytes
	// 2 driver allocations, 3584 bytes cached, 0 in use
}

// The VMM pool hands out consecutive addresses rounded to 128 bytes and
// wants them back in reverse order.
func ExampleVMM() {
	d, err := host.New(host.Options{MemoryLimit: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	props, err := d.Props(0)
	if err != nil {
		log.Fatal(err)
	}
	p, err := pool.NewVMM(d, 0, props.VMMGranularity, pool.Options{VMMReserve: 1 << 30})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	a, err := p.Alloc(100)
	if err != nil {
		log.Fatal(err)
	}
	b, err := p.Alloc(1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sizes:", a.Size, b.Size, "b follows a:", b.Ptr == a.Ptr.Add(a.Size))
	fmt.Println("free a first is refused:", errors.Is(a.Free(), pool.ErrOrder))
	fmt.Println("free b, then a:", b.Free(), a.Free())
	fmt.Println("mapped:", p.Stats().Cached)
	// Output:
	// sizes: 128 1024 b follows a: true
	// free a first is refused: true
	// free b, then a: <nil> <nil>
	// mapped: 65536
}
