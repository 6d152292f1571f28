// Package vendorapi is the driver contract every ternion GPU vendor implements
// (host, cuda, hip, musa): devices, memory, virtual memory, streams, events,
// graph capture, kernels and BLAS, plus the vendor registry and the error type
// that every vendor failure becomes.
//
// Each method is one self-contained operation. Handles (Stream, Event, Graph,
// GraphExec, Function, BLASHandle) carry the device they belong to, so every
// vendor entry point sets its device inside the same call and never relies on
// a previous call having done so. No method may panic or abort the process.
package vendorapi
