package host

import "github.com/ternion/ternion/vendorapi"

// noop.go implements kernels/noop.cu.

func init() {
	// noop(): does nothing.
	register("noop", &hostKernel{
		buffers: func(*vendorapi.Args) []buffer { return nil },
		block:   func([][]byte, *vendorapi.Args, block) {},
	})
}
