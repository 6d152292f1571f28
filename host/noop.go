package host

import "github.com/ternion/ternion/vendorapi"

// noop.go implements kernels/noop.cu.

func init() {
	// noop(): does nothing.
	register("noop", &hostKernel{
		buffers: func([]vendorapi.Arg) []buffer { return nil },
		run:     func([][]byte, []vendorapi.Arg) {},
	})
}
