// Package musa will register ternion's Moore Threads vendor, "musa", when
// built with -tags musa. It is not written yet.
//
// Plan: as hip/, a name-mapping header (vendor_musa.h: cuda* -> musa*,
// cublas* -> mublas*, TN_DRIVER_LIB libmusa.so) plus internal/gpushim's
// cgo_musa.go with -DTERNION_MUSA; the shim's logic is the one the CUDA path
// tests, so the MUSA path differs from it only by its mapping table. No MUSA
// SDK can be installed here, so it is compile-checked only where one exists.
package musa
