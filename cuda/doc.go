// Package cuda registers ternion's NVIDIA vendor, "cuda", when built with
// -tags cuda: import it for its side effect (cmd/ternion does) and open it
// with vendorapi.Open("cuda").
//
// The driver itself is internal/gpushim, the shim shared with hip and musa:
// its C side is written against CUDA names, and this package holds CUDA's
// name-mapping header, vendor_cuda.h, which is the identity.
//
// Run-time linking: libcudart and libcublas are linked dynamically
// (-lcudart -lcublas); libcuda, the driver, is not linked. Open dlopens
// libcuda.so.1 and resolves the driver-API functions it needs (module
// loading, launches, virtual memory, attributes, error names) with dlsym, so a
// binary built with -tags cuda starts on a machine without the NVIDIA driver,
// and Open returns an error matching vendorapi.ErrNoDriver whose message
// names libcuda.so.1 and what dlopen said. With a driver and no device Open
// succeeds and DeviceCount is 0. The runtime API works on each device's
// primary context; driver-API calls run after cudaSetDevice and a check that
// the device's primary context is current, inside the same C call.
//
// Kernels come from the fatbin `go generate ./kernels` embeds (see
// kernels/archs.go for the arch list); a device it does not cover, or a build
// without it, compiles the embedded sources with NVRTC (dlopened) at first
// use, cached under os.UserCacheDir()/ternion/kernels. TERNION_FORCE_RTC=1
// forces that path.
//
// Toolkit location: /usr/local/cuda by default, else CGO_CFLAGS and
// CGO_LDFLAGS. Builds against CUDA 11.8 through 13.x.
package cuda
