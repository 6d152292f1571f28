package kernels

// fattn90Family is kernels/fattn90.cu: FLASH_ATTN_EXT prefill on Hopper's
// warpgroup tensor cores.
var fattn90Family = Family{Name: "fattn90", ArchSpecific: "sm_90a",
	Doc: "ggml's FLASH_ATTN_EXT prefill for f32 Q and f16 K/V of head size 128 or 256 on the warpgroup tensor cores of compute capability 9.0 (wgmma, sm_90a): 128 queries a block, S = Q·Kᵀ and O += P·V by wgmma from 128-byte-swizzled shared-memory tiles, the online softmax in the accumulators' registers",
	Templates: []Template{{Name: "fattn90_d{d}", Body: "fattn90<{d}>", LaunchBounds: Fattn90Threads, MinBlocks: 1,
		Doc:    "flash attention for head size {d} (hsk = hsv): block (x, y, z) = queries 128x..128x+127 of q head y, batch z; Fattn90Threads threads (two warpgroups of 64 queries); Fattn90Shared({d}) bytes of dynamic shared memory (Q, two stages of K, V and mask tiles); Q rows, K/V rows and mask rows (f16) 16-byte aligned, dst rows 8-byte aligned",
		Params: fattnParams(false),
		Axes:   []Axis{headSizeAxis(128, 256)}}},
}

// Fattn90Queries is fattn90.cu's queries a block (FA90_BQ) and
// Fattn90Threads its threads a block (FA90_THREADS); a test keeps them
// equal.
const (
	Fattn90Queries = 128
	Fattn90Threads = 256
)

// Fattn90Shared is the dynamic shared memory of fattn90_d{d} (fattn90.cu's
// FA90_SHARED): Q (d/64 chunks of 128 rows of 128 bytes), two stages of K
// and of V (d/64 chunks of 64 rows), two mask tiles (128 rows of 128
// bytes), and 1024 bytes to align the base.
func Fattn90Shared(d int) int { return 256*d + 4*128*d + 2*Fattn90Queries*128 + 1024 }
