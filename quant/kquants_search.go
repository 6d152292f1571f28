package quant

// The k-quant scale searches of ggml's reference quantizers
// (src/ggml-quants.c), without an importance matrix. Each picks a scale (and
// for the affine ones a minimum) for a small group of values and leaves the
// group's quants in L.

// makeSymQuants is make_qx_quants with rmse_type 1 and no importance
// weights (q6_K's group search): quants in [0, 2·nmax) meaning l - nmax,
// weights x², and 18 trial scales around nmax/max kept when they lower the
// weighted error. It returns the scale; values are scale·(L - nmax).
func makeSymQuants(nmax int, x []float32, L []int8) float32 {
	peak, amax := signedPeak(x)
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	quantize := func(iscale float32, i int) int {
		return max(-nmax, min(nmax-1, ggmlNearestInt(iscale*x[i])))
	}
	iscale := float32(-nmax) / peak
	var sumlx, suml2 float32
	for i, v := range x {
		l := quantize(iscale, i)
		L[i] = int8(l + nmax)
		w := v * v
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / peak
		sumlx, suml2 = 0, 0
		for i, v := range x {
			l := quantize(iscale, i)
			w := v * v
			sumlx += float32(float32(w*v) * float32(l))
			suml2 += float32(float32(w*float32(l)) * float32(l))
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i := range x {
				L[i] = int8(nmax + quantize(iscale, i))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// signedPeak returns the first value of largest magnitude in x and that
// magnitude, as ggml's scale searches scan (`ax > amax`).
func signedPeak(x []float32) (peak, amax float32) {
	for _, v := range x {
		if a := absf32(v); a > amax {
			amax, peak = a, v
		}
	}
	return peak, amax
}

// makeQ3Quants is make_q3_quants with do_rmse (q3_K's group search):
// quants l in [-nmax, nmax) at scale -nmax/max, then up to five passes that
// move single quants while that raises the x²-weighted fit
// (Σwxl)²/Σwl². L gets l + nmax; the return value is the fitted scale.
// An all-zero group leaves L at 0 (not nmax), as ggml does.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	peak, amax := signedPeak(x)
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	clamp := func(l int) int { return max(-nmax, min(nmax-1, l)) }
	iscale := float32(-nmax) / peak
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(ggmlNearestInt(iscale * v))
		L[i] = int8(l)
		w := v * v
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if !(slx > 0) {
				continue
			}
			sl2 := suml2 - float32(float32(w*li)*li)
			newL := clamp(ggmlNearestInt(v * sl2 / slx))
			if newL == int(L[i]) {
				continue
			}
			nl := float32(newL)
			slx += float32(float32(w*v) * nl)
			sl2 += float32(float32(w*nl) * nl)
			if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
				L[i], sumlx, suml2 = int8(newL), slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// affineSearch holds make_qkx2_quants' knobs: the trial inverse scales are
// (rmin + rdelta·is + nmax)/(max - min) for is in [0, nstep]; absError picks
// the absolute error over the squared one (ggml's use_mad).
type affineSearch struct {
	nmax         int
	rmin, rdelta float32
	nstep        int
	absError     bool
}

// makeAffineQuants is make_qkx2_quants: quants L in [0, nmax] with
// value = scale·L - min (min >= 0 returned as the second result), fitted by
// weighted least squares over the trial scales of s and kept when the
// weighted error drops. laux is scratch of len(x).
func makeAffineQuants(s affineSearch, x, weights []float32, L, laux []uint8) (scale, negMin float32) {
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L[:len(x)])
		return 0, -lo
	}
	errorOf := func(scale, lo float32, q []uint8) float32 {
		var e float32
		for i, v := range x {
			diff := float32(float32(scale*float32(q[i]))+lo) - v
			if s.absError {
				diff = absf32(diff)
			} else {
				diff *= diff
			}
			e += float32(weights[i] * diff)
		}
		return e
	}
	quantize := func(iscale float32, q []uint8) {
		for i, v := range x {
			q[i] = uint8(max(0, min(s.nmax, ggmlNearestInt(iscale*(v-lo)))))
		}
	}
	iscale := float32(s.nmax) / (hi - lo)
	scale = 1 / iscale
	quantize(iscale, L)
	bestError := errorOf(scale, lo, L)
	if s.nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= s.nstep; is++ {
		iscale = (float32(s.rmin+float32(s.rdelta*float32(is))) + float32(s.nmax)) / (hi - lo)
		quantize(iscale, laux)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			w, l := weights[i], float32(laux[i])
			sumL += float32(w * l)
			sumL2 += float32(float32(w*l) * l)
			sumXL += float32(float32(w*l) * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(D > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if e := errorOf(thisScale, thisMin, laux); e < bestError {
			copy(L, laux[:len(x)])
			bestError, scale, lo = e, thisScale, thisMin
		}
	}
	return scale, -lo
}
