package host

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/vendorapi"
)

// TestEveryCatalogKernelHasHostImplementation checks the catalog and the
// host implementations agree, and that each lives in the file named like its
// .cu source.
func TestEveryCatalogKernelHasHostImplementation(t *testing.T) {
	for _, k := range kernels.Catalog {
		t.Run(k.Name, func(t *testing.T) {
			require.NotNil(t, hostKernels[k.Name], "no host implementation of %s (%s)", k.Name, k.Source)
			file := strings.TrimSuffix(k.Source, ".cu") + ".go"
			src, err := os.ReadFile(file)
			require.NoError(t, err, "%s implements %s", file, k.Source)
			assert.Contains(t, string(src), `"`+k.Name+`"`, "%s registers %s", file, k.Name)
		})
	}
	for name := range hostKernels {
		_, err := kernels.Lookup(name)
		assert.NoError(t, err, "host implements %s, which is not in the catalog", name)
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

	saved := hostKernels["mul_f32"]
	delete(hostKernels, "mul_f32")
	_, err = d.Kernel(0, "mul_f32")
	hostKernels["mul_f32"] = saved
	ve := requireHostErr(t, err, vendorapi.ErrNoKernel)
	assert.Contains(t, ve.Message, "mul_f32")
}

func TestLaunchConfiguration(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	f, err := d.Kernel(0, "fill_u32")
	require.NoError(t, err)
	p := upload(t, d, 0, make([]float32, 8))
	args := []vendorapi.Arg{vendorapi.PtrArg(p), vendorapi.U32Arg(7), vendorapi.I64Arg(8)}
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

// TestKernels runs every catalog kernel for sizes around the parallel split
// against a scalar reference; elements past n must be untouched.
func TestKernels(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 33, parallelGrain + 5, 3*parallelGrain + 1} {
		a := make([]float32, n+4)
		b := make([]float32, n+4)
		for i := range a {
			a[i], b[i] = r.Float32()*8-4, r.Float32()*8-4
		}
		for _, tc := range []struct {
			name string
			args func(dst, pa, pb vendorapi.DevicePtr) []vendorapi.Arg
			ref  func(i int) float32
		}{
			{"fill_f32", func(dst, _, _ vendorapi.DevicePtr) []vendorapi.Arg {
				return []vendorapi.Arg{vendorapi.PtrArg(dst), vendorapi.F32Arg(-2.5), vendorapi.I64Arg(int64(n))}
			}, func(int) float32 { return -2.5 }},
			{"fill_u32", func(dst, _, _ vendorapi.DevicePtr) []vendorapi.Arg {
				return []vendorapi.Arg{vendorapi.PtrArg(dst), vendorapi.U32Arg(0x7fc00001), vendorapi.I64Arg(int64(n))}
			}, func(int) float32 { return math.Float32frombits(0x7fc00001) }},
			{"add_f32", func(dst, pa, pb vendorapi.DevicePtr) []vendorapi.Arg {
				return []vendorapi.Arg{vendorapi.PtrArg(dst), vendorapi.PtrArg(pa), vendorapi.PtrArg(pb), vendorapi.I64Arg(int64(n))}
			}, func(i int) float32 { return a[i] + b[i] }},
			{"mul_f32", func(dst, pa, pb vendorapi.DevicePtr) []vendorapi.Arg {
				return []vendorapi.Arg{vendorapi.PtrArg(dst), vendorapi.PtrArg(pa), vendorapi.PtrArg(pb), vendorapi.I64Arg(int64(n))}
			}, func(i int) float32 { return a[i] * b[i] }},
			{"scale_f32", func(dst, pa, _ vendorapi.DevicePtr) []vendorapi.Arg {
				return []vendorapi.Arg{vendorapi.PtrArg(dst), vendorapi.PtrArg(pa), vendorapi.F32Arg(0.3), vendorapi.F32Arg(-1.7), vendorapi.I64Arg(int64(n))}
			}, func(i int) float32 { return fma32(a[i], 0.3, -1.7) }},
		} {
			pa, pb := upload(t, d, 0, a), upload(t, d, 0, b)
			sentinel := make([]float32, n+4)
			for i := range sentinel {
				sentinel[i] = 1234.5
			}
			dst := upload(t, d, 0, sentinel)
			require.NoError(t, launch(t, d, s, tc.name, tc.args(dst, pa, pb)...), "%s n=%d", tc.name, n)
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
