// Package align rounds sizes and offsets up to a multiple of an alignment,
// the one rule the host device, the pools, the graph allocator and the
// backend's buffers share.
package align

// Up returns n rounded up to a multiple of to (to > 0).
func Up(n, to uint64) uint64 { return (n + to - 1) / to * to }
