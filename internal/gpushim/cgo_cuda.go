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

import (
	"fmt"

	"github.com/ternion/ternion/arch"
)

// vendorName is the vendor this build of the shim talks to.
const vendorName = "cuda"

// Run-time compiler options choosing machine code or PTX for an arch
// (10*major + minor).
const (
	rtcCubinOption = "--gpu-architecture=sm_%d"
	rtcPTXOption   = "--gpu-architecture=compute_%d"
)

// Library names for logs and versions.
const (
	rtcName  = "NVRTC"
	blasName = "cuBLAS"
)

// versionString formats a CUDA version number (12080 is "12.8").
func versionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// deviceCC encodes a device's compute capability (HIP will read the gfx arch
// name instead).
func deviceCC(major, minor int) arch.CC { return arch.NVIDIA(major, minor) }
