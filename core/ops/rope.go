package ops

import (
	"math"

	"github.com/ternion/ternion/core/graph"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/vendorapi"
)

// rope.go plans ROPE (kernels/rope.cu).

// ropeKernelModes names rope.cu's mode axis by graph mode.
var ropeKernelModes = map[graph.RoPEMode]string{graph.RoPENormal: "norm", graph.RoPENeoX: "neox",
	graph.RoPEMulti: "multi", graph.RoPEVision: "vision"}

func init() { register(graph.OpRope, impl{supports: ropeSupports, run: ropeRun}) }

func ropeSupports(n *graph.Tensor, _ vendorapi.Props) string {
	a, pos, ff := n.Src(0), n.Src(1), n.Src(2)
	_, known := ropeKernelModes[graph.RoPEMode(n.ParamI32(2))]
	switch {
	case a.Type() != tensor.F32 && a.Type() != tensor.F16:
		return "ROPE runs on f32 and f16"
	case n.Type() != a.Type():
		return "dst and src0 must have one type"
	case !known:
		return "unknown ROPE mode"
	case a.Layout().Nb[0] != a.Type().BlockBytes():
		return "src0's elements must be packed along dim 0 (nb[0] = element size)"
	case !pos.Layout().IsContiguous():
		return "positions must be contiguous"
	case ff != nil && !ff.Layout().IsContiguous():
		return "frequency factors must be contiguous"
	case n.Ne()[2]*n.Ne()[3] >= math.MaxInt32 || n.Ne()[1] >= math.MaxInt32 || n.Ne()[0] >= math.MaxInt32:
		return "more than 2^31 tokens, heads or head elements"
	}
	return ""
}

// ropeLog2ThetaScale is log2(freq_base^(-2/n_dims)), the per-pair step of
// the angle's exponent (ggml's theta_scale, as a power of two).
func ropeLog2ThetaScale(freqBase float32, nDims int) float32 {
	return float32(-2 / float64(nDims) * math.Log2(float64(freqBase)))
}

// ropeCorrDims is ggml_rope_yarn_corr_dims in float32: the first and last
// pair of YaRN's ramp between extrapolated and interpolated angles.
func ropeCorrDims(nDims, nCtxOrig int, freqBase, betaFast, betaSlow float32) (low, high float32) {
	dim := func(rot float32) float32 {
		return float32(nDims) * float32(math.Log(float64(float32(nCtxOrig)/(rot*2*math.Pi)))) /
			(2 * float32(math.Log(float64(freqBase))))
	}
	low = max(0, float32(math.Floor(float64(dim(betaFast)))))
	high = min(float32(nDims-1), float32(math.Ceil(float64(dim(betaSlow)))))
	return low, high
}

// ropeGeometry is rope.cu's launch: threads along x over the pairs of a row
// (a power of two up to 256), along y over heads (256 threads a block);
// blocks along x one per token, along y over head groups, as few as keep at
// least 2·elemSize blocks per multiprocessor (each thread's cos/sin then
// serves more heads, and keeps more loads in flight; f16 takes twice the
// heads per thread of f32 for as many bytes), at most 8 heads a thread.
func ropeGeometry(npairs, ne1, tokens, elemSize int64, sms int) (grid, block vendorapi.Dim3) {
	bx := int64(1)
	for bx < npairs && bx < 256 {
		bx *= 2
	}
	by := int64(256) / bx
	for by > 1 && by/2 >= ne1 {
		by /= 2
	}
	groups := (ne1 + by - 1) / by
	want := 2 * elemSize * int64(max(sms, 1))
	gy := groups
	for gy > 1 {
		half := (gy + 1) / 2
		if tokens*half < want || (groups+half-1)/half > 8 {
			break
		}
		gy = half
	}
	gy = min(gy, 65535)
	return vendorapi.Dim3{X: uint32(tokens), Y: uint32(gy)}, vendorapi.Dim3{X: uint32(bx), Y: uint32(by)}
}

// rope_flat's launch: threads a block and units (8-byte vectors) a thread
// (kernels/rope.cu's TERNION_ROPE_FLAT_VPT); on the H200 256×4 was the
// fastest measured for f32 and within noise of the best for f16
// (bench/experiments/rope.cu).
const (
	ropeFlatTPB = 256
	ropeFlatVPT = 4
)

// ropeFlatUnits reports whether rope_flat runs n (normal or NeoX, dst and
// src contiguous at 8-byte aligned addresses dst and src, the rotated
// dimensions whole vectors: n_dims a multiple of E = 8/elemsize, of 2E in
// NeoX, fewer than 2^31 units) and its units: upr a row's, hv NeoX's vectors
// of the first rotated half (0 in normal mode).
func ropeFlatUnits(n, a *graph.Tensor, mode graph.RoPEMode, nDims int, dst, src vendorapi.DevicePtr) (units, upr,
	hv int64, ok bool) {
	e := 8 / n.Type().BlockBytes()
	ne0 := n.Ne()[0]
	switch {
	case mode != graph.RoPENormal && mode != graph.RoPENeoX,
		!n.Layout().IsContiguous() || !a.Layout().IsContiguous(),
		dst%8 != 0 || src%8 != 0 || ne0%e != 0 || n.Layout().Empty():
		return 0, 0, 0, false
	case mode == graph.RoPENormal && int64(nDims)%e == 0:
	case mode == graph.RoPENeoX && int64(nDims)%(2*e) == 0:
		hv = int64(nDims) / 2 / e
	default:
		return 0, 0, 0, false
	}
	upr = ne0/e - hv
	units = n.Layout().Rows() * upr
	if units >= math.MaxInt32 || n.Layout().Elements() >= math.MaxInt32 || upr <= 0 {
		return 0, 0, 0, false
	}
	return units, upr, hv, true
}

// ropeRun launches rope_flat_{mode}_{t} where ropeFlatUnits allows, else
// rope_{mode}_{t}: the angle's constants (theta_scale,
// YaRN's ramp ends and magnitude) are computed here once, as ggml-cuda
// computes them on the host.
func ropeRun(d Device, n *graph.Tensor) error {
	a, pos, ff := n.Src(0), n.Src(1), n.Src(2)
	ds, err := descs(n, a, pos)
	if err != nil {
		return err
	}
	var ffp vendorapi.DevicePtr
	if ff != nil {
		fds, err := descs(ff)
		if err != nil {
			return err
		}
		ffp = fds[0].Data
	}
	nDims, mode, nCtxOrig := int(n.ParamI32(1)), graph.RoPEMode(n.ParamI32(2)), int(n.ParamI32(4))
	freqBase, freqScale, extFactor, attnFactor := n.ParamF32(5), n.ParamF32(6), n.ParamF32(7), n.ParamF32(8)
	betaFast, betaSlow := n.ParamF32(9), n.ParamF32(10)
	low, high := ropeCorrDims(nDims, nCtxOrig, freqBase, betaFast, betaSlow)
	mscale := attnFactor
	if extFactor != 0 {
		mscale *= 1 + 0.1*float32(math.Log(float64(1/freqScale)))
	}
	ne := n.Ne()
	t := "f32"
	if n.Type() == tensor.F16 {
		t = "f16"
	}
	if units, upr, hv, ok := ropeFlatUnits(n, a, mode, nDims, ds[0].Data, ds[1].Data); ok {
		chunks := (units + ropeFlatTPB*ropeFlatVPT - 1) / (ropeFlatTPB * ropeFlatVPT)
		args := d.Args().Ptr(ds[0].Data).Ptr(ds[1].Data).Ptr(ds[2].Data).Ptr(ffp).I32(int32(units)).FastDiv(fd(upr)).
			I32(int32(hv)).FastDiv(fd(ne[1])).FastDiv(fd(ne[2])).I32(int32(nDims))
		args.F32(ropeLog2ThetaScale(freqBase, nDims)).F32(freqScale).F32(extFactor).F32(mscale).F32(low).F32(high)
		return launch(d, "rope_flat_"+ropeKernelModes[mode]+"_"+t, vendorapi.Dim3{X: uint32(chunks), Y: 1, Z: 1},
			vendorapi.Dim3{X: ropeFlatTPB, Y: 1, Z: 1}, 0, args)
	}
	grid, block := ropeGeometry(ne[0]/2, ne[1], ne[2]*ne[3], n.Type().BlockBytes(), d.Props().SMs)
	args := d.Args().Tensor(ds[0]).Tensor(ds[1]).Ptr(ds[2].Data).Ptr(ffp).FastDiv(fd(ne[2])).I32(int32(nDims))
	for i := range 4 {
		args.I32(n.ParamI32(11 + i))
	}
	args.F32(ropeLog2ThetaScale(freqBase, nDims)).F32(freqScale).F32(extFactor).F32(mscale).F32(low).F32(high)
	return launch(d, "rope_"+ropeKernelModes[mode]+"_"+t, grid, block, 0, args)
}
