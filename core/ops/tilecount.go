package ops

import (
	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// tilecount.go is the device's tile counters: zeroed 4-byte words that a
// kernel split over many blocks counts on, TileCounterWordsPerTile words a
// tile of work (the one-query FLASH_ATTN_EXT kernel under
// TERNION_FATTN_DEC_STEAL: a kv head's next KV step and its finished
// warps), which the tile's last warp returns to zero for the next launch, a
// graph replay's included.

// TileCounters is implemented by a Device that keeps zeroed tile counters
// (core/backend makes them before the first call with a node that
// UsesTileCounters, outside any capture).
type TileCounters interface {
	// TileCounters returns the address of the counters and their count, or
	// 0 when the device has none.
	TileCounters() (vendorapi.DevicePtr, int)
}

// TileCounterWords is how many counters a device keeps (16 KiB): a launch
// with more tiles runs without them.
const TileCounterWords = 4096

// tileCounterWordsPerTile is the words a tile of fattn_dect takes: the next
// step, the finished warps.
const tileCounterWordsPerTile = 2

// UsesTileCounters reports whether node n's kernels may count on the
// device's tile counters: one-query FLASH_ATTN_EXT under
// TERNION_FATTN_DEC_STEAL.
func UsesTileCounters(n *graph.Tensor) bool {
	return n.Op() == graph.OpFlashAttnExt && n.Src(0) != nil && n.Src(0).Ne()[1] == 1 &&
		switches.On(nil, switches.FattnDecSteal)
}

// tileCounters returns d's counters for a launch of tiles tiles, or 0
// when d has none, too few, or TERNION_FATTN_DEC_STEAL is off.
func tileCounters(d Device, tiles int64) vendorapi.DevicePtr {
	tc, ok := d.(TileCounters)
	if !ok || !switches.On(nil, switches.FattnDecSteal) {
		return 0
	}
	p, n := tc.TileCounters()
	if tiles*tileCounterWordsPerTile > int64(n) {
		return 0
	}
	return p
}
