// Package kernels holds ternion's device kernels: one set of .cu sources that
// nvcc, hipcc and mcc compile, the catalog that names every kernel entry point
// and its parameter list, and (under a vendor build tag) the embedded code
// objects built by `go generate`.
//
// core launches kernels by catalog entry, the host device implements every
// catalog entry in Go, and TestCatalogMatchesSources checks that the .cu entry
// points and the catalog agree.
package kernels
