package kernels

import "strconv"

import "github.com/ternion/ternion/vendorapi"

var (
	ptr     = vendorapi.ParamPtr
	i32     = vendorapi.ParamI32
	u32     = vendorapi.ParamU32
	i64     = vendorapi.ParamI64
	f32     = vendorapi.ParamF32
	tensor  = vendorapi.ParamTensor
	fastdiv = vendorapi.ParamFastDiv
)

// Families is the kernel catalog's spec: every .cu file and the entry points
// it defines or instantiates (sorted by name when the package initialises:
// a family defined in a file of its own, as <family>_family.go, is added at
// the end of the list). Catalog is made from it.
// Fixture families hold the kernels the driver contract's conformance suite
// checks every vendor with; the others are op kernels, checked by core's op
// tests (TestEveryOpKernelIsTested in core/ops makes sure).
var Families = []Family{
	{Name: "abi", Fixture: true, Doc: "the kernel argument ABI, checked on the device",
		Kernels: []Kernel{
			{Name: "abi_echo",
				Doc: "writes every argument it received, and the layout of ternion_tensor and ternion_fastdiv as the compiler laid them out, to out (AbiEchoLen int64s)",
				Params: []Param{{"a", i32}, {"out", ptr}, {"t", tensor}, {"b", u32}, {"fd", fastdiv}, {"c", f32},
					{"d", i64}}},
			{Name: "abi_geometry",
				Doc:    "out[b*T + t] = b*1024 + t + 1 for every block b and thread t of the launch with b*T + t < n (b, t linear with x fastest, T threads per block): which threads ran",
				Params: []Param{{"out", ptr}, {"n", i64}}},
		}},
	{Name: "binary", Fixture: true, Doc: "element-wise binary ops on contiguous f32 buffers (also ADD, SUB and MUL of equal shapes that bin4 does not take)",
		Templates: []Template{{Name: "{op}_f32", Body: "binary_f32<{op}>", Doc: "dst[i] = a[i] {op} b[i] for i < n",
			Params: []Param{{"dst", ptr}, {"a", ptr}, {"b", ptr}, {"n", i64}},
			Axes: []Axis{{Name: "op", Values: []Value{{"add", "ternion_bin_add"}, {"sub", "ternion_bin_sub"},
				{"mul", "ternion_bin_mul"}}}}}}},
	{Name: "binbcast", Doc: "ggml's ADD, SUB, MUL, DIV with broadcasting (src1 tiles into src0)",
		Templates: []Template{
			{Name: "bin_{op}_{t0}_{t1}", Body: "bin_bcast<{op}, {t0}, {t1}>",
				Doc: "dst = src0 {op} src1 broadcast, dst and src0 {t0}, src1 {t1}, any strides; rows of dst split by ne01, ne02; src1 indices taken modulo ne10..ne13; nrows < 2^31",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ne01", fastdiv}, {"ne02", fastdiv},
					{"ne10", fastdiv}, {"ne11", fastdiv}, {"ne12", fastdiv}, {"ne13", fastdiv}, {"nrows", i64}},
				Axes: []Axis{binOps, floatTypes("t0"), floatTypes("t1")}},
			{Name: "bin4_{op}_f32", Body: "bin4_f32<{op}>",
				Doc: "dst = src0 {op} src1 broadcast over rows, f32 rows contiguous, 16-byte aligned, ne0 % 4 == 0 and src1 rows as long as src0's (float4 loads)",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ne01", fastdiv}, {"ne02", fastdiv},
					{"ne11", fastdiv}, {"ne12", fastdiv}, {"ne13", fastdiv}, {"nrows", i64}},
				Axes: []Axis{binOps}},
		}},
	{Name: "convert", Doc: "ggml's CPY, CONT and DUP between f32, f16 and bf16: by element, by row, by transposing tile; 16-byte row copies; every kernel takes dslot last: when not null, the device word holding dst's data pointer (the CPY pointer array), read instead of dst.data",
		Kernels: []Kernel{{Name: "rows4_b32",
			Doc: "row r of src to row r of dst for r < nrows, 4-byte elements, rows a multiple of 4 long and 16-byte aligned in both; sne/dne divide by ne[1], ne[2]",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"sne1", fastdiv}, {"sne2", fastdiv},
				{"dne1", fastdiv}, {"dne2", fastdiv}, {"nrows", i64}, {"dslot", ptr}}}},
		Templates: []Template{
			{Name: "cvt_{ts}_{td}", Body: "cvt<{ts}, {td}>",
				Doc: "element i of src ({ts}, in src's shape) converted to element i of dst ({td}, in dst's shape), for i < n = nelements < 2^31",
				Params: []Param{{"dst", tensor}, {"src", tensor}, {"sne0", fastdiv}, {"sne1", fastdiv}, {"sne2", fastdiv},
					{"dne0", fastdiv}, {"dne1", fastdiv}, {"dne2", fastdiv}, {"n", i64}, {"dslot", ptr}},
				Axes: []Axis{floatTypes("ts"), floatTypes("td")}},
			{Name: "cvt_rows_{ts}_{td}", Body: "cvt_rows<{ts}, {td}>",
				Doc: "row r of src ({ts}) converted to row r of dst ({td}) for r < nrows; rows of ne0 packed elements in both; sne/dne divide by ne[1], ne[2]",
				Params: []Param{{"dst", tensor}, {"src", tensor}, {"sne1", fastdiv}, {"sne2", fastdiv},
					{"dne1", fastdiv}, {"dne2", fastdiv}, {"nrows", i64}, {"dslot", ptr}},
				Axes: []Axis{floatTypes("ts"), floatTypes("td")}},
			{Name: "cvt_tile_{ts}_{td}", Body: "cvt_tile<{ts}, {td}>",
				Doc:    "dst ({td}, packed along dim 0) = src ({ts}, packed along dim c) of one shape, through 32x32 shared-memory tiles, 4 batches a step; block 32x8 (required); grid (tiles of dim c, tiles of dim 0, batch steps); na divides the batch index by the size of the lower remaining dim",
				Params: []Param{{"dst", tensor}, {"src", tensor}, {"c", i32}, {"na", fastdiv}, {"nbatch", i64}, {"dslot", ptr}},
				Axes:   []Axis{floatTypes("ts"), floatTypes("td")}},
		}},
	{Name: "cpy", Fixture: true, Doc: "copies between tensors of one element type, any shapes of equal size and any strides; dslot as in convert",
		Templates: []Template{{Name: "cpy_{T}", Body: "cpy<{T}>",
			Doc: "element i of src (in src's shape) to element i of dst (in dst's shape), {T} elements, for i < n = nelements(dst) < 2^31; sne/dne are fast divisions by ne[0], ne[1], ne[2] of src and dst; when dslot is not null, dst's data pointer is read from it",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"sne0", fastdiv}, {"sne1", fastdiv}, {"sne2", fastdiv},
				{"dne0", fastdiv}, {"dne1", fastdiv}, {"dne2", fastdiv}, {"n", i64}, {"dslot", ptr}},
			Axes: []Axis{{Name: "T", Values: []Value{{"b8", "unsigned char"}, {"b16", "unsigned short"},
				{"b32", "ternion_u32"}, {"b64", "unsigned long long"}}}}}}},
	{Name: "fill", Fixture: true, Doc: "set every element of a buffer to one value",
		Kernels: []Kernel{
			{Name: "fill_f32", Doc: "dst[i] = value for i < n",
				Params: []Param{{"dst", ptr}, {"value", f32}, {"n", i64}}},
			{Name: "fill_u32", Doc: "dst[i] = value bits for i < n (any 4-byte type)",
				Params: []Param{{"dst", ptr}, {"value", u32}, {"n", i64}}},
		}},
	{Name: "mmv", Doc: "MUL_MAT for up to 8 src1 columns (f32/f16/bf16 src0, f32 src1 and dst), and the pointer arrays of batched gemms",
		Kernels: []Kernel{{Name: "batched_ptrs",
			Doc: "pointer arrays of a batched gemm: out[i], out[n+i], out[2n+i] = a, b, c of batch i = i12 + i13*ne12 < n = ne12*ne13, a broadcast by division (r2, r3)",
			Params: []Param{{"out", ptr}, {"a", i64}, {"b", i64}, {"c", i64}, {"ne12", i64}, {"ne13", i64},
				{"nba2", i64}, {"nba3", i64}, {"nbb2", i64}, {"nbb3", i64}, {"nbc2", i64}, {"nbc3", i64}, {"r2", i64}, {"r3", i64}}}},
		Templates: []Template{
			{Name: "mmv_{t}", Body: "mmv<{t}, 1, 1>",
				Doc:    "dst[row, i12, i13] = Σ_k src0[k, row, i12/r2, i13/r3] ({t}) · src1[k, 0, i12, i13] (f32); grid (rows, ne12, ne13), block a multiple of the warp size; rows of src0 and src1 packed",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv}},
				Axes:   []Axis{floatTypes("t")}},
			{Name: "mmvv_{t}", Body: "mmvv<{t}>", Deferred: true, LaunchBounds: 128, MinBlocks: 9,
				Doc:    "mmv_{t} with 16-byte loads and MMVVRows({t}) rows a block (grid (rows/R, ne12, ne13)): rows of src0 and src1 16-byte aligned, k a multiple of 16 bytes of src0; with early ≠ 0 each thread requests its first 16 bytes of each row before the kernel waits for the kernels before it (core sets it only where no kernel that may still run writes src0)",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv}, {"early", i32}},
				Axes: []Axis{{Name: "t", Values: []Value{{"f32", "float, 4, " + strconv.Itoa(MMVVRows("f32"))},
					{"f16", "ternion_f16, 8, " + strconv.Itoa(MMVVRows("f16"))},
					{"bf16", "ternion_bf16s, 8, " + strconv.Itoa(MMVVRows("bf16"))}}}}},
			{Name: "mmvn_{t}", Body: "mmvn<{t}>",
				Doc:    "MUL_MAT for 2 ≤ ncols ≤ 8 f32 src1 columns with mmvv_{t}'s loads and rows a block (grid (rows/R, ne12, ne13)): rows of src0 and src1 16-byte aligned, k a multiple of 16 bytes of src0",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv}, {"ncols", i32}},
				Axes: []Axis{{Name: "t", Values: []Value{{"f32", "float, 4, " + strconv.Itoa(MMVVRows("f32"))},
					{"f16", "ternion_f16, 8, " + strconv.Itoa(MMVVRows("f16"))},
					{"bf16", "ternion_bf16s, 8, " + strconv.Itoa(MMVVRows("bf16"))}}}}},
			{Name: "mmvt_{t}", Body: "mmvt<{t}, {r}>", LaunchBounds: 256, MinBlocks: 2, Deferred: true,
				Doc:    "MUL_MAT for 2 ≤ ncols ≤ 8 f32 src1 columns on the tensor cores (mma.sync m16n8k16 {t} with f32 sums; NVIDIA with arch 8.0 and later, elsewhere an empty body): 16 rows a block (MMVT_ROWS), 256 threads (MMVT_WARPS warps splitting k), 2 blocks an SM; grid (rows/16, ne12, ne13); rows of src0 and src1 16-byte aligned, k a multiple of 8; src1's values rounded to {t} for the products; with early ≠ 0 each warp requests its first weights before the kernel waits for the kernels before it (core sets it only where no kernel that may still run writes src0)",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv}, {"ncols", i32}, {"early", i32}},
				Axes:   []Axis{{Name: "t", Values: []Value{{"f16", "ternion_f16"}, {"bf16", "ternion_bf16s"}}}, mmvtTiles(1)}},
			{Name: "mmvt2_{t}", Body: "mmvt<{t}, {r}>", LaunchBounds: 256, MinBlocks: 1, Deferred: true,
				Doc:    "mmvt_{t} with two row tiles a block: 32 rows (2·MMVT_ROWS), each src1 fragment loaded once for both, one block an SM; grid (rows/32, ne12, ne13)",
				Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"r2", fastdiv}, {"r3", fastdiv}, {"ncols", i32}, {"early", i32}},
				Axes:   []Axis{{Name: "t", Values: []Value{{"f16", "ternion_f16"}, {"bf16", "ternion_bf16s"}}}, mmvtTiles(2)}},
		}},
	{Name: "noop", Fixture: true, Doc: "an empty kernel: the smallest launch, for overhead benchmarks",
		Kernels: []Kernel{{Name: "noop", Doc: "does nothing"}}},
	{Name: "scale", Doc: "ggml's SCALE op on contiguous f32 (also a conformance fixture)", Fixture: true,
		Kernels: []Kernel{{Name: "scale_f32", Doc: "dst[i] = src[i]*scale + bias for i < n",
			Params: []Param{{"dst", ptr}, {"src", ptr}, {"scale", f32}, {"bias", f32}, {"n", i64}}}}},
	unaryFamily,
	shapeFamily,
	ropeFamily,
	getrowsFamily, reduceFamily, argsortFamily,
	fattnFamily,
	normFamily,
	softmaxFamily,
	quantFamily,
	addidFamily,
	gemm90Family,
	fattn90Family,
}

// binOps are the ops of binbcast.cu.
var binOps = Axis{Name: "op", Values: []Value{{"add", "ternion_bin_add"}, {"sub", "ternion_bin_sub"},
	{"mul", "ternion_bin_mul"}, {"div", "ternion_bin_div"}}}

// floatTypes is an axis over the float storage types (vendor.h).
func floatTypes(name string) Axis {
	return Axis{Name: name, Values: []Value{{"f32", "float"}, {"f16", "ternion_f16"}, {"bf16", "ternion_bf16s"}}}
}

// AbiEchoLen is the number of int64s abi_echo writes: a, t.data, t.ne[4],
// t.nb[4], b, fd.mp, fd.l, fd.d, the bits of c, d, then sizeof, alignof and
// the offsets of ne and nb of ternion_tensor, and sizeof, alignof and the
// offsets of l and d of ternion_fastdiv.
const AbiEchoLen = 24

// mmvtTiles is the axis "r" of an mmvt kernel: its n row tiles of
// MMVTRows a block (mmvt_{t} 1, mmvt2_{t} 2).
func mmvtTiles(n int) Axis {
	v := strconv.Itoa(n)
	return Axis{Name: "r", Values: []Value{{v, v}}}
}

// MMVTRows is the rows one block of mmvt_{t} multiplies (mmv.cu's
// MMVT_ROWS: the mma's M).
const MMVTRows = 16

// MMVVRows is the rows one block of mmvv_{t} multiplies (t "f32", "f16" or
// "bf16"): each group of src1 values a thread loads serves that many rows,
// so that src1's share of the L1 traffic stays at or below the weights'.
func MMVVRows(t string) int {
	if t == "f32" {
		return 2
	}
	return 4
}
