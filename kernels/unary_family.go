package kernels

// unaryFamily is unary.cu: ggml's SCALE on 16-byte vectors, the UNARY ops
// and the other one-operand element-wise ops (SQR ... LEAKY_RELU), and GLU.
var unaryFamily = Family{Name: "unary",
	Doc: "element-wise ops of one tensor: SCALE on 16-byte vectors, ggml's UNARY ops, SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU, and the gated GLU ops",
	Kernels: []Kernel{{Name: "scale4_f32",
		Doc:    "dst[i] = src[i]*scale + bias for the n4 float4 of 16-byte aligned contiguous f32 buffers (grid-stride)",
		Params: []Param{{"dst", ptr}, {"src", ptr}, {"scale", f32}, {"bias", f32}, {"n4", i64}}},
		{Name: "acc_f32",
			Doc: "ACC in one pass: dst[i] = src0[i] + src1 at (i0..i3) where i - off = i0 + i1·s1 + i2·s2 + i3·s3 with every index inside src1's extent, for i < n < 2^31; dst, src0 packed f32 (dst may be src0), view strides s1..s3 in elements nested, src1 any strides (grid-stride)",
			Params: []Param{{"dst", ptr}, {"src0", ptr}, {"src1", tensor}, {"off", i64}, {"s1", fastdiv}, {"s2", fastdiv},
				{"s3", fastdiv}, {"n", i64}}}},
	Templates: []Template{
		{Name: "unary_{op}_{t}", Body: "unary_contig<{op}, {t}>",
			Doc:    "dst[i] = {op}(src[i]; p0, p1) for i < n, {t} buffers packed and 16-byte aligned (dst may be src), n / vector-length < 2^31: 16-byte vectors, four in flight per thread (streaming loads), then the n % vector-length tail",
			Params: []Param{{"dst", ptr}, {"src", ptr}, {"p0", f32}, {"p1", f32}, {"n", i64}},
			Axes:   []Axis{unaryOps, unaryTypes}},
		{Name: "unarys_{op}_{t}", Body: "unary_strided<{op}, {t}>",
			Doc: "element i of dst = {op}(element i of src; p0, p1) for i < n < 2^31, {t} tensors of one shape with any strides (dst may be src); ne0..ne2 divide by ne[0..2]",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"ne0", fastdiv}, {"ne1", fastdiv}, {"ne2", fastdiv},
				{"p0", f32}, {"p1", f32}, {"n", i64}},
			Axes: []Axis{unaryOps, unaryTypes}},
		{Name: "glu_{op}_{t}", Body: "glu_flat<{op}, {t}>",
			Doc: "dst[i] = act(x[i])·g[i] ({op}) for the n < 2^31 elements of dst, {t}; x and g in dst's shape with packed rows; nc, ne1, ne2 divide by ne[0], ne[1], ne[2]",
			Params: []Param{{"dst", tensor}, {"x", tensor}, {"g", tensor}, {"nc", fastdiv}, {"ne1", fastdiv},
				{"ne2", fastdiv}, {"n", i64}},
			Axes: []Axis{unaryGLUOps, unaryTypes}},
		{Name: "gluv_{op}_{t}", Body: "glu_vec<{op}, {t}>",
			Doc:    "glu_{op}_{t} on 16-byte vectors over evenly spaced rows: row r of dst, x and g at data + r·nb[1] (dims 2, 3 folded into dim 1), packed, 16-byte aligned and whole vectors long; ncv divides by the vectors of a row; nv < 2^31 vectors in all (two of x and of g in flight per thread, streaming loads)",
			Params: []Param{{"dst", tensor}, {"x", tensor}, {"g", tensor}, {"ncv", fastdiv}, {"nv", i64}},
			Axes:   []Axis{unaryGLUOps, unaryTypes}},
	},
}

// unaryOpNames are the element-wise ops of unary.cu, by kernel name (the
// lower-case ggml name); each is the functor unary_<name>.
var unaryOpNames = []string{"abs", "sgn", "neg", "step", "tanh", "elu", "relu", "sigmoid", "gelu", "gelu_quick",
	"silu", "hardswish", "hardsigmoid", "exp", "expm1", "softplus", "gelu_erf", "floor", "ceil", "round", "trunc",
	"leaky_relu", "sqr", "sqrt", "sin", "cos", "log", "clamp"}

// unaryOps is the op axis of the unary templates.
var unaryOps = func() Axis {
	a := Axis{Name: "op"}
	for _, n := range unaryOpNames {
		a.Values = append(a.Values, Value{n, "unary_" + n})
	}
	return a
}()

// unaryGLUOps are the GLU ops by kernel name and the functor of their activation.
var unaryGLUOps = Axis{Name: "op", Values: []Value{{"reglu", "unary_relu"}, {"geglu", "unary_gelu"},
	{"swiglu", "unary_silu"}, {"geglu_erf", "unary_gelu_erf"}, {"geglu_quick", "unary_gelu_quick"}}}

// unaryTypes are the storage types of the unary and GLU templates.
var unaryTypes = Axis{Name: "t", Values: []Value{{"f32", "float"}, {"f16", "ternion_f16"}}}
