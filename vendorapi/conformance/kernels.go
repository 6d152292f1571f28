package conformance

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/internal/le"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// args returns empty kernel arguments to build with the chaining methods.
func args() *vendorapi.Args { return vendorapi.NewArgs() }

// elementCase is a catalog kernel over f32 (or 4-byte) elements of
// contiguous buffers, with a Go reference: its arguments are dst, then inputs
// input pointers, then the scalars it appends, then n.
type elementCase struct {
	inputs int // f32 input arrays
	// scalars appends the kernel's value arguments and returns them as bits.
	scalars func(r *rand.Rand, a *vendorapi.Args) []uint32
	// want returns the acceptable bit patterns of dst[i].
	want func(in [][]float32, sc []uint32, i int) []uint32
}

func f32Want(v float32) []uint32 { return []uint32{math.Float32bits(v)} }

func f32Of(bits uint32) float32 { return math.Float32frombits(bits) }

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

// elementCases are the element-wise catalog kernels.
var elementCases = map[string]elementCase{
	"fill_f32": {
		scalars: func(r *rand.Rand, a *vendorapi.Args) []uint32 {
			v := randValue(r)
			a.F32(v)
			return []uint32{math.Float32bits(v)}
		},
		want: func(_ [][]float32, sc []uint32, _ int) []uint32 { return sc[:1] },
	},
	"fill_u32": {
		scalars: func(r *rand.Rand, a *vendorapi.Args) []uint32 {
			v := 1 + r.Uint32N(math.MaxUint32)
			a.U32(v)
			return []uint32{v}
		},
		want: func(_ [][]float32, sc []uint32, _ int) []uint32 { return sc[:1] },
	},
	"add_f32": {
		inputs:  2,
		scalars: func(*rand.Rand, *vendorapi.Args) []uint32 { return nil },
		want:    func(in [][]float32, _ []uint32, i int) []uint32 { return f32Want(in[0][i] + in[1][i]) },
	},
	"sub_f32": {
		inputs:  2,
		scalars: func(*rand.Rand, *vendorapi.Args) []uint32 { return nil },
		want:    func(in [][]float32, _ []uint32, i int) []uint32 { return f32Want(in[0][i] - in[1][i]) },
	},
	"mul_f32": {
		inputs:  2,
		scalars: func(*rand.Rand, *vendorapi.Args) []uint32 { return nil },
		want:    func(in [][]float32, _ []uint32, i int) []uint32 { return f32Want(in[0][i] * in[1][i]) },
	},
	"scale_f32": {
		inputs: 1,
		scalars: func(r *rand.Rand, a *vendorapi.Args) []uint32 {
			scale, bias := 4*randValue(r), randValue(r)
			a.F32(scale).F32(bias)
			return []uint32{math.Float32bits(scale), math.Float32bits(bias)}
		},
		// A compiler may contract src*scale+bias into one fused multiply-add
		// (nvcc does by default): both roundings are exact answers.
		want: func(in [][]float32, sc []uint32, i int) []uint32 {
			x, a, b := in[0][i], f32Of(sc[0]), f32Of(sc[1])
			split := float32(x*a) + b // the conversion forces the product's rounding
			return []uint32{math.Float32bits(split), math.Float32bits(fmaf(x, a, b))}
		},
	},
}

// kernelTests are the catalog kernels tested by their own function rather
// than as element-wise kernels.
var kernelTests = map[string]func(s *suite, t *testing.T, dev int, f vendorapi.Function){
	"abi_echo":     (*suite).abiEcho,
	"abi_geometry": (*suite).abiGeometry,
	"noop":         (*suite).noop,
	"cpy_b8":       cpyCase(1),
	"cpy_b16":      cpyCase(2),
	"cpy_b32":      cpyCase(4),
	"cpy_b64":      cpyCase(8),
}

// kernels runs every kernel of the catalog's fixture families on random data
// against a reference, checks
// argument validation, unknown kernels and the shared memory attribute.
func (s *suite) kernels(t *testing.T) {
	s.eachDevice(t, func(t *testing.T, dev int) {
		for _, k := range kernels.Catalog {
			if !k.Fixture {
				continue // an op kernel: core's op tests check it
			}
			t.Run(k.Name, func(t *testing.T) {
				f := s.kernel(t, dev, k.Name)
				if test, ok := kernelTests[k.Name]; ok {
					test(s, t, dev, f)
					return
				}
				c, ok := elementCases[k.Name]
				require.True(t, ok, "the conformance suite has no reference for catalog kernel %s: add one", k.Name)
				for _, geo := range []struct {
					name        string
					grid, block vendorapi.Dim3
				}{
					{"grid smaller than the data", smallGrid, smallBlock},
					{"zero grid and block components count as 1", vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 32}},
					{"one thread", vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1}},
				} {
					t.Run(geo.name, func(t *testing.T) { s.runElementwise(t, dev, f, k, c, geo.grid, geo.block) })
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

// runElementwise launches k on random data into the middle of a larger
// buffer and checks every element against the reference and the sentinels
// around it.
func (s *suite) runElementwise(t *testing.T, dev int, f vendorapi.Function, k kernels.Kernel, c elementCase, grid, block vendorapi.Dim3) {
	r := newRand(t)
	const n, pre, post = 1000, 5, 37 // elements; sentinel elements before and after
	st := s.stream(t, dev)
	in := make([][]float32, c.inputs)
	before := randBytes(r, 4*(pre+n+post))
	dst := s.upload(t, dev, before)
	a := args().Ptr(dst.Add(4 * pre))
	for j := range in {
		in[j] = randF32(r, n)
		a.Ptr(s.upload(t, dev, le.FromF32(in[j])))
	}
	sc := c.scalars(r, a)
	a.I64(n)
	require.NoError(t, vendorapi.CheckArgs(k.Name, k.Kinds(), a), "the suite's own arguments")
	require.NoError(t, s.d.Launch(f, grid, block, 0, st, a), "Launch(%s, grid %v, block %v)", k.Name, grid, block)
	a.Reset() // the driver keeps no reference to the arguments
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

// noop launches the empty kernel: it must launch, run and leave no error.
func (s *suite) noop(t *testing.T, dev int, f vendorapi.Function) {
	st := s.stream(t, dev)
	for _, grid := range []vendorapi.Dim3{{X: 1}, {X: 64, Y: 2}} {
		require.NoError(t, s.d.Launch(f, grid, smallBlock, 0, st, nil), "Launch(noop, grid %v)", grid)
	}
	require.NoError(t, s.d.Launch(f, smallGrid, smallBlock, 0, st, args()), "Launch(noop) with empty Args")
	s.sync(t, st)
	s.checkError(t, "Launch(noop) with an argument", s.d.Launch(f, smallGrid, smallBlock, 0, st, args().I32(1)), dev,
		vendorapi.ErrInvalidValue)
}

// abiEcho passes a random value of every parameter kind, after an int that
// forces the pointer's padding, and checks the kernel received each one and
// laid the by-value structs out as Go does.
func (s *suite) abiEcho(t *testing.T, dev int, f vendorapi.Function) {
	r := newRand(t)
	st := s.stream(t, dev)
	const pre, post = 3, 5
	before := randBytes(r, 8*(pre+kernels.AbiEchoLen+post))
	out := s.upload(t, dev, before)
	td := vendorapi.TensorDesc{Data: vendorapi.DevicePtr(r.Uint64() >> 8)}
	for i := range 4 {
		td.Ne[i], td.Nb[i] = r.Int64N(1<<40), r.Int64N(1<<50)
	}
	ai, bu, c, dv := int32(r.Uint32()), r.Uint32(), randValue(r), int64(r.Uint64())
	fd := vendorapi.NewFastDiv(1 + r.Uint32N(1<<30))
	require.NoError(t, s.d.Launch(f, vendorapi.Dim3{X: 2}, vendorapi.Dim3{X: 32}, 0, st,
		args().I32(ai).Ptr(out.Add(8*pre)).Tensor(td).U32(bu).FastDiv(fd).F32(c).I64(dv)), "Launch(abi_echo)")
	s.sync(t, st)
	got := s.download(t, dev, out, len(before))
	checkBytes(t, "sentinels before out", got[:8*pre], before[:8*pre])
	checkBytes(t, "sentinels after out", got[8*(pre+kernels.AbiEchoLen):], before[8*(pre+kernels.AbiEchoLen):])
	echo := make([]int64, kernels.AbiEchoLen)
	for i := range echo {
		echo[i] = int64(binary.LittleEndian.Uint64(got[8*(pre+i):]))
	}
	want := []int64{int64(ai), int64(td.Data)}
	want = append(want, td.Ne[:]...)
	want = append(want, td.Nb[:]...)
	want = append(want, int64(bu), int64(fd.Mp), int64(fd.L), int64(fd.D), int64(math.Float32bits(c)), dv)
	var tdesc vendorapi.TensorDesc
	var fdiv vendorapi.FastDiv
	layout := []int64{int64(unsafe.Sizeof(tdesc)), int64(unsafe.Alignof(tdesc)), int64(unsafe.Offsetof(tdesc.Ne)),
		int64(unsafe.Offsetof(tdesc.Nb)), int64(unsafe.Sizeof(fdiv)), int64(unsafe.Alignof(fdiv)),
		int64(unsafe.Offsetof(fdiv.L)), int64(unsafe.Offsetof(fdiv.D))}
	assert.Equal(t, want, echo[:len(want)], "arguments as the kernel received them (a, t.data, t.ne, t.nb, b, fd, c bits, d)")
	assert.Equal(t, layout, echo[len(want):], "device layout (sizeof, alignof, offsetof ne, nb of ternion_tensor; sizeof, alignof, offsetof l, d of ternion_fastdiv)")
}

// abiGeometry launches abi_geometry over 3D grids and blocks and checks that
// exactly the threads of the launch ran: every slot the launch covers holds
// its (block, thread) mark, slots past it keep their bytes.
func (s *suite) abiGeometry(t *testing.T, dev int, f vendorapi.Function) {
	r := newRand(t)
	st := s.stream(t, dev)
	for _, geo := range []struct {
		name        string
		grid, block vendorapi.Dim3
		short       int64 // n is this much less than the threads launched
	}{
		{"1D", vendorapi.Dim3{X: 5}, vendorapi.Dim3{X: 64}, 0},
		{"3D grid and block", vendorapi.Dim3{X: 3, Y: 2, Z: 2}, vendorapi.Dim3{X: 8, Y: 4, Z: 2}, 0},
		{"zero components count as 1", vendorapi.Dim3{Y: 3}, vendorapi.Dim3{X: 32, Z: 2}, 0},
		{"n short of the threads", vendorapi.Dim3{X: 4, Y: 3}, vendorapi.Dim3{X: 33}, 17},
	} {
		t.Run(geo.name, func(t *testing.T) {
			g, b := geo.grid.Norm(), geo.block.Norm()
			per := int64(b.Count())
			threads := int64(g.Count()) * per
			n := threads - geo.short
			const post = 64 // slots after n and after the launch's threads
			before := randBytes(r, int(8*(threads+post)))
			out := s.upload(t, dev, before)
			require.NoError(t, s.d.Launch(f, geo.grid, geo.block, 0, st, args().Ptr(out).I64(n)), "Launch(abi_geometry)")
			s.sync(t, st)
			got := s.download(t, dev, out, len(before))
			want := make([]byte, 0, len(before))
			for i := range n {
				want = binary.LittleEndian.AppendUint64(want, uint64(i/per*1024+i%per+1))
			}
			want = append(want, before[8*n:]...)
			checkBytes(t, "which threads ran", got, want)
		})
	}
}

// cpyCase returns the test of cpy_b{8*size}: copies between random shapes
// of equal size, permuted and padded strides, checked element by element.
func cpyCase(size int) func(s *suite, t *testing.T, dev int, f vendorapi.Function) {
	return func(s *suite, t *testing.T, dev int, f vendorapi.Function) {
		r := newRand(t)
		st := s.stream(t, dev)
		for _, c := range []struct {
			name     string
			src, dst [4]int64 // shapes
			perm     [4]int   // src's strides are those of this permutation of a contiguous layout
			pad      int64    // extra elements between src rows
		}{
			{"contiguous", [4]int64{37, 5, 3, 2}, [4]int64{37, 5, 3, 2}, [4]int{0, 1, 2, 3}, 0},
			{"transposed", [4]int64{17, 23, 1, 1}, [4]int64{17, 23, 1, 1}, [4]int{1, 0, 2, 3}, 0},
			{"permute 0,2,1,3 padded rows", [4]int64{9, 4, 6, 2}, [4]int64{9, 4, 6, 2}, [4]int{0, 2, 1, 3}, 3},
			{"reshape", [4]int64{12, 10, 1, 1}, [4]int64{8, 5, 3, 1}, [4]int{0, 1, 2, 3}, 0},
			{"permute 2,1,0,3 into another shape", [4]int64{5, 7, 4, 3}, [4]int64{35, 12, 1, 1}, [4]int{2, 1, 0, 3}, 1},
		} {
			t.Run(c.name, func(t *testing.T) { s.cpyOne(t, r, dev, st, f, int64(size), c.src, c.dst, c.perm, c.pad, false) })
			t.Run(c.name+", destination through dslot", func(t *testing.T) {
				s.cpyOne(t, r, dev, st, f, int64(size), c.src, c.dst, c.perm, c.pad, true)
			})
		}
		t.Run("captured, dslot rewritten between replays", func(t *testing.T) { s.cpyReplaySlot(t, r, dev, st, f, int64(size)) })
	}
}

// cpyOne checks one copy: src laid out by perm (with pad elements after each
// of its innermost rows) in a buffer surrounded by sentinels, dst contiguous.
// With slot, dst's address travels in a device word dslot points to, and
// the descriptor's data pointer addresses a decoy, which must stay untouched.
func (s *suite) cpyOne(t *testing.T, r *rand.Rand, dev int, st vendorapi.Stream, f vendorapi.Function, size int64, sne, dne [4]int64, perm [4]int, pad int64, slot bool) {
	n := sne[0] * sne[1] * sne[2] * sne[3]
	require.Equal(t, n, dne[0]*dne[1]*dne[2]*dne[3], "test case: shapes of equal size")
	// src: dimension perm[0] is innermost in memory, then perm[1], ...
	var snb [4]int64
	stride := size
	for j, d := range perm {
		snb[d] = stride
		stride *= sne[d]
		if j == 0 {
			stride += pad * size
		}
	}
	srcBytes := randBytes(r, int(stride))
	const guard = 64
	srcBuf := s.upload(t, dev, append(append(randBytes(r, guard), srcBytes...), randBytes(r, guard)...))
	dnb := [4]int64{size, size * dne[0], size * dne[0] * dne[1], size * dne[0] * dne[1] * dne[2]}
	before := randBytes(r, int(guard+n*size+guard))
	dstBuf := s.upload(t, dev, before)
	src := vendorapi.TensorDesc{Data: srcBuf.Add(guard), Ne: sne, Nb: snb}
	dst := vendorapi.TensorDesc{Data: dstBuf.Add(guard), Ne: dne, Nb: dnb}
	var dslot, decoy vendorapi.DevicePtr
	decoyBytes := randBytes(r, len(before))
	if slot {
		dslot = s.upload(t, dev, binary.LittleEndian.AppendUint64(nil, uint64(dst.Data)))
		decoy = s.upload(t, dev, decoyBytes)
		dst.Data = decoy.Add(guard)
	}
	require.NoError(t, s.d.Launch(f, smallGrid, smallBlock, 0, st, cpyArgs(dst, src, dslot)), "Launch(%s)", f.Name)
	s.sync(t, st)
	if slot {
		checkBytes(t, f.Name+" left the descriptor's destination alone", s.download(t, dev, decoy, len(decoyBytes)), decoyBytes)
	}
	want := append([]byte(nil), before...)
	offset := func(i int64, ne, nb [4]int64) int64 {
		i0, i1, i2, i3 := i%ne[0], i/ne[0]%ne[1], i/(ne[0]*ne[1])%ne[2], i/(ne[0]*ne[1]*ne[2])
		return i0*nb[0] + i1*nb[1] + i2*nb[2] + i3*nb[3]
	}
	for i := range n {
		so, do := offset(i, sne, snb), guard+offset(i, dne, dnb)
		copy(want[do:do+size], srcBytes[so:so+size])
	}
	checkBytes(t, f.Name+" result and sentinels", s.download(t, dev, dstBuf, len(before)), want)
}

// cpyArgs are cpy_b*'s arguments for dst = src (shapes of equal size), with
// dst's address read from the device word at dslot when it is not 0.
func cpyArgs(dst, src vendorapi.TensorDesc, dslot vendorapi.DevicePtr) *vendorapi.Args {
	fd := func(v int64) vendorapi.FastDiv { return vendorapi.NewFastDiv(uint32(v)) }
	n := dst.Ne[0] * dst.Ne[1] * dst.Ne[2] * dst.Ne[3]
	return args().Tensor(dst).Tensor(src).FastDiv(fd(src.Ne[0])).FastDiv(fd(src.Ne[1])).FastDiv(fd(src.Ne[2])).
		FastDiv(fd(dst.Ne[0])).FastDiv(fd(dst.Ne[1])).FastDiv(fd(dst.Ne[2])).I64(n).Ptr(dslot)
}

// cpyReplaySlot captures one cpy_b* launch whose destination is read from a
// device word, then replays the graph after writing other destinations into
// the word: each replay writes where the word points at that replay (the
// seed's CPY pointer indirection), and nowhere else.
func (s *suite) cpyReplaySlot(t *testing.T, r *rand.Rand, dev int, st vendorapi.Stream, f vendorapi.Function, size int64) {
	const n, guard = 300, 64
	srcBytes := randBytes(r, int(n*size))
	src := vendorapi.TensorDesc{Data: s.upload(t, dev, srcBytes), Ne: [4]int64{n, 1, 1, 1}, Nb: [4]int64{size, n * size, n * size, n * size}}
	var dsts [3]vendorapi.DevicePtr
	var befores [3][]byte
	for i := range dsts {
		befores[i] = randBytes(r, int(guard+n*size+guard))
		dsts[i] = s.upload(t, dev, befores[i])
	}
	dslot := s.upload(t, dev, binary.LittleEndian.AppendUint64(nil, uint64(dsts[0].Add(guard))))
	dst := src
	dst.Data = dsts[0].Add(guard) // what a capture of the direct form would bake in
	require.NoError(t, s.d.BeginCapture(st), "BeginCapture")
	launchErr := s.d.Launch(f, smallGrid, smallBlock, 0, st, cpyArgs(dst, src, dslot))
	g, err := s.d.EndCapture(st)
	require.NoError(t, launchErr, "Launch(%s) under capture", f.Name)
	require.NoError(t, err, "EndCapture")
	t.Cleanup(func() { assert.NoError(t, s.d.GraphDestroy(g), "GraphDestroy") })
	exec, err := s.d.GraphInstantiate(g)
	require.NoError(t, err, "GraphInstantiate")
	t.Cleanup(func() { assert.NoError(t, s.d.GraphExecDestroy(exec), "GraphExecDestroy") })
	for _, i := range []int{1, 2, 0} {
		require.NoError(t, s.d.CopyHtoD(dev, dslot, binary.LittleEndian.AppendUint64(nil, uint64(dsts[i].Add(guard)))), "CopyHtoD dslot")
		require.NoError(t, s.d.GraphLaunch(exec, st), "GraphLaunch")
		s.sync(t, st)
		copy(befores[i][guard:], srcBytes)
		for j := range dsts {
			checkBytes(t, fmt.Sprintf("%s replayed with destination %d: buffer %d", f.Name, i, j),
				s.download(t, dev, dsts[j], len(befores[j])), befores[j])
		}
	}
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
	big := args()
	for big.Len() < vendorapi.MaxArgBytes/vendorapi.TensorDescSize+1 {
		big.Tensor(vendorapi.TensorDesc{Data: a})
	}
	for _, c := range []struct {
		name string
		args *vendorapi.Args
	}{
		{"no arguments", nil},
		{"empty arguments", args()},
		{"one argument short", args().Ptr(dst).Ptr(a).Ptr(a)},
		{"one argument too many", args().Ptr(dst).Ptr(a).Ptr(a).I64(n).I64(n)},
		{"int32 count where int64 is declared", args().Ptr(dst).Ptr(a).Ptr(a).I32(n)},
		{"float where a pointer is declared", args().Ptr(dst).F32(1).Ptr(a).I64(n)},
		{"tensor where a pointer is declared", args().Tensor(vendorapi.TensorDesc{Data: dst}).Ptr(a).Ptr(a).I64(n)},
		{"over the argument size limit", big},
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
	require.NoError(t, s.d.Launch(f, smallGrid, smallBlock, 1024, st, args().Ptr(x).F32(v).I64(n)),
		"Launch with 1 KiB of dynamic shared memory")
	s.sync(t, st)
	assert.True(t, checkBytes(t, "fill_f32 with dynamic shared memory", s.download(t, dev, x, 4*n), le.FromF32(fill32(v, n))))
}
