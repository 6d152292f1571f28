package kernels

// argsortFamily is kernels/argsort.cu: ggml's ARGSORT.
var argsortFamily = Family{Name: "argsort", Doc: "ggml's ARGSORT of f32 rows of any length: bitonic chunks in shared memory, then merge passes; or an LSD radix sort of 8-bit digits",
	Kernels: []Kernel{
		{Name: "argsort_chunk",
			Doc: "block b sorts chunk b % nchunks (a power of two ≤ 4096 elements, padding last) of src row b / nchunks (ne1, ne2 split rows) by key (order 0 ascending, 1 descending) then index; writes indices to oidx and keys to okeys (unless null) at row*ne0 + chunk start; min(chunk/2, 1024) threads, chunk*8 bytes of dynamic shared memory",
			Params: []Param{{"okeys", ptr}, {"oidx", ptr}, {"src", tensor}, {"nchunks", fastdiv}, {"ne1", fastdiv},
				{"ne2", fastdiv}, {"chunk", i32}, {"order", i32}}},
		{Name: "argsort_merge",
			Doc: "merges runs of width sorted (key, index) pairs of nrows packed rows of ne0 into runs of 2*width: block b writes 2048-element tile b % tiles of row b / tiles to okeys (unless null) and oidx; 256 threads",
			Params: []Param{{"okeys", ptr}, {"oidx", ptr}, {"ikeys", ptr}, {"iidx", ptr}, {"nrows", i64}, {"ne0", i64}, {"width", i64},
				{"tiles", fastdiv}, {"order", i32}}},
		{Name: "argsort_radix_up",
			Doc: "radix pass histogram: hist[(row*256 + digit)*tiles + tile] = the keys of the 4096-element tile (block b: row b / tiles, tile b % tiles) with digit (key >> shift) & 255; keys from src (ne1, ne2 split rows; order 1 reverses them) when kin is null, else kin (packed rows of ncols); 256 threads",
			Params: []Param{{"hist", ptr}, {"src", tensor}, {"kin", ptr}, {"ne1", fastdiv}, {"ne2", fastdiv}, {"ncols", i32},
				{"tiles", fastdiv}, {"shift", i32}, {"order", i32}}},
		{Name: "argsort_radix_scan",
			Doc:    "block b < nrows turns row b's 256*tiles counts of hist into exclusive offsets in place; 1024 threads",
			Params: []Param{{"hist", ptr}, {"nrows", i32}, {"tiles", i32}}},
		{Name: "argsort_radix_down",
			Doc: "radix pass scatter: the tile's (key, index) pairs (from src, index = column, when kin is null, else kin, iin) go stably by digit to offs' places: keys to kout (unless null), indices to iout (packed rows of ncols); 256 threads",
			Params: []Param{{"kout", ptr}, {"iout", ptr}, {"src", tensor}, {"kin", ptr}, {"iin", ptr}, {"offs", ptr}, {"ne1", fastdiv},
				{"ne2", fastdiv}, {"ncols", i32}, {"tiles", fastdiv}, {"shift", i32}, {"order", i32}}},
	},
}
