package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// tilecount.go is the device's tile counters: zeroed 4-byte words that a
// kernel split over many blocks counts its finished blocks on, one word a
// tile of work, so that the tile's last block finishes the tile (the
// one-query FLASH_ATTN_EXT kernels merge their KV chunks so, with no
// combine kernel after them) and returns the word to zero for the next
// launch, a graph replay's included.

// TileCounters is implemented by a Device that keeps zeroed tile counters
// (core/backend makes them before the first call with a node that
// UsesTileCounters, outside any capture).
type TileCounters interface {
	// TileCounters returns the address of the counters and their count, or
	// 0 when the device has none.
	TileCounters() (vendorapi.DevicePtr, int)
}

// TileCounterWords is how many counters a device keeps (16 KiB): a launch
// with more tiles merges in a separate kernel instead.
const TileCounterWords = 4096

// UsesTileCounters reports whether node n's kernels may count on the
// device's tile counters: one-query FLASH_ATTN_EXT, unless
// TERNION_NO_FATTN_FOLD.
func UsesTileCounters(n *graph.Tensor) bool {
	return n.Op() == graph.OpFlashAttnExt && n.Src(0) != nil && n.Src(0).Ne()[1] == 1 && !switches.On(nil, switches.NoFattnFold)
}

// tileCounters returns d's counters for a launch of tiles tiles, or 0
// when d has none, too few, or TERNION_NO_FATTN_FOLD is set.
func tileCounters(d Device, tiles int64) vendorapi.DevicePtr {
	tc, ok := d.(TileCounters)
	if !ok || switches.On(nil, switches.NoFattnFold) {
		return 0
	}
	p, n := tc.TileCounters()
	if tiles > int64(n) {
		return 0
	}
	return p
}
