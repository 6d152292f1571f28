package kernels

import "slices"

// quantTypes are the block formats quant.h decodes on the device (the grid
// i-quants through the tables of quant_grids.h).
var quantTypes = Axis{Name: "q", Values: []Value{{"q4_0", "ternion_q4_0"}, {"q4_1", "ternion_q4_1"},
	{"q5_0", "ternion_q5_0"}, {"q5_1", "ternion_q5_1"}, {"q8_0", "ternion_q8_0"}, {"q8_1", "ternion_q8_1"},
	{"q2_K", "ternion_q2_K"}, {"q3_K", "ternion_q3_K"}, {"q4_K", "ternion_q4_K"}, {"q5_K", "ternion_q5_K"},
	{"q6_K", "ternion_q6_K"}, {"q8_K", "ternion_q8_K"}, {"iq4_nl", "ternion_iq4_nl"}, {"iq4_xs", "ternion_iq4_xs"},
	{"mxfp4", "ternion_mxfp4"}, {"iq2_xxs", "ternion_iq2_xxs"}, {"iq2_xs", "ternion_iq2_xs"}, {"iq2_s", "ternion_iq2_s"},
	{"iq3_xxs", "ternion_iq3_xxs"}, {"iq3_s", "ternion_iq3_s"}, {"iq1_s", "ternion_iq1_s"}, {"iq1_m", "ternion_iq1_m"},
	{"tq1_0", "ternion_tq1_0"}, {"tq2_0", "ternion_tq2_0"}}}

// mmvq8Types are the formats with mmvq8 kernels (quant.h's q32): the
// seed's mmvq types.
var mmvq8Types = Axis{Name: "q", Values: []Value{{"q4_0", "ternion_q4_0"}, {"q4_1", "ternion_q4_1"},
	{"q5_0", "ternion_q5_0"}, {"q5_1", "ternion_q5_1"}, {"q8_0", "ternion_q8_0"}, {"q2_K", "ternion_q2_K"},
	{"q3_K", "ternion_q3_K"}, {"q4_K", "ternion_q4_K"}, {"q5_K", "ternion_q5_K"}, {"q6_K", "ternion_q6_K"},
	{"iq4_nl", "ternion_iq4_nl"}, {"iq4_xs", "ternion_iq4_xs"}, {"mxfp4", "ternion_mxfp4"}}}

// mmvq8wTypes are the formats with mmvq8w kernels (quant.cu's
// mmvq8w_fmt and mmvq8w_dot): the one-column product, a warp a row.
var mmvq8wTypes = Axis{Name: "q", Values: []Value{{"q4_0", "ternion_q4_0"}, {"q8_0", "ternion_q8_0"}, {"q4_K", "ternion_q4_K"},
	{"q5_K", "ternion_q5_K"}, {"q6_K", "ternion_q6_K"}}}

// mmvq8wtTypes are the formats with mmvq8wt kernels (quant.cu's
// mmvq8wt_fmt and mmvq8wt_dot): 2..8 columns on the tensor cores, decoded
// from whole words.
var mmvq8wtTypes = Axis{Name: "q", Values: []Value{{"q4_0", "ternion_q4_0"}, {"q8_0", "ternion_q8_0"}, {"q4_K", "ternion_q4_K"}}}

// mmvq8wtTiles are the tiles of 16 rows an mmvq8wt warp takes at a time:
// a kernel for each (MMVQ8WTFormat.Stages).
var mmvq8wtTiles = Axis{Name: "r", Values: []Value{{"r1", "1"}, {"r2", "2"}}}

// MMVQ8WTFormat is quant.cu's mmvq8wt_fmt<Q> (a test keeps them equal;
// core, which may not import this package, keeps a copy a test of its own
// compares): the bytes of a 256-value group of the format and the ring
// slots of a warp taking 1 or 2 tiles of 16 rows at a time (Stages[r-1]).
type MMVQ8WTFormat struct {
	Group  int64
	Stages [2]int64
}

// MMVQ8WTFormats are the formats with mmvq8wt kernels, by name.
var MMVQ8WTFormats = map[string]MMVQ8WTFormat{"q4_0": {144, [2]int64{2, 2}}, "q8_0": {272, [2]int64{2, 2}}, "q4_K": {144, [2]int64{3, 2}}}

// MMVQ8WTWarps is quant.cu's MMVQ8WT_WARPS: the warps of an mmvq8wt block.
const MMVQ8WTWarps = 8

// mmvq8tTypes are the mmvq8 formats mmvq8t takes (quant.cu's
// mmvq8t_chunk): one scale an item, chunks of at most 16 items.
var mmvq8tTypes = Axis{Name: "q", Values: slices.DeleteFunc(slices.Clone(mmvq8Types.Values), func(v Value) bool {
	return v.Name == "q2_K" || v.Name == "q3_K" || v.Name == "q6_K"
})}

// mmvqTypes are the formats with mmvq and mmvq_id kernels (float dot
// products): those without mmvq8 (q8_1, q8_K, the grid i-quants, tq1_0,
// tq2_0: quant.h has no q32 for them) and those whose rows may not
// be 16-byte aligned, which mmvq8 needs. q4_K's and q5_K's blocks are
// multiples of 16 bytes, so mmvq8 takes all their rows.
var mmvqTypes = Axis{Name: "q", Values: slices.DeleteFunc(slices.Clone(quantTypes.Values), func(v Value) bool {
	return v.Name == "q4_K" || v.Name == "q5_K"
})}

// quantizers are the formats the device quantizes f32 into (the seed's CPY
// targets).
var quantizers = Axis{Name: "q", Values: []Value{{"q4_0", "quantize_q4_0"}, {"q4_1", "quantize_q4_1"},
	{"q5_0", "quantize_q5_0"}, {"q5_1", "quantize_q5_1"}, {"q8_0", "quantize_q8_0"}, {"iq4_nl", "quantize_iq4_nl"}}}

// q8yParams are the parameters of q8y and q8ye.
var q8yParams = []Param{{"src", tensor}, {"yq", ptr}, {"yd", ptr}, {"blocks", fastdiv}, {"ne1", fastdiv}, {"ne2", fastdiv},
	{"n", i64}}

// quantFamily is kernels/quant.cu: ggml's quantized formats on the device.
var quantFamily = Family{Name: "quant", Doc: "ggml's quantized block formats: dequantize, GET_ROWS, quantize, MUL_MAT for up to 8 columns",
	Kernels: []Kernel{{Name: "mmid_group",
		Doc: "MUL_MAT_ID's pairs p = e + n_used·t (ids [n_used, n_tokens] i32) grouped by expert, in one block: list (n_pairs i32) by expert, tiles (max_tiles pairs of i32: first index in list, expert | count << 16 for runs of up to 8 pairs of one expert, then count 0); an expert out of range: NaN dst rows and bit 1 of *flag; dynamic shared memory 2·n_experts ints",
		Params: []Param{{"ids", tensor}, {"dst", tensor}, {"n_experts", i32}, {"list", ptr}, {"tiles", ptr},
			{"max_tiles", i32}, {"flag", ptr}}}},
	Templates: []Template{
		{Name: "q8y", Body: "q8y_cols<false>",
			Doc:    "src1 of mmvq8 quantized to 8 bits: src (f32, any strides, ne[0] a multiple of 32) in blocks of 32 values to k signed bytes a column at yq + col·k and a float4 (scale d, d·Σq, d·Σ of the first 16 q, d·Σ of the last 16) a block at yd, column = i1 + ne1·(i2 + ne2·i3); n blocks in all (blocks = ne[0]/32 a row); 32 threads a block",
			Params: q8yParams},
		{Name: "q8ye", Body: "q8y_cols<true>", EarlyEntry: true,
			Doc:    "q8y that lets the next kernel launch before it waits for the kernels before it (EarlyEntry): queued by core only where the product after it may read its weights early (core/ops/early.go), which then streams them while the kernel before q8ye ends",
			Params: q8yParams},
		{Name: "dq_{q}_{td}", Body: "dq<{q}, {td}>",
			Doc: "dst ({td}, packed rows, src's shape) = src ({q}) dequantized; n groups of 8 values; groups, ne1, ne2 divide by ne[0]/8, ne[1], ne[2]; dslot: when not null, the device word holding dst's data pointer (the CPY pointer array)",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"groups", fastdiv}, {"ne1", fastdiv}, {"ne2", fastdiv},
				{"n", i64}, {"dslot", ptr}},
			Axes: []Axis{quantTypes, {Name: "td", Values: []Value{{"f32", "float"}, {"f16", "ternion_f16"}}}}},
		{Name: "getrows_{q}", Body: "getrows_q<{q}>",
			Doc: "dst row (i10, i11, i12) (f32) = src0 row (src1[i10, i11, i12], i11, i12) of {q} dequantized, zeros for an index out of range; n groups of 8 values",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ne10", fastdiv}, {"ne11", fastdiv},
				{"groups", fastdiv}, {"n", i64}},
			Axes: []Axis{quantTypes}},
		{Name: "qz_{q}", Body: "qz<{q}>",
			Doc: "dst ({q}, src's shape) = src (f32, packed rows) quantized block by block as the seed's CPY does; n blocks; blocks, ne1, ne2 divide by ne[0]/32, ne[1], ne[2]; dslot: when not null, the device word holding dst's data pointer (the CPY pointer array)",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"blocks", fastdiv}, {"ne1", fastdiv}, {"ne2", fastdiv},
				{"n", i64}, {"dslot", ptr}},
			Axes: []Axis{quantizers}},
		{Name: "mmvq_{q}", Body: "mmvq<{q}>",
			Doc: "dst[row, c] = Σ_k src0[row][k]·src1[c][k] for c < ncols ≤ 8, src0 of {q}, src1 f32 rows packed and 16-byte aligned; 4 rows a block (MMVQ_ROWS) whose 4 warps (MMVQ_WARPS, blockDim.y) split k; grid (rows/4, ne12, ne13)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv},
				{"ncols", i32}},
			Axes: []Axis{mmvqTypes}},
		{Name: "mmvq8_{q}_{nc}", Body: "mmvq8<{q}, {nc}>",
			Doc: "dst[row, c] = Σ_k src0[row][k]·src1[c][k] for c < ncols (1 for nc 1, up to 8 for nc 8), src0 of {q} with 16-byte aligned rows, src1 quantized by q8y into yq/yd (the columns of dst's dims 1..3 in order); 128 threads a block (MMVQ8_THREADS), 4 rows (MMVQ8_ROWS); grid (rows/4, ne12, ne13)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"r2", fastdiv}, {"r3", fastdiv},
				{"ncols", i32}},
			Axes: []Axis{mmvq8Types, {Name: "nc", Values: []Value{{"1", "1"}, {"8", "8"}}}}},
		{Name: "mmvq8t_{q}", Body: "mmvq8t<{q}>", LaunchBounds: 256, MinBlocks: 2,
			Doc: "mmvq8 on the tensor cores (mma.sync m16n8k32 s8; NVIDIA with arch 8.0 and later, elsewhere an empty body): dst[row, c] = Σ_k src0[row][k]·src1[c][k] for c < ncols ≤ 8, src0 of {q} with 16-byte aligned rows, src1 quantized by q8y into yq/yd; 256 threads a block (MMVQ8T_WARPS warps splitting k), 16 rows (MMVQ8T_ROWS), 2 blocks an SM (the registers capped for it); grid (rows/16, ne12, ne13); dynamic shared memory as core/ops' mmvq8tShared (less: NaN rows)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"r2", fastdiv}, {"r3", fastdiv},
				{"ncols", i32}},
			Axes: []Axis{mmvq8tTypes}},
		{Name: "mmvq8w_{q}", Body: "mmvq8w<{q}>", EarlyEntry: true,
			Doc:    "MUL_MAT of one src1 column (quantized by q8y into yq/yd, column i12 + ne12·i13) by src0 of {q} with k a multiple of 256 and rows a multiple of 16 bytes starting 16-byte aligned, a warp a row, its lanes on 256-value groups decoded from whole words (rows of fewer than 32 groups, when packed, taken 32 / groups at a time so that every lane works) (NVIDIA with arch 8.0 and later, elsewhere an empty body); mmvq8w_fmt<{q}>::WARPS warps a block, warp wg of the grid taking units (1 row, or 32 / groups rows) wg, wg + nw, …; grid (at most the multiprocessors, ne12, ne13); dynamic shared memory as core/ops' mmvq8wShared (less: NaN rows); launched right after q8y (it queues its first chunks of src0 before it waits for q8y)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"r2", fastdiv}, {"r3", fastdiv}},
			Axes:   []Axis{mmvq8wTypes}},
		{Name: "mmvq8w_id_{q}", Body: "mmvq8w_id<{q}>", EarlyEntry: true,
			Doc:    "MUL_MAT_ID with mmvq8w's kernel: pair (slot e, token t) = (blockIdx.y, blockIdx.z) computes dst[:, e, t] = src0[:, :, ids[e, t]] (experts along dim 2, {q} with k a multiple of 256 and rows a multiple of 16 bytes starting 16-byte aligned) times src1 column (e % ne11) + ne11·t quantized by q8y into yq/yd; an expert out of range writes NaN rows and sets bit 1 of *flag (when not null); mmvq8w_fmt<{q}>::WARPS warps a block, the pair's rows (or units of rows, as mmvq8w) split over its blocks' warps; grid (blocks a pair, n_used, tokens); dynamic shared memory as core/ops' mmvq8wShared (less: NaN rows); NVIDIA with arch 8.0 and later, elsewhere an empty body; launched right after q8y (it reads ids and queues the expert's first chunks before it waits for q8y, which writes only its scratch)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"ne11", i32}, {"ids", tensor}, {"flag", ptr}},
			Axes:   []Axis{mmvq8wTypes}},
		{Name: "mmvq8wf_{q}", Body: "mmvq8wf<{q}>", EarlyEntry: true,
			Doc:    "mmvq8w with src1 f32 (one column per (i12, i13), packed along k, columns starting 16-byte aligned) quantized inside each block as q8y quantizes it (no q8y launch; the same bytes, scales and sums, so the same products): MUL_MAT of one column by src0 of {q} with k a multiple of 256 and rows a multiple of 16 bytes starting 16-byte aligned; blocks, grid and dynamic shared memory as mmvq8w; NVIDIA with arch 8.0 and later, elsewhere an empty body; any kernel may come before it (it waits for the grid before first, then queues its first chunks of src0 and quantizes src1 while they arrive)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv}},
			Axes:   []Axis{mmvq8wTypes}},
		{Name: "mmvq8wf_id_{q}", Body: "mmvq8wf_id<{q}>", EarlyEntry: true,
			Doc:    "mmvq8w_id with src1 f32 [k, ne11, tokens] (packed along k, columns starting 16-byte aligned) quantized inside each block as q8y quantizes it (no q8y launch): pair (slot e, token t) = (blockIdx.y, blockIdx.z) computes dst[:, e, t] = src0[:, :, ids[e, t]] ({q}, as mmvq8w_id) times src1 column (e % ne11, t); an expert out of range writes NaN rows and sets bit 1 of *flag (when not null); blocks, grid and dynamic shared memory as mmvq8w_id; NVIDIA with arch 8.0 and later, elsewhere an empty body; any kernel may come before it (it waits for the grid before, then reads ids)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ids", tensor}, {"flag", ptr}},
			Axes:   []Axis{mmvq8wTypes}},
		{Name: "mmvq8wt_{q}_{r}", Body: "mmvq8wt<{q}, {r}>", LaunchBounds: 256, MinBlocks: 1, EarlyEntry: true,
			Doc: "MUL_MAT of ncols ≤ 8 src1 columns (quantized by q8y into yq/yd) by src0 of {q} with k a multiple of 256, rows a multiple of 16 bytes starting 16-byte aligned and a warp's tiles of 16 rows within 2^31 bytes, on the tensor cores (mma.sync m16n8k32; NVIDIA with arch 8.0 and later, elsewhere an empty body), src0 decoded from whole words; MMVQ8WT_WARPS warps a block, each a fixed part of k whose src1 it stages once; block b taking the sets of R tiles of 16 rows b, b + gridDim.x, … (R = 1 or 2 as the name's r1 or r2; ring slots MMVQ8WTFormats' Stages[R-1]); grid (at most the multiprocessors, ne12, ne13); dynamic shared memory as core/ops' mmvq8wtShared (less: NaN rows); launched right after q8y (it queues its first units of src0 before it waits for q8y)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"r2", fastdiv}, {"r3", fastdiv},
				{"ncols", i32}},
			Axes: []Axis{mmvq8wtTypes, mmvq8wtTiles}},
		{Name: "mmvq8_idg_{q}", Body: "mmvq8_idg<{q}>",
			Doc: "MUL_MAT_ID over mmid_group's tiles: block (bx, by) computes rows 4·bx… of tile by's pairs (up to 8 of one expert; by < max_tiles) against src1 quantized by q8y (column (e % ne11) + ne11·t), src0 of {q} with 16-byte aligned rows; 128 threads a block; grid (rows/4, max_tiles)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"ne11", i32}, {"n_used", i32},
				{"list", ptr}, {"tiles", ptr}, {"max_tiles", i32}},
			Axes: []Axis{mmvq8Types}},
		{Name: "mmvq8t_idg_{q}", Body: "mmvq8t_idg<{q}>", LaunchBounds: 256, MinBlocks: 2,
			Doc: "MUL_MAT_ID over mmid_group's tiles on the tensor cores (mmvq8t's kernel for mmvq8_idg's work): block (bx, by) computes rows 16·bx… of tile by's pairs (up to 8 of one expert; by < max_tiles) against src1 quantized by q8y (column (e % ne11) + ne11·t), src0 of {q} with 16-byte aligned rows; 256 threads a block; grid (rows/16, max_tiles); dynamic shared memory as core/ops' mmvq8tShared (less: NaN rows)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"yq", ptr}, {"yd", ptr}, {"ne11", i32}, {"n_used", i32},
				{"list", ptr}, {"tiles", ptr}, {"max_tiles", i32}},
			Axes: []Axis{mmvq8tTypes}},
		{Name: "mmvq_id_{q}", Body: "mmvq_id<{q}>",
			Doc:    "MUL_MAT_ID: dst[row, e, t] = src0[:, row, ids[e, t]] · src1[:, e % ne11, t], src0 of {q} (f32/f16/bf16 rows 16-byte aligned), src1 f32 rows packed and 16-byte aligned; NaN rows for an expert out of range, which also sets bit 1 of *flag when flag is not null (the backend's error word); one warp a row; grid (rows/blockDim.y, n_used, n_tokens)",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ids", tensor}, {"flag", ptr}},
			Axes: []Axis{{Name: "q", Values: append(slices.Clone(quantTypes.Values),
				Value{"f32", "ternion_qf32"}, Value{"f16", "ternion_qf16"}, Value{"bf16", "ternion_qbf16"})}}},
	}}
