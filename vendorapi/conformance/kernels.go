package conformance

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// kernelCase is a catalog kernel with a Go reference: it makes the inputs
// (uploaded to device memory by the suite) and scalar arguments, and says
// which results are acceptable for element i.
type kernelCase struct {
	inputs int // f32 input arrays
	// scalars returns the kernel's value arguments between the pointers and n.
	scalars func(r *rand.Rand) []vendorapi.Arg
	// want returns the acceptable bit patterns of dst[i].
	want func(in [][]float32, sc []vendorapi.Arg, i int) []uint32
}

func f32Want(v float32) []uint32 { return []uint32{math.Float32bits(v)} }

// fmaf returns x*y+z rounded once to float32, as C's fmaf and a GPU's fused
// multiply-add do. float32(math.FMA(...)) would round twice (to float64, then
// to float32) and differ when the float64 sum lands exactly halfway between
// two float32s, so finite inputs are summed exactly in a big.Float (1100 bits
// hold any float32 product plus any float32) and rounded once to nearest even.
func fmaf(x, y, z float32) float32 {
	if math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) ||
		x != x || y != y || z != z {
		return float32(math.FMA(float64(x), float64(y), float64(z))) // infinity or NaN: no rounding involved
	}
	const prec = 1100
	var p, sum big.Float
	p.SetPrec(prec).SetFloat64(float64(x))
	p.Mul(&p, new(big.Float).SetFloat64(float64(y)))
	sum.SetPrec(prec).Add(&p, new(big.Float).SetFloat64(float64(z)))
	f, _ := sum.Float32()
	return f
}

// kernelCases are the catalog kernels with an obvious reference.
var kernelCases = map[string]kernelCase{
	"fill_f32": {
		scalars: func(r *rand.Rand) []vendorapi.Arg { return []vendorapi.Arg{vendorapi.F32Arg(randValue(r))} },
		want:    func(_ [][]float32, sc []vendorapi.Arg, _ int) []uint32 { return f32Want(sc[0].F32()) },
	},
	"fill_u32": {
		scalars: func(r *rand.Rand) []vendorapi.Arg {
			return []vendorapi.Arg{vendorapi.U32Arg(1 + r.Uint32N(math.MaxUint32))}
		},
		want: func(_ [][]float32, sc []vendorapi.Arg, _ int) []uint32 { return []uint32{sc[0].U32()} },
	},
	"add_f32": {
		inputs:  2,
		scalars: func(*rand.Rand) []vendorapi.Arg { return nil },
		want:    func(in [][]float32, _ []vendorapi.Arg, i int) []uint32 { return f32Want(in[0][i] + in[1][i]) },
	},
	"mul_f32": {
		inputs:  2,
		scalars: func(*rand.Rand) []vendorapi.Arg { return nil },
		want:    func(in [][]float32, _ []vendorapi.Arg, i int) []uint32 { return f32Want(in[0][i] * in[1][i]) },
	},
	"scale_f32": {
		inputs: 1,
		scalars: func(r *rand.Rand) []vendorapi.Arg {
			return []vendorapi.Arg{vendorapi.F32Arg(4 * randValue(r)), vendorapi.F32Arg(randValue(r))}
		},
		// A compiler may contract src*scale+bias into one fused multiply-add
		// (nvcc does by default): both roundings are exact answers.
		want: func(in [][]float32, sc []vendorapi.Arg, i int) []uint32 {
			x, a, b := in[0][i], sc[0].F32(), sc[1].F32()
			split := float32(x*a) + b // the conversion forces the product's rounding
			return []uint32{math.Float32bits(split), math.Float32bits(fmaf(x, a, b))}
		},
	},
}

// kernels runs every catalog kernel with a reference on random data, checks
// argument validation, unknown kernels and the shared memory attribute.
func (s *suite) kernels(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		for _, k := range kernels.Catalog {
			t.Run(k.Name, func(t *testing.T) {
				f := s.kernel(t, dev, k.Name)
				c, ok := kernelCases[k.Name]
				if !ok {
					t.Skipf("%s loads; the conformance suite has no reference for it", k.Name)
				}
				for _, geo := range []struct {
					name        string
					grid, block vendorapi.Dim3
				}{
					{"grid smaller than the data", smallGrid, smallBlock},
					{"zero grid and block components count as 1", vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 32}},
					{"one thread", vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1}},
				} {
					t.Run(geo.name, func(t *testing.T) { s.runKernel(t, dev, f, k, c, geo.grid, geo.block) })
				}
			})
		}
		t.Run("wrong arguments are refused before launch", func(t *testing.T) { s.wrongArgs(t, dev) })
		t.Run("unknown kernel is an error", func(t *testing.T) {
			_, err := s.d.Kernel(dev, "no_such")
			s.checkError(t, `Kernel(dev, "no_such")`, err, dev, vendorapi.ErrInvalidValue, vendorapi.ErrNoKernel)
			_, err = s.d.Kernel(s.n, "fill_f32")
			s.checkError(t, "Kernel(bad device)", err, anyDevice, vendorapi.ErrInvalidValue)
		})
		t.Run("max dynamic shared memory", func(t *testing.T) { s.sharedMem(t, dev) })
	})
}

// runKernel launches k on random data into the middle of a larger buffer
// and checks every element against the reference and the sentinels around it.
func (s *suite) runKernel(t *testing.T, dev int, f vendorapi.Function, k kernels.Kernel, c kernelCase, grid, block vendorapi.Dim3) {
	r := newRand(t)
	const n, pre, post = 1000, 5, 37 // elements; sentinel elements before and after
	st := s.stream(t, dev)
	in := make([][]float32, c.inputs)
	args := make([]vendorapi.Arg, 0, len(k.Params))
	before := randBytes(r, 4*(pre+n+post))
	dst := s.upload(t, dev, before)
	args = append(args, vendorapi.PtrArg(dst.Add(4*pre)))
	for j := range in {
		in[j] = randF32(r, n)
		args = append(args, vendorapi.PtrArg(s.upload(t, dev, le.FromF32(in[j]))))
	}
	sc := c.scalars(r)
	args = append(args, sc...)
	args = append(args, vendorapi.I64Arg(n))
	require.NoError(t, vendorapi.CheckArgs(k.Name, k.Kinds(), args), "the suite's own arguments")
	require.NoError(t, s.d.Launch(f, grid, block, 0, st, args), "Launch(%s, grid %v, block %v)", k.Name, grid, block)
	s.sync(t, st)
	got := s.download(t, dev, dst, len(before))
	checkBytes(t, "sentinel elements before dst", got[:4*pre], before[:4*pre])
	checkBytes(t, "sentinel elements after dst[n-1]", got[4*(pre+n):], before[4*(pre+n):])
	res := le.ToF32(got[4*pre : 4*(pre+n)])
	bad := 0
	for i, v := range res {
		want := c.want(in, sc, i)
		if !containsBits(want, math.Float32bits(v)) {
			if bad == 0 {
				t.Errorf("%s: dst[%d] = %v (%#08x), want %#08x", k.Name, i, v, math.Float32bits(v), want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", k.Name, bad, n)
	}
}

func containsBits(set []uint32, v uint32) bool {
	for _, w := range set {
		if w == v {
			return true
		}
	}
	return false
}

// wrongArgs launches add_f32 with bad argument lists: each is refused with
// ErrInvalidValue, nothing runs, and the device works afterwards.
func (s *suite) wrongArgs(t *testing.T, dev int) {
	r := newRand(t)
	const n = 256
	st := s.stream(t, dev)
	f := s.kernel(t, dev, "add_f32")
	before := randBytes(r, 4*n)
	dst := s.upload(t, dev, before)
	a := s.upload(t, dev, le.FromF32(randF32(r, n)))
	p, nArg := vendorapi.PtrArg, vendorapi.I64Arg(n)
	for _, c := range []struct {
		name string
		args []vendorapi.Arg
	}{
		{"no arguments", nil},
		{"one argument short", []vendorapi.Arg{p(dst), p(a), p(a)}},
		{"one argument too many", []vendorapi.Arg{p(dst), p(a), p(a), nArg, nArg}},
		{"int32 count where int64 is declared", []vendorapi.Arg{p(dst), p(a), p(a), vendorapi.I32Arg(n)}},
		{"float where a pointer is declared", []vendorapi.Arg{p(dst), vendorapi.F32Arg(1), p(a), nArg}},
		{"zero kind", []vendorapi.Arg{p(dst), p(a), {Bits: uint64(a)}, nArg}},
	} {
		err := s.d.Launch(f, smallGrid, smallBlock, 0, st, c.args)
		s.checkError(t, "Launch with "+c.name, err, dev, vendorapi.ErrInvalidValue)
	}
	s.sync(t, st)
	checkBytes(t, "refused launches wrote nothing", s.download(t, dev, dst, 4*n), before)
	s.healthy(t, dev)
}

// sharedMem checks SetMaxDynamicSharedMemory within and beyond the device's limits.
func (s *suite) sharedMem(t *testing.T, dev int) {
	p, err := s.d.Props(dev)
	require.NoError(t, err, "Props")
	f := s.kernel(t, dev, "fill_f32")
	require.NoError(t, s.d.SetMaxDynamicSharedMemory(f, 0), "SetMaxDynamicSharedMemory(f, 0)")
	require.NoError(t, s.d.SetMaxDynamicSharedMemory(f, p.SharedMemPerBlock), "SetMaxDynamicSharedMemory(f, SharedMemPerBlock)")
	require.NoError(t, s.d.SetMaxDynamicSharedMemory(f, p.SharedMemPerBlockOptin), "SetMaxDynamicSharedMemory(f, SharedMemPerBlockOptin)")
	s.checkError(t, "SetMaxDynamicSharedMemory beyond the opt-in maximum",
		s.d.SetMaxDynamicSharedMemory(f, p.SharedMemPerBlockOptin+1), dev, vendorapi.ErrInvalidValue)
	s.checkError(t, "SetMaxDynamicSharedMemory(f, -1)", s.d.SetMaxDynamicSharedMemory(f, -1), dev, vendorapi.ErrInvalidValue)

	// A launch may ask for dynamic shared memory within the limit it set.
	r := newRand(t)
	const n = 300
	st := s.stream(t, dev)
	x := s.upload(t, dev, randBytes(r, 4*n))
	v := randValue(r)
	args := []vendorapi.Arg{vendorapi.PtrArg(x), vendorapi.F32Arg(v), vendorapi.I64Arg(n)}
	require.NoError(t, s.d.Launch(f, smallGrid, smallBlock, 1024, st, args), "Launch with 1 KiB of dynamic shared memory")
	s.sync(t, st)
	want := make([]float32, n)
	for i := range want {
		want[i] = v
	}
	assert.True(t, checkBytes(t, "fill_f32 with dynamic shared memory", s.download(t, dev, x, 4*n), le.FromF32(want)))
}
