package kernels

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
// it defines or instantiates, sorted by name. Catalog is made from it.
var Families = []Family{
	{Name: "abi", Doc: "the kernel argument ABI, checked on the device",
		Kernels: []Kernel{
			{Name: "abi_echo",
				Doc: "writes every argument it received, and the layout of ternion_tensor and ternion_fastdiv as the compiler laid them out, to out (AbiEchoLen int64s)",
				Params: []Param{{"a", i32}, {"out", ptr}, {"t", tensor}, {"b", u32}, {"fd", fastdiv}, {"c", f32},
					{"d", i64}}},
			{Name: "abi_geometry",
				Doc:    "out[b*T + t] = b*1024 + t + 1 for every block b and thread t of the launch with b*T + t < n (b, t linear with x fastest, T threads per block): which threads ran",
				Params: []Param{{"out", ptr}, {"n", i64}}},
		}},
	{Name: "binary", Doc: "element-wise binary ops on contiguous f32 buffers",
		Templates: []Template{{Name: "{op}_f32", Body: "binary_f32<{op}>", Doc: "dst[i] = a[i] {op} b[i] for i < n",
			Params: []Param{{"dst", ptr}, {"a", ptr}, {"b", ptr}, {"n", i64}},
			Axes:   []Axis{{Name: "op", Values: []Value{{"add", "ternion_op_add"}, {"mul", "ternion_op_mul"}}}}}}},
	{Name: "cpy", Doc: "copies between tensors of one element type, any shapes of equal size and any strides (ggml's CPY, CONT, DUP)",
		Templates: []Template{{Name: "cpy_{T}", Body: "cpy<{T}>",
			Doc: "element i of src (in src's shape) to element i of dst (in dst's shape), {T} elements, for i < n = nelements(dst) < 2^31; sne/dne are fast divisions by ne[0], ne[1], ne[2] of src and dst",
			Params: []Param{{"dst", tensor}, {"src", tensor}, {"sne0", fastdiv}, {"sne1", fastdiv}, {"sne2", fastdiv},
				{"dne0", fastdiv}, {"dne1", fastdiv}, {"dne2", fastdiv}, {"n", i64}},
			Axes: []Axis{{Name: "T", Values: []Value{{"b8", "unsigned char"}, {"b16", "unsigned short"},
				{"b32", "ternion_u32"}, {"b64", "unsigned long long"}}}}}}},
	{Name: "fill", Doc: "set every element of a buffer to one value",
		Kernels: []Kernel{
			{Name: "fill_f32", Doc: "dst[i] = value for i < n",
				Params: []Param{{"dst", ptr}, {"value", f32}, {"n", i64}}},
			{Name: "fill_u32", Doc: "dst[i] = value bits for i < n (any 4-byte type)",
				Params: []Param{{"dst", ptr}, {"value", u32}, {"n", i64}}},
		}},
	{Name: "noop", Doc: "an empty kernel: the smallest launch, for overhead benchmarks",
		Kernels: []Kernel{{Name: "noop", Doc: "does nothing"}}},
	{Name: "scale", Doc: "ggml's SCALE op on contiguous f32",
		Kernels: []Kernel{{Name: "scale_f32", Doc: "dst[i] = src[i]*scale + bias for i < n",
			Params: []Param{{"dst", ptr}, {"src", ptr}, {"scale", f32}, {"bias", f32}, {"n", i64}}}}},
}

// AbiEchoLen is the number of int64s abi_echo writes: a, t.data, t.ne[4],
// t.nb[4], b, fd.mp, fd.l, fd.d, the bits of c, d, then sizeof, alignof and
// the offsets of ne and nb of ternion_tensor, and sizeof, alignof and the
// offsets of l and d of ternion_fastdiv.
const AbiEchoLen = 24
