// Package gpushim is ternion's one GPU shim: a C layer written once against
// CUDA names (shim_*.c, shim.h) and the Go type over it that implements
// vendorapi.Driver. Each vendor compiles it with its own build tag: the tag's
// cgo_<vendor>.go holds the #cgo flags and defines TERNION_<VENDOR>, which
// makes the C include that vendor's name-mapping header (cuda/vendor_cuda.h is
// the identity; hip/vendor_hip.h and musa/vendor_musa.h rename cuda* to hip*
// or musa*). The vendor packages (cuda/, hip/, musa/) only register an opener
// that calls Open.
//
// Built without a GPU tag the package holds only its vendor-neutral logic
// (error classification, handle and memory tables, argument packing, kernel
// image choice, feature list), which CI tests on every machine.
//
// Rules the shim keeps (DESIGN.md): every C entry point sets its device in the
// same call; C keeps no Go pointer after a call returns (asynchronous copies
// take pinned HostBuffers only); one cgo call per operation; no panics, every
// vendor status becomes a *vendorapi.Error.
package gpushim
