package host

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ternion/ternion/vendorapi"
)

// matrix is a column-major matrix stored as bytes of type t with padding.
type matrix struct {
	t          vendorapi.DataType
	rows, cols int
	ld         int
	vals       []float32 // len ld*cols, already rounded to t
}

// loadElem reads element i of type t from b.
func loadElem(b []byte, t vendorapi.DataType, i int) float32 {
	e := blasElem(t)
	return e.load(b[i*int(e.size):])
}

// storeElem writes v as element i of type t into b.
func storeElem(b []byte, t vendorapi.DataType, i int, v float32) {
	e := blasElem(t)
	e.store(b[i*int(e.size):], v)
}

func newMatrix(r *rand.Rand, t vendorapi.DataType, rows, cols int) matrix {
	m := matrix{t: t, rows: rows, cols: cols, ld: rows + 2}
	m.vals = make([]float32, m.ld*max(cols, 1))
	for i := range m.vals {
		b := make([]byte, 4)
		storeElem(b, t, 0, r.Float32()*2-1)
		m.vals[i] = loadElem(b, t, 0)
	}
	return m
}

func (m matrix) bytes() []byte {
	b := make([]byte, len(m.vals)*m.t.Size())
	for i, v := range m.vals {
		storeElem(b, m.t, i, v)
	}
	return b
}

func (m matrix) at(i, j int, trans bool) float64 {
	if trans {
		i, j = j, i
	}
	return float64(m.vals[j*m.ld+i])
}

func uploadBytes(t *testing.T, d *Driver, b []byte) vendorapi.DevicePtr {
	t.Helper()
	p, err := d.Malloc(0, uint64(len(b)))
	require.NoError(t, err)
	require.NoError(t, d.CopyHtoD(0, p, b))
	return p
}

func TestGemm(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	h, err := d.BLASCreate(s)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	v, err := d.BLASVersion()
	require.NoError(t, err)
	assert.Equal(t, "gonum v0.17.0", v)

	types := []struct {
		a, c    vendorapi.DataType
		compute vendorapi.ComputeType
		tol     float64
	}{
		{vendorapi.F32, vendorapi.F32, vendorapi.Compute32F, 1e-5},
		{vendorapi.F16, vendorapi.F32, vendorapi.Compute32F, 1e-5},
		{vendorapi.F16, vendorapi.F16, vendorapi.Compute32F, 1e-2},
		{vendorapi.F16, vendorapi.F16, vendorapi.Compute16F, 1e-2},
		{vendorapi.BF16, vendorapi.BF16, vendorapi.Compute32F, 1e-1},
		{vendorapi.BF16, vendorapi.F32, vendorapi.Compute32F, 1e-5},
	}
	const m, n, k, batch = 5, 3, 7, 3
	for _, ty := range types {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, mode := range []nodeKind{nodeGemm, nodeGemmStrided, nodeGemmBatched} {
					name := fmt.Sprintf("%v-%v-%v-%v%v-mode%d", ty.a, ty.c, ty.compute, ta, tb, mode)
					t.Run(name, func(t *testing.T) {
						nb := batch
						if mode == nodeGemm {
							nb = 1
						}
						var as, bs, cs []matrix
						for range nb {
							ra, ca := m, k
							if ta {
								ra, ca = k, m
							}
							rb, cb := k, n
							if tb {
								rb, cb = n, k
							}
							as = append(as, newMatrix(r, ty.a, ra, ca))
							bs = append(bs, newMatrix(r, ty.a, rb, cb))
							cs = append(cs, newMatrix(r, ty.c, m, n))
						}
						cat := func(ms []matrix) []byte {
							var out []byte
							for _, x := range ms {
								out = append(out, x.bytes()...)
							}
							return out
						}
						pa, pb, pc := uploadBytes(t, d, cat(as)), uploadBytes(t, d, cat(bs)), uploadBytes(t, d, cat(cs))
						g := vendorapi.Gemm{TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: 1.5, Beta: -0.5,
							A: pa, AType: ty.a, LDA: as[0].ld, B: pb, BType: ty.a, LDB: bs[0].ld,
							C: pc, CType: ty.c, LDC: cs[0].ld, Compute: ty.compute, BatchCount: nb,
							StrideA: int64(len(as[0].vals)), StrideB: int64(len(bs[0].vals)), StrideC: int64(len(cs[0].vals))}
						switch mode {
						case nodeGemm:
							require.NoError(t, d.Gemm(h, g))
						case nodeGemmStrided:
							require.NoError(t, d.GemmStridedBatched(h, g))
						case nodeGemmBatched:
							ptrs := func(p vendorapi.DevicePtr, stride int64, es int) vendorapi.DevicePtr {
								b := make([]byte, 8*nb)
								for i := range nb {
									binary.LittleEndian.PutUint64(b[8*i:], uint64(p)+uint64(i)*uint64(stride)*uint64(es))
								}
								return uploadBytes(t, d, b)
							}
							g.A, g.B, g.C = ptrs(pa, g.StrideA, ty.a.Size()), ptrs(pb, g.StrideB, ty.a.Size()), ptrs(pc, g.StrideC, ty.c.Size())
							require.NoError(t, d.GemmBatched(h, g))
						}
						require.NoError(t, d.StreamSynchronize(s))
						got := make([]byte, len(cat(cs)))
						require.NoError(t, d.CopyDtoH(0, got, pc))
						per := len(cs[0].vals)
						for bi := range nb {
							c := cs[bi]
							for j := range c.cols {
								for i := range c.ld {
									idx := bi*per + j*c.ld + i
									gv := float64(loadElem(got, ty.c, idx))
									if i >= m {
										require.Equal(t, float64(c.vals[j*c.ld+i]), gv, "padding C[%d,%d] batch %d is untouched", i, j, bi)
										continue
									}
									var sum float64
									for p := range k {
										sum += as[bi].at(i, p, ta) * bs[bi].at(p, j, tb)
									}
									want := 1.5*sum - 0.5*float64(c.vals[j*c.ld+i])
									require.InDelta(t, want, gv, ty.tol, "C[%d,%d] batch %d", i, j, bi)
								}
							}
						}
					})
				}
			}
		}
	}
}

func TestGemmScalars(t *testing.T) {
	d := newDriver(t, Options{})
	s := mkStream(t, d, 0)
	h, err := d.BLASCreate(s)
	require.NoError(t, err)
	nan := float32(math.NaN())
	pa := upload(t, d, 0, []float32{nan, nan, nan, nan})
	pc := upload(t, d, 0, []float32{nan, 2, 3, 4})
	g := vendorapi.Gemm{M: 2, N: 2, K: 2, Alpha: 0, Beta: 2, A: pa, AType: vendorapi.F32, LDA: 2, B: pa, BType: vendorapi.F32,
		LDB: 2, C: pc, CType: vendorapi.F32, LDC: 2, Compute: vendorapi.Compute32F}
	require.NoError(t, d.Gemm(h, g))
	require.NoError(t, d.StreamSynchronize(s))
	got := download(t, d, 0, pc, 4)
	assert.True(t, math.IsNaN(float64(got[0])))
	assert.Equal(t, []float32{4, 6, 8}, got[1:], "alpha = 0 reads neither A nor B")

	// beta = 0: C is not read, NaN does not propagate.
	one := upload(t, d, 0, []float32{1, 1, 1, 1})
	g.A, g.B, g.Alpha, g.Beta = one, one, 1, 0
	require.NoError(t, d.Gemm(h, g))
	// k = 0: C = beta*C.
	g.K, g.Beta = 0, 3
	require.NoError(t, d.Gemm(h, g))
	require.NoError(t, d.StreamSynchronize(s))
	assert.Equal(t, []float32{6, 6, 6, 6}, download(t, d, 0, pc, 4))

	// A null A is fine when it is not read, an error when it is.
	g.A = 0
	require.NoError(t, d.Gemm(h, g))
	g.K = 2
	requireHostErr(t, d.Gemm(h, g), vendorapi.ErrInvalidValue)
	// Batch count 0 does nothing.
	g.BatchCount = 0
	require.NoError(t, d.GemmStridedBatched(h, g))
	require.NoError(t, d.GemmBatched(h, g))
	require.NoError(t, d.StreamSynchronize(s))
}

func TestGemmValidation(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s := mkStream(t, d, 0)
	h, err := d.BLASCreate(s)
	require.NoError(t, err)
	small := upload(t, d, 0, make([]float32, 4))
	big := upload(t, d, 0, make([]float32, 64))
	good := vendorapi.Gemm{M: 2, N: 2, K: 2, Alpha: 1, A: big, AType: vendorapi.F32, LDA: 2, B: big, BType: vendorapi.F32,
		LDB: 2, C: big, CType: vendorapi.F32, LDC: 2, Compute: vendorapi.Compute32F, BatchCount: 2, StrideA: 4, StrideB: 4, StrideC: 4}
	for _, tc := range []struct {
		name string
		edit func(g *vendorapi.Gemm)
		call func(vendorapi.BLASHandle, vendorapi.Gemm) error
	}{
		{"lda too small", func(g *vendorapi.Gemm) { g.LDA = 1 }, d.Gemm},
		{"C past the end", func(g *vendorapi.Gemm) { g.C, g.LDC = small, 3 }, d.Gemm},
		{"misaligned A", func(g *vendorapi.Gemm) { g.A = big + 2 }, d.Gemm},
		{"strided C past the end", func(g *vendorapi.Gemm) { g.C = small }, d.GemmStridedBatched},
		{"stride below address 0", func(g *vendorapi.Gemm) { g.StrideA = -1 << 60 }, d.GemmStridedBatched},
		{"huge stride", func(g *vendorapi.Gemm) { g.StrideB = math.MaxInt64 }, d.GemmStridedBatched},
		{"negative stride", func(g *vendorapi.Gemm) { g.StrideC = -4 }, d.GemmStridedBatched},
		{"batch count 1<<40", func(g *vendorapi.Gemm) { g.BatchCount = 1 << 40 }, d.GemmStridedBatched},
		{"batch count over the BLAS limit", func(g *vendorapi.Gemm) { g.BatchCount = vendorapi.MaxGemmDim + 1 }, d.GemmBatched},
		{"batch count over the BLAS limit, single gemm", func(g *vendorapi.Gemm) { g.BatchCount = vendorapi.MaxGemmDim + 1 }, d.Gemm},
		{"k over the BLAS limit", func(g *vendorapi.Gemm) { g.K, g.LDB = vendorapi.MaxGemmDim+1, vendorapi.MaxGemmDim+1 }, d.Gemm},
		{"pointer arrays past the end", func(g *vendorapi.Gemm) { g.BatchCount = 5; g.A = small }, d.GemmBatched},
		{"unknown handle", func(*vendorapi.Gemm) {}, func(_ vendorapi.BLASHandle, g vendorapi.Gemm) error {
			return d.Gemm(vendorapi.BLASHandle{Device: 0, Handle: 999999}, g)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := good
			tc.edit(&g)
			requireHostErr(t, tc.call(h, g), vendorapi.ErrInvalidValue)
		})
	}
	s1 := mkStream(t, d, 1)
	requireHostErr(t, d.BLASSetStream(h, s1), vendorapi.ErrInvalidValue, "a stream of another device")
	s2 := mkStream(t, d, 0)
	require.NoError(t, d.BLASSetStream(h, s2))
	require.NoError(t, d.Gemm(h, good))
	require.NoError(t, d.StreamSynchronize(s2))
	require.NoError(t, d.StreamDestroy(s2))
	requireHostErr(t, d.Gemm(h, good), vendorapi.ErrInvalidValue, "the handle's stream was destroyed")
	require.NoError(t, d.BLASDestroy(h))
	requireHostErr(t, d.BLASDestroy(h), vendorapi.ErrInvalidValue)
}

func TestBLASSetWorkspace(t *testing.T) {
	d := newDriver(t, Options{Devices: 2})
	s := mkStream(t, d, 0)
	h, err := d.BLASCreate(s)
	require.NoError(t, err)
	defer d.BLASDestroy(h)
	var ws vendorapi.BLASWorkspacer = d
	p, err := d.Malloc(0, 4<<20)
	require.NoError(t, err)
	defer d.Free(0, p)
	require.NoError(t, ws.BLASSetWorkspace(h, p, 4<<20))
	requireHostErr(t, ws.BLASSetWorkspace(h, p, 4<<20+1), vendorapi.ErrInvalidValue)
	q, err := d.Malloc(1, 1<<20)
	require.NoError(t, err)
	defer d.Free(1, q)
	requireHostErr(t, ws.BLASSetWorkspace(h, q, 1<<20), vendorapi.ErrInvalidValue)
	requireHostErr(t, ws.BLASSetWorkspace(vendorapi.BLASHandle{Handle: 12345}, p, 1), vendorapi.ErrInvalidValue)
}
