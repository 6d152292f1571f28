package gpushim

import (
	"github.com/ternion/ternion/vendorapi"
)

// checkLaunch is the Go side of Launch before its one cgo call: the
// function's and the stream's handles (live, of one device), the arguments
// against the catalog's kinds and the launch geometry against the limits;
// it returns the two handles and the packed grid and block.
func checkLaunch(t *handles, vendorName string, f vendorapi.Function, grid, block vendorapi.Dim3, s vendorapi.Stream,
	args *vendorapi.Args) (hf, hs handle, dm [6]uint32, err error) {
	hf, hs, okf, oks := t.get2(f.Handle, kindFunction, f.Device, s.Handle, kindStream, s.Device)
	switch {
	case !okf:
		return hf, hs, dm, ownError(vendorName, "Launch", f.Device, vendorapi.ErrInvalidValue,
			"%#x is not a live function of device %d", f.Handle, f.Device)
	case !oks:
		return hf, hs, dm, ownError(vendorName, "Launch", s.Device, vendorapi.ErrInvalidValue,
			"%#x is not a live stream of device %d", s.Handle, s.Device)
	case f.Device != s.Device:
		return hf, hs, dm, ownError(vendorName, "Launch", s.Device, vendorapi.ErrInvalidValue,
			"function of device %d launched on a stream of device %d", f.Device, s.Device)
	}
	if err := vendorapi.CheckArgs(f.Name, hf.params, args); err != nil {
		return hf, hs, dm, contractError(vendorName, "Launch", f.Device, err)
	}
	if err := vendorapi.CheckGeometry(grid, block); err != nil {
		return hf, hs, dm, contractError(vendorName, "Launch", f.Device, err)
	}
	return hf, hs, dims(grid, block), nil
}

// dims packs a launch's grid and block, zero components counted as 1.
func dims(grid, block vendorapi.Dim3) [6]uint32 {
	g, b := grid.Norm(), block.Norm()
	return [6]uint32{g.X, g.Y, g.Z, b.X, b.Y, b.Z}
}
