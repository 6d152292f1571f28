package kernels

// ropeFamily is rope.cu: ggml's ROPE in its four modes, f32 and f16.
var ropeFamily = Family{Name: "rope", Doc: "ggml's ROPE: rotary position embedding (normal, NeoX, multi-section, vision; frequency factors; YaRN)",
	Templates: []Template{{Name: "rope_{mode}_{t}", Body: "rope<{mode}, {t}>", LaunchBounds: 256,
		Doc: "dst = src rotated by position: mode {mode}, {t} src and dst of one shape, any strides with nb[0] the element size; " +
			"block (x: pairs of a row, y: heads), grid (x: tokens ne2*ne3 < 2^31, y: head groups); pos i32 (ne2, or 4*ne2 in multi and vision); " +
			"ff f32 frequency factors, one per rotated pair, or 0; ne2 divides the token index; sec0..sec3 the sections (multi, vision); " +
			"theta = pos * 2^(e*log2_theta_scale) / ff[p], YaRN ramp between low and high when ext_factor != 0, cos and sin scaled by mscale",
		Params: []Param{{"dst", tensor}, {"src", tensor}, {"pos", ptr}, {"ff", ptr}, {"ne2", fastdiv}, {"n_dims", i32},
			{"sec0", i32}, {"sec1", i32}, {"sec2", i32}, {"sec3", i32}, {"log2_theta_scale", f32}, {"freq_scale", f32},
			{"ext_factor", f32}, {"mscale", f32}, {"low", f32}, {"high", f32}},
		// mode values are rope.cu's mode numbers (its #defines of NORM, NEOX, MULTI, VISION).
		Axes: []Axis{{Name: "mode", Values: []Value{{"norm", "0"}, {"neox", "1"}, {"multi", "2"}, {"vision", "3"}}},
			{Name: "t", Values: []Value{{"f32", "float"}, {"f16", "ternion_f16"}}}}},
		{Name: "rope_flat_{mode}_{t}", Body: "rope_flat<{mode}, {t}>", LaunchBounds: 256,
			Doc: "the contiguous fast path of rope_{mode}_{t} (normal and NeoX): dst and src contiguous, one shape, 8-byte aligned; " +
				"1D grid-stride launch over nunits < 2^31 units, 4 units a thread blockDim.x apart; a unit is the 8-byte vector " +
				"(E = 8/sizeof(t) elements) at column u = q % upr of row q / upr (normal: elements u*E.., hv = 0), in NeoX " +
				"u < hv = n_dims/2/E pairs its vector with the one n_dims/2 further, u >= hv copies the vector at (u+hv)*E; " +
				"rows are ne0 = (upr+hv)*E elements, token = row / ne1, pos[token % ne2]; n_dims a multiple of E (normal) " +
				"or 2E (NeoX); other params as rope_{mode}_{t}",
			Params: []Param{{"dst", ptr}, {"src", ptr}, {"pos", ptr}, {"ff", ptr}, {"nunits", i32}, {"upr", fastdiv},
				{"hv", i32}, {"ne1", fastdiv}, {"ne2", fastdiv}, {"n_dims", i32}, {"log2_theta_scale", f32},
				{"freq_scale", f32}, {"ext_factor", f32}, {"mscale", f32}, {"low", f32}, {"high", f32}},
			Axes: []Axis{{Name: "mode", Values: []Value{{"norm", "0"}, {"neox", "1"}}},
				{Name: "t", Values: []Value{{"f32", "float"}, {"f16", "ternion_f16"}}}}}},
}
