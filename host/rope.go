package host

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// rope.go implements kernels/rope.cu.

// ropeParams are rope.cu's scalar arguments (after dst, src, pos, ff).
type ropeParams struct {
	ne2                                                     vendorapi.FastDiv
	nDims                                                   int
	sec                                                     [4]int
	log2ThetaScale, freqScale, extFactor, mscale, low, high float32
}

func ropeParamsOf(a *vendorapi.Args) ropeParams {
	return ropeParams{ne2: a.FastDivAt(4), nDims: int(a.I32At(5)),
		sec:            [4]int{int(a.I32At(6)), int(a.I32At(7)), int(a.I32At(8)), int(a.I32At(9))},
		log2ThetaScale: a.F32At(10), freqScale: a.F32At(11), extFactor: a.F32At(12), mscale: a.F32At(13),
		low: a.F32At(14), high: a.F32At(15)}
}

// ropeYarn is rope.cu's ternion_rope_yarn: cos and sin of pair p's angle.
func ropeYarn(thetaExtrap float32, p int, q *ropeParams) (c, s float32) {
	theta := q.freqScale * thetaExtrap
	if q.extFactor != 0 {
		y := (float32(p) - q.low) / max(0.001, q.high-q.low)
		mix := (1 - min(1, max(0, y))) * q.extFactor
		theta = theta*(1-mix) + thetaExtrap*mix
	}
	return float32(math.Cos(float64(theta))) * q.mscale, float32(math.Sin(float64(theta))) * q.mscale
}

// ropeAngle is the extrapolated angle of pair p of token i2 (position and
// power of theta_scale by mode, over the pair's frequency factor).
func ropeAngle(mode string, pos []int32, ff []float32, i2 uint32, p int, q *ropeParams) float32 {
	e, k := p, 0
	if mode == "multi" || mode == "vision" {
		sector := p % (q.sec[0] + q.sec[1] + q.sec[2] + q.sec[3])
		start := 0
		for k < 3 && sector >= start+q.sec[k] {
			start += q.sec[k]
			k++
		}
		if mode == "vision" {
			e = sector - start
		}
	}
	theta := float32(pos[int(i2)+k*int(q.ne2.D)]) * float32(math.Exp2(float64(float32(e)*q.log2ThetaScale)))
	if ff != nil {
		theta /= ff[p]
	}
	return theta
}

// ropeI32s views b as int32s; b's address is 4-byte aligned (checked by span).
func ropeI32s(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func init() {
	// rope_{mode}_{t}(dst, src, pos, ff, ne2, n_dims, sec0..sec3,
	// log2_theta_scale, freq_scale, ext_factor, mscale, low, high).
	registerTemplate("rope", func(k kernels.Kernel) (*hostKernel, error) {
		t, err := elemTypeOf(k.Name, k.Bind, "t")
		if err != nil {
			return nil, err
		}
		mode := k.Bind["mode"]
		switch mode {
		case "norm", "neox", "multi", "vision":
		default:
			return nil, fmt.Errorf("kernel %s: mode %q has no host implementation", k.Name, mode)
		}
		multi := mode == "multi" || mode == "vision"
		rotated := func(nDims int) int {
			if mode == "vision" {
				return nDims
			}
			return nDims / 2
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				dst := a.TensorAt(0)
				npos := dst.Ne[2]
				if multi {
					npos *= 4
				}
				nff := int64(0)
				if a.PtrAt(3) != 0 {
					nff = int64(rotated(int(a.I32At(5))))
				}
				return []buffer{tensorBuf("dst", dst, t.size), tensorBuf("src", a.TensorAt(1), t.size),
					elems("pos", a.PtrAt(2), npos, 4), elems("ff", a.PtrAt(3), nff, 4)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				dst, src := a.TensorAt(0), a.TensorAt(1)
				q := ropeParamsOf(a)
				pos := ropeI32s(m[2])
				var ff []float32
				if a.PtrAt(3) != 0 {
					ff = f32s(m[3])
				}
				ch := b.idx.X
				i3 := q.ne2.Div(ch)
				i2 := ch - i3*q.ne2.D
				xo := int64(i2)*src.Nb[2] + int64(i3)*src.Nb[3]
				do := int64(i2)*dst.Nb[2] + int64(i3)*dst.Nb[3]
				npairs, nrot := int(dst.Ne[0]/2), rotated(q.nDims)
				gap := int64(nrot)
				// heads applies (c, s) to elements j0, j1 of every row the
				// thread at row ty of the block visits (copy: unchanged).
				heads := func(ty int64, j0, j1 int64, copy bool, c, s float32) {
					step := int64(b.grid.Y) * int64(b.dim.Y)
					for i1 := int64(b.idx.Y)*int64(b.dim.Y) + ty; i1 < dst.Ne[1]; i1 += step {
						sx, dx := m[1][xo+i1*src.Nb[1]:], m[0][do+i1*dst.Nb[1]:]
						x0, x1 := t.load(sx[j0*src.Nb[0]:]), t.load(sx[j1*src.Nb[0]:])
						y0, y1 := x0, x1
						if !copy {
							y0, y1 = x0*c-x1*s, x0*s+x1*c
						}
						t.store(dx[j0*dst.Nb[0]:], y0)
						t.store(dx[j1*dst.Nb[0]:], y1)
					}
				}
				for tx := range int(b.dim.X) {
					for p := tx; p < npairs; p += int(b.dim.X) {
						var c, s float32
						copy := p >= nrot
						if !copy {
							c, s = ropeYarn(ropeAngle(mode, pos, ff, i2, p, &q), p, &q)
						}
						j0, j1 := int64(p), int64(p)+gap
						if copy || mode == "norm" {
							j0, j1 = 2*int64(p), 2*int64(p)+1
						}
						for ty := range int64(b.dim.Y) {
							heads(ty, j0, j1, copy, c, s)
						}
					}
				}
			},
		}, nil
	})
}

// ropeFlatVPT is rope.cu's TERNION_ROPE_FLAT_VPT.
const ropeFlatVPT = 4

func init() {
	// rope_flat_{mode}_{t}(dst, src, pos, ff, nunits, upr, hv, ne1, ne2,
	// n_dims, log2_theta_scale, freq_scale, ext_factor, mscale, low, high).
	registerTemplate("rope_flat", func(k kernels.Kernel) (*hostKernel, error) {
		t, err := elemTypeOf(k.Name, k.Bind, "t")
		if err != nil {
			return nil, err
		}
		mode := k.Bind["mode"]
		if mode != "norm" && mode != "neox" {
			return nil, fmt.Errorf("kernel %s: mode %q has no host implementation", k.Name, mode)
		}
		neox := mode == "neox"
		e := int64(8 / t.size)
		// q: the angle's parameters as rope_{mode}_{t} takes them.
		params := func(a *vendorapi.Args) (nunits int64, upr vendorapi.FastDiv, hv int64, ne1 vendorapi.FastDiv,
			q ropeParams) {
			q = ropeParams{ne2: a.FastDivAt(8), nDims: int(a.I32At(9)), log2ThetaScale: a.F32At(10),
				freqScale: a.F32At(11), extFactor: a.F32At(12), mscale: a.F32At(13), low: a.F32At(14), high: a.F32At(15)}
			return int64(a.I32At(4)), a.FastDivAt(5), int64(a.I32At(6)), a.FastDivAt(7), q
		}
		return &hostKernel{
			buffers: func(a *vendorapi.Args) []buffer {
				nunits, upr, hv, ne1, q := params(a)
				// Whole rows of (upr + hv) vectors of 8 bytes.
				vecs := int64(0)
				if upr.D > 0 && nunits > 0 {
					vecs = nunits / int64(upr.D) * (int64(upr.D) + hv)
				}
				ntok := int64(0)
				if ne1.D > 0 && upr.D > 0 {
					ntok = min(nunits/int64(upr.D)/int64(ne1.D), int64(q.ne2.D))
				}
				nff := int64(0)
				if a.PtrAt(3) != 0 {
					nff = int64(q.nDims / 2)
				}
				return []buffer{elems("dst", a.PtrAt(0), vecs, 8), elems("src", a.PtrAt(1), vecs, 8),
					elems("pos", a.PtrAt(2), ntok, 4), elems("ff", a.PtrAt(3), nff, 4)}
			},
			block: func(m [][]byte, a *vendorapi.Args, b block) {
				nunits, upr, hv, ne1, q := params(a)
				pos := ropeI32s(m[2])
				var ff []float32
				if a.PtrAt(3) != 0 {
					ff = f32s(m[3])
				}
				sz := int64(t.size)
				ne0 := (int64(upr.D) + hv) * e
				half := int64(q.nDims / 2)
				chunk := int64(b.dim.X) * ropeFlatVPT
				// rotate applies pair j's angle of the unit at element e0 of
				// the row of token tok to elements i0, i1 (byte offsets).
				rotate := func(tok uint32, p int, i0, i1 int64) {
					i3 := q.ne2.Div(tok)
					theta := float32(pos[tok-i3*q.ne2.D]) * float32(math.Exp2(float64(float32(p)*q.log2ThetaScale)))
					if ff != nil {
						theta /= ff[p]
					}
					c, s := ropeYarn(theta, p, &q)
					x0, x1 := t.load(m[1][i0:]), t.load(m[1][i1:])
					t.store(m[0][i0:], x0*c-x1*s)
					t.store(m[0][i1:], x0*s+x1*c)
				}
				for base := int64(b.idx.X) * chunk; base < nunits; base += int64(b.grid.X) * chunk {
					for tx := range int64(b.dim.X) {
						for k := range int64(ropeFlatVPT) {
							qi := base + k*int64(b.dim.X) + tx
							if qi >= nunits {
								continue
							}
							row := int64(upr.Div(uint32(qi)))
							u := qi - row*int64(upr.D)
							e0 := u * e
							if u >= hv {
								e0 += hv * e
							}
							off := (row*ne0 + e0) * sz
							if e0 >= int64(q.nDims) {
								copy(m[0][off:off+8], m[1][off:off+8])
								continue
							}
							tok := ne1.Div(uint32(row))
							if neox {
								for j := range e {
									rotate(tok, int(e0+j), off+j*sz, off+(j+half)*sz)
								}
							} else {
								for j := range e / 2 {
									rotate(tok, int(e0/2+j), off+2*j*sz, off+(2*j+1)*sz)
								}
							}
						}
					}
				}
			},
		}, nil
	})
}
