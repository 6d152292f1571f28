package kernels

// normFamily is norm.cu: ggml's NORM, RMS_NORM, L2_NORM (with ADD fused in
// front and MUL, ADD fused behind) and GROUP_NORM.
var normFamily = Family{Name: "norm",
	Doc: "ggml's NORM, RMS_NORM, L2_NORM along rows (optionally ADD before, MUL and ADD after, fused) and GROUP_NORM",
	Templates: []Template{
		{Name: "norm_{op}_f32", Body: "norm_rows<{op}, 1, false>",
			Doc:    "dst row r = {op}(src) for r < nrows < 2^31; f32, any strides; rows split by ne1, ne2; add, mul, post, sum and their fast divisions are not read; blockDim.x a multiple of the warp size",
			Params: normRowParams, Axes: []Axis{normOps}, LaunchBounds: normMaxThreads},
		{Name: "norm4_{op}_f32", Body: "norm_rows<{op}, 4, false>",
			Doc:    "norm_{op}_f32 with float4 loads and stores: src's and dst's rows packed, 16-byte aligned, a multiple of 4 long",
			Params: normRowParams, Axes: []Axis{normOps}, LaunchBounds: normMaxThreads},
		{Name: "norm_fused_{op}_f32", Body: "norm_rows<{op}, 1, true>",
			Doc:    "dst row r = {op}(src + add) * mul + post for r < nrows < 2^31 (add, mul, post broadcast by modulo, each optional: null data), the sum src + add written to sum when sum is given; f32, any strides; rows split by ne1, ne2; the operands' fast divisions divide by their ne[0..3]; blockDim.x a multiple of the warp size",
			Params: normRowParams, Axes: []Axis{normFusedOps}, LaunchBounds: normMaxThreads},
		{Name: "norm4_fused_{op}_f32", Body: "norm_rows<{op}, 4, true>",
			Doc:    "norm_fused_{op}_f32 with float4 loads and stores: every tensor's rows packed, 16-byte aligned, a multiple of 4 long; the operands' column fast division divides by ne[0]/4",
			Params: normRowParams, Axes: []Axis{normFusedOps}, LaunchBounds: normMaxThreads},
		{Name: "group_norm_f32", Body: "group_norm<1>",
			Doc:    "ggml's GROUP_NORM of contiguous f32: block (x, y) normalises channels [x*cpg, min((x+1)*cpg, ne2)) of sample y; blockDim.y 1, blockDim.x a multiple of the warp size",
			Params: normGroupParams},
		{Name: "group_norm4_f32", Body: "group_norm<4>",
			Doc:    "group_norm_f32 with float4 loads and stores: ne0*ne1 a multiple of 4, src and dst 16-byte aligned",
			Params: normGroupParams},
	}}

// normMaxThreads bounds the row kernels' blocks (their launch bounds): a
// row's units in registers take more than 64 registers a thread, too many
// for blocks of 1024 threads. core/ops launches at most this many.
const normMaxThreads = 512

// normOps are the row norms of norm.cu (NORM_OP_*); normFusedOps those
// fused with the ops around them (as ggml fuses them).
var (
	normOps      = Axis{Name: "op", Values: []Value{{"norm", "0"}, {"rms", "1"}, {"l2", "2"}}}
	normFusedOps = Axis{Name: "op", Values: []Value{{"norm", "0"}, {"rms", "1"}}}
)

// normRowParams are norm_rows' parameters.
var normRowParams = []Param{{"dst", tensor}, {"src", tensor}, {"add", tensor}, {"mul", tensor}, {"post", tensor},
	{"sum", tensor}, {"ne1", fastdiv}, {"ne2", fastdiv},
	{"add0", fastdiv}, {"add1", fastdiv}, {"add2", fastdiv}, {"add3", fastdiv},
	{"mul0", fastdiv}, {"mul1", fastdiv}, {"mul2", fastdiv}, {"mul3", fastdiv},
	{"post0", fastdiv}, {"post1", fastdiv}, {"post2", fastdiv}, {"post3", fastdiv},
	{"eps", f32}, {"nrows", i64}}

// normGroupParams are group_norm's parameters.
var normGroupParams = []Param{{"dst", tensor}, {"src", tensor}, {"cpg", i64}, {"eps", f32}}
