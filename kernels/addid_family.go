package kernels

// addidFamily is kernels/addid.cu: ggml's ADD_ID.
var addidFamily = Family{Name: "addid", Doc: "ggml's ADD_ID: a mixture-of-experts layer's per-expert bias rows added by index",
	Kernels: []Kernel{{Name: "add_id_f32",
		Doc: "dst[i0, i1, i2] = a[i0, i1, i2] + b[i0, ids[i1, i2]] (f32, any strides; ids i32); n = ne0·ne1·ne2 < 2^31 elements, ne0 and ne1 divide them; an index out of range gives NaN and sets bit 2 of *flag when flag is not null",
		Params: []Param{{"dst", tensor}, {"a", tensor}, {"b", tensor}, {"ids", tensor}, {"ne0", fastdiv}, {"ne1", fastdiv},
			{"n", i64}, {"flag", ptr}}}},
}
