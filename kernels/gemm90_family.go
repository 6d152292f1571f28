package kernels

// gemm90Family is kernels/gemm90.cu: MUL_MAT of the 32-value formats q4_0,
// q4_1, q5_0, q5_1, q8_0, iq4_nl and the K-quants q4_K, q5_K, q6_K by many
// f32 columns on Hopper's wgmma, the weights expanded to f16 inside the gemm.
var gemm90Family = Family{Name: "gemm90", ArchSpecific: "sm_90a",
	Doc: "MUL_MAT of q4_0 / q4_1 / q5_0 / q5_1 / q8_0 / iq4_nl / q4_K / q5_K / q6_K src0 by more than 8 f32 columns on the warpgroup tensor cores of compute capability 9.0 (wgmma, sm_90a): src1 to f16 in the gemm's tile order, then one 128x128 tile a block, src0's blocks expanded to f16 straight into the register fragments of wgmma's A",
	Kernels: []Kernel{{Name: "gemm90_b_f32",
		Doc:    "bt (f16, Gemm90BBytes(n, k) bytes) = src1 (f32 [n][k], rows packed and 16-byte aligned, k a multiple of 256) in gemm90's B tile order, rows past n zeros; one chunk of 8 values a thread: chunks = Gemm90Tiles(n)·128·k/8",
		Params: []Param{{"bt", ptr}, {"src1", tensor}, {"chunks", i64}}}},
	Templates: []Template{{Name: "gemm90_{q}", Body: "gemm90_q<{q}>", LaunchBounds: Gemm90Threads, MinBlocks: 1,
		Doc:    "dst (f32 [n][m], column stride nb[1]) = src0 ({q} [m][k], k a multiple of 256, rows Gemm90RowAlign({q})-byte aligned) · bt (gemm90_b_f32's)ᵀ: block b the 128x128 tile (m-tile b % mt, n-tile b / mt), grid mt·Gemm90Tiles(n); Gemm90Threads threads, Gemm90Shared({q}) bytes of dynamic shared memory",
		Params: []Param{{"dst", tensor}, {"src0", tensor}, {"bt", ptr}},
		Axes: []Axis{{Name: "q", Values: []Value{{"q4_0", "g90_q4_0"}, {"q4_1", "g90_q4_1"}, {"q5_0", "g90_q5_0"},
			{"q5_1", "g90_q5_1"}, {"q8_0", "g90_q8_0"}, {"iq4_nl", "g90_iq4_nl"}, {"q4_K", "g90_q4_K"}, {"q5_K", "g90_q5_K"}, {"q6_K", "g90_q6_K"}}}}}},
}

// Gemm90Tile is gemm90.cu's tile of dst (GEMM90_BM = GEMM90_BN) and
// Gemm90Threads its threads a block (GEMM90_THREADS); a test keeps them
// equal.
const (
	Gemm90Tile    = 128
	Gemm90Threads = 384
)

// Gemm90Groups are the bytes of 256 values (8 blocks of 32, or one K-quant
// block) of each format gemm90_{q} takes (gemm90.cu's GROUP).
var Gemm90Groups = map[string]int{"q4_0": 144, "q4_1": 160, "q5_0": 176, "q5_1": 192, "q8_0": 272, "iq4_nl": 144,
	"q4_K": 144, "q5_K": 176, "q6_K": 210}

// Gemm90Cover is the bytes gemm90_{q} copies of a row's group of format q
// (gemm90.cu's GEMM90_COVER): the group where groups start 16-byte aligned,
// else the 16-byte chunks covering a group that starts 2-byte aligned.
func Gemm90Cover(q string) int {
	if g := Gemm90Groups[q]; g%16 != 0 {
		return (g + 14 + 15) / 16 * 16
	}
	return Gemm90Groups[q]
}

// Gemm90Slot is the shared-memory pitch of a row's group of format q
// (gemm90.cu's GEMM90_SLOT): Gemm90Cover, and 16 bytes more where that is
// a multiple of 32 (so the 8 rows a warp reads at once use 8 different
// groups of 4 banks).
func Gemm90Slot(q string) int {
	c := Gemm90Cover(q)
	if c%32 == 0 {
		c += 16
	}
	return c
}

// Gemm90RowAlign is the alignment gemm90_{q} needs of src0's rows: 16 bytes
// where its groups are a multiple of 16 bytes (copied 16 bytes at a time),
// else 2 (q6_K's 210-byte groups: copied in the chunks around them).
func Gemm90RowAlign(q string) int {
	if Gemm90Groups[q]%16 != 0 {
		return 2
	}
	return 16
}

// Gemm90Shared is the dynamic shared memory of gemm90_{q} (gemm90.cu's
// GEMM90_SHARED): 4 stages of B's 128x64 f16 tile, 2 group buffers of 128
// row slots, 1024 bytes to align them.
func Gemm90Shared(q string) int { return 4*Gemm90Tile*64*2 + 2*128*Gemm90Slot(q) + 1024 }

// Gemm90Tiles is the tiles of 128 columns of n columns.
func Gemm90Tiles(n int64) int64 { return (n + Gemm90Tile - 1) / Gemm90Tile }

// Gemm90BBytes is the bytes of gemm90_b_f32's bt for n columns of k values.
func Gemm90BBytes(n, k int64) int64 { return Gemm90Tiles(n) * Gemm90Tile * k * 2 }
