package kernels

// shapeFamily is kernels/shape.cu: REPEAT, CONCAT, PAD, UPSCALE, ARANGE and
// TIMESTEP_EMBEDDING.
var shapeFamily = Family{Name: "shape",
	Doc: "ggml's REPEAT, CONCAT, PAD, UPSCALE, ARANGE and TIMESTEP_EMBEDDING: dst rows built from source rows (units of 2, 4 or 16 bytes), resampling, and generated values",
	Kernels: []Kernel{
		{Name: "arange_f32", Doc: "dst[i] = fmaf(step, i, start) for i < n (grid-stride)",
			Params: []Param{{"dst", ptr}, {"start", f32}, {"step", f32}, {"n", i64}}},
		{Name: "tsembd_f32",
			Doc:    "row i < nrows of dst (f32) = cos(t*f_j) at j, sin(t*f_j) at j + dim/2 for j < dim/2, t = src[i] (f32), f_j = exp(-log(max_period)*j/(dim/2)); 0 at dim-1 when dim is odd; rows by blocks (x) and threads (y)",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"dim", i32}, {"max_period", i32}, {"nrows", i64}}},
		{Name: "upscale_nearest_f32",
			Doc: "dst (f32) = src (f32) resampled to the nearest: dst index i reads src at i/sf truncated per dim (sf = dst/src size as ggml computes it); any strides; dne1, dne2 divide dst rows; nrows < 2^31",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"sf0", f32}, {"sf1", f32}, {"sf2", f32}, {"sf3", f32},
				{"dne1", fastdiv}, {"dne2", fastdiv}, {"nrows", i64}}},
		{Name: "upscale_bilinear_f32",
			Doc: "dst (f32) = src (f32) resampled, bilinear in dims 0 and 1 with pixel offset off (0.5, or 0 for align corners), nearest in dims 2 and 3; any strides; dne1, dne2 divide dst rows; nrows < 2^31",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"sf0", f32}, {"sf1", f32}, {"sf2", f32}, {"sf3", f32},
				{"off", f32}, {"dne1", fastdiv}, {"dne2", fastdiv}, {"nrows", i64}}},
	},
	Templates: []Template{
		{Name: "repeat_{T}", Body: "shape_repeat<{T}>",
			Doc: "dst row (i1,i2,i3) = src row (i1%ne01, i2%ne02, i3%ne03), unit i0 = src unit i0%ne00, {T} units, any strides; dne1, dne2 divide dst rows; sne0..3 are src's ne; nrows < 2^31",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"dne1", fastdiv}, {"dne2", fastdiv}, {"sne0", fastdiv},
				{"sne1", fastdiv}, {"sne2", fastdiv}, {"sne3", fastdiv}, {"nrows", i64}},
			Axes: []Axis{shapeUnits}},
		{Name: "repeatf_{T}", Body: "shape_repeat_flat<{T}>",
			Doc: "repeat_{T} one unit a thread over a packed dst of n < 2^31 units: unit i (dne0..2 divide by dst's ne[0..2]) = src unit (i0%ne00, i1%ne01, i2%ne02, i3%ne03), src any strides; grid-stride",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"dne0", fastdiv}, {"dne1", fastdiv}, {"dne2", fastdiv}, {"sne0", fastdiv},
				{"sne1", fastdiv}, {"sne2", fastdiv}, {"sne3", fastdiv}, {"n", i64}},
			Axes: []Axis{shapeUnits}},
		{Name: "concat_{T}", Body: "shape_concat<{T}>",
			Doc: "dst = src0 joined with src1 along dim (0..3), {T} units, any strides; dne1, dne2 divide dst rows; nrows < 2^31",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"dim", i32}, {"dne1", fastdiv},
				{"dne2", fastdiv}, {"nrows", i64}},
			Axes: []Axis{shapeUnits}},
		{Name: "concatf_{T}", Body: "shape_concat_flat<{T}>",
			Doc: "concat_{T} one unit a thread over a packed dst of n < 2^31 units: unit i (dne0..2 divide by dst's ne[0..2]) = src0's unit at i's index where index[dim] < src0.ne[dim], else src1's at index[dim] - src0.ne[dim], sources any strides; grid-stride",
			Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"dim", i32}, {"dne0", fastdiv},
				{"dne1", fastdiv}, {"dne2", fastdiv}, {"n", i64}},
			Axes: []Axis{shapeUnits}},
		{Name: "pad_{T}", Body: "shape_pad<{T}>",
			Doc: "dst[i] = src[i - lp] where that lies in src, else zero bits, {T} units, any strides; dne1, dne2 divide dst rows; nrows < 2^31",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"lp0", i32}, {"lp1", i32}, {"lp2", i32}, {"lp3", i32},
				{"dne1", fastdiv}, {"dne2", fastdiv}, {"nrows", i64}},
			Axes: []Axis{shapeUnits}},
	},
}

// shapeUnits are the storage units the copying kernels of shape.cu move.
var shapeUnits = Axis{Name: "T", Values: []Value{{"b16", "unsigned short"}, {"b32", "ternion_u32"}, {"b128", "uint4"}}}
