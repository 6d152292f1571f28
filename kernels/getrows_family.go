package kernels

// getrowsFamily is kernels/getrows.cu: ggml's GET_ROWS.
var getrowsFamily = Family{Name: "getrows", Doc: "ggml's GET_ROWS: rows of src0 picked by the i32 indices of src1, to f32 (i32 rows copied)",
	Kernels: []Kernel{{Name: "getrows4_b32",
		Doc: "getrows for 4-byte rows (f32 or i32) packed in src0 and dst, ne0 % 4 == 0, rows 16-byte aligned: 16-byte copies",
		Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ne10", fastdiv}, {"ne11", fastdiv},
			{"nrows", i64}}}},
	Templates: []Template{{Name: "getrows_{t}", Body: "getrows<{t}>",
		Doc: "dst row (i10, i11, i12) = src0 row (src1[i10, i11, i12], i11, i12) of {t} converted to f32 (i32: copied), any strides; an index out of range gives zeros; rows split by ne10, ne11; nrows < 2^31",
		Params: []Param{{"dst", tensor}, {"src0", tensor}, {"src1", tensor}, {"ne10", fastdiv}, {"ne11", fastdiv},
			{"nrows", i64}},
		Axes: []Axis{{Name: "t", Values: []Value{{"f32", "float"}, {"f16", "ternion_f16"}, {"bf16", "ternion_bf16s"},
			{"i32", "ternion_u32"}}}}}},
}
