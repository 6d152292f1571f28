// Package host is ternion's pure-Go device: the vendor that is always
// compiled in, the stand-in GPU for CI, and the reference GPU results are
// compared against. It implements vendorapi.Driver with device memory from
// anonymous mmap (device pointers are real, stable addresses), real virtual
// memory management (PROT_NONE reservations backed by memfd chunks), streams
// that run queued work in order on goroutines, events, CUDA-style relaxed
// graph capture and replay, a Go implementation of every kernel in the
// kernels catalog, and BLAS through gonum.
//
// Every device range a call or a kernel touches is checked against the live
// allocations, when the work is queued and again when it runs, so bad input
// is an error (matching vendorapi.ErrInvalidValue), never a crash. Each
// allocation is followed by a guard page, and freed ranges stay reserved
// without access for a while (a quarantine), so a pointer one past an
// allocation or kept after Free never reaches another allocation.
//
// TERNION_HOST_DEVICES simulates several devices (all peers of each other) and
// TERNION_HOST_MEMORY sets each device's memory limit; see OptionsFromEnv.
package host
