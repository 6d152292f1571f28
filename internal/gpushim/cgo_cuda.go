//go:build cuda

package gpushim

// The CUDA toolkit is found at /usr/local/cuda, or through CGO_CFLAGS and
// CGO_LDFLAGS. libcudart and libcublas are linked dynamically; libcuda (the
// driver) is not linked: the shim dlopens libcuda.so.1 in Open, so a binary
// starts on a machine without the NVIDIA driver and Open reports
// vendorapi.ErrNoDriver. The stubs directory is searched last, for link-time
// stubs only; the rpath names the real libraries.

/*
#cgo CFLAGS: -DTERNION_CUDA -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart -ldl
*/
import "C"

// vendor is the vendor this build of the shim talks to.
var vendor = cudaVendor
