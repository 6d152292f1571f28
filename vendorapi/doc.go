// Package vendorapi is the driver contract every ternion GPU vendor implements
// (host, cuda, hip, musa): devices, memory, virtual memory, streams, events,
// graph capture, kernels and BLAS, plus the vendor registry and the error type
// that every vendor failure becomes.
//
// Each method is one self-contained operation. Handles (Stream, Event, Graph,
// GraphExec, Function, BLASHandle) carry the device they belong to, so every
// vendor entry point sets its device inside the same call and never relies on
// a previous call having done so. No method may panic or abort the process.
//
// The doc comments state the contract; where vendors differ, they say which
// behaviour is the contract and why (usually: what CUDA does, because that is
// what users get). Calls are checked before anything is queued, so a refused
// call has no effect and leaves the device working: a bad argument must never
// become a device fault, which on CUDA is sticky and ends the context.
// vendorapi/conformance holds every rule as a test (its RULES.md maps rules
// to tests); every vendor runs it.
package vendorapi
