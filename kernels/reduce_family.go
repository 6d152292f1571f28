package kernels

// reduceFamily is kernels/reduce.cu: ggml's SUM_ROWS, MEAN, ARGMAX, SUM and
// COUNT_EQUAL.
var reduceFamily = Family{Name: "reduce", Doc: "ggml's SUM_ROWS, MEAN, ARGMAX, SUM and COUNT_EQUAL: row reductions and two-launch whole-tensor reductions",
	Kernels: []Kernel{
		{Name: "count_equal_i32",
			Doc:    "partial[block < nparts] = how many i32 elements a[i] == b[i] (one shape, any strides, n < 2^31) the block reaches grid-stride; ne0..2 divide an element number",
			Params: []Param{{"partial", ptr}, {"nparts", i64}, {"a", tensor}, {"b", tensor}, {"ne0", fastdiv}, {"ne1", fastdiv}, {"ne2", fastdiv}, {"n", i64}}},
		{Name: "sumrowsb_f32",
			Doc:    "sumrows4_f32 with one row a block of 512 threads (blockDim (512, 1), rows grid-stride), four streaming 16-byte loads in flight a thread",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"ne1", fastdiv}, {"ne2", fastdiv}, {"nrows", i64}, {"scale", f32}}},
		{Name: "reduce_final_f32", Doc: "dst[0] = scale * Σ partial[i < n] (f32); one block",
			Params: []Param{{"dst", ptr}, {"partial", ptr}, {"n", i64}, {"scale", f32}}},
		{Name: "reduce_final_i64", Doc: "dst[0] = Σ partial[i < n] (i64); one block",
			Params: []Param{{"dst", ptr}, {"partial", ptr}, {"n", i64}}},
	},
	Templates: []Template{
		{Name: "argmaxb_f32", Body: "reduce_argmax_block<REDUCE_ARGMAX_NT, 8, true, false>", LaunchBounds: 256, Deferred: true,
			Doc:    "argmax4_f32 with one row a block of 256 threads (blockDim (256, 1), rows grid-stride), eight streaming 16-byte loads in flight a thread; early (0/1): the first loads are requested before the kernel waits for the kernels before it",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"nrows", i64}, {"early", i32}}},
		{Name: "argmaxbp_f32", Body: "reduce_argmax_block<REDUCE_ARGMAX_NT, 4, true, true>", LaunchBounds: 256, Deferred: true,
			Doc:    "argmaxb_f32 pipelined: four streaming 16-byte loads a thread for the next step requested before the four it holds are compared; early as argmaxb_f32's",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"nrows", i64}, {"early", i32}}},
		{Name: "sumrows{v}_f32", Body: "reduce_rows<{v}>",
			Doc:    "dst[0, i1, i2, i3] = scale * Σ src[:, i1, i2, i3] (f32) for nrows rows split by ne1, ne2; blockDim.x threads a row (a multiple of the warp size), blockDim.y rows a block; {v}: 4 reads 16-byte vectors (rows packed, aligned, ne0 % 4 == 0)",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"ne1", fastdiv}, {"ne2", fastdiv}, {"nrows", i64}, {"scale", f32}},
			Axes:   []Axis{reduceVec}},
		{Name: "argmax{v}_f32", Body: "reduce_argmax<{v}>",
			Doc:    "dst[row] (i32) = index of the first maximum of f32 matrix row row < nrows (0 when all NaN); blockDim.x threads a row, blockDim.y rows a block; {v}: 4 reads 16-byte vectors",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"nrows", i64}},
			Axes:   []Axis{reduceVec}},
		{Name: "sumflat{v}_f32", Body: "reduce_flat<{v}>",
			Doc:    "partial[block < nparts] = Σ of the packed f32 elements src[i < n] the block reaches grid-stride (blockDim.y 1); {v}: 4 reads 16-byte vectors (src 16-byte aligned), the n % 4 last singly",
			Params: []Param{{"partial", ptr}, {"nparts", i64}, {"src", ptr}, {"n", i64}},
			Axes:   []Axis{reduceVec}},
	},
}

// reduceVec is the vector width axis of reduce.cu's templates: "" reads
// elements, "4" 16-byte vectors.
var reduceVec = Axis{Name: "v", Values: []Value{{"", "1"}, {"4", "4"}}}
