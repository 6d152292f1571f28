//go:build cuda

package cuda

import (
	"log/slog"

	"github.com/ternion/ternion/internal/gpushim"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

func init() { vendorapi.Register("cuda", open) }

// open opens the CUDA driver with the embedded fatbin, if go generate built one.
func open() (vendorapi.Driver, error) {
	img, err := kernels.CUDAImage()
	if err != nil {
		slog.Warn("cuda: the embedded fatbin is unusable; kernels will be compiled at run time", "err", err)
		img = kernels.Image{}
	}
	d, err := gpushim.Open(gpushim.Config{Image: img})
	if err != nil {
		return nil, err // not d: a nil *Driver in the interface would not be nil
	}
	return d, nil
}
