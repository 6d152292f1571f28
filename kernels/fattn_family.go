package kernels

import "strconv"

// fattnFamily is ggml's FLASH_ATTN_EXT (kernels/fattn.cu): the one-query
// decode kernel and the flash-decoding vector kernel with their combine
// steps, and the tensor-core prefill kernel.
var fattnFamily = Family{Name: "fattn",
	Doc: "ggml's FLASH_ATTN_EXT for f32 Q and f16 K/V: one-query decode kernels (SIMT on any vendor, tensor cores on NVIDIA >= 8.0) and a flash-decoding vector kernel (any vendor) and an mma.sync prefill kernel (NVIDIA >= 8.0)",
	Kernels: []Kernel{{Name: "fattn_combine",
		Doc:    "dst row x (of nrows = nq·n_head·ne3, x = (iq3·n_head + h)·nq + iq1) = the merge of nchunks partials [max, sum, acc[D]] of fattn_vec (chunk c at part + (c·nrows + x)·(D+2)) and the sink of head h; block x, threads stride over D",
		Params: []Param{{"dst", tensor}, {"part", ptr}, {"sinks", ptr}, {"nchunks", u32}, {"nrows", u32}}},
		{Name: "fattn_dec_combine",
			Doc:    "dst row x (of nrows = n_head·ne3, x = iq3·n_head + h, one query) dims 32y..32y+31 = the merge of nchunks (<= 256) partials [max in log2 units, sum, acc[D]] of fattn_dec (chunk c at part + (c·nrows + x)·(D+2)) and the sink of head h; block (x, y), 128 threads",
			Params: []Param{{"dst", tensor}, {"part", ptr}, {"sinks", ptr}, {"nchunks", u32}, {"nrows", u32}}}},
	Templates: []Template{
		{Name: "fattn_vec_d{dk}v{dv}_r{r}", Body: "fattn_vec<{dk}, {dv}, {r}>", LaunchBounds: 128,
			Doc:    "fattn_vec for K head size 576 and V head size 512 (the seed's DeepSeek MLA shape): block (x, y, z) = KV chunk x of chunk positions, rows y·{r}..y·{r}+{r}-1 of the gqa·nq rows of kv head z%nhkv, batch z/nhkv; 128 threads; one chunk writes dst, several write partials (512+2 floats a row) for fattn_combine; K/V rows 16-byte aligned",
			Params: fattnParams(true),
			Axes: []Axis{{Name: "dk", Values: []Value{{"576", "576"}}}, {Name: "dv", Values: []Value{{"512", "512"}}},
				{Name: "r", Values: []Value{{"4", "4"}}}}},
		{Name: "fattn_vec_d{d}_r{r}", Body: "fattn_vec<{d}, {d}, {r}>", LaunchBounds: 128,
			Doc:    "flash-decoding for head size {d}: block (x, y, z) = KV chunk x of chunk positions, rows y·{r}..y·{r}+{r}-1 of the gqa·nq rows (q head ik2·gqa + row/nq, column row%nq) of kv head z%nhkv, batch z/nhkv; 128 threads; one chunk writes dst, several write partials for fattn_combine; K/V rows 16-byte aligned",
			Params: fattnParams(true),
			Axes:   []Axis{fattnHeadSizes, {Name: "r", Values: []Value{{"4", "4"}, {"8", "8"}}}}},
		{Name: "fattn_dec_d{d}_r{r}", Body: "fattn_dec<{d}, {r}>", LaunchBounds: 128,
			Doc:    "one-query flash-decoding for head size {d}: block (x, y, z) = KV chunk x of chunk positions, the gqa <= {r} q heads of kv head y, batch z; 128 threads in 4 independent warps (register prefetch, log2-unit online softmax); one chunk writes dst, several write partials, merged by the tile's last block when counters is not null, else by fattn_dec_combine; K/V rows 16-byte aligned",
			Params: fattnDecParams(),
			Axes:   []Axis{fattnHeadSizes, {Name: "r", Values: []Value{{"1", "1"}, {"4", "4"}, {"8", "8"}}}}},
		{Name: "fattn_dect_d{d}_r8", Body: "fattn_dect<{d}, {r}, 0>", LaunchBounds: 128, Deferred: true,
			Doc:    fattnDectDoc,
			Params: fattnDectParams(),
			Axes:   []Axis{headSizeAxis(64, 128, 256), {Name: "r", Values: []Value{{"8", "8"}}}}},
		{Name: "fattn_dect_d{d}_r16", Body: "fattn_dect<{d}, {r}, 0>", LaunchBounds: 128, Deferred: true,
			Doc:    fattnDectDoc,
			Params: fattnDectParams(),
			Axes:   []Axis{headSizeAxis(64, 128), {Name: "r", Values: []Value{{"16", "16"}}}}},
		{Name: "fattn_dect_d{d}_r{r}_{kv}", Body: "fattn_dect<{d}, {r}, {kv}>", LaunchBounds: 128, Deferred: true,
			Doc:    fattnDectQ8Doc,
			Params: fattnDectParams(),
			Axes: []Axis{headSizeAxis(128), {Name: "r", Values: []Value{{"8", "8"}, {"16", "16"}}},
				{Name: "kv", Values: []Value{{"q8_0", "1"}, {"q4_0", "2"}}}}},
		{Name: "fattn_mma_d{d}", Body: "fattn_mma<{d}, 4>", LaunchBounds: 128,
			Doc:    "tensor-core flash attention for head size {d}: block (x, y, z) = queries 64x..64x+63 of q head y, batch z; 128 threads; dynamic shared memory (192·({d}+8) + 64·72)·2 bytes (Q, K, V and mask tiles); K/V rows 16-byte aligned; an empty body below sm_80 and off NVIDIA",
			Params: fattnParams(false),
			Axes:   []Axis{fattnHeadSizes}},
		{Name: "fattn_mma_w{w}_d{d}", Body: "fattn_mma<{d}, {w}>", LaunchBounds: 256,
			Doc:    "fattn_mma_d{d} with {w} warps: block (x, y, z) = queries 128x..128x+127 of q head y, batch z; 256 threads; dynamic shared memory (256·({d}+8) + 128·72)·2 bytes; K/V rows 16-byte aligned; an empty body below sm_80 and off NVIDIA",
			Params: fattnParams(false),
			Axes:   []Axis{headSizeAxis(256), {Name: "w", Values: []Value{{"8", "8"}}}}},
	},
}

// fattnDectDoc documents the tensor-core decode kernels (r16 only for head
// sizes up to 128: at 256 its Q fragments and accumulators would spill).
const fattnDectDoc = "one-query flash-decoding on the tensor cores (mma.sync m16n8k16) for head size {d}: block (x, y, z) = KV chunk x of chunk positions, the gqa <= {r} q heads of kv head y as rows of one 16-row tile, batch z; 128 threads in 4 independent warps, each with its own 3-stage ring of 16-position K/V tiles (filled by 16-byte cp.async, or by the bulk copy engine where built for sm_90 by nvcc or NVRTC 12 and later with TERNION_FATTN_BULK defined) and mask values loaded two steps ahead; dynamic shared memory 384·(2·{d}+16) + 96 bytes on sm_90 (rows padded by 16 bytes, then the warps' mbarriers), 768·{d} + 96 below (rows swizzled), as core/ops' fattnDectShared counts; one chunk writes dst, several write partials, merged by the tile's last block when counters is not null, else by fattn_dec_combine; with early bit 0 (K) or 1 (V) set, each warp requests that tensor's first steps before the kernel waits for the kernels before it (core sets a bit only where no kernel still running writes it; not with bulk copies); K/V rows 16-byte aligned; an empty body below sm_80 and off NVIDIA"

// fattnDectQ8Doc documents the tensor-core decode kernels for quantized K
// and V.
const fattnDectQ8Doc = "fattn_dect_d{d}_r{r} for {kv} K and V read as they are stored: each warp's ring holds raw 16-row tiles (8-byte cp.async pieces; K/V data and strides multiples of 8 bytes), expanded in shared memory to f16 (exactly rounded d·(q - zero point)) before the same mma steps; dynamic shared memory 4·(3·2·16·{d}/32·block bytes + 2·16·row bytes) + 96 bytes (row 2·{d}+16 on sm_90, 2·{d} below); partials merged as fattn_dect_d{d}_r{r}'s; an empty body below sm_80 and off NVIDIA"

// headSizeAxis is the head-size axis "d" of the values ds.
func headSizeAxis(ds ...int) Axis {
	ax := Axis{Name: "d"}
	for _, d := range ds {
		s := strconv.Itoa(d)
		ax.Values = append(ax.Values, Value{s, s})
	}
	return ax
}

// fattnHeadSizes are the head sizes (hsk = hsv) the kernels are built for.
var fattnHeadSizes = headSizeAxis(64, 80, 96, 112, 128, 256)

// fattnParams are the parameters of the attention kernels; the vector kernel
// has the partial buffer and the chunk length too.
func fattnParams(vec bool) []Param {
	ps := []Param{{"dst", tensor}, {"q", tensor}, {"k", tensor}, {"v", tensor}, {"mask", tensor}, {"sinks", ptr}}
	if vec {
		ps = append(ps, Param{"part", ptr})
	}
	ps = append(ps, Param{"scale", f32}, Param{"softcap", f32}, Param{"max_bias", f32}, Param{"m0", f32},
		Param{"m1", f32}, Param{"n_head_log2", u32}, Param{"gqa", u32}, Param{"r3", u32})
	if vec {
		ps = append(ps, Param{"chunk", u32})
	}
	return ps
}

// fattnDecParams are the one-query kernels' parameters: the vector
// kernel's, then counters (a zeroed word a tile of kv head and batch, or
// null): with it, the last block of a tile to finish merges the tile's
// partials into dst (no fattn_dec_combine) and zeroes its word again.
func fattnDecParams() []Param { return append(fattnParams(true), Param{"counters", ptr}) }

// fattnDectParams are fattn_dect's: fattn_dec's, then early (bit 0: K, bit
// 1: V requested before the kernel waits for the kernels before it).
func fattnDectParams() []Param { return append(fattnDecParams(), Param{"early", i32}) }
