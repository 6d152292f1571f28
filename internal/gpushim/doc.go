// Package gpushim is ternion's one GPU shim: a C layer written once against
// CUDA names (shim_*.c, shim.h) and the Go type over it that implements
// vendorapi.Driver. Each vendor compiles it with its own build tag: the tag's
// cgo_<vendor>.go holds the #cgo flags and defines TERNION_<VENDOR>, which
// makes the C include that vendor's name-mapping header (cuda/vendor_cuda.h is
// the identity; hip/vendor_hip.h and musa/vendor_musa.h rename cuda* to hip*
// or musa*, cublas* to rocblas_* or mublas*). The vendor packages (cuda/,
// hip/, musa/) hold the header and call Register from init.
//
// How each vendor's libraries are reached is a setting of its mapping header,
// not code: the driver library is always dlopened (libcuda.so.1,
// libamdhip64.so, libmusa.so); the runtime is linked (CUDA, MUSA) or resolved
// from the driver library (TN_RUNTIME_IN_DRIVER_LIB: HIP, whose libamdhip64
// holds both); BLAS is linked (cuBLAS, muBLAS) or dlopened on first use
// (TN_BLAS_LIBS: rocBLAS); the run-time compiler is dlopened on first use
// (NVRTC, hipRTC) or absent (TN_RTC_NONE: MUSA). The few real differences are
// small #if defined(TERNION_HIP) blocks (no driver contexts, gcnArchName,
// managed-memory advice and fallback, no opt-in shared memory, the rocBLAS
// version and initialization). The Go side's vendor differences are data in
// vendors.go (version format, arch reading, VMM default, per-mapping unmap,
// warp size), tested without a GPU like the rest of the vendor-neutral logic.
//
// Built without a GPU tag the package holds only its vendor-neutral logic
// (error classification, handle and memory tables, argument packing, kernel
// image choice, feature list, vendor data), which CI tests on every machine.
//
// Rules the shim keeps (DESIGN.md): every C entry point sets its device in the
// same call; C keeps no Go pointer after a call returns (asynchronous copies
// take pinned HostBuffers only); one cgo call per operation; no panics, every
// vendor status becomes a *vendorapi.Error.
package gpushim
