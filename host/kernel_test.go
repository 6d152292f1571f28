package host

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// TestEveryCatalogKernelHasHostImplementation checks the catalog and the
// host implementations agree, and that each lives in the file named like its
// family's .cu source.
func TestEveryCatalogKernelHasHostImplementation(t *testing.T) {
	used := map[string]bool{}
	for _, k := range kernels.Catalog {
		t.Run(k.Name, func(t *testing.T) {
			impl, err := implementation(k)
			require.NoError(t, err)
			require.NotNil(t, impl)
			file := k.Family + ".go"
			src, err := os.ReadFile(file)
			require.NoError(t, err, "%s implements %s", file, k.Source())
			registered := k.Name
			if k.Body != "" {
				registered = templateBody(k)
			}
			used[registered] = true
			assert.Contains(t, string(src), `"`+registered+`"`, "%s registers %s", file, registered)
		})
	}
	for name := range direct {
		assert.True(t, used[name], "host implements %s, which is not in the catalog", name)
	}
	for name := range templates {
		assert.True(t, used[name], "host implements template %s, which no catalog kernel instantiates", name)
	}
}

func TestKernelLookup(t *testing.T) {
	d := newDriver(t, Options{})
	f1, err := d.Kernel(0, "add_f32")
	require.NoError(t, err)
	f2, err := d.Kernel(0, "add_f32")
	require.NoError(t, err)
	assert.Equal(t, f1, f2, "one handle per (device, kernel)")
	assert.Equal(t, "add_f32", f1.Name)

	_, err = d.Kernel(0, "no_such_kernel")
	requireHostErr(t, err, vendorapi.ErrInvalidValue)
	_, err = d.Kernel(1, "add_f32")
	requireHostErr(t, err, vendorapi.ErrInvalidValue)

	saved := direct["fill_u32"]
	delete(direct, "fill_u32")
	_, err = d.Kernel(0, "fill_u32")
	direct["fill_u32"] = saved
	ve := requireHostErr(t, err, vendorapi.ErrNoKernel)
	assert.Contains(t, ve.Message, "fill_u32")

	savedT := templates["binary_f32"]
	delete(templates, "binary_f32")
	_, err = d.Kernel(0, "mul_f32")
	templates["binary_f32"] = savedT
	ve = requireHostErr(t, err, vendorapi.ErrNoKernel)
	assert.Contains(t, ve.Message, "binary_f32")
}

// TestRunBlocks checks that every block of a 3D grid runs exactly once with
// its own index, and that a panicking block is an error, not a crash.
func TestRunBlocks(t *testing.T) {
	for _, c := range []struct{ grid, dim vendorapi.Dim3 }{
		{vendorapi.Dim3{X: 1}, vendorapi.Dim3{X: 1}},
		{vendorapi.Dim3{X: 7, Y: 3, Z: 2}, vendorapi.Dim3{X: 4, Y: 2}},
		{vendorapi.Dim3{Y: 40}, vendorapi.Dim3{}},
		{vendorapi.Dim3{X: 1000}, vendorapi.Dim3{X: 256}},
	} {
		g := c.grid.Norm()
		var mu sync.Mutex
		seen := map[vendorapi.Dim3]int{}
		require.NoError(t, runBlocks(c.grid, c.dim, func(b block) {
			assert.Equal(t, g, b.grid)
			assert.Equal(t, c.dim.Norm(), b.dim)
			mu.Lock()
			seen[b.idx]++
			mu.Unlock()
		}))
		require.Len(t, seen, int(g.Count()), "grid %v", c.grid)
		for idx, n := range seen {
			require.Equal(t, 1, n, "block %v", idx)
			require.Less(t, idx.X, g.X)
			require.Less(t, idx.Y, g.Y)
			require.Less(t, idx.Z, g.Z)
		}
	}
	err := runBlocks(vendorapi.Dim3{X: 100}, vendorapi.Dim3{X: 1}, func(b block) {
		if b.idx.X == 57 {
			var s []int
			_ = s[b.idx.X] // a kernel indexing out of range
		}
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "index out of range")
}

// TestLaunchHonoursGeometry launches abi_geometry, whose threads each write
// one slot without a grid-stride loop: a grid too small for the data leaves
// the rest unwritten, as on a GPU.
func TestLaunchHonoursGeometry(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	const n = 1000
	sentinel := make([]float32, 2*n)
	for i := range sentinel {
		sentinel[i] = -1
	}
	p := upload(t, d, 0, sentinel)
	f, err := d.Kernel(0, "abi_geometry")
	require.NoError(t, err)
	grid, dim := vendorapi.Dim3{X: 3}, vendorapi.Dim3{X: 100} // 300 threads for 1000 slots
	require.NoError(t, d.Launch(f, grid, dim, 0, s, vendorapi.NewArgs().Ptr(p).I64(n)))
	require.NoError(t, d.StreamSynchronize(s))
	got := make([]byte, 8*n)
	require.NoError(t, d.CopyDtoH(0, got, p))
	for i := range int64(n) {
		v := int64(binary.LittleEndian.Uint64(got[8*i:]))
		if i < 300 {
			require.Equal(t, i/100*1024+i%100+1, v, "slot %d written by its thread", i)
		} else {
			require.Equal(t, int64(math.Float32bits(-1))<<32|int64(math.Float32bits(-1)), v, "slot %d has no thread", i)
		}
	}
}

func TestTensorBuf(t *testing.T) {
	td := func(ne, nb [4]int64) vendorapi.TensorDesc { return vendorapi.TensorDesc{Data: 4096, Ne: ne, Nb: nb} }
	for _, c := range []struct {
		name string
		t    vendorapi.TensorDesc
		size uint64
		want uint64
		bad  string
	}{
		{"contiguous", td([4]int64{4, 3, 2, 1}, [4]int64{4, 16, 48, 96}), 4, 96, ""},
		{"transposed", td([4]int64{3, 4, 1, 1}, [4]int64{16, 4, 48, 48}), 4, 48, ""},
		{"broadcast stride 0", td([4]int64{4, 5, 1, 1}, [4]int64{2, 0, 8, 8}), 2, 8, ""},
		{"empty", td([4]int64{4, 0, 1, 1}, [4]int64{4, 16, 16, 16}), 4, 0, ""},
		{"negative ne", td([4]int64{4, -1, 1, 1}, [4]int64{4, 16, 16, 16}), 4, 0, "negative"},
		{"negative nb", td([4]int64{4, 2, 1, 1}, [4]int64{4, -16, 16, 16}), 4, 0, "multiple"},
		{"misaligned nb", td([4]int64{4, 2, 1, 1}, [4]int64{4, 18, 36, 36}), 4, 0, "multiple"},
		{"overflow", td([4]int64{1 << 40, 1 << 30, 1, 1}, [4]int64{8, 1 << 43, 8, 8}), 8, 0, "overflows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := tensorBuf("x", c.t, c.size)
			if c.bad != "" {
				assert.Contains(t, b.bad, c.bad)
				return
			}
			assert.Empty(t, b.bad)
			assert.Equal(t, c.want, b.size)
			assert.Equal(t, c.size, b.align)
		})
	}
}

func TestLaunchConfiguration(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	f, err := d.Kernel(0, "fill_u32")
	require.NoError(t, err)
	p := upload(t, d, 0, make([]float32, 8))
	args := vendorapi.NewArgs().Ptr(p).U32(7).I64(8)
	one := vendorapi.Dim3{X: 1}
	for _, tc := range []struct {
		name        string
		grid, block vendorapi.Dim3
		shared      uint32
	}{
		{"block over 1024 threads", one, vendorapi.Dim3{X: 32, Y: 33}, 0},
		{"block z over 64", one, vendorapi.Dim3{Z: 65}, 0},
		{"grid y over 65535", vendorapi.Dim3{Y: 65536}, one, 0},
		{"shared memory over the default", one, one, 48<<10 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireHostErr(t, d.Launch(f, tc.grid, tc.block, tc.shared, s, args), vendorapi.ErrInvalidValue)
		})
	}
	require.NoError(t, d.SetMaxDynamicSharedMemory(f, 100<<10))
	require.NoError(t, d.Launch(f, one, one, 100<<10, s, args))
	requireHostErr(t, d.SetMaxDynamicSharedMemory(f, 229<<10), vendorapi.ErrInvalidValue)
	requireHostErr(t, d.SetMaxDynamicSharedMemory(vendorapi.Function{Name: "fill_u32"}, 1), vendorapi.ErrInvalidValue)
	// Zero components count as 1, as Dim3.Norm says.
	require.NoError(t, d.Launch(f, vendorapi.Dim3{}, vendorapi.Dim3{}, 0, s, args))
	other := mkStream(t, d, 0)
	require.NoError(t, d.Launch(f, one, one, 0, other, args))
	require.NoError(t, d.DeviceSynchronize(0))
	for _, v := range download(t, d, 0, p, 8) {
		assert.Equal(t, uint32(7), math.Float32bits(v))
	}
}

// TestKernels runs the element-wise catalog kernels over sizes that span many
// blocks against a scalar reference; elements past n must be untouched.
func TestKernels(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 33, 1<<15 + 5, 3<<15 + 1} {
		a := make([]float32, n+4)
		b := make([]float32, n+4)
		for i := range a {
			a[i], b[i] = r.Float32()*8-4, r.Float32()*8-4
		}
		for _, tc := range []struct {
			name string
			args func(dst, pa, pb vendorapi.DevicePtr) *vendorapi.Args
			ref  func(i int) float32
		}{
			{"fill_f32", func(dst, _, _ vendorapi.DevicePtr) *vendorapi.Args {
				return vendorapi.NewArgs().Ptr(dst).F32(-2.5).I64(int64(n))
			}, func(int) float32 { return -2.5 }},
			{"fill_u32", func(dst, _, _ vendorapi.DevicePtr) *vendorapi.Args {
				return vendorapi.NewArgs().Ptr(dst).U32(0x7fc00001).I64(int64(n))
			}, func(int) float32 { return math.Float32frombits(0x7fc00001) }},
			{"add_f32", func(dst, pa, pb vendorapi.DevicePtr) *vendorapi.Args {
				return vendorapi.NewArgs().Ptr(dst).Ptr(pa).Ptr(pb).I64(int64(n))
			}, func(i int) float32 { return a[i] + b[i] }},
			{"mul_f32", func(dst, pa, pb vendorapi.DevicePtr) *vendorapi.Args {
				return vendorapi.NewArgs().Ptr(dst).Ptr(pa).Ptr(pb).I64(int64(n))
			}, func(i int) float32 { return a[i] * b[i] }},
			{"scale_f32", func(dst, pa, _ vendorapi.DevicePtr) *vendorapi.Args {
				return vendorapi.NewArgs().Ptr(dst).Ptr(pa).F32(0.3).F32(-1.7).I64(int64(n))
			}, func(i int) float32 { return fma32(a[i], 0.3, -1.7) }},
		} {
			pa, pb := upload(t, d, 0, a), upload(t, d, 0, b)
			sentinel := make([]float32, n+4)
			for i := range sentinel {
				sentinel[i] = 1234.5
			}
			dst := upload(t, d, 0, sentinel)
			require.NoError(t, launch(t, d, s, tc.name, tc.args(dst, pa, pb)), "%s n=%d", tc.name, n)
			require.NoError(t, d.StreamSynchronize(s))
			got := download(t, d, 0, dst, n+4)
			for i := range got {
				want := float32(1234.5)
				if i < n {
					want = tc.ref(i)
				}
				require.Equal(t, math.Float32bits(want), math.Float32bits(got[i]), "%s n=%d element %d", tc.name, n, i)
			}
			for _, p := range []vendorapi.DevicePtr{pa, pb, dst} {
				require.NoError(t, d.Free(0, p))
			}
		}
	}
}

// TestFMA32 compares fma32 with x*y+z computed exactly and rounded once.
func TestFMA32(t *testing.T) {
	exact := func(x, y, z float32) float32 {
		var rx, ry, rz big.Rat
		rx.SetFloat64(float64(x))
		ry.SetFloat64(float64(y))
		rz.SetFloat64(float64(z))
		rx.Mul(&rx, &ry).Add(&rx, &rz)
		f, _ := rx.Float32()
		return f
	}
	r := rand.New(rand.NewPCG(3, 4))
	cases := [][3]float32{
		{1, 1, 0},
		{1 + 0x1p-23, 1 - 0x1p-23, -1},          // exact product needs the fused rounding
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-48},     // float64 sum lands halfway
		{0x1p-75, 0x1p-75, 0x1p-149},            // subnormal result
		{-0x1p-100, 0x1p-50, 0},                 // underflow to -0
		{3, 5, -15},                             // exact zero
		{math.MaxFloat32, 2, -math.MaxFloat32},  // product overflows float32 only
		{math.MaxFloat32, 1 + 0x1p-23, 0x1p103}, // rounds to infinity
	}
	for range 20000 {
		bits := func() float32 {
			for {
				f := math.Float32frombits(r.Uint32())
				if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
					return f
				}
			}
		}
		x, y := bits(), bits()
		// Keep the product near z's magnitude so the sum is interesting.
		cases = append(cases, [3]float32{x, y, -x * y * (1 + float32(r.NormFloat64())*0x1p-20)}, [3]float32{x, y, bits()})
	}
	for _, c := range cases {
		want := exact(c[0], c[1], c[2])
		got := fma32(c[0], c[1], c[2])
		if math.IsInf(float64(c[0])*float64(c[1])+float64(c[2]), 0) {
			continue
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "fma32(%g, %g, %g)", c[0], c[1], c[2])
	}
	assert.True(t, math.IsNaN(float64(fma32(float32(math.Inf(1)), 0, 1))))
	assert.Equal(t, float32(math.Inf(-1)), fma32(float32(math.Inf(-1)), 2, 1))
}

// TestMMVVNeedsAlignedRows checks that mmvv_{t}, whose GPU kernel loads
// 16-byte vectors, refuses rows that are not 16-byte aligned or not a
// multiple of 16 bytes long, which mmv_{t} takes.
func TestMMVVNeedsAlignedRows(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	x := make([]float32, 40)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	px := upload(t, d, 0, x)
	pd := upload(t, d, 0, make([]float32, 2))
	one := vendorapi.NewFastDiv(1)
	for _, c := range []struct {
		name       string
		k          int64 // row length
		off0, off1 int64 // float offsets of src0 (2 rows) and src1 (1 row) in x
		refused    string
	}{
		{"aligned", 8, 0, 16, ""},
		{"src0 misaligned", 8, 1, 20, "argument src0"},
		{"src1 misaligned", 8, 0, 17, "argument src1"},
		{"rows not a multiple of 16 bytes", 6, 0, 16, "argument src0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src0 := vendorapi.TensorDesc{Data: px.Add(uint64(4 * c.off0)), Ne: [4]int64{c.k, 2, 1, 1}, Nb: [4]int64{4, 4 * c.k, 8 * c.k, 8 * c.k}}
			src1 := vendorapi.TensorDesc{Data: px.Add(uint64(4 * c.off1)), Ne: [4]int64{c.k, 1, 1, 1}, Nb: [4]int64{4, 4 * c.k, 4 * c.k, 4 * c.k}}
			dst := vendorapi.TensorDesc{Data: pd, Ne: [4]int64{2, 1, 1, 1}, Nb: [4]int64{4, 8, 8, 8}}
			args := vendorapi.NewArgs().Tensor(dst).Tensor(src0).Tensor(src1).FastDiv(one).FastDiv(one)
			require.NoError(t, launch(t, d, s, "mmv_f32", args), "mmv_f32 takes any packed rows")
			require.NoError(t, d.StreamSynchronize(s))
			early := vendorapi.NewArgs().Tensor(dst).Tensor(src0).Tensor(src1).FastDiv(one).FastDiv(one).I32(1)
			err := launch(t, d, s, "mmvv_f32", early)
			if c.refused != "" {
				ve := requireHostErr(t, err, vendorapi.ErrInvalidValue)
				assert.Contains(t, ve.Message, c.refused)
				return
			}
			require.NoError(t, err)
			require.NoError(t, d.StreamSynchronize(s))
			got := download(t, d, 0, pd, 2)
			for r := range int64(2) {
				var want float32
				for i := range c.k {
					want += x[c.off0+r*c.k+i] * x[c.off1+i]
				}
				assert.Equal(t, want, got[r], "row %d", r)
			}
		})
	}
}

// TestAccKernel checks acc_f32 against ACC computed directly (dst = a, then
// b added into the view of dst at off with strides nb, in elements) for
// views whose strides nest as the kernel requires, s being the strides it
// divides by (a dim of one element given the span below it).
func TestAccKernel(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		n    int // elements of a and dst
		neB  [4]int64
		nb   [3]int64 // view strides of dims 1..3, elements
		off  int64
		s    [3]uint32
	}{
		{"a's strides, rows of 17 of 16", 256 * 17 * 6, [4]int64{256, 16, 2, 3}, [3]int64{256, 4352, 8704}, 0, [3]uint32{256, 4352, 8704}},
		{"half rows at an offset of a row", 256 * 17 * 6, [4]int64{128, 16, 2, 3}, [3]int64{256, 4352, 8704}, 256, [3]uint32{256, 4352, 8704}},
		{"dims of one element", 200, [4]int64{5, 1, 3, 1}, [3]int64{7, 20, 9}, 3, [3]uint32{5, 20, 45}},
		{"past the view", 100, [4]int64{3, 2, 1, 1}, [3]int64{10, 0, 0}, 50, [3]uint32{10, 13, 13}},
	} {
		a := make([]float32, tc.n)
		b := make([]float32, tc.neB[0]*tc.neB[1]*tc.neB[2]*tc.neB[3])
		for i := range a {
			a[i] = r.Float32()*2 - 1
		}
		for i := range b {
			b[i] = r.Float32()*2 - 1
		}
		want := append([]float32(nil), a...)
		bd := vendorapi.TensorDesc{Ne: tc.neB, Nb: [4]int64{4, 4 * tc.neB[0], 4 * tc.neB[0] * tc.neB[1], 4 * tc.neB[0] * tc.neB[1] * tc.neB[2]}}
		for i3 := range tc.neB[3] {
			for i2 := range tc.neB[2] {
				for i1 := range tc.neB[1] {
					for i0 := range tc.neB[0] {
						want[tc.off+i0+i1*tc.nb[0]+i2*tc.nb[1]+i3*tc.nb[2]] += b[(i0*bd.Nb[0]+i1*bd.Nb[1]+i2*bd.Nb[2]+i3*bd.Nb[3])/4]
					}
				}
			}
		}
		pa, pb, dst := upload(t, d, 0, a), upload(t, d, 0, b), upload(t, d, 0, make([]float32, tc.n))
		bd.Data = pb
		args := vendorapi.NewArgs().Ptr(dst).Ptr(pa).Tensor(bd).I64(tc.off).FastDiv(vendorapi.NewFastDiv(tc.s[0])).
			FastDiv(vendorapi.NewFastDiv(tc.s[1])).FastDiv(vendorapi.NewFastDiv(tc.s[2])).I64(int64(tc.n))
		require.NoError(t, launch(t, d, s, "acc_f32", args), tc.name)
		require.NoError(t, d.StreamSynchronize(s))
		got := download(t, d, 0, dst, tc.n)
		for i := range got {
			require.Equal(t, want[i], got[i], "%s: element %d", tc.name, i)
		}
		for _, p := range []vendorapi.DevicePtr{pa, pb, dst} {
			require.NoError(t, d.Free(0, p))
		}
	}
}
