//go:build musa

package gpushim

// The MUSA toolkit is found at /usr/local/musa, or through CGO_CFLAGS and
// CGO_LDFLAGS. As for CUDA: the runtime (libmusart) and muBLAS are linked,
// the driver (libmusa) is dlopened in Open, so a binary starts on a machine
// without the Moore Threads driver and Open reports vendorapi.ErrNoDriver.
// Compiled against the documented MUSA API; not yet built here (no MUSA SDK
// is reachable from this project's machines).

/*
#cgo CFLAGS: -DTERNION_MUSA -I/usr/local/musa/include
#cgo LDFLAGS: -L/usr/local/musa/lib -Wl,-rpath,/usr/local/musa/lib -lmublas -lmusart -ldl
*/
import "C"

// vendor is the vendor this build of the shim talks to.
var vendor = musaVendor
