package faulty_test

import (
	"errors"
	"fmt"

	"github.com/ternion/ternion/host"
	"github.com/ternion/ternion/vendorapi"
	"github.com/ternion/ternion/vendorapi/faulty"
)

// A pool that flushes and retries on out of memory can be tested without
// filling a device: fail the second allocation.
func Example() {
	hd, err := host.New(host.Options{Devices: 1})
	if err != nil {
		panic(err)
	}
	defer hd.Close()
	d := faulty.New(hd)
	if err := d.Add(faulty.FailMalloc(2)); err != nil {
		panic(err)
	}
	for i := 1; i <= 3; i++ {
		p, err := d.Malloc(0, 1<<20)
		switch {
		case errors.Is(err, vendorapi.ErrOutOfMemory):
			fmt.Printf("Malloc %d: out of memory (injected: %v)\n", i, faulty.Injected(err))
		case err != nil:
			fmt.Printf("Malloc %d: %v\n", i, err)
		default:
			fmt.Printf("Malloc %d: ok\n", i)
			_ = d.Free(0, p)
		}
	}
	fmt.Println("Malloc calls:", d.Calls("Malloc"))
	// Output:
	// Malloc 1: ok
	// Malloc 2: out of memory (injected: true)
	// Malloc 3: ok
	// Malloc calls: 3
}
