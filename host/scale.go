package host

import (
	"math"
	"math/big"

	"github.com/ternion/ternion/vendorapi"
)

// scale.go implements kernels/scale.cu.

func init() {
	// scale_f32(dst, src, scale, bias, n): dst[i] = src[i]*scale + bias for i < n.
	// GPU compilers contract the expression into one fused multiply-add, so
	// fma32 rounds once, as fmaf does.
	register("scale_f32", &hostKernel{
		buffers: func(a *vendorapi.Args) []buffer {
			n := a.I64At(4)
			return []buffer{elems("dst", a.PtrAt(0), n, 4), elems("src", a.PtrAt(1), n, 4)}
		},
		block: func(m [][]byte, a *vendorapi.Args, b block) {
			dst, src := f32s(m[0]), f32s(m[1])
			s, c := a.F32At(2), a.F32At(3)
			b.gridStride(a.I64At(4), func(i int64) { dst[i] = fma32(src[i], s, c) })
		},
	})
}

// fma32 returns x*y + z rounded once to float32 (C's fmaf). The product is
// exact in float64; the sum is rounded to float64 and then to float32, which
// is wrong only when the float64 sum lands exactly halfway between two
// float32s (or in the subnormal range): those cases are summed exactly.
func fma32(x, y, z float32) float32 {
	p := float64(x) * float64(y)
	s := p + float64(z)
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	const halfway = 1 << 28 // float64 bits below float32 precision: exactly one half ulp
	if math.Abs(s) >= 0x1p-126 && math.Float64bits(s)&(1<<29-1) != halfway {
		return float32(s)
	}
	var bp, bz, sum big.Float
	bp.SetPrec(1100).SetFloat64(p)
	bz.SetPrec(1100).SetFloat64(float64(z))
	sum.SetPrec(1100).Add(&bp, &bz)
	f, _ := sum.Float32()
	if f == 0 {
		// An exact zero sum is +0 in round-to-nearest unless both terms are -0.
		if math.Signbit(p) && math.Signbit(float64(z)) {
			return float32(math.Copysign(0, -1))
		}
		if sum.Sign() == 0 {
			return 0
		}
	}
	return f
}
