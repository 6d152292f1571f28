// Package hip will register ternion's AMD vendor, "hip", when built with
// -tags hip. It is not written yet.
//
// Plan: the driver is internal/gpushim, the C shim written against CUDA
// names that cuda/ uses. hip/ adds vendor_hip.h, a header that #defines every
// CUDA name the shim uses to its HIP or rocBLAS/hipBLAS equivalent (cudaMalloc
// -> hipMalloc, cuLaunchKernel -> hipModuleLaunchKernel, cublasGemmEx ->
// hipblasGemmEx, ...) and sets TN_DRIVER_LIB (libamdhip64.so) and TN_RTC_LIBS
// (libhiprtc.so); internal/gpushim gains cgo_hip.go (#cgo flags,
// -DTERNION_HIP, vendorName "hip", the gfx arch name and the run-time
// compiler options) and the rocBLAS status table and HIP status names in its
// vendor-neutral tables. The known real differences (no 3D peer copy,
// per-mapping VMM unmap, rocBLAS found at run time) go into #if blocks of the
// shim or into the vendor's own files.
package hip
