//go:build hip

package gpushim

// HIP headers are found at /opt/rocm/include, or through CGO_CFLAGS (Debian's
// HIP 5.2 puts them in /usr/include/hip, a default search path). Nothing of
// ROCm is linked: the shim dlopens libamdhip64 in Open (runtime and module
// API, see hip/vendor_hip.h), rocBLAS on the first BLAS call and hipRTC on
// the first kernel that must be compiled, so a binary built with -tags hip
// starts on a machine without ROCm and Open reports vendorapi.ErrNoDriver
// naming libamdhip64.so. Only libdl is linked. __HIP_PLATFORM_AMD__ selects
// the AMD half of the HIP headers (they also describe HIP on NVIDIA).

/*
#cgo CFLAGS: -DTERNION_HIP -D__HIP_PLATFORM_AMD__ -I/opt/rocm/include -Wno-deprecated-declarations
#cgo LDFLAGS: -ldl
*/
import "C"

// vendor is the vendor this build of the shim talks to.
var vendor = hipVendor
