// Package core will hold ternion's vendor-neutral host side: tensors and
// graphs with ggml semantics, buffer types, pools, the backend's compute loop,
// op dispatch, mul_mat selection, multi-device split and the graph-capture
// policy (see DESIGN.md, "core highlights"). It imports vendorapi and arch,
// never a vendor shim.
//
// Status: not written yet. Nothing here is importable beyond this comment;
// the driver contract it will build on (vendorapi), the host device and the
// CUDA/HIP/MUSA shims exist and pass vendorapi/conformance.
package core
