package kernels

// softmaxFamily is kernels/softmax.cu: ggml's SOFT_MAX and DIAG_MASK_INF.
var softmaxFamily = Family{Name: "softmax", Doc: "ggml's SOFT_MAX (scale, mask, ALiBi, sinks): rows held in registers (wide ones streamed, one a block), or long rows split over many blocks in two launches, or held by a thread-block cluster (sm_90); DIAG_MASK_INF",
	Kernels: []Kernel{{Name: "diag_mask_inf_f32",
		Doc:    "dst = src (f32, one shape, any strides) with element (i0, i1, i2, i3) -inf where i0 > n_past + i1, for the n < 2^31 elements (grid-stride); ne0..2 divide an element number",
		Params: []Param{{"dst", tensor}, {"src", tensor}, {"ne0", fastdiv}, {"ne1", fastdiv}, {"ne2", fastdiv}, {"n_past", i32}, {"n", i64}}}},
	Templates: []Template{
		{Name: "softmax_{m}_v{v}_k{k}", Body: "softmax_rows<{m}, {v}, {k}, false>", LaunchBounds: 1024,
			Doc: "SOFT_MAX of the nrows < 2^31 f32 rows of src (rows split by ne1, ne2) into dst: w = x*scale + slope*mask ({m} mask, row i1 of matrix (i2 % mne2, i3 % mne3)), " +
				"y = exp(w - max)/Σ, the sink sinks[i2] (f32, or 0 for none) in max and Σ; slope = m0^(i2+1) below n_head_log2, m1^(2(i2-n_head_log2)+1) above, 1 when max_bias is 0; " +
				"blockDim.x threads a row (a multiple of the warp size, ne0 <= {k}*{v}*blockDim.x) each holding {k} vectors of {v} in registers, blockDim.y rows a block, rows grid-stride; " +
				"v4: ne0 % 4 == 0, src, dst rows 16-byte and mask rows 16-byte (f32) or 8-byte (f16) aligned",
			Params: softmaxParams, Axes: []Axis{softmaxMask, softmaxVec, {Name: "k", Values: []Value{{"1", "1"}, {"2", "2"}, {"4", "4"}, {"8", "8"}}}}},
		{Name: "softmax_wide_{m}_k{k}", Body: "softmax_rows<{m}, 4, {k}, true>", LaunchBounds: 512,
			Doc: "SOFT_MAX of wide rows, one a block: softmax_{m}_v4_k{k} (arguments, alignment and geometry alike; blockDim.x <= 512, blockDim.y 1 in the plan) " +
				"with src read and dst written as streams (evict-first hints)",
			Params: softmaxParams, Axes: []Axis{softmaxMask, {Name: "k", Values: []Value{{"1", "1"}, {"2", "2"}}}}},
		{Name: "softmax_cl_{m}_k{k}", Body: "softmax_cl<{m}, {k}>", LaunchBounds: 256, Cluster: 8,
			Doc: "SOFT_MAX of long rows (arguments as softmax_{m}_v4_k*, v4 alignment) with a thread-block cluster of 8 blocks of 256 threads a row " +
				"(row blockIdx.x/8, the grid's x 8·nrows): each thread holds {k} vectors of 4 in registers, the blocks agree on the row's max and Σ through " +
				"distributed shared memory, one read and one write of every element; ne0 <= 8192·{k}; NVIDIA arch 9.0 and later, an empty body elsewhere",
			Params: softmaxParams, Axes: []Axis{softmaxMask, {Name: "k", Values: []Value{{"2", "2"}, {"4", "4"}, {"8", "8"}}}}},
		{Name: "softmax_part_{m}_v{v}", Body: "softmax_part<{m}, {v}>", LaunchBounds: 1024,
			Doc: "first launch of a split SOFT_MAX (arguments as softmax_{m}_v{v}_k*): block (x, 0) of row y (rows grid-stride over grid y, blockDim.y 1) writes " +
				"partial[2*(row*nchunks + x)] = max of w over elements [x*chunk, (x+1)*chunk) of the row (chunk a multiple of 4) and [+1] = Σ exp(w - max)",
			Params: softmaxSplitParams,
			Axes:   []Axis{softmaxMask, softmaxVec}},
		{Name: "softmax_norm_{m}_v{v}", Body: "softmax_norm<{m}, {v}>", LaunchBounds: 1024,
			Doc: "second launch of a split SOFT_MAX: combines the row's nchunks partials and its sink into max and Σ (online-softmax rescaling), " +
				"then writes y = exp(w - max)/Σ over chunk x of the row, as softmax_part_{m}_v{v} cut it",
			Params: softmaxSplitParams,
			Axes:   []Axis{softmaxMask, softmaxVec}},
	},
}

// softmaxParams are the arguments every SOFT_MAX kernel takes.
var softmaxParams = []Param{{"dst", tensor}, {"src", tensor}, {"mask", tensor}, {"sinks", ptr}, {"ne1", fastdiv}, {"ne2", fastdiv},
	{"mne2", fastdiv}, {"mne3", fastdiv}, {"nrows", i64}, {"scale", f32}, {"max_bias", f32}, {"m0", f32}, {"m1", f32},
	{"n_head_log2", i32}}

// softmaxSplitParams are the arguments of a split SOFT_MAX's two kernels.
var softmaxSplitParams = append(softmaxParams[:len(softmaxParams):len(softmaxParams)], Param{"partial", ptr}, Param{"chunk", i64},
	Param{"nchunks", i32})

// softmaxMask is the mask type axis of softmax.cu's templates.
var softmaxMask = Axis{Name: "m", Values: []Value{{"none", "softmax_nomask"}, {"f32", "float"}, {"f16", "ternion_f16"}}}

// softmaxVec is the vector width axis: 1 element or 4 (16-byte loads) a step.
var softmaxVec = Axis{Name: "v", Values: []Value{{"1", "1"}, {"4", "4"}}}
