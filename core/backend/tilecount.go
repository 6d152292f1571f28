package backend

import (
	"fmt"
	"slices"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/ops"
	"github.com/ternion/ternion/vendorapi"
)

// tilecount.go is the backend's tile counters (ops.TileCounters):
// ops.TileCounterWords 4-byte words of device memory, zeroed when made,
// that a split kernel counts its finished blocks on, one word a tile, so
// that a tile's last block finishes it (the one-query FLASH_ATTN_EXT
// kernels merge their KV chunks so) and zeroes the word again. They are made
// before the first call whose graph has such a node, outside any capture,
// and keep their address for the backend's life, so recorded launches and
// executable graphs use the same words. The stream orders the kernels that
// use them: each leaves every word zero when it ends.

// TileCounters returns the address of the backend's tile counters and their
// count, or 0 before a graph needed them (ops.TileCounters). Ops call it
// under the Compute lock.
func (b *Backend) TileCounters() (vendorapi.DevicePtr, int) {
	if b.tiles == 0 {
		return 0, 0
	}
	return b.tiles, ops.TileCounterWords
}

// armTileCounters makes the tile counters when nodes have a node that uses
// them and the backend has none yet. Call it before the call's first launch
// and outside any capture.
func (b *Backend) armTileCounters(nodes []*graph.Tensor) error {
	if b.tiles != 0 {
		return nil
	}
	if !slices.ContainsFunc(nodes, ops.UsesTileCounters) {
		return nil
	}
	const size = 4 * ops.TileCounterWords
	p, err := b.drv.Malloc(b.dev, size)
	if err != nil {
		return fmt.Errorf("ternion: backend %s: the tile counters: %w", b.name, err)
	}
	if err := b.drv.MemsetAsync(b.stream, p, 0, size); err != nil {
		_ = b.drv.Free(b.dev, p)
		return fmt.Errorf("ternion: backend %s: zeroing the tile counters: %w", b.name, err)
	}
	b.tiles = p
	return nil
}

// closeTileCounters frees the tile counters (Close, after the stream is
// idle).
func (b *Backend) closeTileCounters() error {
	if b.tiles == 0 {
		return nil
	}
	err := b.drv.Free(b.dev, b.tiles)
	b.tiles = 0
	return err
}
