// Package core will hold ternion's vendor-neutral host side: tensors and
// graphs with ggml semantics, buffer types, pools, the backend's compute loop,
// op dispatch, mul_mat selection, multi-device split and the graph-capture
// policy (see DESIGN.md, "core highlights"). It imports vendorapi and arch,
// never a vendor shim.
//
// Status: mostly not written yet. core/split (ggml's default row split by
// device memory) exists; the driver contract core will build on (vendorapi),
// the host device and the CUDA/HIP/MUSA shims exist and pass
// vendorapi/conformance.
package core
